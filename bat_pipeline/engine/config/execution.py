"""Where the steps run: eval.yaml's `execution` with the command line's choice over it."""

from __future__ import annotations

from bat_pipeline.engine.contracts.config import EvalConfig, ExecutionSettings
from bat_pipeline.engine.errors import InputError


def chosen_execution(config: EvalConfig, executor: str | None, address: str | None) -> ExecutionSettings:
    """eval.yaml's `execution` with the command line's `--executor` and `--address` over it;
    InputError for an address given to another executor than Dask."""
    execution = config.execution.model_copy(
        update={k: v for k, v in (("executor", executor), ("address", address)) if v is not None}
    )
    if address and executor is None:
        execution.executor = "dask"
    if execution.address and execution.executor != "dask":
        raise InputError(
            str(config.source),
            f"a scheduler address is for the dask executor, not {execution.executor}",
            field="execution.address",
        )
    return execution
