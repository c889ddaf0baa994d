"""The simulated user of EvalBench scenarios (SPEC §10): what the conversation loop asks of
it (a protocol a resource implements over an LLM), and the prompt it is asked with.

Each time a turn remains, the simulated user sees the plan, the conversation so far and
the agent's last reply, and answers with the next user message, or with `TERMINATE`
(anywhere in its reply, as EvalBench reads it) when the plan is done or cannot go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bat_pipeline.engine.contracts.scenario import ConversationTurn

TERMINATE = "TERMINATE"
PURPOSE = "simulated_user"
"""The question's kind for the LLM client (one answer shape: plain text)."""

INSTRUCTIONS = (
    "You play the user of an AI assistant, to test it. Follow the conversation plan below: "
    "say what the plan says the user says next, in the user's own words, one message at a "
    "time. Answer the assistant's questions as the plan describes the user; do not invent "
    "needs the plan does not mention, and do not do the assistant's work. Write only the "
    f'message itself. If the plan is fully completed or you cannot proceed, reply with "{TERMINATE}".'
)


class SimulatedUserError(RuntimeError):
    """The simulated user could not answer (after its client's retries): the episode is an
    error episode, never a silently shortened conversation."""


@dataclass(frozen=True)
class UserReply:
    """One answer of the simulated user and what it cost."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    requests: int = 1

    @property
    def terminates(self) -> bool:
        return is_terminate(self.text)


class SimulatedUser(Protocol):
    """A model playing the user."""

    @property
    def name(self) -> str:
        """`provider:model`."""

    async def reply(self, plan: str, history: Sequence[ConversationTurn]) -> UserReply:
        """The next user message, or TERMINATE; raises SimulatedUserError when there is
        no answer."""


def is_terminate(text: str) -> bool:
    """`TERMINATE` anywhere in the reply ends the conversation (EvalBench: a substring)."""
    return TERMINATE in text


def user_messages(plan: str, history: Sequence[ConversationTurn]) -> list[dict[str, str]]:
    """The chat messages that ask for the next user message: the instructions, then the
    plan, the interaction so far (`User:` / `Agent:` lines) and the agent's last reply."""
    lines = [f"User: {turn.user}\nAgent: {turn.agent or '(no answer)'}" for turn in history]
    last = history[-1].agent if history else ""
    prompt = "\n\n".join(
        [
            f"## Conversation Plan\n{plan.strip() or '(none)'}",
            "## Interaction History\n" + ("\n".join(lines) if lines else "(nothing yet)"),
            f"## Last Agent Reply\n{last or '(no answer)'}",
            f"Your next message as the user (or {TERMINATE}):",
        ]
    )
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": prompt}]


def reply_text(text: str) -> str:
    """The message from a reply: trimmed, surrounding quotes and a `User:` label dropped.
    Raises ValueError on an empty reply (the client asks again)."""
    message = text.strip()
    if message.lower().startswith("user:"):
        message = message[5:].strip()
    if len(message) >= 2 and message[0] == message[-1] and message[0] in "\"'":
        message = message[1:-1].strip()
    if not message:
        raise ValueError("the simulated user's reply is empty")
    return message
