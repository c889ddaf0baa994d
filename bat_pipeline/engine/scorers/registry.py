"""The scorer registry: every judgement on an episode is a scorer registered here by name.

A scorer is one module: a function decorated with `@check(...)` (deterministic, run by
`episode_verdicts`) or `@llm(...)` (asks a judge, run by `judge_scores`), saying which
tasks it applies to. The built-in scorers are the modules of this package, found by
listing it; a project's own come from `evaluation.scorers: [python.module, ...]`. Nothing
else in the tree names a scorer.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.contracts.trajectory import Trajectory

Kind = Literal["check", "llm"]


@dataclass(frozen=True)
class ScoringInput:
    """What a scorer judges: the task and the episode, its trajectory rebuilt."""

    task: Task
    episode: Episode
    options: Any = None
    """Settings of the step that runs the scorer (the judge settings for LLM scorers)."""
    runner: Any = None
    """The step's runner of graders' processes (engine.scorers.script.ScriptRunner) when
    it is not `options`: the judge step's, for AgentV composites that run a script."""

    @property
    def trajectory(self) -> Trajectory:
        return self.episode.trace.trajectory


CheckFn = Callable[[ScoringInput], Iterable[ScoreRow]]
LlmFn = Callable[[ScoringInput, Any], Awaitable[list[ScoreRow]]]
"""(input, judge) → rows; `judge` implements engine.scorers.judging.Judge."""


@dataclass(frozen=True)
class Scorer:
    """One registered scorer."""

    name: str
    kind: Kind
    fn: Callable[..., Any]
    applies: Callable[[ScoringInput], bool]
    """Whether the scorer has anything to say about this task and episode (from what the
    task declares)."""
    order: int = 100
    """Rows of scorers with a lower order come first (the verdict's reason keeps it)."""
    needs_trajectory: bool = False
    """Judges the spans: when the conversation has no trajectory, one failed `spans` row
    stands for all such scorers."""
    criteria: tuple[str, ...] = ()
    """How the criteria of its rows begin (`tool_call:`, `output[`); empty: with the
    scorer's own name. What traces a verdict check of an older episode file, which has no
    rows, back to its scorer (engine.derived_scores)."""
    reduce: Callable[[list[ScoreRow]], list[ScoreRow]] | None = None
    """LLM scorers: how one judge's rows over N runs are summed up (engine.judge_samples);
    None: the median and spread per criterion."""

    def writes(self, criterion: str) -> bool:
        """Whether a row with this criterion is one of this scorer's (by `criteria`)."""
        return criterion.startswith(self.criteria or (self.name,))


_REGISTRY: dict[str, Scorer] = {}
_BUILTINS_LOADED = False


def _always(_: ScoringInput) -> bool:
    return True


def _register(scorer: Scorer) -> None:
    known = _REGISTRY.get(scorer.name)
    if known is not None and known.fn is not scorer.fn:
        raise ValueError(f"two scorers are named '{scorer.name}': {known.fn.__module__} and {scorer.fn.__module__}")
    _REGISTRY[scorer.name] = scorer


def check(
    name: str,
    *,
    applies: Callable[[ScoringInput], bool] = _always,
    order: int = 100,
    needs_trajectory: bool = False,
    criteria: tuple[str, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Register a deterministic scorer: `fn(input) -> rows` (Scorer's fields)."""

    def decorate(fn: CheckFn) -> CheckFn:
        _register(Scorer(name, "check", fn, applies, order, needs_trajectory, criteria))
        return fn

    return decorate


def llm(
    name: str,
    *,
    applies: Callable[[ScoringInput], bool] = _always,
    order: int = 100,
    reduce: Callable[[list[ScoreRow]], list[ScoreRow]] | None = None,
) -> Callable[[LlmFn], LlmFn]:
    """Register an LLM scorer: `async fn(input, judge) -> rows`; `reduce` (Scorer's field)."""

    def decorate(fn: LlmFn) -> LlmFn:
        _register(Scorer(name, "llm", fn, applies, order, reduce=reduce))
        return fn

    return decorate


def load_builtin() -> None:
    """Import every module of this package once (each registers its scorers)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    package = importlib.import_module(__package__ or "bat_pipeline.engine.scorers")
    for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        importlib.import_module(module.name)
    _BUILTINS_LOADED = True


def load_modules(names: Iterable[str]) -> None:
    """Import a project's own scorer modules (`evaluation.scorers`); ImportError names the
    module that could not be imported."""
    for name in names:
        importlib.import_module(name)


BUILTIN_PACKAGE = "bat_pipeline.engine.scorers"


def _within(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def registered(kind: Kind | None = None, project: Collection[str] | None = None) -> list[Scorer]:
    """The registered scorers (built-in ones loaded first), by order then name. With
    `project` (the modules of a project's `evaluation.scorers`): only the built-in ones and
    those defined in these modules or their submodules — the registry is one per process,
    and another agent's scorers loaded in the same process do not apply."""
    load_builtin()
    found = [s for s in _REGISTRY.values() if kind is None or s.kind == kind]
    if project is not None:
        found = [s for s in found if _within(s.fn.__module__, (BUILTIN_PACKAGE, *project))]
    return sorted(found, key=lambda s: (s.order, s.name))


def scorers_for(item: ScoringInput, kind: Kind, project: Collection[str] = ()) -> list[Scorer]:
    """The scorers of `kind` (built-in, and the project's `project` modules) that apply to
    this task and episode, in order."""
    return [s for s in registered(kind, project) if s.applies(item)]
