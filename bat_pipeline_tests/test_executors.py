"""Where the steps run (issue 18): eval.yaml's `execution`, the command line over it, and
the definitions each choice builds. The runs themselves: pipeline/test_dask_cluster.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.execution import chosen_execution
from bat_pipeline.engine.config.project import load_project
from bat_pipeline.engine.errors import InputError
from bat_pipeline_tests.support.example_agent import copy_example_agent


def _agent(tmp_path: Path, execution: dict | None = None) -> Path:
    agent = copy_example_agent(tmp_path / "agent")
    if execution is not None:
        eval_file = agent / "eval" / "eval.yaml"
        data = yaml.safe_load(eval_file.read_text())
        eval_file.write_text(yaml.safe_dump({**data, "execution": execution}))
    return agent


def test_eval_yaml_chooses_the_executor_and_the_command_line_wins(tmp_path: Path):
    config = load_project(_agent(tmp_path, {"executor": "dask", "address": "tcp://10.0.0.5:8786"}))
    assert (config.execution.executor, config.execution.address) == ("dask", "tcp://10.0.0.5:8786")
    assert chosen_execution(config, None, None) == config.execution
    assert chosen_execution(config, None, "tcp://127.0.0.1:9").address == "tcp://127.0.0.1:9"
    with pytest.raises(InputError, match="scheduler address is for the dask executor"):
        chosen_execution(config, "multiprocess", None)


def test_the_default_is_in_process_and_an_address_alone_means_dask(tmp_path: Path):
    config = load_project(_agent(tmp_path))
    assert chosen_execution(config, None, None).executor == "in_process"
    assert chosen_execution(config, None, "tcp://127.0.0.1:9").executor == "dask"


def test_an_unknown_executor_is_refused(tmp_path: Path):
    with pytest.raises(InputError, match="executor"):
        load_project(_agent(tmp_path, {"executor": "spark"}))


def test_steps_elsewhere_hand_over_under_the_storage_root_and_in_process_keeps_its_own_files(tmp_path: Path):
    import sys

    from bat_pipeline.automation import EVALUATE_JOB
    from bat_pipeline.definitions import build_definitions
    from bat_pipeline.engine.contracts.config import ExecutionSettings
    from bat_pipeline.resources.handoff import HandoffIOManager
    from bat_pipeline.resources.io_manager import AtomicFilesystemIOManager

    agent = _agent(tmp_path)
    default = build_definitions(agent, tmp_path / "root").resolve_job_def(EVALUATE_JOB)
    assert default.executor_def.name == "in_process" and "dagster_dask" not in sys.modules
    assert _io_manager(default) is AtomicFilesystemIOManager
    for executor, name in (("multiprocess", "multiprocess"), ("dask", "bat_dask")):
        job = build_definitions(
            agent, tmp_path / "root", execution=ExecutionSettings(executor=executor)
        ).resolve_job_def(EVALUATE_JOB)
        assert job.executor_def.name == name
        assert _io_manager(job) is HandoffIOManager


def _io_manager(job) -> type | None:
    """The class of the job's configurable I/O manager."""
    return getattr(job.resource_defs["io_manager"], "configurable_resource_cls", None)
