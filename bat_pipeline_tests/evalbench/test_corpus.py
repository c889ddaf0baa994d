"""EvalBench's own files (corpus/, taken as they are from GoogleCloudPlatform/evalbench; see
its README) run as EvalBench runs them: `bat-pipeline run <run config>` from the repository
root, the harness a fake CLI printing the envelope EvalBench's generators hand its scorers
(harness/transcripts.json), the scripted server as the simulated user and the judge. Every
figure of harness/expected.json — EvalBench's, worked out from its source — is in our
scores.csv and summary.csv, and EvalBench's .ci/verify_harness.py checks
(verify_harness_rules) pass on the harness config's output.

The judge and simulated user are EvalBench's own `gcp_vertex_gemini` model config as it
is (`gemini-3.1-pro-preview` on Vertex AI), asked at the scripted server speaking Vertex's
generateContent (GOOGLE_VERTEX_BASE_URL) with a scripted access token. The harness model
configs are replaced by a `generator: cli` one running the fake harness; the run config,
the evalset and every other file are EvalBench's."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from bat_pipeline_tests.evalbench.conftest import VERTEX_GEMINI
from bat_pipeline_tests.evalbench.verify_harness_rules import problems
from bat_pipeline_tests.support.example_agent import pipeline_env, run
from bat_pipeline_tests.support.paths import VENV_BIN

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
HARNESS = HERE / "harness"
EXPECTED = json.loads((HARNESS / "expected.json").read_text(encoding="utf-8"))
VARIABLES = {"EVAL_GCP_PROJECT_ID": "astana-ci", "CI_CSQL_INSTANCE": "ci-pg", "CLOUD_SQL_POSTGRES_INSTANCE": "ci-pg"}
CLI_CONFIGS = (
    ".ci/model_configs/fake_cli_model.yaml",
    ".ci/model_configs/fake_cli_skills_model.yaml",
    "datasets/cloud-sql-cujs/model_configs/claude_code_model.yaml",
)
GEMINI_CONFIG = "datasets/cloud-sql-cujs/model_configs/gemini_3.1_pro_model.yaml"
GEMINI_COPIES = ("datasets/model_configs/gemini_3.1_pro_model.yaml",)
"""Where the .ci configs look for the same Gemini model config (not in the corpus)."""


SKILLS_DIR = ".venv/fake_home_claude/.claude/skills"
SKILLS = {
    "cloud-sql-postgres-lifecycle": "---\nname: cloud-sql-postgres-lifecycle\ndescription: List and inspect "
    "Cloud SQL for PostgreSQL instances.\n---\nRun `node list.js` and report each instance's state.\n",
    "cloud-sql-postgres-data": "---\nname: cloud-sql-postgres-data\ndescription: Query schemas and tables.\n"
    "---\nRun `node schemas.js`. TODO: document the tables script.\n",
}


def repository(tmp_path: Path) -> Path:
    """A copy of the corpus as EvalBench's repository root, the models it cannot run here replaced."""
    repo = tmp_path / "evalbench"
    shutil.copytree(CORPUS, repo)
    harness = {
        "generator": "cli",
        "name": "fake-harness",
        "command": [sys.executable, str(HARNESS / "fake_harness.py"), "{EVAL_ID}", "{TURN}", "{PROMPT}"],
    }
    for path in CLI_CONFIGS:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(yaml.safe_dump(harness))
    for path in GEMINI_COPIES:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / GEMINI_CONFIG, repo / path)
    # The skills the harness activates, where EvalBench's skills_best_practices looks without
    # a skills_dir (a Claude harness's fake home under the working directory).
    for skill, body in SKILLS.items():
        (repo / SKILLS_DIR / skill).mkdir(parents=True)
        (repo / SKILLS_DIR / skill / "SKILL.md").write_text(body)
    return repo


def read(folder: Path, name: str) -> list[dict[str, str]]:
    with (folder / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("config", sorted(EXPECTED["cases"]))
def test_a_corpus_run_config_gives_evalbenchs_figures(config, tmp_path, scripted_llm, vertex):
    case = EXPECTED["cases"][config]
    repo = repository(tmp_path)
    env = {**pipeline_env(repo / config, tmp_path / "home", scripted_llm.url), **VARIABLES, **vertex, **case["env"]}
    before = scripted_llm.count(model=VERTEX_GEMINI)
    result = run([str(VENV_BIN / "bat-pipeline"), "run", config], env, cwd=repo)
    assert result.returncode == 0, result.stdout
    assert "Traceback" not in result.stdout, result.stdout
    [job] = (repo / case["output"]).iterdir()  # EvalBench's <output_directory>/<job id>/, from the working directory
    assert sorted(p.name for p in job.iterdir()) == ["configs.csv", "evals.csv", "scores.csv", "summary.csv"]

    scores = {(line["comparator"], line["id"]): line for line in read(job, "scores")}
    for want in case["scores"]:
        line = scores[(want["comparator"], want["scenario"])]
        assert line["comparison_error"] == "", line
        assert float(line["score"]) == pytest.approx(want["score"], abs=0.1), (want, line)

    goal = [float(line["score"]) for (name, _), line in scores.items() if name == "goal_completion"]
    summary = [
        (s["metric_name"], float(s["metric_score"]), float(s["correct_results_count"]), int(s["total_results_count"]))
        for s in read(job, "summary")
    ]
    if "summary" in case:
        expected = [
            (name, score, sum(g == 100 for g in goal) if correct is None else correct, total)
            for name, score, correct, total in case["summary"]
        ]
        assert [s[0] for s in summary] == [e[0] for e in expected]
        for got, want in zip(summary, expected, strict=True):
            assert got == pytest.approx(want, abs=0.01), (got, want)
    assert {s["run_time"] for s in read(job, "summary")} != {""}

    evals = read(job, "evals")
    ids = {line["eval_id"] for line in evals}
    assert ids == {want["scenario"] for want in case["scores"]}
    history = json.loads(evals[0]["conversation_history"])
    assert "stats" in json.loads(history[0]["agent"])  # EvalBench's history keeps the harness's output
    configs = {line["config"]: line["value"] for line in read(job, "configs")}
    assert configs["model_config.generator"] == "cli" and configs["db_configs"] == "[]"
    assert scripted_llm.count(model=VERTEX_GEMINI) > before  # the judge and user were the Vertex model
    assert configs["experiment_config.orchestrator"] == "agent"


def test_evalbenchs_harness_gate_passes_on_our_output(tmp_path, scripted_llm, vertex):
    """.ci/verify_harness.py's checks for .ci/run_config.yaml: a row per scorer and scenario,
    no comparison_error, numeric, and above 0 where it requires it."""
    repo = repository(tmp_path)
    config = ".ci/run_config.yaml"
    env = {**pipeline_env(repo / config, tmp_path / "home", scripted_llm.url), **VARIABLES, **vertex}
    env["CI_HARNESS"] = "fake_cli"
    result = run([str(VENV_BIN / "bat-pipeline"), "run", config], env, cwd=repo)
    assert result.returncode == 0, result.stdout
    found, checked = problems(repo / config, repo / ".ci/harness_smoke.evalset.json", repo, env)
    assert found == [] and checked == 11 * 2
    skills = ".ci/skills_run_config.yaml"
    assert run([str(VENV_BIN / "bat-pipeline"), "run", skills], env, cwd=repo).returncode == 0
    found, checked = problems(repo / skills, repo / ".ci/harness_skills.evalset.json", repo, env)
    assert found == [] and checked == 11 * 2  # verify_harness.py --run-config .ci/skills_run_config.yaml
    # The gate fails where it should: a scorer at 0 (a harness that called no tool), an error.
    [job] = (repo / "results/ci/fake_cli").iterdir()
    lines = read(job, "scores")
    for line in lines:
        if (line["comparator"], line["id"]) == ("agent_steps", "ci-csql-list-and-get"):
            line["score"] = "0.0"
        if (line["comparator"], line["id"]) == ("goal_completion", "ci-csql-list-and-get"):
            line["comparison_error"] = "judge failed"
    with (job / "scores.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows(lines)
    found, _ = problems(repo / config, repo / ".ci/harness_smoke.evalset.json", repo, env)
    assert sorted(found) == [
        "agent_steps: ci-csql-list-and-get reported 0",
        "goal_completion: errored on ci-csql-list-and-get -- judge failed",
    ]
    (repo / "results/ci/fake_cli").rename(repo / "kept")
    found, _ = problems(repo / config, repo / ".ci/harness_smoke.evalset.json", repo, env)
    assert found == [f"no run output under {repo / 'results/ci/fake_cli'}"]
