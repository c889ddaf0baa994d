"""The static quality of a code answer, from what ruff and radon report on it (run by
resources.code_tools): whether it parses, lint findings, cyclomatic complexity. Scores:
`parses` pass/fail; `lint` = max(0, 1 − 0.1 × findings); `complexity` = 1 while the most
complex block is at most `max_complexity`, then falling linearly to 0 at twice that."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

FENCE = re.compile(r"```[ \t]*(python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
MAX_COMPLEXITY = 10
SYNTAX_CODES = ("E999", "invalid-syntax")


def code_blocks(answer: str) -> str | None:
    """The Python code of an answer: its ```python (or ```py) fenced blocks, joined; None
    when it has none."""
    blocks = [m.group(2) for m in FENCE.finditer(answer) if m.group(1)]
    return "\n".join(b.rstrip() + "\n" for b in blocks) if blocks else None


class Finding(BaseModel):
    code: str
    message: str
    line: int | None = None


class CodeReport(BaseModel):
    """What the tools said about one piece of code."""

    lines: int
    parses: bool
    findings: list[Finding] = Field(default_factory=list)
    """Lint findings, the syntax errors among them."""
    complexity: dict[str, int] = Field(default_factory=dict)
    """Block (function, method, class) → cyclomatic complexity."""
    error: str | None = None
    """Why a tool could not say anything (not installed, timed out)."""

    @property
    def max_complexity(self) -> int:
        return max(self.complexity.values(), default=1)


def read_ruff(output: list[dict[str, Any]]) -> tuple[list[Finding], bool]:
    """Findings from `ruff check --output-format json`, and whether the code parses."""
    findings = [
        Finding(
            code=str(item.get("code") or "syntax"),
            message=str(item.get("message", "")),
            line=(item.get("location") or {}).get("row"),
        )
        for item in output
    ]
    syntax = any(f.code in SYNTAX_CODES or f.code == "syntax" or f.message.startswith("SyntaxError") for f in findings)
    return findings, not syntax


def read_radon(output: dict[str, Any]) -> dict[str, int]:
    """Block → complexity from `radon cc -j` (one file's entries)."""
    found: dict[str, int] = {}
    for entries in output.values():
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if isinstance(entry, dict) and "complexity" in entry:
                owner = entry.get("classname")
                name = f"{owner}.{entry.get('name')}" if owner else str(entry.get("name"))
                found[name] = int(entry["complexity"])
    return found


def lint_score(findings: int) -> float:
    return max(0.0, 1.0 - 0.1 * findings)


def complexity_score(complexity: int, max_complexity: int = MAX_COMPLEXITY) -> float:
    if complexity <= max_complexity:
        return 1.0
    return max(0.0, 1.0 - (complexity - max_complexity) / max_complexity)
