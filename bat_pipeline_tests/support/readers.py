"""Every reader of every format, each as a builder of a realistic file with one value
left open: (a folder, the value's bytes) -> (what reads, the file holding the value). The
hostile-file tests (engine/test_hostile_files.py) and the readers' fuzz test
(engine/test_reader_fuzz.py) put their values there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.config.agent_yaml import read_agent_config
from bat_pipeline.engine.config.evalbench_run import load_run_config
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.yaml_rubrics.load import load_rubric

# A reader: (tmp folder, hostile value) -> (what reads, the file that must be named).
Reader = Callable[[Path, bytes], tuple[Callable[[], object], Path]]


def put(path: Path, text: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def eval_yaml(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(tmp / "eval" / "eval.yaml", b"models:\n  - openai:gpt-4o\nagent:\n  env:\n    NOTE: " + value + b"\n")
    return lambda: load_eval_config(tmp, environ={}), bad


def agent_config(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(tmp / "config.yaml", b"endpoint:\n  port: 8000\nextra: " + value + b"\n")
    return lambda: read_agent_config(bad), bad


def tasks_json(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(tmp / "tasks.json", b'[{"id": "a", "turns": ["hi"], "meta": {"note": ' + value + b"}}]")
    return lambda: load_tasks(bad), bad


def evalset(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(
        tmp / "x.evalset.json",
        b'{"scenarios": [{"id": "s", "starting_prompt": "hi", "conversation_plan": ' + value + b"}]}",
    )
    return lambda: load_tasks(bad, environ={}), bad


def nl2sql(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(tmp / "nl2sql.json", b'[{"id": "q1", "nl_prompt": "how many?", "golden_sql": ' + value + b"}]")
    return lambda: load_tasks(bad), bad


AGENTV_TEST = b"  - id: t\n    input: hi\n"
TARGETS = "targets:\n  - name: t\n    provider: cli\n    command: python3 run.py {PROMPT}\n"


def agentv_file(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(
        tmp / "e.yaml", b"execution:\n  target: t\ntests:\n" + AGENTV_TEST + b"    metadata: {note: " + value + b"}\n"
    )
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    return lambda: load_suite(bad), bad


def agentv_jsonl(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    evalfile = put(tmp / "e.yaml", "execution:\n  target: t\ntests: cases.jsonl\n")
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    line = b'{"id": "t", "input": "hi", "metadata": {"note": ' + value + b"}}\n"
    bad = put(tmp / "cases.jsonl", b'{"id": "u", "input": "hello"}\n' + line)
    return lambda: load_suite(evalfile), bad


def agentv_tests_yaml(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    evalfile = put(tmp / "e.yaml", "execution:\n  target: t\ntests: cases.yaml\n")
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    bad = put(tmp / "cases.yaml", AGENTV_TEST + b"    metadata: {note: " + value + b"}\n")
    return lambda: load_suite(evalfile), bad


def agentv_targets(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    evalfile = put(tmp / "e.yaml", b"execution:\n  target: t\ntests:\n" + AGENTV_TEST)
    bad = put(tmp / "providers.yaml", TARGETS.encode() + b"    note: " + value + b"\n")
    return lambda: load_suite(evalfile, TargetOptions(providers_file=bad)), bad


def agentv_beside_targets(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    evalfile = put(tmp / "e.yaml", b"execution:\n  target: t\ntests:\n" + AGENTV_TEST)
    bad = put(tmp / ".agentv" / "targets.yaml", TARGETS.encode() + b"    note: " + value + b"\n")
    return lambda: load_suite(evalfile), bad


def run_config(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    put(tmp / "model.yaml", "generator: a2a\nurl: http://127.0.0.1:9\nmodels: [openai:gpt-4o]\n")
    put(tmp / "set.evalset.json", '{"scenarios": [{"id": "s", "starting_prompt": "hi"}]}')
    bad = put(tmp / "run.yaml", b"dataset_config: set.evalset.json\nmodel_config: model.yaml\nnote: " + value + b"\n")
    return lambda: load_run_config(bad), bad


def model_config(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(
        tmp / "model.yaml", b"generator: a2a\nurl: http://127.0.0.1:9\nmodels: [openai:gpt-4o]\nname: " + value + b"\n"
    )
    put(tmp / "set.evalset.json", '{"scenarios": [{"id": "s", "starting_prompt": "hi"}]}')
    run = put(tmp / "run.yaml", "dataset_config: set.evalset.json\nmodel_config: model.yaml\n")
    return lambda: load_run_config(run), bad


def rubric(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    bad = put(tmp / "r.yaml", b"criteria:\n  - name: c\n    weight: 1\n    description: " + value + b"\n")
    return lambda: load_rubric(str(bad)), bad


def results_file(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    """agentic-v2-eval's results file, read as `bat-pipeline report results.json` and
    `evaluate` read it (their commands print the refusal: the reader raises it)."""
    from bat_pipeline.report_commands import _records

    bad = put(tmp / "results.json", b'{"results": [{"input": "x", "output": "y", "Accuracy": ' + value + b"}]}")
    return lambda: _records(bad), bad


def agent_dotenv(tmp: Path, value: bytes) -> tuple[Callable[[], object], Path]:
    """The agent folder's `.env`, read with eval.yaml when no environment is given."""
    put(tmp / "eval" / "eval.yaml", "models:\n  - openai:gpt-4o\n")
    bad = put(tmp / ".env", b"NOTE=" + value + b"\nOTHER=1\n")
    return lambda: load_eval_config(tmp), bad


YAML_READERS: dict[str, Reader] = {
    "eval.yaml": eval_yaml,
    "agent config.yaml": agent_config,
    "AgentV eval file": agentv_file,
    "AgentV tests YAML file": agentv_tests_yaml,
    "AgentV --providers file": agentv_targets,
    "AgentV .agentv/targets.yaml": agentv_beside_targets,
    "EvalBench run config": run_config,
    "EvalBench model config": model_config,
    "agentic-v2-eval rubric": rubric,
}
JSON_READERS: dict[str, Reader] = {
    "tasks.json": tasks_json,
    "EvalBench evalset": evalset,
    "EvalBench NL2SQL dataset": nl2sql,
    "AgentV cases.jsonl": agentv_jsonl,
    "agentic-v2-eval results file": results_file,
}
TEXT_READERS: dict[str, Reader] = {"agent .env": agent_dotenv}
"""Readers of files that are text, not a tree: only their bytes can be hostile."""
