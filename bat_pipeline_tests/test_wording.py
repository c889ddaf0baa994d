"""What the terminal and the reports say (issue 36, point 5): no "FAIL threshold FAIL", no
"1 tasks", each output folder named for the tool whose layout it holds, and the reports'
figures labelled (what a cell holds, which way a score is better)."""

from __future__ import annotations

from bat_pipeline.engine.config.project import load_project
from bat_pipeline.engine.reports.build import PartitionInput, build_report
from bat_pipeline.engine.reports.html import render_html
from bat_pipeline.engine.reports.markdown import render_markdown
from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline.run_summary import _why, print_tests
from bat_pipeline.runner import _count, _layout

EXAMPLE = BUNDLED_AGENT_DIR.parent


def test_a_failed_tests_line_says_failed_once(tmp_path):
    assert _why("threshold FAIL: required grader failed: decision-check; score 0") == (
        "required grader failed: decision-check; score 0"
    )
    assert _why("weighted score 0.400 < threshold 0.8") == "weighted score 0.400 < threshold 0.8"
    folder = tmp_path / "batch_cli"
    folder.mkdir()
    (folder / "results.jsonl").write_text(
        '{"test_id": "case-003", "attempt": 0, "pass": false, "error": null,'
        ' "reason": "threshold FAIL: required grader failed: decision-check; score 0"}\n'
        '{"test_id": "case-004", "attempt": 0, "pass": false, "error": "timed out", "reason": ""}\n',
        encoding="utf-8",
    )
    lines: list[str] = []
    assert print_tests([("batch_cli", folder)], lines.append) == 2
    assert lines == [
        "\nbatch_cli: 0 passed, 1 failed, 1 errors",
        "  case-003 (try 0): failed: required grader failed: decision-check; score 0",
        "  case-004 (try 0): error: timed out",
    ]


def test_counts_and_layouts_are_worded():
    assert (_count(1, "task"), _count(12, "task"), _count(0, "model")) == ("1 task", "12 tasks", "0 models")
    assert _layout(load_project(BUNDLED_AGENT_DIR)) == "bat eval's files (its layout)"
    assert _layout(load_project(EXAMPLE / "screening" / "screening.yaml")) == "AgentV's files (its layout)"
    assert _layout(load_project(EXAMPLE / "scenarios" / "run_config.yaml")) == "EvalBench's files (its layout)"


def test_the_reports_label_their_figures():
    report = build_report("r", "agent", [PartitionInput(key="m", model="openai:m", episodes=[])], generated_at="now")
    assert "Each cell: attempts passed / attempts · the mean judged score (0–1, higher is better)." in (
        render_markdown(report)
    )
    assert "a hallucination_score of 1 means no hallucination" in render_html(report)
