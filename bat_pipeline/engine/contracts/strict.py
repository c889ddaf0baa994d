"""The base of the records read from the user's files (eval.yaml, tasks.json)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Refuses a key it has no field for. The loaders (engine.config) drop the keys bat-cli
    ignores before validating, each with a warning, so what is refused here is a typo.
    Numbers are finite: YAML's `.inf` and `.nan` are refused (a timeout of `.inf`, a gate
    of `.nan` that every comparison passes)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
