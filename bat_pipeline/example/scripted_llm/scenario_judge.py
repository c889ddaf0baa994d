"""The judge persona's answers to EvalBench's scenario scorers (`goal_completion`,
`behavioral_metrics`); keyword heuristics over the prompt's sections, not a model.

- goal completion: each sentence of the plan is a sub-goal, met when its quoted phrases
  were said by the user and answered, and its other key terms (capitalised words but the
  first, numbers) appear in the agent's replies;
- behaviour: a hallucination is a temperature (`N°`) in the agent's replies that is
  nowhere in its recorded steps; an unnecessary clarification is a question from the agent
  right after a user message that named a place (a capitalised word after the first).
"""

from __future__ import annotations

import json
import re

from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply

STOP = {
    "The",
    "A",
    "An",
    "It",
    "If",
    "And",
    "Or",
    "Then",
    "This",
    "That",
    "When",
    "Ask",
    "Check",
    "Say",
    "Answer",
    "Ensure",
    "Verify",
    "You",
    "Your",
    "Which",
    "What",
    "Make",
    "Finally",
    "First",
    "Next",
}
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def _section(prompt: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def _pairs(conversation: str) -> list[tuple[str, str]]:
    return re.findall(r"^User: (.*?)(?: \[simulated user\])?\nAgent: (.*?)$", conversation, re.MULTILINE)


def handles(conv: Conversation) -> str | None:
    """`goal_completion` or `behavioral_metrics` when the prompt asks that scorer's question."""
    system = " ".join(m.text for m in conv.messages if m.role == "system")
    if '"sub_goals"' in system:
        return "goal_completion"
    if '"hallucinations"' in system:
        return "behavioral_metrics"
    if '"parameter_feedback"' in system:
        return "parameter_analysis"
    if '"rubric_passed"' in system:
        return "binary_rubric_scorer"
    if '"progressive_disclosure"' in system:
        return "skills_best_practices"
    return None


def goals(prompt: str) -> dict:
    plan = _section(prompt, "Conversation Plan")
    pairs = _pairs(_section(prompt, "Conversation"))
    agent_text = " ".join(a for _, a in pairs)
    answered = {u.strip() for u, a in pairs if a.strip() and a.strip() != "(no answer)"}
    sub_goals = []
    for sentence in (s.strip() for s in re.split(r"(?<=[.;!?])\s+", plan) if s.strip()):
        quoted = [a or b for a, b in _QUOTED.findall(sentence)]
        bare = _QUOTED.sub(" ", sentence).split(" ", 1)[-1]  # a sentence's first word is capitalised anyway
        terms = [w for w in re.findall(r"\b[A-Z][a-zA-Z]+\b|-?\d+", bare) if w not in STOP]
        missing = [q for q in quoted if q not in answered] + [t for t in terms if t.lower() not in agent_text.lower()]
        sub_goals.append(
            {
                "goal": sentence,
                "met": not missing,
                "reasoning": f"missing: {missing}" if missing else "all of it shows in the conversation",
            }
        )
    return {
        "sub_goals": sub_goals or [{"goal": "(empty plan)", "met": True, "reasoning": "nothing to do"}],
        "summary": "scripted stand-in judge (keyword heuristics, not a model)",
    }


def behaviour(prompt: str) -> dict:
    steps = _section(prompt, "Recorded steps of the agent")
    pairs = _pairs(_section(prompt, "Conversation"))
    hallucinations = [
        {"evidence": f"{t} in “{a[:80]}” is in no recorded step"}
        for _, a in pairs
        for t in re.findall(r"-?\d+°", a)
        if t not in steps
    ]
    clarifications = [
        {"evidence": f"asked “{a[:80]}” after “{u[:80]}”"}
        for u, a in pairs
        if a.rstrip().endswith("?") and re.search(r"\s[A-Z][a-z]+", u)
    ]
    return {
        "hallucinations": hallucinations,
        "unnecessary_clarifications": clarifications,
        "ignored_instructions": [],
        "summary": "scripted stand-in judge (keyword heuristics, not a model)",
    }


def parameters(prompt: str) -> dict:
    steps = _section(prompt, "Recorded steps of the agent")
    tools = re.findall(r"tool ([^\s<(]+)\(", steps)
    return {
        "parameter_feedback": [{"tool": t, "feedback": "arguments as the user asked"} for t in tools],
        "summary": "scripted stand-in judge (keyword heuristics, not a model)",
    }


def rubric(system: str, prompt: str) -> dict:
    """Passed when the criterion's quoted phrases and key terms all show in the agent's replies."""
    criterion = system.rsplit("The criterion: ", 1)[-1]
    agent_text = " ".join(a for _, a in _pairs(_section(prompt, "Conversation"))).lower()
    quoted = [a or b for a, b in _QUOTED.findall(criterion)]
    terms = re.findall(r"\b[A-Z][a-zA-Z]+\b|-?\d+", _QUOTED.sub(" ", criterion).split(" ", 1)[-1])
    missing = [t for t in [*quoted, *terms] if t not in STOP and t.lower() not in agent_text]
    return {"rubric_passed": not missing, "reasoning": f"missing: {missing}" if missing else "it shows in the replies"}


def skill_grade(prompt: str) -> dict:
    """100, less 20 for a TODO and 20 for a body of over 40 lines (four categories at 20 each)."""
    body = _section(prompt, "SKILL.md")
    todo = "TODO" in body
    long = len(body.splitlines()) > 40
    part = {"score": 20, "comment": "fine"}
    return {
        "score": 100 - 20 * todo - 20 * long,
        "metadata_quality": part,
        "conciseness": {"score": 0 if long else 20, "comment": "long" if long else "fine"},
        "progressive_disclosure": part,
        "clarity": part,
        "content_quality": {"score": 0 if todo else 20, "comment": "a TODO" if todo else "fine"},
        "summary": "scripted stand-in judge (keyword heuristics, not a model)",
    }


def respond(conv: Conversation, scorer: str) -> Reply:
    prompt = conv.prompt_text()
    system = " ".join(m.text for m in conv.messages if m.role == "system")
    answers = {
        "goal_completion": lambda: goals(prompt),
        "behavioral_metrics": lambda: behaviour(prompt),
        "parameter_analysis": lambda: parameters(prompt),
        "binary_rubric_scorer": lambda: rubric(system, prompt),
        "skills_best_practices": lambda: skill_grade(prompt),
    }
    return Reply(text=json.dumps(answers[scorer]()))
