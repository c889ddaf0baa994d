"""Weighted YAML rubrics (agentic-v2-eval's format, SPEC §11–§12): criteria with weights,
ranges and levels, hard gates and thresholds; loading (built-in names or files) and
scoring. Pure: files are read, nothing else."""

from bat_pipeline.engine.yaml_rubrics.load import BAT, BUILTIN, load_rubric, resolve_rubric_names
from bat_pipeline.engine.yaml_rubrics.model import Criterion, HardGate, Rubric, Thresholds
from bat_pipeline.engine.yaml_rubrics.scoring import GateFailure, ScoringResult, score

__all__ = [
    "BAT",
    "BUILTIN",
    "Criterion",
    "GateFailure",
    "HardGate",
    "Rubric",
    "ScoringResult",
    "Thresholds",
    "load_rubric",
    "resolve_rubric_names",
    "score",
]
