"""Our stand-in for AgentV's SDK (sdk/) on its own, run by bun as a grader is: what the
corpus files do not show (their inputs are valid and their scores in range) — the key
conversion, the score clamp, and the "Evaluation failed" answer with exit 1."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bat_pipeline_tests.agentv_corpus.test_corpus import HERE, NPM_PACKAGES, TOOLS

GRADER = """import { defineCodeGrader } from '@agentv/sdk';
defineCodeGrader(({ traceSummary, expectedOutput, config }) => ({
  score: 1.5,
  assertions: [{ text: `events ${traceSummary?.eventCount} read ${traceSummary?.toolCalls.Read}`, passed: true }],
  details: { role: expectedOutput[0].role, limit: config?.maxCalls },
}));
"""


@pytest.fixture(scope="module")
def grader(tmp_path_factory) -> Path:
    bun = TOOLS / "node_modules" / ".bin" / "bun"
    assert bun.exists(), f"no bun at {bun}: run scripts/prepare-agentv-corpus (make test does)"
    root = tmp_path_factory.mktemp("sdk")
    shutil.copytree(HERE / "sdk", root / "node_modules" / "@agentv" / "sdk")
    for package in NPM_PACKAGES:
        (root / "node_modules" / package).symlink_to(TOOLS / "node_modules" / package, target_is_directory=True)
    (root / "grader.ts").write_text(GRADER, encoding="utf-8")
    return root / "grader.ts"


def run(grader: Path, payload: dict) -> tuple[int, dict]:
    bun = TOOLS / "node_modules" / ".bin" / "bun"
    done = subprocess.run(
        [str(bun), "run", str(grader)], input=json.dumps(payload), capture_output=True, text=True, cwd=grader.parent
    )
    return done.returncode, json.loads(done.stdout)


VALID = {
    "criteria": "c",
    "expected_output": [{"role": "assistant", "content": "x"}],
    "input": [{"role": "user", "content": "q"}],
    "input_files": [],
    "trace_summary": {"event_count": 3, "tool_calls": {"Read": 2}, "error_count": 0},
    "config": {"max_calls": 4},
}


def test_keys_become_camel_case_and_the_score_is_clamped(grader):
    code, result = run(grader, VALID)
    assert code == 0
    assert result == {
        "score": 1,
        "assertions": [{"text": "events 3 read 2", "passed": True}],
        "details": {"role": "assistant", "limit": 4},
    }


def test_an_input_the_sdk_does_not_accept_is_evaluation_failed_and_exit_1(grader):
    bad = {**VALID, "trace_summary": {"tool_calls": 2, "errors": 0}}  # bat_pipeline's old shape
    code, result = run(grader, bad)
    assert code == 1
    assert result["score"] == 0
    [assertion] = result["assertions"]
    assert assertion["passed"] is False
    assert assertion["text"].startswith("Evaluation failed: ") and "eventCount" in assertion["text"]
