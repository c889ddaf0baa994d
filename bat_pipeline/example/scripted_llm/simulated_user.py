"""The simulated-user persona: plays the user of an EvalBench scenario deterministically.

It reads the prompt's `## Conversation Plan` and `## Interaction History` sections: the
messages to send are the plan's quoted phrases ('…' or "…"), in order, after the starting
prompt; the k-th time it is asked (k = user turns already held − 1) it says the k-th
phrase, and once they are used up it says TERMINATE. A plan without quotes ends at once.
"""

from __future__ import annotations

import re

from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply

TERMINATE = "TERMINATE"
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def _section(prompt: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def next_message(prompt: str) -> str:
    """The message the plan says comes next, or TERMINATE."""
    phrases = [a or b for a, b in _QUOTED.findall(_section(prompt, "Conversation Plan"))]
    held = len(re.findall(r"^User: ", _section(prompt, "Interaction History"), re.MULTILINE))
    index = max(held - 1, 0)
    return phrases[index] if index < len(phrases) else TERMINATE


def asked(conv: Conversation) -> bool:
    """Whether the prompt is the simulated user's (its plan, history and last reply)."""
    prompt = conv.prompt_text()
    return all(f"## {title}\n" in prompt for title in ("Conversation Plan", "Interaction History", "Last Agent Reply"))


def respond(conv: Conversation) -> Reply:
    return Reply(text=next_message(conv.prompt_text()))
