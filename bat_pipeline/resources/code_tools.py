"""The processes the deterministic scorers may need: script graders (GraderRunner) and the
static analysis of code answers — ruff (lint findings, syntax errors) and radon (cyclomatic
complexity), each run on a temporary file with a timeout. The tools are the venv's own
(dependencies of the project), found beside this interpreter, else on PATH."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from bat_pipeline.engine.contracts import MetricsSettings
from bat_pipeline.engine.measures.code_quality import CodeReport, read_radon, read_ruff
from bat_pipeline.resources.commands import run_command
from bat_pipeline.resources.graders import GraderRunner

TIMEOUT_S = 30.0


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


class ScorerTools(GraderRunner):
    """The options of the verdicts step: script graders' processes, the code analysis,
    the metrics settings the `label` and `time` scorers read and the dataset's labels."""

    def __init__(
        self,
        metrics: MetricsSettings | None = None,
        labels: list[str] | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        super().__init__(environment)
        self.metrics = metrics or MetricsSettings()
        self.labels = labels or []
        """Every expected label of the dataset (the `label` scorer's known labels)."""

    def analyse_code(self, code: str) -> CodeReport:
        ruff, radon = tool("ruff"), tool("radon")
        lines = len(code.splitlines())
        if ruff is None or radon is None:
            return CodeReport(lines=lines, parses=False, error="ruff and radon are needed (pip install ruff radon)")
        with tempfile.TemporaryDirectory(prefix="bat-code-") as folder:
            path = Path(folder) / "answer.py"
            path.write_text(code, encoding="utf-8")
            linted = run_command(
                [
                    ruff,
                    "check",
                    "--no-cache",
                    "--isolated",
                    "--output-format",
                    "json",
                    "--select",
                    "E,F,W,B,C90",
                    "--exit-zero",
                    str(path),
                ],
                cwd=Path(folder),
                env=self.environment,
                timeout_s=TIMEOUT_S,
            )
            measured = run_command(
                [radon, "cc", "-j", str(path)], cwd=Path(folder), env=self.environment, timeout_s=TIMEOUT_S
            )
        for result in (linted, measured):
            if result.start_error or result.timed_out:
                return CodeReport(lines=lines, parses=False, error=result.describe())
        try:
            findings, parses = read_ruff(json.loads(linted.stdout or "[]"))
            radon_out = json.loads(measured.stdout or "{}")
        except ValueError as exc:
            return CodeReport(lines=lines, parses=False, error=f"unreadable tool output: {exc}")
        if any(isinstance(v, dict) and v.get("error") for v in radon_out.values()):
            parses = False
        return CodeReport(lines=lines, parses=parses, findings=findings, complexity=read_radon(radon_out))
