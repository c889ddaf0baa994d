"""bat_pipeline: agent evaluation as a Dagster asset graph (README.md, docs/architecture.md)."""

PROGRAM = "bat-pipeline"
"""The command's name (pyproject.toml's console script), for what the commands print."""
