"""agentic-v2-eval's own files (rubrics/, cli_fixtures/, runs/; see the README) give
agentic-v2-eval's figures: per case of cases.json, `bat-pipeline evaluate` and `report` (the
CLI's own entry point, in this process; one case also as a real subprocess) print the lines,
exit with the codes and write the scores (±0.001) and reports that agentic-v2-eval 0.3.0
itself gave on the same files (the judged case: our `--judge` and agentic-v2-eval's own
choice judge asking the same scripted judge server) (expected/<case>.json, written by
scripts/record-agentic-corpus). The built-in rubric names hold the packaged rubrics'
criteria and weights, and no file of the corpus makes either command crash."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bat_pipeline.cli import main
from bat_pipeline.engine.yaml_rubrics import load_rubric
from bat_pipeline_tests.agentic_corpus.judge_answers import reply
from bat_pipeline_tests.support.judge_server import serve_judge
from bat_pipeline_tests.support.paths import VENV_BIN

HERE = Path(__file__).resolve().parent
CASES = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
PACKAGED = ("default", "agent", "code", "pattern", "coding_standards")
TOLERANCE = 0.001


def expected(name: str) -> dict[str, Any]:
    return json.loads((HERE / "expected" / f"{name}.json").read_text(encoding="utf-8"))


def same(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Where `ours` differs from `theirs`: numbers within TOLERANCE, all else equal."""
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return [] if ours is theirs else [f"{where}: {ours!r} != {theirs!r}"]
    if isinstance(theirs, (int, float)) and isinstance(ours, (int, float)):
        return [] if abs(ours - theirs) <= TOLERANCE else [f"{where}: {ours!r} != {theirs!r}"]
    if isinstance(theirs, dict) and isinstance(ours, dict):
        if list(ours) != list(theirs):
            return [f"{where}: keys {list(ours)} != {list(theirs)}"]
        return [d for key in theirs for d in same(ours[key], theirs[key], f"{where}.{key}")]
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(ours) != len(theirs):
            return [f"{where}: {len(ours)} items != {len(theirs)}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) for d in same(a, b, f"{where}[{i}]")]
    return [] if ours == theirs else [f"{where}: {ours!r} != {theirs!r}"]


@pytest.fixture(scope="module")
def judge_url():
    """The corpus's scripted judge (judge_answers.py), as agentic-v2-eval's judge heard it."""
    with serve_judge() as server:
        server.script(default=reply)
        yield server.base_url + "/v1"


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the corpus as the working directory (the recording ran from one too)."""
    work = tmp_path / "case"
    shutil.copytree(HERE, work, ignore=shutil.ignore_patterns("expected", "__pycache__", "*.py"))
    monkeypatch.chdir(work)
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted-corpus-judge")
    return work


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out.splitlines(), err


def report_text(path: Path, fmt: str) -> Any:
    text = path.read_text(encoding="utf-8")
    if fmt == "json":
        report = json.loads(text)
        assert report["metadata"].pop("generated_at")
        return report
    lines = text.split("\n")
    assert sum(line.startswith("*Generated: ") for line in lines) == 1
    return [line for line in lines if not line.startswith("*Generated: ")]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_gives_agentic_v2_evals_figures(case: dict[str, Any], corpus: Path, capsys, judge_url) -> None:
    recorded = expected(case["name"])
    if case["evaluate"]:
        theirs = recorded["evaluate"]
        args = theirs["args"]
        if case["evaluate"].get("judge"):  # agentic-v2-eval's judge ran before; ours runs in evaluate
            spec = case["evaluate"]
            args = ["evaluate", spec["results"], "--rubric", spec["rubric"], "--judge", "openai:judge"]
            args += ["--judge-base-url", judge_url, "--output", "scored.json"]
        code, lines, _ = run_cli(args, capsys)
        assert (code, lines) == (theirs["exit"], theirs["stdout"])
        ours = json.loads((corpus / "scored.json").read_text(encoding="utf-8"))
        assert same(ours, theirs["scored"]) == []
    for fmt, theirs in (recorded.get("report") or {}).items():
        code, lines, _ = run_cli(theirs["args"], capsys)
        assert (code, lines) == (theirs["exit"], theirs["stdout"])
        assert same(report_text(corpus / f"report.{fmt}", fmt), theirs["report"]) == []


def test_the_commands_as_processes(corpus: Path) -> None:
    """The runtime's run file through the installed `bat-pipeline` executable."""
    case = expected("runtime-run-artifact")
    said = []
    for step in (case["evaluate"], case["report"]["markdown"]):
        done = subprocess.run(
            [str(VENV_BIN / "bat-pipeline"), *step["args"]], capture_output=True, text=True, timeout=120
        )
        assert (done.returncode, done.stdout.splitlines()) == (step["exit"], step["stdout"]), done.stderr
        assert "Traceback" not in done.stderr
        said.append(done.stderr)
    assert "record 0 has none of the rubric's criteria (Accuracy, Completeness, Efficiency)" in said[0]
    assert same(json.loads((corpus / "scored.json").read_text()), case["evaluate"]["scored"]) == []
    assert same(report_text(corpus / "report.markdown", "markdown"), case["report"]["markdown"]["report"]) == []


@pytest.mark.parametrize("name", PACKAGED)
def test_builtin_names_hold_the_packaged_criteria(name: str, corpus: Path, capsys) -> None:
    """`--rubric agent` (agentic-v2-eval wants a path; a name is ours) scores as its file does."""
    packaged = yaml.safe_load((HERE / "rubrics" / f"{name}.yaml").read_text(encoding="utf-8"))
    builtin = load_rubric(name)
    assert [(c.name, c.weight) for c in builtin.criteria] == [(c["name"], c["weight"]) for c in packaged["criteria"]]
    assert all(
        c.description and c.description != p["description"]
        for c, p in zip(builtin.criteria, packaged["criteria"], strict=True)
    )
    assert builtin.agentic and all((c.low, c.high) == (0.0, 1.0) for c in builtin.criteria)
    theirs = expected(f"rubric-{name}")["evaluate"]
    code, lines, _ = run_cli(["evaluate", f"inputs/{name}.json", "--rubric", name, "-o", "scored.json"], capsys)
    assert (code, lines) == (0, theirs["stdout"])
    named = json.loads((corpus / "scored.json").read_text(encoding="utf-8"))
    assert named["rubric"] == f"<builtin:{name}>"
    assert same(named["results"], theirs["scored"]["results"]) == []


def test_no_file_of_the_corpus_crashes_either_command(corpus: Path, capsys) -> None:
    for results in sorted(corpus.rglob("*.json")):
        for args in (["evaluate", str(results)], ["report", str(results), "-o", "any.md"]):
            code, _, err = run_cli(args, capsys)
            assert code in (0, 1, 2), (args, err)
    for rubric in sorted(corpus.rglob("*.yaml")):
        code, _, err = run_cli(["evaluate", "inputs/agent.json", "--rubric", str(rubric)], capsys)
        assert code == 0, (rubric, err)
