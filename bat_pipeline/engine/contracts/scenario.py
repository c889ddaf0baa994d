"""EvalBench's multi-turn scenario (SPEC §10, §12) as a task carries it, and what a
conversation driven by a simulated user records on its episode."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.strict import Strict

SCENARIO_KEYS = (
    "starting_prompt",
    "conversation_plan",
    "expected_trajectory",
    "env",
    "max_turns",
    "kind",
    "work_dir",
    "binary_rubric",
    "expected_skills",
    "prompt_timeout_seconds",
    "env_files",
    "golden_sql",
    "expected_answer",
    "database",
    "scorers",
)
"""The keys of a dataset entry that belong to its scenario (EvalBench's own, plus the SQL
answer keys and the run config's scorer selection)."""

Ended = Literal["terminated", "max_turns", "agent_failed", "turns_done", "simulated_user_failed", "error"]
"""Why a conversation stopped: the simulated user said TERMINATE; the agent was called
`max_turns` times; the agent's turn failed (A2A failed/rejected/canceled, or no answer);
the scripted turns ran out and no simulated user continues; the simulated user could not
answer; the attempt raised for another reason (a timeout, a broken stream)."""


class Scenario(Strict):
    """What makes a task an EvalBench scenario. Every field is optional, so a bat-cli task
    may carry some of them beside its `turns` and `expected`."""

    conversation_plan: str = ""
    """What the simulated user is to achieve, in prose; it answers the agent by it."""
    expected_trajectory: list[str] | None = None
    """Tool names the agent should call, in order (`server__tool` or bare)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables for a CLI target's process; a shared A2A agent cannot take them (a warning)."""
    max_turns: int | None = Field(default=None, ge=1)
    """Agent calls at most, the starting prompt included; else `simulated_user.max_turns`, else 1."""
    golden_sql: str | None = None
    """The right SQL answer, for `exact_match` and `sql_result_match`."""
    expected_answer: str | None = None
    """The right answer text, for `exact_match` when there is no `golden_sql`."""
    database: str | None = None
    """A DuckDB or SQLite file the SQL runs against (read-only), relative to the dataset."""
    scorers: dict[str, dict[str, Any]] | None = None
    """The run config's `scorers` (name → options); None: chosen by what the scenario carries."""
    kind: str | None = None
    work_dir: str | None = None
    binary_rubric: Any = None
    expected_skills: list[str] | None = None
    prompt_timeout_seconds: float | None = None
    env_files: Any = None
    """EvalBench's other fields, kept as written (SPEC §12: accepted)."""

    def selects(self, scorer: str) -> bool:
        """Whether the run config names this scorer (every scorer when it names none)."""
        return self.scorers is None or scorer in self.scorers

    def options(self, scorer: str) -> dict[str, Any]:
        """The run config's options of a scorer (`enforce_order`, ...); {} when none."""
        return dict((self.scorers or {}).get(scorer) or {})


class ConversationTurn(BaseModel):
    """One user message and the agent's answer to it."""

    user: str
    generated: bool = False
    """Written by the simulated user (False: the dataset's starting prompt or turns)."""
    agent: str = ""
    """The agent's last non-empty text of the turn."""
    status: str | None = None
    """The turn's last terminal status (`completed`, `input-required`, `error`), if any."""
    harness_output: str | None = None
    """What the harness printed for the turn, as EvalBench's conversation history keeps it
    (its `agent`): a CLI agent's stdout, EvalBench's envelope `{response, stats: {models,
    tools}, tool_calls}` when the agent writes one. EvalBench's metric scorers (tokens,
    latencies, steps, skills) read it; None for an A2A agent (engine.evalbench_harness)."""


class SimulatedUserUsage(BaseModel):
    """What the simulated user cost in one episode, apart from the agent's tokens."""

    model: str
    """`provider:model`."""
    calls: int = 0
    """Replies asked for (TERMINATE included)."""
    requests: int = 0
    """HTTP requests, retries included."""
    tokens_in: int = 0
    tokens_out: int = 0


class ConversationLog(BaseModel):
    """A scenario's conversation, kept in the episode's `aux.conversation`."""

    turns: list[ConversationTurn] = Field(default_factory=list)
    ended: Ended = "turns_done"
    max_turns: int = 1
    simulated_user: SimulatedUserUsage | None = None

    @property
    def user_messages(self) -> list[str]:
        return [t.user for t in self.turns]
