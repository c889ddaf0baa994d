"""A weighted rubric as records: what a rubric file may hold, with agentic-v2-eval's
defaults (SPEC §12): `weight` 1, range 0..1, except that in this project's own rubrics a
criterion with `levels` and no range takes the levels' span. agentic-v2-eval's own rubrics
(`Rubric.agentic`, decided where the rubric is loaded) keep 0..1 there, as agentic-v2-eval
does: its judge answers on 0..1 and a 3 written on the 0–5 level scale clamps to 1."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

AGENTIC = "agentic"
"""Validation context key: the rubric is agentic-v2-eval's (see Rubric.agentic)."""


class Criterion(BaseModel):
    """One criterion: a named, weighted value the judge (or the results file) gives."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    name: str = Field(min_length=1)
    """The key of the criterion's value in a results record (`Accuracy`)."""
    weight: float = Field(default=1.0, ge=0)
    description: str = ""
    """What the criterion asks, in words: the judge reads it."""
    min_value: float | None = None
    """Lowest value; default 0, or the lowest level."""
    max_value: float | None = None
    """Highest value; default 1, or the highest level."""
    levels: dict[float, str] = Field(default_factory=dict)
    """Level → what a result at that level looks like (`5: "every claim checked"`)."""
    hard_gate: bool = False
    """The criterion must reach `minimum` (on its own scale) or the rubric fails."""
    minimum: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _unit_range(cls, data: Any, info: ValidationInfo) -> Any:
        """agentic-v2-eval's rubrics: a range not written is 0..1, levels or not."""
        if isinstance(data, dict) and info.context and info.context.get(AGENTIC):
            data = {"min_value": 0.0, "max_value": 1.0, **data}
        return data

    @model_validator(mode="after")
    def _range(self) -> Self:
        low = min(self.levels) if self.levels else 0.0
        high = max(self.levels) if self.levels else 1.0
        if self.min_value is None:
            self.min_value = low
        if self.max_value is None:
            self.max_value = high
        if self.max_value <= self.min_value:
            raise ValueError(f"max_value ({self.max_value:g}) must be above min_value ({self.min_value:g})")
        if self.hard_gate and self.minimum is None:
            raise ValueError("hard_gate: true needs a minimum")
        return self

    @property
    def low(self) -> float:
        return self.min_value if self.min_value is not None else 0.0

    @property
    def high(self) -> float:
        return self.max_value if self.max_value is not None else 1.0

    @property
    def level_span(self) -> tuple[float, float]:
        """The lowest and highest level (the range when there are no levels)."""
        return (min(self.levels), max(self.levels)) if self.levels else (self.low, self.high)

    def on_scale(self, minimum: float) -> float:
        """A gate's minimum on the criterion's range: a minimum above the range but within
        the levels (`minimum: 4` of a 0–5 level scale on a 0..1 criterion) is read on the
        levels' scale and mapped onto the range."""
        low, high = self.level_span
        if minimum <= self.high or not self.levels or high <= low or minimum > high:
            return minimum
        return self.from_unit((minimum - low) / (high - low))

    def normalise(self, value: float) -> float:
        """The value clamped to the criterion's range, then mapped onto 0..1."""
        clamped = min(max(value, self.low), self.high)
        return (clamped - self.low) / (self.high - self.low)

    def from_unit(self, unit: float) -> float:
        """A 0..1 score as a value on the criterion's own scale."""
        return self.low + unit * (self.high - self.low)


class HardGate(BaseModel):
    """A criterion that must reach a minimum, on its own scale, whatever the others score."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    criterion: str = Field(min_length=1)
    minimum: float


class Thresholds(BaseModel):
    """Bands of the weighted score. A threshold above 1 is read on the criteria's own scale
    (divided by the highest `max_value`), as rubrics written for 0–5 levels state them."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, allow_inf_nan=False)

    pass_: float | None = Field(default=None, alias="pass")
    excellent: float | None = None
    warning: float | None = None


class Rubric(BaseModel):
    """A rubric file: `criteria`, optional `hard_gates`, `thresholds`, `metadata`."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    name: str = ""
    """The built-in name, or the file's stem when the file names none."""
    description: str = ""
    criteria: list[Criterion] = Field(min_length=1)
    hard_gates: list[HardGate] = Field(default_factory=list)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str = ""
    """Where it was read from: `builtin:<name>` or the file's path."""
    agentic: bool = False
    """agentic-v2-eval's own rubric, scored as agentic-v2-eval scores it: ranges 0..1 unless
    written, missing criteria counting 0 against the weight of all criteria, criterion
    scores as the clamped values. Set by the loader (load.is_agentic), never by the file."""

    @model_validator(mode="after")
    def _names(self) -> Self:
        if not sum(c.weight for c in self.criteria) > 0:
            raise ValueError(
                "the criteria's weights sum to 0: every weighted score would be 0; give a criterion a weight above 0"
            )
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.name in seen:
                raise ValueError(f"criterion '{criterion.name}' is listed twice")
            seen.add(criterion.name)
        for gate in self.hard_gates:
            if gate.criterion not in seen:
                raise ValueError(
                    f"hard gate on '{gate.criterion}', which is not a criterion "
                    f"(criteria: {', '.join(c.name for c in self.criteria)})"
                )
        return self

    def criterion(self, name: str) -> Criterion:
        return next(c for c in self.criteria if c.name == name)

    def gates(self) -> list[HardGate]:
        """Every hard gate: `hard_gates`, and the criteria marked `hard_gate` that it does not list."""
        listed = {g.criterion for g in self.hard_gates}
        marked = [
            HardGate(criterion=c.name, minimum=c.minimum)
            for c in self.criteria
            if c.hard_gate and c.minimum is not None and c.name not in listed
        ]
        return [*self.hard_gates, *marked]

    def unit_threshold(self, value: float | None) -> float | None:
        """A threshold on the 0..1 scale of the weighted score (see Thresholds)."""
        if value is None or value <= 1:
            return value
        return value / max(c.high for c in self.criteria)
