"""The judge persona: scores rubric prompts from keyword evidence; a stand-in, not a model.

It looks for labelled lines in the prompt (`Expected outcome: ...`, `Final answer: ...` or
`Final output: ...`; JSON keys `expected_outcome` / `final_output` work too), then scores:
- task_completion: share of the expected outcome's key terms (numbers, capitalised words,
  quoted phrases) found in the final answer, lowered when the prompt shows errors;
- relevance: whether the final answer is non-empty and shares terms with the request;
- hallucination: share of the final answer's numbers that also appear elsewhere in the prompt;
- tool_call: share of the expected outcome's key terms seen outside the final answer;
- an AgentV LLM grader (`Grading criteria: ...` / `Answer to grade: ...`): share of the
  criteria's key terms found in the answer (0 for an empty answer, 0.5 with no term), passed
  at 0.5 or more; the answer then carries `passed` too.
- an AgentV score-range rubric (`Scored items:` with `- id ...` lines and their bands):
  per item, 10 × the share of its description's and top band's key terms found in the
  answer, rounded (5 with no term, 0 for an empty answer), as `{checks, overall_reasoning}`.
The rubric is the grader's when the opening names grading criteria, else the first of
hallucination / tool / relevance / completion named in the prompt's opening.
"""

from __future__ import annotations

import json
import re

from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply

STOP = {"The", "A", "An", "It", "Agent", "User", "If", "And", "Or", "Then", "This", "That", "When", "Its"}


def _field(prompt: str, labels: list[str]) -> str:
    for label in labels:
        match = re.search(rf'"{label}"\s*:\s*"((?:[^"\\]|\\.)*)"', prompt, re.IGNORECASE)
        if match:
            return match.group(1)
        match = re.search(rf"^[\W_]*{label}[\W_]*?[:=][ \t]*(.*)$", prompt, re.IGNORECASE | re.MULTILINE)
        if match:
            value = match.group(1).strip()
            if not value:
                rest = prompt[match.end() :].lstrip("\n")
                value = rest.split("\n", 1)[0].strip()
            return value
    return ""


def _terms(text: str) -> list[str]:
    terms = re.findall(r"'([^']{2,40})'|\"([^\"]{2,40})\"", text)
    out = [a or b for a, b in terms]
    out += re.findall(r"-?\d+(?:\.\d+)?", text)
    out += [w for w in re.findall(r"\b[A-Z][a-zA-Z]+\b", text) if w not in STOP]
    return list(dict.fromkeys(out))


def _share(terms: list[str], haystack: str) -> tuple[float | None, list[str]]:
    if not terms:
        return None, []
    found = [t for t in terms if t.lower() in haystack.lower()]
    return len(found) / len(terms), found


def _rubric(prompt: str) -> str:
    head = prompt[:600].lower()
    if "grading criteria" in head:
        return "grader"
    for key, name in (
        ("hallucination", "hallucination"),
        ("grounded", "hallucination"),
        ("tool", "tool_call"),
        ("relevan", "relevance"),
    ):
        if key in head:
            return name
    return "task_completion"


def answer_to_grade(prompt: str) -> str:
    """The answer in bat_pipeline's question to an AgentV grader: its last field, which may
    run over many lines."""
    found = re.search(r"^Answer to grade:[ \t]*(.*)\Z", prompt, re.MULTILINE | re.DOTALL | re.IGNORECASE)
    return found.group(1).strip() if found else _field(prompt, ["answer[ _]to[ _]grade"])


def _errors_shown(prompt: str) -> bool:
    # A placeholder such as "`FAILED: …`" in a legend explains the notation; it shows no error.
    return bool(
        re.search(
            r"\b(error|failed|exception)\b\s*[:=]\s*(?!null|none|0\b|false|\[\]|\"\"|…)[^\s`]", prompt, re.IGNORECASE
        )
    )


def score(conv: Conversation) -> tuple[float, str]:
    """(score 0..1, reasoning) for the rubric prompt in `conv`."""
    prompt = conv.prompt_text()
    rubric = _rubric(prompt)
    expected = _field(prompt, ["expected[ _]outcome", "expected"])
    final = _field(prompt, ["final[ _]answer", "final[ _]output", "final[ _]response"])
    rest = prompt.replace(final, " ") if final else prompt
    errors = _errors_shown(prompt)
    terms = _terms(expected)
    notes = [f"scripted stand-in judge (keyword heuristics, not a model); rubric {rubric}"]
    if rubric == "grader":
        # bat_pipeline's question (engine.scorers.llm_grader): criteria, input, expected output
        # and answer in that order, each possibly over many lines.
        found_criteria = re.search(r"^Grading criteria:[ \t]*(.*?)\n^Input:", prompt, re.MULTILINE | re.DOTALL)
        criteria = found_criteria.group(1).strip() if found_criteria else _field(prompt, ["grading[ _]criteria"])
        answer = answer_to_grade(prompt)
        share, found = _share(_terms(criteria), answer)
        value = 0.0 if not answer or answer == "(empty)" else (0.5 if share is None else share)
        notes.append(f"criteria terms in the answer: {found} of {_terms(criteria)}")
    elif rubric == "hallucination":
        numbers = re.findall(r"-?\d+(?:\.\d+)?", final)
        share, found = _share(numbers, rest)
        value = 1.0 if share is None else share
        notes.append(f"numbers in the final answer found elsewhere in the prompt: {len(found)}/{len(numbers)}")
    elif rubric == "tool_call":
        share, found = _share(terms, rest)
        value = 0.5 if share is None else share
        notes.append(f"expected-outcome terms seen in the steps: {found} of {terms}")
    elif rubric == "relevance":
        value = 0.0 if not final else (1.0 if _share(_terms(final), rest)[1] else 0.6)
        notes.append("final answer present" if final else "no final answer found")
    else:
        share, found = _share(terms, final)
        value = 0.0 if not final else (0.5 if share is None else share)
        notes.append(f"expected-outcome terms in the final answer: {found} of {terms}")
        if errors:
            value = max(0.0, value - 0.3)
            notes.append("the prompt shows errors")
    return round(value, 2), "; ".join(notes) + "."


def ranges_answer(prompt: str) -> dict[str, object] | None:
    """The `{checks, overall_reasoning}` answer to a score-range question, None for others."""
    if "Scored items:" not in prompt:
        return None
    block = prompt.split("Scored items:", 1)[1]
    answer = answer_to_grade(prompt)
    items: list[tuple[str, str]] = []
    for line in block.splitlines():
        head = re.match(r"^- ([^\s:]+)(.*)$", line)
        if head:
            items.append((head.group(1), head.group(2).split(":", 1)[1] if ":" in head.group(2) else ""))
        elif items and re.match(r"^\s+\d+(?:-\d+)?: ", line) and line.strip().split(":", 1)[0].endswith("10"):
            items[-1] = (items[-1][0], items[-1][1] + " " + line.split(":", 1)[1])
        elif items and line.startswith(("Input:", "Expected output:", "Answer to grade:")):
            break
    checks = []
    for item_id, text in items:
        share, found = _share(_terms(text), answer)
        value = 0 if not answer or answer == "(empty)" else (5 if share is None else round(10 * share))
        checks.append({"id": item_id, "score": value, "reasoning": f"terms in the answer: {found}"})
    return {"checks": checks, "overall_reasoning": "scripted stand-in judge (keyword heuristics, not a model)."}


def respond(conv: Conversation, think: bool = False, echo: str | None = None, pad: int = 0) -> Reply:
    """JSON content when the request asks for JSON, else prose ending with the JSON object.
    `echo`: a text the reasoning quotes (the caller's key, to test redaction); `pad`:
    characters of filler the reasoning ends with (a runaway judge). The
    agentic-v2-eval judge kinds' questions are answered by graded_judge."""
    from bat_pipeline.example.scripted_llm import graded_judge  # it reads this module's helpers

    graded = graded_judge.respond(conv)
    if graded is not None:
        return graded
    ranged = ranges_answer(conv.prompt_text())
    if ranged is not None:
        return Reply(text=json.dumps(ranged))
    value, reasoning = score(conv)
    if echo:
        reasoning += f" Judged for key {echo}."
    if pad:
        reasoning += (" and so on" * (pad // 10 + 1))[:pad]
    answer: dict[str, object] = {"reasoning": reasoning, "score": value}
    if _rubric(conv.prompt_text()) == "grader":
        answer["passed"] = value >= 0.5
    verdict = json.dumps(answer)
    if conv.wants_json:
        return Reply(text=verdict)
    prefix = "<think>Checking the evidence in the prompt against the rubric.</think>\n" if think else ""
    return Reply(text=f"{prefix}Assessment by the scripted stand-in judge follows.\n{verdict}")
