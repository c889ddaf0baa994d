"""Where a run's figures came from: what must match for two runs to be compared like for
like (SPEC §13; `bat-pipeline compare`)."""

from __future__ import annotations

from pydantic import BaseModel


class Provenance(BaseModel):
    """Recorded once per partition, when its episodes start."""

    agent_commit: str | None = None
    """The agent folder's git commit (HEAD), when the folder is in a git repository."""
    agent_dirty: bool | None = None
    """Tracked files of the agent folder differ from that commit (untracked files do not
    count: results and caches live there); null outside git."""
    dataset_hash: str = ""
    """sha256 (16 hex digits) of the tasks as read (engine.provenance.dataset_hash)."""
    config_hash: str = ""
    """sha256 (16 hex digits) of the evaluation settings, models left out."""
    judge_model: str | None = None
    """`provider:model` of the judge; null when nothing is judged."""
    pipeline_version: str = ""
    """bat_pipeline's version."""
