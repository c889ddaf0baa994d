"""The agent folder under evaluation: its validated eval.yaml, dataset and storage root."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from bat_pipeline.engine.contracts import EvalConfig, Task
from bat_pipeline.engine.loading import load_eval_config, load_tasks


class EvaluationResource(dg.ConfigurableResource):
    """Which agent is evaluated, and where results are kept."""

    agent_dir: str
    """The agent folder holding `eval/eval.yaml`."""
    storage_root: str
    """Shared storage for partition files, the judge cache and the warehouse."""

    _config: EvalConfig | None = PrivateAttr(default=None)

    def config(self) -> EvalConfig:
        if self._config is None:
            self._config = load_eval_config(Path(self.agent_dir))
        return self._config

    def tasks(self, warnings: list[str] | None = None) -> list[Task]:
        """The dataset; what it ignored is appended to `warnings`."""
        config = self.config()
        return load_tasks(config.resolve(config.evaluation.dataset), warnings)

    @property
    def root(self) -> Path:
        return Path(self.storage_root)
