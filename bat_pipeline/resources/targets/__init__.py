"""AgentV targets run as processes (SPEC §9, §12): `cli` per test and attempt
(`cli.py`), `cli` with batch requests once per partition (`batch_cli.py`), and the
partition's run of either with its healthcheck first (`run.py`); what the two command
targets share is in `command_runs.py`."""

from bat_pipeline.resources.targets.run import TargetHealthError, collect_target_episodes

__all__ = ["TargetHealthError", "collect_target_episodes"]
