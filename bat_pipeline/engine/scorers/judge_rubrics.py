"""bat-cli's four judge rubrics (SPEC §7) as LLM scorers: `relevance`, `task_completion`,
`hallucination`, `tool_call`, one question each, prompts from engine.rubrics.

Each writes one row: criterion = the episode's score field (`response_relevance`, ...),
value = the judge's score in 0..1 (raw the same, scale `0..1`), passed null, not gating
(judge rows never change a bat-cli verdict, SPEC §13), reason = the judge's reasoning.
Without a value the reason says why:
- `outcome` mode: task completion alone is asked, from the request and the final answer;
  the three others are `skipped: judge mode is outcome …`;
- `full` mode: `tool_call` is `skipped: the task expects no tool calls` for a task without
  expected tool calls;
- an episode whose attempt failed: `not judged: …` for every rubric the mode asks (none
  skipped); a task no longer in the dataset: `judge failed: …` likewise;
- a failed question or prompt: `judge failed: <why>`.
"""

from __future__ import annotations

from collections.abc import Callable

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.contracts.scores import SCORE_FIELDS, UNIT, ScoreRow
from bat_pipeline.engine.llm_judges.plan import judge_plan
from bat_pipeline.engine.rubrics import JSON_SCHEMA, build_messages, parse_answer, skipped_rubrics
from bat_pipeline.engine.scorers.judging import FAILED, SKIPPED, Judge, JudgeQuestion, cannot_judge, null_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics.load import BAT

ORDER = 500
"""After every deterministic scorer, in bat-cli's rubric order."""
SCALE = UNIT


def bat_task(item: ScoringInput) -> bool:
    """bat-cli's rubrics judge bat-cli tasks; an AgentV test is judged by its own LLM graders."""
    return item.task.agentv is None


def _bat(item: ScoringInput) -> bool:
    """Asked of a bat-cli task when its rubrics include `bat` (the default: `judge.rubrics` unset)."""
    settings = item.options if isinstance(item.options, JudgeSettings) else None
    return bat_task(item) and BAT in judge_plan(item.task, settings).rubrics


def _selected(rubric: str) -> Callable[[ScoringInput], bool]:
    """bat-cli tasks whose rubrics include `bat` (`_bat`), except an EvalBench scenario whose
    run config names its scorers and not this rubric (SPEC §12: the run config's `scorers`
    choose)."""

    def applies(item: ScoringInput) -> bool:
        return _bat(item) and (item.task.scenario is None or item.task.scenario.selects(rubric))

    return applies


async def ask_rubric(rubric: str, item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    """The row of one rubric (module docstring); `item.options` is the JudgeSettings."""
    settings: JudgeSettings = item.options
    field = SCORE_FIELDS[rubric]
    outcome_only = settings.mode == "outcome" and rubric != "task_completion"
    why = cannot_judge(item)
    if why:
        return [] if outcome_only else [null_row(rubric, field, judge.name, why, scale=SCALE)]
    skipped = skipped_rubrics(item.task, settings.mode).get(rubric)
    if skipped:
        return [null_row(rubric, field, judge.name, SKIPPED + skipped, scale=SCALE)]
    try:
        messages = build_messages(rubric, item.task, item.episode, settings)
    except Exception as exc:  # noqa: BLE001 - odd data in one episode must not stop the others
        return [
            null_row(
                rubric,
                field,
                judge.name,
                f"{FAILED}could not build the prompt: {type(exc).__name__}: {exc}",
                scale=SCALE,
            )
        ]
    answer = await judge.ask(JudgeQuestion(purpose=rubric, messages=messages, parse=parse_answer, schema=JSON_SCHEMA))
    if answer.value is None:
        return [null_row(rubric, field, judge.name, FAILED + (answer.error or "no answer"), scale=SCALE)]
    score, reasoning = answer.value
    return [ScoreRow.unit(rubric, field, score, judge=judge.name, reason=reasoning)]


@llm("relevance", order=ORDER, applies=_selected("relevance"))
async def relevance(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await ask_rubric("relevance", item, judge)


@llm("task_completion", order=ORDER + 1, applies=_selected("task_completion"))
async def task_completion(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await ask_rubric("task_completion", item, judge)


@llm("hallucination", order=ORDER + 2, applies=_selected("hallucination"))
async def hallucination(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await ask_rubric("hallucination", item, judge)


@llm("tool_call", order=ORDER + 3, applies=_selected("tool_call"))
async def tool_call(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await ask_rubric("tool_call", item, judge)
