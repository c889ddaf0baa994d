"""Where a run's time goes: the phases every run is timed by (issue 14).

Each step of a partition records the phases it spans into the partition's
`timings.json`; `metrics.json` carries them under `timings`, the warehouse in
`phase_timings`, the run log line by line, and `bat-pipeline run --timings` as a table.
"""

from __future__ import annotations

PHASES: dict[str, str] = {
    "startup": "from the run starting (`bat-pipeline run`, else the Dagster run) to the episodes step "
    "launching or adopting the agent",
    "agent_start": "the step waiting for the agent to answer its agent card (0 for an agent at agent.url); "
    "under `bat-pipeline run` the agent was launched at the start and came up meanwhile",
    "conversations": "the first conversation started until the last episode was stored",
    "shutdown": "the agent stopped: SIGTERM until its process group was gone",
    "spans": "the span files settled and read, every trajectory built",
    "verdicts": "the deterministic scorers of every episode",
    "judge": "the LLM scorers of every episode (0 when the judge is off)",
    "metrics": "metrics.json, summary.json and the warehouse rows",
    "charts": "the charts of the agent, drawn once per run for every model",
}
"""Phase → what it measures, in the order a run goes through them."""

RUN_STARTED_VAR = "BAT_PIPELINE_RUN_STARTED"
"""Set by `bat-pipeline run` for its partitions: the Unix time it started, which the
`startup` phase counts from."""
