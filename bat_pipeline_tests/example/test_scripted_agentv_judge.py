"""The scripted judge answers AgentV 4.42.4's own LLM-grader prompts (freeform, checklist,
score ranges: told apart by the answer schema its system message shows) with the key-term
rule it applies to bat_pipeline's question for the same grader, so AgentV and bat_pipeline
graded by it give one score (bat_pipeline_tests/agentv_corpus relies on it). The prompts
here carry AgentV's section markers and schema fields, not its wording."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion, Message
from bat_pipeline.engine.scorers.llm_grader import grading_messages
from bat_pipeline.example.scripted_llm import ScriptedLLM, serve_scripted_llm

FREEFORM = 'Answer with JSON:\n{\n  "score": <0..1>,\n  "assertions": [\n    {"text": "...", "passed": <bool>}\n  ]\n}'
CHECKLIST = 'Return JSON: {"checks": [{"id": "...", "satisfied": boolean, "reasoning": "..."}]}'
RANGES = 'Return JSON: {"checks": [{"id": "...", "score": integer (0-10), "reasoning": "..."}]}'
CRITERIA = "Names Paris and the Seine\nand mentions France"
ANSWER = "Paris is lovely.\nIt lies on the Seine."


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLM]:
    with serve_scripted_llm() as running:
        yield running


def ask(server: ScriptedLLM, system: str, user: str) -> dict:
    body = {
        "model": "scripted-judge",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    reply = httpx.post(server.base_url + "/v1/chat/completions", json=body, timeout=10)
    reply.raise_for_status()
    text = reply.json()["choices"][0]["message"]["content"]
    return json.loads(text[text.index("{") :])  # the judge's other answers end prose with JSON


def agentv_prompt(criteria: str, answer: str, tail: str = "") -> str:
    return (
        f"Grade it.\n\n[[ ## criteria ## ]]\n{criteria}\n\n[[ ## question ## ]]\nWhere is Paris?\n\n"
        f"[[ ## reference_answer ## ]]\nOn the Seine.\n\n[[ ## answer ## ]]\n{answer}\n{tail}"
    )


def test_freeform_prompt_scores_the_criteria_terms_found_in_the_whole_answer(server):
    # terms: Names, Paris, Seine, France (the criteria's two lines); Paris and Seine are in
    # the answer (its two lines), France is not: 2 of 4
    found = ask(server, FREEFORM, agentv_prompt(CRITERIA, ANSWER))
    assert found["score"] == 0.5 and found["assertions"][0]["passed"] is True
    assert ask(server, FREEFORM, agentv_prompt(CRITERIA, ""))["score"] == 0.0
    assert ask(server, FREEFORM, agentv_prompt("be nice", "hello"))["score"] == 0.5  # no term


def test_bat_pipelines_question_for_the_same_grader_gets_the_same_score(server, tmp_path: Path):
    case = AgentvCase(
        id="t",
        prompt="Where is Paris?",
        input=[Message(role="user", content="Where is Paris?")],
        expected_output=[Message(role="assistant", content="On the Seine.")],
        criteria=CRITERIA,
        format="v4",
        eval_file=tmp_path / "eval.yaml",
    )
    grader = Assertion(name="llm-grader", type="llm-rubric", options={"grading": ""})
    body = {"model": "scripted-judge", "messages": grading_messages(grader, case, ANSWER)}
    reply = httpx.post(server.base_url + "/v1/chat/completions", json=body, timeout=10).json()
    text = reply["choices"][0]["message"]["content"]
    ours = json.loads(text[text.index("{") :])
    assert ours["score"] == ask(server, FREEFORM, agentv_prompt(CRITERIA, ANSWER))["score"] == 0.5


def test_checklist_prompt_checks_each_rubric_item(server):
    rubrics = (
        "[[ ## rubrics ## ]]\n- [r1]: Mentions Paris\n- [r2] (REQUIRED) (weight: 2): Mentions France and Europe\n"
        "- [r3]: is polite\n\nDecide each."
    )
    found = ask(server, CHECKLIST, agentv_prompt(CRITERIA, ANSWER, rubrics))
    assert [(c["id"], c["satisfied"]) for c in found["checks"]] == [("r1", True), ("r2", False), ("r3", True)]


def test_score_range_prompt_scores_description_and_top_band(server):
    ranges = (
        "[[ ## scoring_criteria ## ]]\n\n### Criterion: accuracy (weight: 2) [REQUIRED: min score 8]\n"
        "Description: mentions Paris\nScore ranges:\n  - Score 0-4: a wrong city\n  - Score 5-10: the Seine and Lyon\n"
        "\n### Criterion: tone\nScore ranges:\n  - Score 0-5: rude\n  - Score 6-10: kind\n\nScore each."
    )
    found = ask(server, RANGES, agentv_prompt(CRITERIA, ANSWER, ranges))
    # accuracy: Paris, Seine found, Lyon not: 2 of 3 → 7; tone: no term → 5
    assert [(c["id"], c["score"]) for c in found["checks"]] == [("accuracy", 7), ("tone", 5)]


def test_other_judge_prompts_are_not_taken_for_agentvs(server):
    found = ask(server, FREEFORM, "Rubric: task completion.\nExpected outcome: Paris\nFinal answer: Paris")
    assert "reasoning" in found and "assertions" not in found
