"""Where a partition's results live between steps, and the reference's output files.

Layout under the storage root (a folder, a shared mount, or the local mirror of an object
store's URL: remote_root copies every file below to the store, the warehouse excepted):

    <root>/runs/<run_id>/<model_key>/
        partition.json          PartitionRef of this run and model
        episodes/<conv>.json    one episode each (SPEC §8 shape), verdicts and scores added in place
        spans/                  the agent's span file(s) and extra copies
        agent.log               the agent's output
        trajectories.json, verdicts.json, judge.json, metrics.json, summary.json
    <root>/charts/<agent id>/   the charts
    <root>/judge_cache/         judge answers keyed by content
    <root>/handoff/             what a step hands the next when they may run apart (resources.handoff)
    <root>/warehouse.duckdb     history across runs (a local file, never on an object store)

Every write replaces a whole file atomically (write to a temp file, then rename), so a
retried step overwrites rather than appends, and a reader never sees half a file. What one
step writes and the next reads (episode files, span files) is recorded in the partition's
PartitionRef, never found by listing a folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bat_pipeline.engine.agent_folder import is_agent_folder
from bat_pipeline.engine.config.files import writable_text
from bat_pipeline.engine.config.messages import validated
from bat_pipeline.engine.config.project import project_kind
from bat_pipeline.engine.contracts import Episode, EvalConfig
from bat_pipeline.engine.contracts.names import episode_file_name, safe_key
from bat_pipeline.engine.contracts.provenance import Provenance
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import BUNDLED_AGENT_DIR, WAREHOUSE_VAR, root_path
from bat_pipeline.remote_root import child_folders, pull_file, pull_tree, push, remove_tree

HOME_VAR = "BAT_PIPELINE_HOME"
PARTITION_FILE = "partition.json"
RUNS_DIR = "runs"
AGENT_LOG = "agent.log"
SPANS_DIR = "spans"
AGENT_SPANS = "agent.jsonl"
"""The agent's span file in a partition's `spans/` (a resumed run adds its own, `resumed_spans`)."""


def resumed_spans(launch: str) -> str:
    """The span file of the agent of a resumed run, `agent-resume-<launch>.jsonl`."""
    return f"agent-resume-{launch}.jsonl"


ROOT_FOLDER = ".bat_pipeline"
"""The storage root's folder name when `$BAT_PIPELINE_HOME` does not name one."""


def default_root(project: Path | None = None) -> Path:
    """`$BAT_PIPELINE_HOME` (a folder or a URL: locations.root_path), else the project's own
    root (`project_root`), so that one agent's results are in one place whatever the
    working directory; without a project, `.bat_pipeline` in the current folder."""
    if os.environ.get(HOME_VAR):
        return root_path(os.environ[HOME_VAR])
    return root_path(project_root(project) if project is not None else ROOT_FOLDER)


def history_root(project: Path | None = None, here: Path | None = None) -> tuple[Path, str | None]:
    """Where the commands that read the history (report, export, compare, sql) look, and a
    note when it is not where the user stands: `$BAT_PIPELINE_HOME`; else the root of
    `project` (an agent folder or eval file); else that of the agent folder `here` (the
    current folder) is; else a `.bat_pipeline` here; else the bundled example's, when
    `bat-pipeline demo` has written one."""
    here = Path(here or Path.cwd())
    if os.environ.get(HOME_VAR) or project is not None:
        return default_root(project), None
    if is_agent_folder(here):
        return default_root(here), None
    if (here / ROOT_FOLDER).is_dir():
        return root_path(here / ROOT_FOLDER), None
    example = project_root(BUNDLED_AGENT_DIR)
    if example.is_dir():
        return root_path(example), f"no agent folder here: reading the bundled example's results ({example})"
    return root_path(here / ROOT_FOLDER), None


def project_root(project: Path) -> Path:
    """`.bat_pipeline` in the agent folder a path means (for a bat-cli eval file, the
    folder it is for), or beside an AgentV or EvalBench file."""
    kind, where = project_kind(Path(project))
    folder = where if kind == "agent" else Path(where).parent
    return Path(folder).resolve() / ROOT_FOLDER


def warehouse_path(root: Path) -> Path:
    """`$BAT_PIPELINE_WAREHOUSE` (a local file's path), else `<root>/warehouse.duckdb`."""
    return Path(os.environ.get(WAREHOUSE_VAR) or Path(root) / "warehouse.duckdb")


def charts_dir(root: Path, agent_id: str) -> Path:
    return Path(root) / "charts" / agent_id


def new_run_id(now: datetime | None = None) -> str:
    """A sortable id for one evaluation run: UTC time to the second."""
    now = now or datetime.now(UTC)
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
        raise InputError(
            str(folder),
            f"cannot write the {what} here: only {free // (1024 * 1024)} MB free "
            f"on this file system (at least {MIN_FREE_BYTES // (1024 * 1024)} MB needed)",
        )


def check_result_folders(root: Path, config: EvalConfig) -> None:
    """`check_writable` on the storage root and on the reference's output folder."""
    check_writable(root, f"pipeline's results ({HOME_VAR})")
    check_writable(config.resolve(config.evaluation.output_dir), "output files (evaluation.output_dir)")


def write_text_atomic(path: Path, text: str) -> None:
    """`text` written to `path` at once (a temporary file renamed); a lone surrogate from an
    answer (engine.config.files.writable_text) is written as U+FFFD, never an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            try:
                out.write(text)
            except UnicodeEncodeError:
                out.seek(0)
                out.truncate()
                out.write(writable_text(text))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    push(path)  # on the object store before the caller goes on, when the root is one


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
    """`<root>/runs/<run_id>/<model_key>`; partition.json records it relative to the
    root (`runs/<run_id>/<model_key>`) and reading it anchors it at the folder it was read
    from, so a worker whose root is mounted elsewhere finds the same files."""
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
    episode_files: list[str] = []
    """The partition's episode files (names in `episodes_dir`), in the order first stored:
    what the steps after the episodes step read."""
    provenance: Provenance | None = None
    """The agent's version and the hashes of the dataset and settings, recorded when the
    partition's episodes start (a resume keeps the first); None for older records."""

    @property
    def episodes_dir(self) -> Path:
        return self.dir / "episodes"

    @property
    def spans_dir(self) -> Path:
        return self.dir / SPANS_DIR

    @property
    def log_file(self) -> Path:
        return self.dir / AGENT_LOG

    @property
    def agent_identity(self) -> str:
        """`agent_id`; for a partition recorded before agents had an identity, its agent
        folder's name (as `EvalConfig.agent_id` makes it)."""
        return self.agent_id or safe_key(Path(self.agent_dir).name)

    def started_time(self) -> datetime:
        """`started_at`; now when unset."""
        return datetime.fromisoformat(self.started_at) if self.started_at else datetime.now(UTC)

    def finished_timestamp(self) -> float:
        """`finished_at` as unix time; 0 when unset."""
        return datetime.fromisoformat(self.finished_at).timestamp() if self.finished_at else 0.0

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


TIMINGS_FILE = "timings.json"
"""Seconds per phase: a partition's (in its folder) and a run's (in `runs/<run id>/`)."""


def load_timings(folder: Path) -> dict[str, Any]:
    """The timings.json of a partition's or a run's folder; {} when there is none."""
    path = Path(folder) / TIMINGS_FILE
    return read_json(path) if path.is_file() else {}


def record_timings(folder: Path, phases: dict[str, float]) -> dict[str, Any]:
    """Add `phases` (seconds, rounded to milliseconds) to the folder's timings.json; the
    whole record. Steps of a partition run one after another, so nothing races here."""
    timings = {**load_timings(folder), **{phase: round(seconds, 3) for phase, seconds in phases.items()}}
    write_json(Path(folder) / TIMINGS_FILE, timings)
    return timings


def partition_dir(root: Path, run_id: str, model_key: str) -> Path:
    return Path(root) / RUNS_DIR / safe_key(run_id) / safe_key(model_key)


def reference_dir(output_dir: Path, run_id: str, run_name: str, model_name: str) -> Path:
    """SPEC §8: `output_dir/<run id>/<run_name>_<model with ':' → '-'>/`."""
    return Path(output_dir) / safe_key(run_id) / safe_key(f"{run_name}_{model_name.replace(':', '-')}")


def new_partition(
    root: Path, config: EvalConfig, model_key: str, run_id: str, dagster_run_id: str | None, *, keep: bool = False
) -> PartitionRef:
    """The record of a fresh partition of `run_id` (not saved yet). A folder left by an
    earlier attempt of the same run is deleted: nothing of it is mixed in — unless `keep`
    (it holds only the agent `bat-pipeline run` started ahead for this partition)."""
    model = config.model(model_key)
    directory = partition_dir(root, run_id, model_key)
    if not keep:
        remove_tree(directory)
    return PartitionRef(
        run_id=run_id,
        run_name=config.evaluation.run_name,
        agent_id=config.agent_id,
        model_key=model_key,
        model_name=model.name,
        k=config.evaluation.k,
        agent_dir=config.agent_dir,
        dir=directory,
        output_dir=(
            Path(config.resolve(config.evaluation.output_dir)) / safe_key(run_id) / safe_key(model_key)
            if model.target is not None
            else reference_dir(
                config.resolve(config.evaluation.output_dir), run_id, config.evaluation.run_name, model.name
            )
        ),
        dagster_run_id=dagster_run_id,
    )


def resumed_partition(root: Path, model_key: str, agent_id: str, dagster_run_id: str | None) -> PartitionRef | None:
    """The record of the agent's newest partition of this model, now continued by
    `dagster_run_id`; None when there is none."""
    directory = latest_run_dir(root, model_key, agent_id)
    if directory is None:
        return None
    pull_tree(directory)
    return load_ref(directory).model_copy(update={"dagster_run_id": dagster_run_id})


def write_episodes(directory: Path, episodes: Iterable[Episode]) -> None:
    """One file per episode (`episode_file_name`); files of episodes not given are left alone."""
    for ep in episodes:
        write_json(Path(directory) / episode_file_name(ep.task_id, ep.attempt_index), ep)


def store_episodes(ref: PartitionRef, episodes: Iterable[Episode], *, save_record: bool = False) -> None:
    """Write each episode into the partition and record its file in `ref` (once); the
    files of other episodes are left alone. With `save_record`, `ref` is saved when it
    records a new file, before the files are written: a process killed in between leaves
    no episode file its record does not list, only a listed one not written yet."""
    episodes = list(episodes)
    names = [episode_file_name(e.task_id, e.attempt_index) for e in episodes]
    new = [name for name in dict.fromkeys(names) if name not in ref.episode_files]
    ref.episode_files.extend(new)
    if save_record and new:
        save_ref(ref)
    for name, episode in zip(names, episodes, strict=True):
        write_json(ref.episodes_dir / name, episode)


def load_episodes(ref: PartitionRef) -> list[Episode]:
    """The episodes recorded in `ref`, ordered by task id then attempt. A recorded file
    that is not there (its process was killed before writing it) is left out."""
    paths = [ref.episodes_dir / name for name in ref.episode_files]
    episodes = [validated(Episode, read_json(path), str(path)) for path in paths if path.is_file()]
    episodes.sort(key=lambda e: (e.task_id, e.attempt_index))
    return episodes


def save_ref(ref: PartitionRef) -> None:
    """partition.json, with the partition's folder relative to the storage root."""
    data = ref.model_dump(mode="json")
    data["dir"] = ref_location(ref)
    write_json(ref.file(PARTITION_FILE), data)


def ref_location(ref: PartitionRef) -> str:
    """Where the partition lives relative to the storage root: `runs/<run id>/<model key>`."""
    return f"{RUNS_DIR}/{ref.dir.parent.name}/{ref.dir.name}"


def load_ref(directory: Path) -> PartitionRef:
    """The record in `directory`, its `dir` that folder (older records hold an absolute
    path, possibly of another machine's mount: the folder read wins)."""
    data = read_json(Path(directory) / PARTITION_FILE)
    data["dir"] = str(Path(directory).resolve())
    return PartitionRef.model_validate(data)


def has_ref(directory: Path) -> bool:
    return (Path(directory) / PARTITION_FILE).is_file()


def latest_run_dir(root: Path, model_key: str, agent_id: str | None = None) -> Path | None:
    """The newest run folder holding this model (of this agent, when given), or None.

    A partition recorded before agents had an identity belongs to its agent folder's name.
    The runs only on the object store count too (their records fetched, newest first)."""
    runs = Path(root) / RUNS_DIR
    local = [p.name for p in runs.iterdir() if p.is_dir()] if runs.is_dir() else []
    for run in sorted({*local, *child_folders(runs)}, reverse=True):
        folder = runs / run / safe_key(model_key)
        if not pull_file(folder / PARTITION_FILE):
            continue
        if agent_id is None:
            return folder
        try:
            ref = load_ref(folder)
        except (OSError, ValueError):
            continue
        if ref.agent_identity == agent_id:
            return folder
    return None


def publish_reference(
    ref: PartitionRef, episodes: Iterable[Episode], *, files: dict[str, Any] | None = None, copy: Iterable[Path] = ()
) -> Path:
    """Write the reference evaluator's files for one run and model (SPEC §8).

    `files`: name → JSON data (summary.json, metrics.json); `copy`: files placed beside
    them (the agent's span files and log). Everything is replaced, never appended."""
    out = Path(ref.output_dir)
    write_episodes(out / "episodes", episodes)
    for name, data in (files or {}).items():
        write_json(out / name, data)
    _copy_into(out, copy)
    return out


def write_results(ref: PartitionRef, files: dict[str, Any]) -> Path:
    """Each file (name → JSON data) into the partition folder and the reference's folder;
    returns the latter."""
    for name, data in files.items():
        write_json(ref.file(name), data)
    return publish_reference(ref, (), files=files)


def write_lines(ref: PartitionRef, files: dict[str, list[Any]]) -> None:
    """Each JSONL file (name → one JSON value per line) into the partition folder and the
    output folder, replaced whole."""
    for name, rows in files.items():
        text = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
        write_text_atomic(ref.file(name), text)
        write_text_atomic(Path(ref.output_dir) / name, text)


def publish_charts(config: EvalConfig, charts: Collection[Path]) -> Path:
    """Copy the charts into the reference's `output_dir/charts/` (SPEC §8); returns it."""
    push(*charts)  # and onto the object store, when the root is one
    out = config.resolve(config.evaluation.output_dir) / "charts"
    out.mkdir(parents=True, exist_ok=True)
    _copy_into(out, charts)
    return out


def _copy_into(folder: Path, files: Iterable[Path]) -> None:
    """Each existing file copied into `folder` under its own name, replacing it whole."""
    for source in map(Path, files):
        if source.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{source.name}.tmp"
            shutil.copyfile(source, tmp)
            os.replace(tmp, folder / source.name)
