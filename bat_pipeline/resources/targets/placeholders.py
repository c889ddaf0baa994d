"""A target command's placeholders filled in: `{PROMPT} {PROMPT_FILE} {OUTPUT_FILE}
{EVAL_ID} {ATTEMPT} {EVAL_FILE} {FILES}`. In a command written as one string (run by the
shell) each value is shell-quoted; in an argv list it is put in as it is. {FILES} is each
input file written by the target's `files_format` (`{path}`, `{basename}`; default
`{path}`), space separated, as AgentV 4.42.4's formatFileList: in a string command each
path and name is quoted, not the whole."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence

from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.resources.agent_process import substitute


def fill(
    command: str | list[str], values: Mapping[str, str], files: Sequence[str] = (), files_format: str | None = None
) -> str | list[str]:
    """`command` with every `{NAME}` of `values` and {FILES} (`files`) replaced; unknown
    braces stay."""
    listed = files_list(files, files_format, quote=isinstance(command, str))
    if isinstance(command, str):
        for name, value in values.items():
            command = command.replace("{" + name + "}", shlex.quote(value))
        return command.replace("{FILES}", listed)
    return substitute(command, {**values, "FILES": listed})


def files_list(files: Sequence[str], files_format: str | None, *, quote: bool) -> str:
    """{FILES}: each file through `files_format`, space separated (module docstring)."""
    q = shlex.quote if quote else str
    template = files_format or "{path}"
    return " ".join(
        template.replace("{path}", q(f)).replace("{basename}", q(os.path.basename(f))) for f in dict.fromkeys(files)
    )


def target_environment(target: AgentvTarget) -> dict[str, str]:
    """The shell's environment and the target's `env`; HOME is replaced per invocation."""
    return {**os.environ, **target.env}
