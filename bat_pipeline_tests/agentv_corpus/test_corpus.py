"""AgentV's own example files (README.md here) run through bat_pipeline's AgentV path and
held against what the released AgentV 4.42.4 gave each of them (recorded.json, made by
scripts/record-agentv-corpus): per test the outcome (AgentV's `execution_status`), the score
(±0.001) and the number of grader rows, and the file's exit code. Real parts: the targets'
processes, the graders' processes, the scripted model server as both the LLM target and
the judge, the real judge client.

A file that still differs from AgentV is listed in DIFFERENCES with why and a line of the
difference that shows it (docs/formats.md, "Known differences" 27, names each); the test
then asserts that line, so a change either way shows. No file may end in a traceback, and a
refusal names what it refuses.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import traceback
from pathlib import Path
from typing import Any

import pytest

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.conversation import plan_attempts
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.results import index_lines
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline.resources.targets import TargetHealthError, collect_target_episodes

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "recorded.json").read_text(encoding="utf-8"))
FILES = [entry["path"] for entry in json.loads((HERE / "corpus.json").read_text(encoding="utf-8"))["files"]]
SCORE_TOLERANCE = 1e-3
MISSING_PACKAGE = re.compile(r"Cannot find (module|package) '")
"""A grader's stderr when a package it imports is not there (as when our stand-in for AgentV's
SDK, sdk/ here, is not in the corpus's node_modules); such a grader scores 0."""
WORKSPACE = "needs a `workspace:` template copied for each test (and `file_changes` from it): not done here"

DIFFERENCES: dict[str, tuple[str, str]] = {
    "v4/examples/features/batch-cli/evals/dataset.eval.yaml": (
        "a test the batch runner writes no record for is an execution error with no grader rows; AgentV "
        "still runs its graders on it (two rows, each 0)",
        "aml-004-not-exist: grader rows AgentV 2, ours 0",
    ),
    "v4/examples/features/file-changes/evals/dataset.eval.yaml": (
        WORKSPACE,
        "verify-deletes-and-structure: outcome AgentV ok, ours quality_failure",
    ),
    "v4/examples/features/file-changes-with-repos/evals/eval.yaml": (
        WORKSPACE,
        "root-file-and-repo-change: outcome AgentV quality_failure, ours execution_error",
    ),
    "v4/examples/features/functional-grading/evals/dataset.eval.yaml": (
        WORKSPACE,
        "implement-math-functions: outcome AgentV quality_failure, ours execution_error",
    ),
    "v4/examples/features/local-cli/evals/dataset.eval.yaml": (
        "a grader target that the nearest targets file does not define is refused before the run (AgentV "
        "runs the test into an execution error)",
        "tests: AgentV ['cli-provider-echo'], ours []",
    ),
    "v4/examples/features/multi-turn-conversation-live/evals/dataset.eval.yaml": (
        "`mode: conversation` tests with `turns:` (one target call and grading per turn) are not run as "
        "AgentV runs them",
        "context-retention: score AgentV 0, ours 0.5",
    ),
    "v4/examples/features/preprocessors/evals/dataset.eval.yaml": (
        "the `file-output` provider (and `preprocessors:`) are refused by name; AgentV fails on the file too "
        "(no target 'default'), exit 1",
        "provider 'file-output' cannot be run yet",
    ),
    "v4/examples/features/prompt-template-sdk/evals/dataset.eval.yaml": (
        "an LLM grader's `prompt:` given as a script mapping is refused by name; AgentV skips every test "
        "(the script is not found), exit 1",
        "a grading prompt built by a command",
    ),
    "v4/examples/features/sdk-custom-assertion/evals/dataset.eval.yaml": (
        "custom grader types from `.agentv/assertions/*.ts` are refused by name",
        "grader type 'word-count' is AgentV's custom grader",
    ),
    "v4/examples/features/sdk-python/evals/dataset.eval.yaml": (
        "a script grader of an external tests file is refused unless the datasets are trusted "
        "(bat_pipeline's rule, issue 38); AgentV runs it",
        "refused unless the datasets are trusted",
    ),
}
"""Corpus file → (why bat_pipeline's result still differs from AgentV's, a line of the
difference that shows it); docs/formats.md "Known differences" lists the same."""


def corpus_env(url: str) -> dict[str, str]:
    """corpus.env with the scripted server's address filled in."""
    pairs = {}
    for line in (HERE / "corpus.env").read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            pairs[key] = value.replace("{scripted_llm}", url)
    return pairs


TOOLS = Path(os.environ.get("AGENTV_CORPUS_TOOLS") or HERE.parents[1] / ".bat_pipeline" / "agentv-corpus-tools")
"""Where scripts/prepare-agentv-corpus installs bun (`make test` runs it first)."""
NPM_PACKAGES = ("zod", "yaml")
"""What the examples import from npm besides AgentV's SDK (yaml: batch-cli's mock agent;
zod: our SDK stand-in, and the graders through its `z`); the script installs them too."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, scripted_llm):
    """A copy of the corpus (each line a git repository, as in AgentV's own), with bun on
    PATH and the environment corpus.env gives, on the session's scripted server."""
    bun = TOOLS / "node_modules" / ".bin"
    assert (bun / "bun").exists(), f"no bun in {bun}: run scripts/prepare-agentv-corpus (make test does)"
    for package in NPM_PACKAGES:
        assert (TOOLS / "node_modules" / package).is_dir(), (
            f"no {package} in {TOOLS / 'node_modules'}: run scripts/prepare-agentv-corpus (make test does)"
        )
    root = tmp_path_factory.mktemp("agentv_corpus")
    for line in ("v4", "v2"):
        shutil.copytree(HERE / line, root / line, symlinks=True)
        subprocess.run(["git", "init", "-q", str(root / line)], check=True)
        # A node_modules folder, as a user's after `bun install`: bun then resolves imports
        # from it and never installs a missing package from the registry on its own. It holds
        # our stand-in for AgentV's SDK (sdk/, copied: bun resolves a module's imports from
        # its real path, so the SDK's `zod` must sit beside it) and the npm packages the
        # examples import (zod, yaml), linked from where scripts/prepare-agentv-corpus put them.
        modules = root / line / "node_modules"
        shutil.copytree(HERE / "sdk", modules / "@agentv" / "sdk")
        for package in NPM_PACKAGES:
            (modules / package).symlink_to(TOOLS / "node_modules" / package, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in corpus_env(scripted_llm.url).items():
            patch.setenv(key, value)
        patch.setenv("PATH", f"{bun}{os.pathsep}{os.environ.get('PATH', '')}")
        yield root


def ours(path: Path, work: Path) -> dict[str, Any]:
    """What bat_pipeline gives one file: {exit_code, refused, tests: {id: AgentV's index
    fields}}. InputError is a refusal (exit 2); any other exception is a traceback."""
    try:
        config = load_project(path)
    except InputError as exc:
        return {"exit_code": 2, "refused": str(exc), "tests": {}}
    assert config.agentv is not None
    tasks = suite_tasks(config.agentv)
    tests: dict[str, dict[str, Any]] = {}
    exit_code = 0
    for model in config.models:
        episodes: list = []
        folder = work / model.partition_key  # the partition's folder, as a run has it
        folder.mkdir(parents=True)
        try:
            collect_target_episodes(
                model.target,
                config.agentv,
                plan_attempts(tasks, 1, []),
                folder,
                concurrency=4,
                on_episode=episodes.append,
                log=lambda _line: None,
            )
        except TargetHealthError:  # as a run: every test an error episode, the partition failed
            exit_code = 1
        checked = check_partition(episodes, tasks, config, options=GraderRunner())
        if config.judge is not None:
            client = JudgeClient(config.judge, environ=dict(os.environ), backoff_base_s=0.0)
            asyncio.run(judge_episodes(client, checked, tasks))
        unloadable = {
            e.task_id: sorted(r.criterion for r in e.scores if MISSING_PACKAGE.search(r.reason or "")) for e in checked
        }
        for line in index_lines(checked, "corpus"):
            key = line["test_id"] if line["test_id"] not in tests else f"{line['test_id']}@{model.partition_key}"
            tests[key] = {
                "score": line["score"],
                "execution_status": line["execution_status"],
                "grader_rows": len(line["scores"]),
                "error": line.get("error"),
                "grader_errors": {s["name"]: s["assertions"] for s in line["scores"] if s["verdict"] == "error"},
                "unloadable": unloadable.get(line["test_id"], []),
            }
    return {"exit_code": exit_code, "refused": None, "tests": tests}


def same(theirs: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """What differs between AgentV's result for a file and ours, one line each."""
    out = []
    if theirs["exit_code"] != mine["exit_code"]:
        out.append(f"exit code: AgentV {theirs['exit_code']}, ours {mine['exit_code']} ({mine['refused'] or ''})")
    if sorted(theirs["tests"]) != sorted(mine["tests"]):
        out.append(f"tests: AgentV {sorted(theirs['tests'])}, ours {sorted(mine['tests'])}")
    for test_id, their in theirs["tests"].items():
        my = mine["tests"].get(test_id)
        if my is None:
            continue
        if their["execution_status"] != my["execution_status"]:
            out.append(f"{test_id}: outcome AgentV {their['execution_status']}, ours {my['execution_status']}")
        if abs((their["score"] or 0.0) - (my["score"] or 0.0)) > SCORE_TOLERANCE:
            out.append(f"{test_id}: score AgentV {their['score']}, ours {my['score']}")
        for name in my.get("unloadable", []):
            out.append(f"{test_id}: grader {name} could not load a package it imports (scored 0 for it)")
        their_errors = {g["name"] for g in their.get("graders", []) if g.get("verdict") == "error"}
        for name in sorted(set(my.get("grader_errors", {})) - their_errors):
            out.append(f"{test_id}: grader {name} errored with us only")
        if their["grader_rows"] != my["grader_rows"]:
            out.append(f"{test_id}: grader rows AgentV {their['grader_rows']}, ours {my['grader_rows']}")
    return out


def test_every_corpus_file_is_recorded_and_every_difference_is_a_corpus_file():
    assert sorted(RECORDED["files"]) == sorted(FILES)
    assert set(DIFFERENCES) <= set(FILES)


@pytest.mark.parametrize("rel", FILES)
def test_file_gives_agentvs_results(corpus, rel, tmp_path):
    theirs = RECORDED["files"][rel]
    try:
        mine = ours(corpus / rel, tmp_path)
    except Exception:  # noqa: BLE001 - a traceback is what this test refuses
        pytest.fail(f"{rel}: traceback\n{traceback.format_exc()}")
    if mine["refused"] is not None:
        assert mine["refused"].strip() and "''" not in mine["refused"], mine["refused"]
    diff = same(theirs, mine)
    if rel in DIFFERENCES:
        why, shown = DIFFERENCES[rel]
        assert diff, f"{rel} now gives AgentV's results: take it out of DIFFERENCES and docs/formats.md"
        assert any(shown in line for line in diff), f"{rel} ({why}) differs otherwise now:\n" + "\n".join(diff)
    else:
        assert not diff, "\n".join(diff)
