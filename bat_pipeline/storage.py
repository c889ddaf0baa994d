"""Where a partition's results live between steps, and the reference's output files.

Layout under the storage root (shared storage in a distributed deployment):

    <root>/runs/<run_id>/<model_key>/
        partition.json          PartitionRef of this run and model
        episodes/<conv>.json    one episode each (SPEC §8 shape), verdicts and scores added in place
        spans/                  the agent's span file(s) and extra copies
        agent.log               the agent's output
        trajectories.json, verdicts.json, judge.json, metrics.json, summary.json
    <root>/judge_cache/         judge answers keyed by content
    <root>/warehouse.duckdb     history across runs

Every write replaces a whole file atomically (write to a temp file, then rename), so a
retried step overwrites rather than appends, and a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.contracts.config import safe_key
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.contracts.tasks import task_file_stem

safe_name = safe_key
"""A file name from any text: characters outside [A-Za-z0-9_.-] become `_`; never `.`/`..`."""


def episode_file_name(task_id: str, attempt_index: int) -> str:
    """`<task file stem>__try<n>.json` (see `task_file_stem`: long ids are shortened with a
    hash, never cut into another task's name)."""
    return f"{task_file_stem(task_id)}__try{attempt_index}.json"


def default_root() -> Path:
    """`$BAT_PIPELINE_HOME`, else `.bat_pipeline` in the current folder."""
    return Path(os.environ.get("BAT_PIPELINE_HOME") or ".bat_pipeline").resolve()


def new_run_id(now: datetime | None = None) -> str:
    """A sortable id for one evaluation run: UTC time to the second."""
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y%m%dT%H%M%SZ")


MIN_FREE_BYTES = 50 * 1024 * 1024
"""Below this much free space a run is refused before it starts: episodes, spans and the
warehouse of even a small run take megabytes, and a write failing mid-run costs a retry."""


def check_writable(folder: Path, what: str) -> None:
    """Refuse (InputError, one line) a folder results cannot be written to: not creatable,
    read-only, or on a file system with less than MIN_FREE_BYTES free. Leaves the folder
    (created if needed) and nothing else."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        raise InputError(str(folder), f"cannot write the {what} here: {exc.strerror or exc}") from None
    if free < MIN_FREE_BYTES:
        raise InputError(str(folder), f"cannot write the {what} here: only {free // (1024 * 1024)} MB free "
                         f"on this file system (at least {MIN_FREE_BYTES // (1024 * 1024)} MB needed)")


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Atomic JSON write; pydantic models are dumped in JSON mode."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


class PartitionRef(BaseModel):
    """What a step hands the next one: where one model's results of one run live."""

    run_id: str
    run_name: str
    agent_id: str = ""
    """The agent's identity in the history (EvalConfig.agent_id)."""
    model_key: str
    model_name: str
    k: int
    agent_dir: Path
    dir: Path
    """`<root>/runs/<run_id>/<model_key>`."""
    output_dir: Path
    """The reference-compatible folder `output_dir/<run id>/<run_name>_<model>/`."""
    started_at: str = ""
    finished_at: str = ""
    dagster_run_id: str | None = None
    span_files: list[str] = []
    """Every span file the trajectories step reads, set by the episodes step: the agent's
    own file(s) of each attempt of the run (a resumed run adds its own), `agent.spans`,
    then the files and folders of `evaluation.extra_spans` (a folder is listed when read).
    The partition's own files are relative to `dir`; the others absolute."""

    @property
    def episodes_dir(self) -> Path:
        return self.dir / "episodes"

    @property
    def spans_dir(self) -> Path:
        return self.dir / "spans"

    @property
    def log_file(self) -> Path:
        return self.dir / "agent.log"

    def span_paths(self) -> list[Path]:
        """`span_files` as paths, the partition's own resolved against `dir`."""
        return [self.dir / p for p in self.span_files]

    def own_span_files(self) -> list[Path]:
        """The span files the agent wrote for this partition (inside `dir`)."""
        return [self.dir / p for p in self.span_files if not Path(p).is_absolute()]

    def add_span_files(self, paths: Iterable[Path | str]) -> None:
        """Record span files (those inside `dir` relative to it), each once, in order."""
        for path in paths:
            path = Path(path)
            if path.is_absolute() and path.is_relative_to(self.dir):
                path = path.relative_to(self.dir)
            if str(path) not in self.span_files:
                self.span_files.append(str(path))

    def file(self, name: str) -> Path:
        return self.dir / name


def partition_dir(root: Path, run_id: str, model_key: str) -> Path:
    return Path(root) / "runs" / safe_name(run_id) / safe_name(model_key)


def reference_dir(output_dir: Path, run_id: str, run_name: str, model_name: str) -> Path:
    """SPEC §8: `output_dir/<run id>/<run_name>_<model with ':' → '-'>/`."""
    return Path(output_dir) / safe_name(run_id) / safe_name(f"{run_name}_{model_name.replace(':', '-')}")


def write_episodes(directory: Path, episodes: Iterable[Episode]) -> None:
    """One file per episode; files of episodes not given are left alone."""
    for ep in episodes:
        write_json(Path(directory) / episode_file_name(ep.task_id, ep.attempt_index), ep)


def write_episode(directory: Path, episode: Episode) -> Path:
    path = Path(directory) / episode_file_name(episode.task_id, episode.attempt_index)
    write_json(path, episode)
    return path


def load_episodes(directory: Path) -> list[Episode]:
    """All episodes of a folder, ordered by task id then attempt."""
    folder = Path(directory)
    if not folder.is_dir():
        return []
    episodes = [Episode.model_validate(read_json(p)) for p in sorted(folder.glob("*.json"))]
    episodes.sort(key=lambda e: (e.task_id, e.attempt_index))
    return episodes


def save_ref(ref: PartitionRef) -> None:
    write_json(ref.file("partition.json"), ref)


def load_ref(directory: Path) -> PartitionRef:
    return PartitionRef.model_validate(read_json(Path(directory) / "partition.json"))


def latest_run_dir(root: Path, model_key: str, agent_id: str | None = None) -> Path | None:
    """The newest run folder holding this model (of this agent, when given), or None.

    A partition recorded before agents had an identity belongs to its agent folder's name."""
    runs = Path(root) / "runs"
    if not runs.is_dir():
        return None
    for run in sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True):
        folder = run / safe_name(model_key)
        if not (folder / "partition.json").exists():
            continue
        if agent_id is None:
            return folder
        try:
            ref = load_ref(folder)
        except (OSError, ValueError):
            continue
        if (ref.agent_id or safe_name(Path(ref.agent_dir).name)) == agent_id:
            return folder
    return None


def publish_reference(ref: PartitionRef, episodes: Iterable[Episode], *, files: dict[str, Any] | None = None,
                      copy: Iterable[Path] = ()) -> Path:
    """Write the reference evaluator's files for one run and model (SPEC §8).

    `files`: name → JSON data (summary.json, metrics.json); `copy`: files placed beside
    them (the agent's span files and log). Everything is replaced, never appended."""
    out = Path(ref.output_dir)
    write_episodes(out / "episodes", episodes)
    for name, data in (files or {}).items():
        write_json(out / name, data)
    for source in copy:
        source = Path(source)
        if source.is_file():
            out.mkdir(parents=True, exist_ok=True)
            tmp = out / f".{source.name}.tmp"
            shutil.copyfile(source, tmp)
            os.replace(tmp, out / source.name)
    return out
