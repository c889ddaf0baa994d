"""`bat-pipeline evaluate`: a results file scored with a weighted rubric and no agent, as
agentic-v2-eval's `evaluate` does (its output shape and its exit codes: 1 when the input
cannot be loaded, 2 below --fail-under), and with --judge the scripted judge's values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "bat-pipeline"


def evaluate(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN), "evaluate", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def test_scores_records_with_the_default_rubric(tmp_path: Path):
    (tmp_path / "results.json").write_text(
        json.dumps(
            {
                "results": [
                    {"Accuracy": 1, "Completeness": 1, "Efficiency": 1},
                    {"Accuracy": 0.5, "Completeness": 2},  # Completeness clamped to 1; Efficiency missing
                ]
            }
        )
    )
    done = evaluate("results.json", "--output", "scored.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    scored = json.loads((tmp_path / "scored.json").read_text())
    assert scored["rubric"] == "<builtin:default>"
    second = scored["results"][1]
    assert second["index"] == 1 and second["missing_criteria"] == ["Efficiency"]
    assert second["weighted_score"] == pytest.approx(0.25 + 0.3)  # Efficiency counts 0, as in agentic-v2-eval
    assert second["total_score"] == pytest.approx(1.5 / 3)
    assert second["criterion_scores"] == {"Accuracy": 0.5, "Completeness": 1.0}
    assert done.stdout.splitlines() == [
        "Result 0: 1.0000",
        "Result 1: 0.5500",
        "",
        "Average Score: 0.7750",
        "",
        "Scored results written to: scored.json",
    ]


def test_exit_codes_follow_agentic_v2_eval(tmp_path: Path):
    (tmp_path / "results.json").write_text(json.dumps([{"a": 0.4}]))
    (tmp_path / "mine.yaml").write_text("criteria: [{name: a}]\n")
    assert evaluate("results.json", "--rubric", "mine.yaml", "--fail-under", "0.3", cwd=tmp_path).returncode == 0
    below = evaluate("results.json", "--rubric", "mine.yaml", "--fail-under", "0.5", cwd=tmp_path)
    assert below.returncode == 2 and "below --fail-under 0.5" in below.stderr
    assert evaluate("missing.json", cwd=tmp_path).returncode == 1
    (tmp_path / "bad.yaml").write_text("criteria: [{name: a, weight: -2}]\n")
    broken = evaluate("results.json", "--rubric", "bad.yaml", cwd=tmp_path)
    assert broken.returncode == 1 and "criteria[0].weight" in broken.stderr
    (tmp_path / "odd.json").write_text('{"results": {"a": 1}}')
    odd = evaluate("odd.json", cwd=tmp_path)
    assert odd.returncode == 1 and "odd.json" in odd.stderr and "results" in odd.stderr
    (tmp_path / "mixed.json").write_text('[{"a": 1}, 3]')
    mixed = evaluate("mixed.json", cwd=tmp_path)
    assert mixed.returncode == 1 and "mixed.json, 1" in mixed.stderr
    helped = subprocess.run([str(BIN), "evaluate", "--help"], capture_output=True, text=True)
    said = " ".join(helped.stdout.split())
    assert "agentic-v2-eval: 0 done, 1 the results or the rubric could not be loaded, 2 the mean" in said
    listed = subprocess.run([str(BIN), "--help"], capture_output=True, text=True)
    assert "exit 1 when the input cannot be loaded, 2 below --fail-under" in " ".join(listed.stdout.split())


def test_the_judge_gives_the_values(tmp_path: Path, scripted_llm):
    (tmp_path / "results.json").write_text(
        json.dumps(
            [
                {"input": "Weather in Paris?", "output": "Paris: sunny, 21 C.", "expected": "sunny in Paris at 21"},
                {"input": "Weather in Paris?", "output": "No idea.", "expected": "sunny in Paris at 21"},
            ]
        )
    )
    env = {"PATH": str(BIN.parent), "OPENAI_API_KEY": "scripted-takes-any-key"}
    done = evaluate(
        "results.json",
        "--judge",
        "openai:judge",
        "--judge-base-url",
        scripted_llm.url + "/v1",
        "--output",
        "scored.json",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    first, second = json.loads((tmp_path / "scored.json").read_text())["results"]
    assert first["weighted_score"] == 1.0 and first["missing_criteria"] == []
    assert second["weighted_score"] == 0.0


def test_report_of_a_results_file_as_agentic_v2_eval_makes_it(tmp_path: Path):
    (tmp_path / "results.json").write_text(json.dumps([{"b": 0.9, "a": "x|y"}, {"b": 0.3, "c": {"n": 1}}]))
    env = {"PATH": str(BIN.parent), "BAT_PIPELINE_HOME": str(tmp_path / "home")}
    shown = subprocess.run(
        [str(BIN), "report", "results.json"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert "| a | b | c |" in shown.stdout and "| x\\|y | 0.9000 |  |" in shown.stdout
    assert "|  | 0.3000 | {'n': 1} |" in shown.stdout
    assert "- **Total Results**: 2" in shown.stdout and "- **b_mean**: 0.6000" in shown.stdout
    page = subprocess.run(
        [str(BIN), "report", "results.json", "--format", "html", "-o", "r.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert page.returncode == 0
    html = (tmp_path / "r.html").read_text()
    assert '<td class="num score-high">0.9</td>' in html and '<td class="num score-low">0.3</td>' in html
