"""The judge persona's answers to AgentV's own LLM-grader prompts (AgentV 4.42.4 sends them
when the scripted server is its grader target), scored by the same keyword rule as the
judge's answers to bat_pipeline's AgentV graders (judge.py), so both tools grade one answer
alike. Three prompts, told apart by the answer schema in the system message:

- freeform (`"score"` and `"assertions"`): the `[[ ## criteria ## ]]` section's key terms
  found in the `[[ ## answer ## ]]` section; answers `{score, assertions: [...]}`;
- checklist (`"satisfied"`): one check per `- [id]...: outcome` line under
  `[[ ## rubrics ## ]]`, satisfied when at least half of the outcome's key terms are in
  the answer (an outcome with none: when the answer is not empty);
- score ranges (`"integer (0-10)"`): per `### Criterion: id`, ten times the share of the
  key terms of its description and its top band (the one reaching 10) in the answer,
  rounded (5 with no term), as judge.ranges_answer scores bat_pipeline's question.
An empty answer meets nothing.
"""

from __future__ import annotations

import json
import re

from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply

_SECTION = re.compile(r"^\[\[ ## (\w+) ## \]\]\s*$", re.MULTILINE)


def handles(conv: Conversation) -> str | None:
    """ "freeform", "checklist" or "score_range" for an AgentV grader prompt, else None."""
    system = "\n".join(m.text for m in conv.messages if m.role == "system")
    user = conv.last_user_text()
    if "[[ ## answer ## ]]" not in user:
        return None
    if '"satisfied": boolean' in system:
        return "checklist"
    if "integer (0-10)" in system:
        return "score_range"
    if '"assertions": [' in system:
        return "freeform"
    return None


def sections(prompt: str) -> dict[str, str]:
    """The text of each `[[ ## name ## ]]` section, up to the next one."""
    marks = list(_SECTION.finditer(prompt))
    out: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(prompt)
        out[mark.group(1)] = prompt[mark.end() : end].strip()
    return out


def share_in(text: str, answer: str) -> float:
    """The judge's keyword rule (judge.py): 0 for an empty answer, 0.5 when `text` has no
    key term, else the share of its terms found in the answer."""
    from bat_pipeline.example.scripted_llm.judge import _share, _terms

    if not answer.strip():
        return 0.0
    share, _ = _share(_terms(text), answer)
    return 0.5 if share is None else share


def respond(conv: Conversation, mode: str) -> Reply:
    prompt = conv.last_user_text()
    parts = sections(prompt)
    answer = parts.get("answer", "")
    if mode == "freeform":
        value = round(share_in(parts.get("criteria", ""), answer), 2)
        body: dict[str, object] = {
            "score": value,
            "assertions": [{"text": "criteria terms in the answer", "passed": value >= 0.5}],
        }
    elif mode == "checklist":
        items = re.findall(r"^- \[([^\]]+)\][^:\n]*: (.*)$", parts.get("rubrics", ""), re.MULTILINE)
        body = {
            "checks": [
                {"id": rid, "satisfied": share_in(outcome, answer) >= 0.5, "reasoning": "outcome terms in the answer"}
                for rid, outcome in items
            ],
            "overall_reasoning": "scripted stand-in judge (keyword heuristics, not a model)",
        }
    else:
        blocks = re.split(r"^### Criterion: ", parts.get("scoring_criteria", ""), flags=re.MULTILINE)[1:]
        checks = []
        for block in blocks:
            head, _, rest = block.partition("\n")
            rid = head.split(" (")[0].split(" [")[0].strip()
            found = re.search(r"^Description: (.*)$", rest, re.MULTILINE)
            top = re.search(r"^\s+- Score (?:\d+-)?10: (.*)$", rest, re.MULTILINE)
            described = " ".join(m.group(1) for m in (found, top) if m)
            checks.append({"id": rid, "score": round(10 * share_in(described, answer)), "reasoning": "terms"})
        body = {"checks": checks, "overall_reasoning": "scripted stand-in judge (keyword heuristics, not a model)"}
    return Reply(text=json.dumps(body))
