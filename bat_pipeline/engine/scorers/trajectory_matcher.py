"""`trajectory_matcher`: EvalBench's comparison of the expected tool names with the ones the
agent called (SPEC §12).

One EvalBench value, gating: the Jaccard similarity of the two name sets, or, with
`enforce_order: true` (the run config's option), 1 − Levenshtein distance / longer length
of the two sequences; passed when it is 1 (EvalBench's 100). Beside it, not gating: the
exact match of the sequences and the other measure. Names compare as written, except that
a bare expected name (`list_instances`) also matches an actual `server__list_instances`,
and Claude's `mcp__server__tool` reads as `server__tool`. `filter_native_tools: true`
drops names without `__` (native tools) from both sides. Its default is EvalBench's, true,
for scenarios an EvalBench run config selects scorers for (its own files;
evalbench/scorers/trajectorymatcher.py: `config.get("filter_native_tools", True)`); for
scenarios of a bat-cli project's dataset every name is kept, since an A2A agent's tools
are its own (SPEC §12).
"""

from __future__ import annotations

from collections.abc import Sequence

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ToolStep
from bat_pipeline.engine.evalbench_harness import accumulated_tools
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import all_steps

NAME = "trajectory_matcher"
SCALE = "0..100"
MCP_PREFIX = "mcp__"


def _applies(item: ScoringInput) -> bool:
    scenario = item.task.scenario
    return scenario is not None and scenario.expected_trajectory is not None and scenario.selects(NAME)


def canonical(actual: Sequence[str], expected: Sequence[str]) -> list[str]:
    """The actual names as the expected ones are written: `mcp__server__tool` →
    `server__tool`; `server__tool` → `tool` when only the bare name is expected."""
    wanted = set(expected)
    names = []
    for name in actual:
        if name.startswith(MCP_PREFIX) and name.count("__") >= 2:
            name = name[len(MCP_PREFIX) :]
        if name not in wanted and "__" in name and name.split("__", 1)[1] in wanted:
            name = name.split("__", 1)[1]
        names.append(name)
    return names


def jaccard(expected: Sequence[str], actual: Sequence[str]) -> float:
    """|E ∩ A| / |E ∪ A| of the name sets; 1 when both are empty."""
    a, b = set(expected), set(actual)
    return 1.0 if not a | b else len(a & b) / len(a | b)


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edits (insert, delete, substitute one name) turning one sequence into the other."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def sequence_similarity(expected: Sequence[str], actual: Sequence[str]) -> float:
    """1 − Levenshtein / longer length; 1 when both are empty."""
    longest = max(len(expected), len(actual))
    return 1.0 if longest == 0 else 1 - levenshtein(expected, actual) / longest


def match_rows(
    expected: Sequence[str], actual: Sequence[str], *, enforce_order: bool = False, filter_native_tools: bool = False
) -> list[ScoreRow]:
    """The EvalBench value (gating), then the exact match and the other measure."""
    if filter_native_tools:
        expected = [n for n in expected if "__" in n]
        actual = [n for n in actual if "__" in n or n.startswith(MCP_PREFIX)]
    actual = canonical(actual, expected)
    measures = {"jaccard": jaccard(expected, actual), "levenshtein": sequence_similarity(expected, actual)}
    main, other = ("levenshtein", "jaccard") if enforce_order else ("jaccard", "levenshtein")
    value = measures[main]
    exact = list(expected) == list(actual)
    details = {"expected": list(expected), "actual": actual, "enforce_order": enforce_order}
    shown = f"expected {list(expected)}, called {actual}"
    return [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            value=value,
            raw=round(value * 100, 1),
            scale=SCALE,
            passed=value == 1.0,
            gating=True,
            reason=f"{main} {value:.2f}: {shown}",
            details={**details, "measure": main},
        ),
        ScoreRow(
            scorer=NAME,
            criterion=f"{NAME}:exact",
            value=float(exact),
            raw=float(exact),
            scale="pass/fail",
            passed=exact,
            reason=("the same calls in the same order" if exact else f"not exact: {shown}"),
        ),
        ScoreRow(
            scorer=NAME,
            criterion=f"{NAME}:{other}",
            value=measures[other],
            raw=round(measures[other] * 100, 1),
            scale=SCALE,
            reason=f"{other} {measures[other]:.2f}",
        ),
    ]


@check(NAME, applies=_applies, order=60, needs_trajectory=True)
def trajectory_matcher(item: ScoringInput) -> list[ScoreRow]:
    scenario = item.task.scenario
    assert scenario is not None and scenario.expected_trajectory is not None
    options = scenario.options(NAME)
    # A harness that printed EvalBench's envelope: its generators' accumulated_tools.
    printed_tools = accumulated_tools(item.episode)
    actual = (
        printed_tools
        if printed_tools is not None
        else [s.name for s in all_steps(item.trajectory) if isinstance(s, ToolStep)]
    )
    return match_rows(
        scenario.expected_trajectory,
        actual,
        enforce_order=bool(options.get("enforce_order")),
        filter_native_tools=bool(options.get("filter_native_tools", scenario.scorers is not None)),
    )
