"""`bat-pipeline run FILE --resume` on an AgentV target's partition (SPEC §13): only the
tests missing or stored with an error are run again; the others are kept as they were,
and every step after the episodes grades the whole partition again."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from bat_pipeline_tests.pipeline.test_agentv_example import environment, lines
from bat_pipeline_tests.support.example_agent import run
from bat_pipeline_tests.support.paths import VENV_BIN

pytestmark = pytest.mark.slow(seconds=7)

ANSWER = textwrap.dedent('''\
    """Answers one test; records which test it was asked; fails while fail-<id> exists."""
    import pathlib, sys

    test_id, output = sys.argv[1], sys.argv[2]
    here = pathlib.Path(__file__).parent
    with open(here / "calls.log", "a", encoding="utf-8") as log:
        log.write(test_id + "\\n")
    if (here / f"fail-{test_id}").exists():
        sys.exit(f"cannot answer {test_id} now")
    pathlib.Path(output).write_text(f"answer to {test_id}", encoding="utf-8")
''')
BATCH = textwrap.dedent('''\
    """Answers every test of the file in one JSONL; leaves out those with a fail-<id> file."""
    import json, pathlib, sys

    import yaml

    here = pathlib.Path(__file__).parent
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for test in yaml.safe_load(open(sys.argv[1], encoding="utf-8"))["tests"]:
            if not (here / f"fail-{test['id']}").exists():
                out.write(json.dumps({"id": test["id"], "text": f"answer to {test['id']}"}) + "\\n")
''')


def test_resume_runs_only_the_missing_and_errored_tests(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "answer.py").write_text(ANSWER, encoding="utf-8")
    (folder / "batch.py").write_text(BATCH, encoding="utf-8")
    tests = [
        {"id": t, "vars": {"input": f"question {t}"}, "assert": [{"type": "contains", "value": f"to {t}"}]}
        for t in ("t1", "t2", "t3")
    ]
    eval_file = folder / "suite.yaml"
    eval_file.write_text(
        yaml.safe_dump(
            {
                "providers": {
                    "local": {"provider": "cli", "command": ["python3", "answer.py", "{EVAL_ID}", "{OUTPUT_FILE}"]},
                    "batch": {
                        "provider": "cli",
                        "command": "python3 batch.py suite.yaml {OUTPUT_FILE}",
                        "batch_requests": True,
                    },
                },
                "tests": tests,
            }
        ),
        encoding="utf-8",
    )
    (folder / "fail-t2").touch()
    root, output = tmp_path / "home", tmp_path / "out"
    env = environment(root, eval_file)
    command = [str(VENV_BIN / "bat-pipeline"), "run", str(eval_file), "--output", str(output)]

    first = run(command, env)
    [partition] = root.glob("runs/*/local")
    results = lines(partition / "results.jsonl")
    assert {k: r["pass"] for k, r in results.items()} == {"t1": True, "t2": False, "t3": True}, first.stdout[-3000:]
    assert "cannot answer t2 now" in results["t2"]["error"]
    kept = {t: (partition / "episodes" / f"{t}__try0.json").read_text(encoding="utf-8") for t in ("t1", "t3")}
    [batch] = root.glob("runs/*/batch")
    assert lines(batch / "results.jsonl")["t2"]["error"].startswith("no record for this test")
    assert sorted((folder / "calls.log").read_text().split()) == ["t1", "t2", "t3"]

    (folder / "fail-t2").unlink()
    (folder / "calls.log").unlink()
    second = run([*command, "--resume"], env)
    assert second.returncode == 0, second.stdout[-3000:]
    assert "(resuming the last run)" in second.stdout
    # Only the errored test ran again, in the same partition folder; the kept ones are untouched.
    assert (folder / "calls.log").read_text().split() == ["t2"]
    assert list(root.glob("runs/*/local")) == [partition]
    for test_id, text in kept.items():
        assert (
            json.loads((partition / "episodes" / f"{test_id}__try0.json").read_text())["aux"]["started_at"]
            == json.loads(text)["aux"]["started_at"]
        )
    for folder_of in (partition, batch):
        results = lines(folder_of / "results.jsonl")
        assert {k: (r["pass"], r["error"]) for k, r in results.items()} == {
            "t1": (True, None),
            "t2": (True, None),
            "t3": (True, None),
        }
    [published] = output.glob("*/local")
    assert lines(published / "results.jsonl")["t2"]["pass"] is True


def test_a_batch_asked_for_some_tests_knows_the_others(tmp_path):
    """A resumed batch partition asks for the missing tests only; the lines of the others
    are no unknown ids."""
    from bat_pipeline.engine.config.project import load_project, suite_tasks
    from bat_pipeline.engine.conversation import plan_attempts
    from bat_pipeline.resources.targets import collect_target_episodes

    (tmp_path / "batch.py").write_text(BATCH, encoding="utf-8")
    eval_file = tmp_path / "suite.yaml"
    eval_file.write_text(
        yaml.safe_dump(
            {
                "providers": {
                    "batch": {
                        "provider": "cli",
                        "command": "python3 batch.py suite.yaml {OUTPUT_FILE}",
                        "batch_requests": True,
                    }
                },
                "tests": [{"id": t, "vars": {"input": t}} for t in ("t1", "t2")],
            }
        ),
        encoding="utf-8",
    )
    config = load_project(eval_file)
    [t1, t2] = suite_tasks(config.agentv)
    episodes, said = [], []
    collect_target_episodes(
        config.models[0].target,
        config.agentv,
        plan_attempts([t1, t2], 1, []),
        tmp_path,
        concurrency=1,
        on_episode=episodes.append,
        log=said.append,
    )
    assert [e.task_id for e in episodes] == ["t1", "t2"]
    episodes.clear()
    collect_target_episodes(
        config.models[0].target,
        config.agentv,
        plan_attempts([t2], 1, []),
        tmp_path,
        concurrency=1,
        on_episode=episodes.append,
        log=said.append,
    )
    assert [(e.task_id, e.final_output) for e in episodes] == [("t2", "answer to t2")]
    assert not [line for line in said if "is no test of the file" in line]
