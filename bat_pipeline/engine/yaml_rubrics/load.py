"""Rubrics by name or file. A name is one of the built-in rubrics (the YAML files beside
this module) or `bat` (bat-cli's four judge rubrics, which are scorers of their own, not a
weighted rubric); anything with a `/` or ending in `.yaml`/`.yml` is a file. A rubric that
does not parse is refused (InputError) naming the file and the field (`criteria[1].weight`).

Which rubrics are agentic-v2-eval's (Rubric.agentic, scored by its rules): the built-in
ones (its packaged rubrics' criteria and weights), a file whose `metadata.author` names
agentic-v2-eval or its repository (as its packaged files do), and any rubric given to
`bat-pipeline evaluate` (agentic-v2-eval's command: the caller says `agentic=True`). A file
named by this project's eval.yaml or tasks (`judge.rubrics`) is otherwise this project's."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.yaml_rubrics.model import AGENTIC, Rubric

BAT = "bat"
"""bat-cli's four rubrics (relevance, task_completion, hallucination, tool_call): what
`judge.rubrics` means when it is not set."""
BUILTIN_DIR = Path(__file__).parent / "builtin"
BUILTIN = ("default", "agent", "code", "coding_standards", "pattern")
AGENTIC_AUTHORS = ("agentic-v2-eval", "tafreeman/prompts", "tafreeman/agentic-runtime-platform")
"""`metadata.author` of agentic-v2-eval's packaged rubric files."""


def is_agentic(data: dict[str, Any]) -> bool:
    """A rubric file's content says it is agentic-v2-eval's (its `metadata.author`)."""
    metadata = data.get("metadata")
    return isinstance(metadata, dict) and str(metadata.get("author", "")).strip() in AGENTIC_AUTHORS


def is_file_name(spec: str) -> bool:
    return "/" in spec or "\\" in spec or spec.endswith((".yaml", ".yml"))


def load_rubric(spec: str, base_dir: Path | None = None, *, agentic: bool = False) -> Rubric:
    """The rubric `spec` names: a built-in name, or a file (relative to `base_dir`);
    `agentic`: read it as agentic-v2-eval's whatever the file says (module docstring)."""
    if not is_file_name(spec):
        if spec not in BUILTIN:
            raise InputError(
                spec, f"unknown rubric '{spec}' (built-in: {', '.join(BUILTIN)}; or a path to a .yaml file)"
            )
        return _load_file(BUILTIN_DIR / f"{spec}.yaml", f"builtin:{spec}", True)
    path = Path(spec).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return _load_file(path.resolve(), None, agentic)


@functools.lru_cache(maxsize=64)
def _cached(path: Path, mtime_ns: int, source: str | None, agentic: bool) -> Rubric:
    # Imported here: engine.config imports this module to check the rubrics it names.
    from bat_pipeline.engine.config.files import read_yaml

    file = str(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(
            file, "a rubric is a mapping with `criteria: [{name, weight, description, ...}]`", field="criteria"
        )
    agentic = agentic or is_agentic(data)
    try:
        rubric = Rubric.model_validate(
            {"name": path.stem, **data, "source": source or file, "agentic": agentic}, context={AGENTIC: agentic}
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
        more = len(exc.errors()) - 1
        tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise InputError(file, f"{error['msg']}{tail}", field=field or None) from None
    return rubric


def _load_file(path: Path, source: str | None, agentic: bool) -> Rubric:
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        raise InputError(str(path), "rubric file not found") from None
    return _cached(path, mtime, source, agentic)


def resolve_rubric_names(
    specs: Iterable[str], base_dir: Path, file: str, field: str, entry: str | None = None
) -> list[str]:
    """`judge.rubrics` as the scorers will read it: built-in names and `bat` as they are,
    files as absolute paths; each rubric loaded once to refuse a broken one now. An unknown
    name is refused naming `file`, `entry` and `field[i]`; a broken rubric file names itself."""
    resolved: list[str] = []
    for index, spec in enumerate(specs):
        if spec == BAT:
            resolved.append(spec)
            continue
        if not is_file_name(spec) and spec not in BUILTIN:
            raise InputError(
                file,
                f"unknown rubric '{spec}' (built-in: {BAT}, {', '.join(BUILTIN)}; or a path to a .yaml file)",
                entry=entry,
                field=f"{field}[{index}]",
            )
        rubric = load_rubric(spec, base_dir)
        resolved.append(spec if rubric.source.startswith("builtin:") else rubric.source)
    return resolved
