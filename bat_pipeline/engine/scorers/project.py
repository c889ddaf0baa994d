"""A project's own scorers: the modules `evaluation.scorers` of eval.yaml names."""

from __future__ import annotations

import sys
import traceback

from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.registry import load_modules


def load_project_scorers(config: EvalConfig) -> None:
    """Import every module of `evaluation.scorers` (each registers its scorers); a module
    already imported is not imported again. Modules are looked up on `sys.path`, then in
    the agent folder (added at the end of `sys.path`, so it never shadows an installed
    package). A module that cannot be imported, or raises while it registers, is refused:
    InputError naming eval.yaml, `evaluation` and `scorers[i]`."""
    folder = str(config.agent_dir)
    if config.evaluation.scorers and folder not in sys.path:
        sys.path.append(folder)
    for index, name in enumerate(config.evaluation.scorers):
        try:
            load_modules([name])
        except Exception as exc:  # noqa: BLE001 - any error importing the user's module refuses eval.yaml
            last = traceback.extract_tb(exc.__traceback__)[-1:] if not isinstance(exc, ImportError) else []
            where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
            raise InputError(
                str(config.source),
                f"cannot import scorer module '{name}': {type(exc).__name__}: {exc}{where}",
                entry="evaluation",
                field=f"scorers[{index}]",
            ) from None
