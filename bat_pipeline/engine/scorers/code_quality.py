"""`code_quality`: the static quality of the Python code in an answer (its ```python
fenced blocks), as ruff and radon report it (engine.measures.code_quality): `parses`
(pass/fail), `lint` (raw = findings), `complexity` (raw = the highest cyclomatic
complexity of a block). Informative rows; applies when the answer holds such code and the
verdicts step's options can analyse code (`analyse_code(code) -> CodeReport`, a resource
running the tools as processes)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.measures.code_quality import CodeReport, code_blocks, complexity_score, lint_score
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import PASS_FAIL


@runtime_checkable
class CodeAnalyser(Protocol):
    def analyse_code(self, code: str) -> CodeReport: ...


def _applies(item: ScoringInput) -> bool:
    return isinstance(item.options, CodeAnalyser) and code_blocks(item.episode.final_output) is not None


@check("code_quality", applies=_applies, order=720)
def code_quality(item: ScoringInput) -> list[ScoreRow]:
    assert isinstance(item.options, CodeAnalyser)  # _applies
    code = code_blocks(item.episode.final_output) or ""
    report = item.options.analyse_code(code)
    if report.error:
        return [ScoreRow(scorer="code_quality", criterion="parses", reason=f"not analysed: {report.error}")]
    findings = [f"{f.code} line {f.line}: {f.message}" for f in report.findings[:10]]
    worst = max(report.complexity.items(), key=lambda kv: kv[1], default=("(module)", 1))
    return [
        ScoreRow(
            scorer="code_quality",
            criterion="parses",
            value=float(report.parses),
            raw=float(report.parses),
            scale=PASS_FAIL,
            passed=report.parses,
            reason=f"{report.lines} lines of Python" + ("" if report.parses else " that do not parse"),
        ),
        ScoreRow(
            scorer="code_quality",
            criterion="lint",
            value=lint_score(len(report.findings)),
            raw=len(report.findings),
            scale="count",
            passed=not report.findings,
            reason="; ".join(findings) or "no findings",
            details={"findings": findings},
        ),
        ScoreRow(
            scorer="code_quality",
            criterion="complexity",
            value=complexity_score(report.max_complexity),
            raw=report.max_complexity,
            scale="count",
            passed=report.max_complexity <= 10,
            reason=f"most complex: {worst[0]} ({worst[1]})",
            details={"blocks": report.complexity},
        ),
    ]
