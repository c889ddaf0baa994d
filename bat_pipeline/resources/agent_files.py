"""The agent's own files in a partition folder (its span files and its log), rewritten with
the run's secrets redacted once the agent has stopped."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.storage import AGENT_LOG, SPANS_DIR


def scrub_agent_files(workdir: Path, redactor: Redactor) -> list[Path]:
    """Rewrite the agent's files in a partition folder (everything under `spans/`, and
    `agent.log`) with the secrets redacted; returns the files that changed. Each file is
    replaced atomically, so a reader sees the old text or the new one. Bytes that are not
    UTF-8 are kept as they are. Files elsewhere (`agent.spans`, `extra_spans`) belong to
    the agent's folder and are not touched."""
    workdir = Path(workdir)
    spans = workdir / SPANS_DIR
    files = sorted(p for p in spans.rglob("*") if p.is_file() and not p.name.startswith(".")) if spans.is_dir() else []
    changed = []
    for path in [*files, workdir / AGENT_LOG]:
        if path.is_file() and _redact_file(path, redactor):
            changed.append(path)
    return changed


def _redact_file(path: Path, redactor: Redactor) -> bool:
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    redacted = redactor.text(text)
    if redacted == text:
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(redacted.encode("utf-8", errors="surrogateescape"))
        os.chmod(tmp, path.stat().st_mode & 0o7777)  # mkstemp makes it 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
