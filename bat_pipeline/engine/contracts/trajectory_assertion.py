"""A trajectory assertion: what the tool calls of an episode must look like (issue 15,
SPEC §12 "Trajectory", §13 "Trajectory terms").

The same record serves a bat-cli task (`expected.trajectory` in tasks.json) and an
AgentV grader (`type: tool-trajectory` / `trajectory`); engine.scorers.trajectory scores
it and docs/formats.md §7 states what each mode means. Fields accept AgentV's spellings
(`args_match`, `argsMatch`, `maxDurationMs`) beside ours, so a user's 4.x file reads as it
is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, field_validator, model_validator

from bat_pipeline.engine.contracts.strict import Strict

Mode = Literal["strict", "in_order", "unordered", "subset", "superset", "exact", "any_order"]
"""How `expected` is compared with the calls. `exact` and `any_order` are AgentV 4.x's
names: in a 4.x file they keep 4.x's meaning, elsewhere they are `strict` and
`unordered`."""
ArgsKeyword = Literal["exact", "ignore", "subset", "superset"]
ArgsMode = ArgsKeyword | list[str]
"""How an expected call's `args` are compared with a call's: a keyword, or a list of field
paths (`a.b`, `items.0`) compared exactly, the others ignored."""
SEQUENCE_MODES = ("strict", "in_order", "unordered", "subset", "superset", "exact")
"""The modes that compare `expected` (any_order may, see `Mode`)."""

_ARGS_KEYWORDS: tuple[str, ...] = ("exact", "ignore", "subset", "superset")


def _args_mode(value: Any) -> Any:
    """An args mode as written: a keyword, or a non-empty list of non-empty field paths."""
    if value is None or (isinstance(value, str) and value in _ARGS_KEYWORDS):
        return value
    if isinstance(value, list):
        if not value:
            raise ValueError("a list of field paths must not be empty")
        bad = [item for item in value if not isinstance(item, str) or not item]
        if bad:
            raise ValueError(f"field paths are non-empty strings, got {bad[0]!r}")
        return value
    raise ValueError(f"expected one of {', '.join(_ARGS_KEYWORDS)} or a list of field paths, got {value!r}")


class ExpectedCall(Strict):
    """One call the assertion expects (or, in `subset` mode, allows)."""

    tool: str = Field(min_length=1)
    """The tool's name, matched exactly."""
    args: dict[str, Any] | Literal["any"] | None = None
    """The arguments to compare with the call's; absent or `any`: any arguments."""
    args_mode: ArgsMode | None = Field(
        default=None, validation_alias=AliasChoices("args_mode", "args_match", "argsMatch")
    )
    """`exact`, `ignore`, `subset` (the call's arguments all appear in `args`), `superset`
    (`args` all appear in the call's) or field paths; absent: the assertion's `args_mode`."""
    max_duration_ms: float | None = Field(
        default=None, ge=0, validation_alias=AliasChoices("max_duration_ms", "maxDurationMs")
    )
    """The matched call took at most this long; not checked for a call with no duration."""

    _check_args_mode = field_validator("args_mode", mode="before")(_args_mode)

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        if value is None or value == "any" or isinstance(value, dict):
            return value
        raise ValueError(f"expected a mapping of arguments or 'any', got {value!r}")


class ToolCount(Strict):
    """How many times one tool is called: `exact`, or `min` and/or `max`."""

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    exact: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> ToolCount:
        if self.exact is not None and (self.min is not None or self.max is not None):
            raise ValueError("give either exact, or min and/or max")
        if self.exact is None and self.min is None and self.max is None:
            raise ValueError("give exact, min or max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self

    def holds(self, count: int) -> bool:
        if self.exact is not None:
            return count == self.exact
        return (self.min is None or count >= self.min) and (self.max is None or count <= self.max)

    def wording(self) -> str:
        """`exactly 2`, `at least 1`, `at most 3`, `1 to 3`."""
        if self.exact is not None:
            return f"exactly {self.exact}"
        if self.min is not None and self.max is not None:
            return f"{self.min} to {self.max}"
        return f"at least {self.min}" if self.min is not None else f"at most {self.max}"


class TrajectoryAssertion(Strict):
    """What the tool calls of an episode must look like. At least one of `expected` (with
    a `mode`), `minimums`, `counts`, `forbidden`, `max_steps`."""

    mode: Mode | None = None
    """How `expected` is compared with the calls; required with `expected`."""
    expected: list[ExpectedCall] | None = None
    """The calls, in order for the ordered modes."""
    args_mode: ArgsMode | None = Field(
        default=None, validation_alias=AliasChoices("args_mode", "args_match", "argsMatch")
    )
    """The default of the items' `args_mode` (itself defaulting to `exact`)."""
    minimums: dict[str, int] = Field(default_factory=dict)
    """AgentV 4.x's `any_order` counts: tool → at least this many calls."""
    counts: dict[str, ToolCount] = Field(default_factory=dict)
    """Tool → how many times it is called."""
    forbidden: list[str] = Field(default_factory=list)
    """Tools that must not be called at all."""
    max_steps: int | None = Field(default=None, ge=0)
    """At most this many tool calls in all."""

    _check_args_mode = field_validator("args_mode", mode="before")(_args_mode)

    @field_validator("minimums")
    @classmethod
    def _minimums(cls, value: dict[str, int]) -> dict[str, int]:
        negative = [tool for tool, n in value.items() if n < 0]
        if negative:
            raise ValueError(f"minimum of '{negative[0]}' is below 0")
        return value

    @model_validator(mode="after")
    def _checks_something(self) -> TrajectoryAssertion:
        if self.expected is not None and self.mode is None:
            raise ValueError(f"`expected` needs a `mode` ({', '.join(SEQUENCE_MODES)})")
        if self.expected is None and self.mode in SEQUENCE_MODES:
            raise ValueError(f"mode '{self.mode}' needs an `expected` list")
        if (
            self.expected is None
            and not self.minimums
            and not self.counts
            and not self.forbidden
            and self.max_steps is None
        ):
            raise ValueError(
                "the assertion checks nothing: give `expected` with a `mode`, `minimums`, "
                "`counts`, `forbidden` or `max_steps`"
            )
        both = sorted(set(self.minimums) & set(self.counts))
        if both:
            raise ValueError(f"tool '{both[0]}' is in both `minimums` and `counts`")
        return self

    def args_mode_of(self, item: ExpectedCall) -> ArgsMode:
        """The item's args mode: its own, else the assertion's, else `exact`."""
        return item.args_mode or self.args_mode or "exact"

    def uses_args_subset(self) -> bool:
        """Whether some expected call is compared with `args_mode: subset`."""
        return any(
            self.args_mode_of(item) == "subset" and item.args not in (None, "any") for item in self.expected or []
        )


class ObservedCall(BaseModel):
    """One tool call the episode made, as the assertion sees it."""

    name: str
    args: Any = None
    """The arguments as recorded (a mapping when they were JSON)."""
    duration_ms: float | None = None
    """How long it took, when the target recorded it."""
