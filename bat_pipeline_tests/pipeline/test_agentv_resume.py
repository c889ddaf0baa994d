"""`bat-pipeline run FILE --resume` on an AgentV target's partition (SPEC §13): only the
tests missing or stored with an error are run again; the others are kept as they were,
and every step after the episodes grades the whole partition again."""

from __future__ import annotations

import json
import textwrap

import yaml

from bat_pipeline_tests.pipeline.support import VENV_BIN, run
from bat_pipeline_tests.pipeline.test_agentv_example import environment, lines

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


def test_resume_runs_only_the_missing_and_errored_tests(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "answer.py").write_text(ANSWER, encoding="utf-8")
    tests = [{"id": t, "vars": {"input": f"question {t}"}, "assert": [{"type": "contains", "value": f"to {t}"}]}
             for t in ("t1", "t2", "t3")]
    eval_file = folder / "suite.yaml"
    eval_file.write_text(yaml.safe_dump({"providers": {"local": {
        "provider": "cli", "command": ["python3", "answer.py", "{EVAL_ID}", "{OUTPUT_FILE}"]}},
        "tests": tests}), encoding="utf-8")
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
        assert json.loads((partition / "episodes" / f"{test_id}__try0.json").read_text())["aux"]["started_at"] == \
            json.loads(text)["aux"]["started_at"]
    results = lines(partition / "results.jsonl")
    assert {k: (r["pass"], r["error"]) for k, r in results.items()} == {
        "t1": (True, None), "t2": (True, None), "t3": (True, None)}
    [published] = output.glob("*/local")
    assert lines(published / "results.jsonl")["t2"]["pass"] is True
