"""A target command's placeholders filled in: `{PROMPT} {PROMPT_FILE} {OUTPUT_FILE}
{EVAL_ID} {ATTEMPT} {EVAL_FILE} {FILES}`. In a command written as one string (run by the
shell) each value is shell-quoted; in an argv list it is put in as it is."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.resources.agent_process import substitute


def fill(command: str | list[str], values: Mapping[str, str]) -> str | list[str]:
    """`command` with every `{NAME}` of `values` replaced; unknown braces stay."""
    if isinstance(command, str):
        for name, value in values.items():
            command = command.replace("{" + name + "}", shlex.quote(value))
        return command
    return substitute(command, dict(values))


def target_environment(target: AgentvTarget) -> dict[str, str]:
    """The shell's environment and the target's `env`; HOME is replaced per invocation."""
    return {**os.environ, **target.env}
