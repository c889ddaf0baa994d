"""The hashes of a run's provenance: pure functions over what was read."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.contracts.tasks import Task


def digest(data: Any) -> str:
    """16 hex digits of the sha256 of `data` as canonical JSON (sorted keys)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def dataset_hash(tasks: Sequence[Task]) -> str:
    """The tasks as read, in order: ids, turns, expectations, metadata."""
    return digest([task.model_dump(mode="json") for task in tasks])


def config_hash(config: EvalConfig) -> str:
    """What decides how episodes are judged and measured: the evaluation, judge, metrics,
    simulated-user and report settings; the models (the partitions compared) and where the
    files live are left out."""
    return digest(
        config.model_dump(
            mode="json",
            include={"evaluation", "judge", "metrics", "simulated_user", "report"},
            exclude={"evaluation": {"output_dir", "schedule", "watch", "run_name"}},
        )
    )


def judge_model(config: EvalConfig) -> str | None:
    """`provider:model` of the judge the configuration names (null without one)."""
    judge = config.judge
    return None if judge is None else f"{judge.provider}:{judge.model}"
