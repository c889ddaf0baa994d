"""The evaluation itself, with no Dagster: one module per stage over the records in `contracts`.

config / agent_folder → conversation → spans + trajectories → verdicts → judge_view + rubrics
→ metrics + gates → charts.
"""
