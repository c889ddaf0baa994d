"""The two judge kinds that grade every dimension in one JSON answer.

`standard`: five dimensions of the agent's answer on 0–10 (clarity, effectiveness,
structure, specificity, completeness), with improvements and a confidence; the overall
score is their mean, passing at ≥ 7, with a letter grade A–F (engine.llm_judges.rubric_rows).
The answer is cut to its first 16,000 and last 1,000 characters, with a marker, when longer
than 18,000 (llm_judges.view.cut_long).

`pattern`: conformance to a reasoning pattern (ReAct, CoVe, Reflexion, RAG): seven
universal dimensions and three of the pattern's own, each 0–5, with hard gates (checked on
the medians when the judge runs N times)."""

from __future__ import annotations

import math
from typing import Any

from bat_pipeline.engine.judge_answers import after_thinking, json_objects
from bat_pipeline.engine.yaml_rubrics import Rubric

STANDARD_DIMENSIONS = {
    "clarity": "The answer is easy to read and leaves no doubt about what it says.",
    "effectiveness": "The answer does what the request needed done.",
    "structure": "The answer is ordered so the reader finds each part where they expect it.",
    "specificity": "The answer is concrete: names, numbers and steps rather than generalities.",
    "completeness": "Every part of the request is dealt with.",
}

UNIVERSAL = {
    "task_fidelity": "The output works on the task it was given, not a neighbouring one.",
    "visible_reasoning": "The reasoning steps are written out where the pattern expects them.",
    "step_order": "Steps follow the order the pattern prescribes.",
    "grounding": "Claims rest on observations, checks or sources the output shows.",
    "self_consistency": "No step contradicts an earlier one.",
    "termination": "The process stops for a stated reason with one final answer.",
    "answer_quality": "The final answer is correct and useful.",
}

PATTERNS: dict[str, tuple[str, dict[str, str]]] = {
    "react": (
        "ReAct: alternating thought, action and observation until an answer",
        {
            "thought_action_pairing": "Each action is preceded by a thought that motivates it.",
            "observation_use": "Each observation is read and changes the next thought.",
            "action_validity": "Actions are well-formed calls of the tools available.",
        },
    ),
    "cove": (
        "Chain-of-Verification: a draft, verification questions, independent answers, a revised answer",
        {
            "draft_present": "A first draft answer is stated before any checking.",
            "verification_questions": "Specific questions that would expose errors in the draft are asked.",
            "revision_from_checks": "The final answer changes wherever the checks found a problem.",
        },
    ),
    "reflexion": (
        "Reflexion: an attempt, a self-critique, and a new attempt that uses the critique",
        {
            "self_critique": "The output names concrete faults of its own earlier attempt.",
            "critique_applied": "The next attempt fixes the faults the critique named.",
            "iteration_improvement": "Later attempts are measurably better than earlier ones.",
        },
    ),
    "rag": (
        "Retrieval-augmented generation: retrieve, then answer from what was retrieved",
        {
            "retrieval_cited": "The answer points to the retrieved passages it uses.",
            "context_faithfulness": "Nothing in the answer goes beyond or against the retrieved text.",
            "gaps_admitted": "Where the retrieved text is silent, the answer says so rather than guessing.",
        },
    ),
}

_LEVELS = {0.0: "absent", 5.0: "fully"}


def standard_rubric() -> Rubric:
    return Rubric.model_validate(
        {
            "name": "standard",
            "source": "builtin:standard",
            "metadata": {"letter_grades": True},
            "criteria": [
                {"name": n, "description": d, "min_value": 0, "max_value": 10} for n, d in STANDARD_DIMENSIONS.items()
            ],
            "thresholds": {"pass": 0.7},
        }
    )


def pattern_rubric(pattern: str) -> Rubric:
    """The pattern's dimensions as a rubric: 0–5 each; gates: step order ≥ 3, termination
    ≥ 2, and the pattern's first own dimension ≥ 3."""
    _, own = PATTERNS[pattern]
    dims = {**UNIVERSAL, **own}
    return Rubric.model_validate(
        {
            "name": f"pattern:{pattern}",
            "source": f"builtin:pattern:{pattern}",
            "metadata": {"pattern": pattern},
            "criteria": [{"name": n, "description": d, "levels": _LEVELS} for n, d in dims.items()],
            "hard_gates": [
                {"criterion": "step_order", "minimum": 3},
                {"criterion": "termination", "minimum": 2},
                {"criterion": next(iter(own)), "minimum": 3},
            ],
        }
    )


def _schema(names: list[str], extra: dict[str, Any]) -> dict[str, Any]:
    scores = {
        "type": "object",
        "properties": {n: {"type": "number"} for n in names},
        "required": names,
        "additionalProperties": False,
    }
    props = {"scores": scores, **extra}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


STANDARD_SCHEMA = _schema(
    list(STANDARD_DIMENSIONS),
    {"improvements": {"type": "array", "items": {"type": "string"}}, "confidence": {"type": "number"}},
)


def pattern_schema(pattern: str) -> dict[str, Any]:
    return _schema([c.name for c in pattern_rubric(pattern).criteria], {"reasoning": {"type": "string"}})


def _dims(rubric: Rubric) -> str:
    return "\n".join(f"- {c.name}: {c.description}" for c in rubric.criteria)


def standard_messages(view: str) -> list[dict[str, str]]:
    rubric = standard_rubric()
    system = (
        "You review the answer an AI agent gave and grade it on five dimensions, each from 0 (worst) to 10 "
        f'(best):\n{_dims(rubric)}\n\nReply with one JSON object: {{"scores": {{dimension: number}}, '
        '"improvements": [short suggestions], "confidence": number from 0 to 1}.'
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{view}\n\nAnswer format: standard json"},
    ]


def pattern_messages(pattern: str, view: str) -> list[dict[str, str]]:
    rubric = pattern_rubric(pattern)
    what, _ = PATTERNS[pattern]
    system = (
        f"You check whether an AI agent's work follows a reasoning pattern — {what} — and grade each "
        f"dimension from 0 (absent) to 5 (fully met):\n{_dims(rubric)}\n\nReply with one JSON object: "
        '{"scores": {dimension: number}, "reasoning": a few sentences}.'
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{view}\n\nAnswer format: pattern json"},
    ]


def _last_object(text: str) -> dict[str, Any]:
    found = [obj for obj in json_objects(text, nested=True) if isinstance(obj.get("scores"), dict)]
    if not found:
        raise ValueError("no JSON object with 'scores' in the answer")
    return found[-1]


def parse_graded(rubric: Rubric, text: str) -> dict[str, Any]:
    """The judge's JSON (the last object holding `scores`): `scores` kept for the rubric's
    criteria that are finite numbers (others are missing), the rest as given. Raises
    ValueError when there is no such object, or no criterion has a number."""
    found = _last_object(after_thinking(text))
    scores: dict[str, float] = {}
    for criterion in rubric.criteria:
        value = found["scores"].get(criterion.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            scores[criterion.name] = float(value)
    if not scores:
        raise ValueError(f"no usable score for any of {', '.join(c.name for c in rubric.criteria)}")
    return {**found, "scores": scores}
