"""Typed records exchanged between the stages (SPEC §2–8).

Field names follow the reference evaluator's files so they serialize to the same JSON.
"""

from bat_pipeline.engine.contracts.agent import AgentTarget
from bat_pipeline.engine.contracts.config import (
    PROVIDERS,
    EvalConfig,
    EvaluationSettings,
    GateSettings,
    JudgeSettings,
    MetricsSettings,
    ModelSpec,
    PanelMember,
    ReportSettings,
)
from bat_pipeline.engine.contracts.episode import (
    A2AEvent,
    Episode,
    EpisodeTrace,
    JudgeScores,
    RecordedToolCall,
    Verdict,
    VerdictCheck,
)
from bat_pipeline.engine.contracts.scores import QUALITATIVE_FIELDS, RUBRICS, SCORE_FIELDS, RubricScores, ScoreRow
from bat_pipeline.engine.contracts.tasks import (
    AgentCallExpectation,
    Expected,
    Task,
    TaskJudge,
    TaskStatus,
    ToolCallExpectation,
)
from bat_pipeline.engine.contracts.trajectory import (
    AgentStep,
    ErrorStep,
    ModelStep,
    Step,
    ToolStep,
    Totals,
    Trajectory,
    Turn,
)

__all__ = [
    "PROVIDERS",
    "QUALITATIVE_FIELDS",
    "RUBRICS",
    "SCORE_FIELDS",
    "A2AEvent",
    "AgentCallExpectation",
    "AgentStep",
    "AgentTarget",
    "Episode",
    "EpisodeTrace",
    "ErrorStep",
    "EvalConfig",
    "EvaluationSettings",
    "Expected",
    "GateSettings",
    "JudgeScores",
    "JudgeSettings",
    "MetricsSettings",
    "ModelSpec",
    "ModelStep",
    "PanelMember",
    "RecordedToolCall",
    "ReportSettings",
    "RubricScores",
    "ScoreRow",
    "Step",
    "Task",
    "TaskJudge",
    "TaskStatus",
    "ToolCallExpectation",
    "ToolStep",
    "Totals",
    "Trajectory",
    "Turn",
    "Verdict",
    "VerdictCheck",
]
