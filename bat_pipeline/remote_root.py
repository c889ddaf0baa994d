"""A storage root on an object store (`BAT_PIPELINE_HOME=s3://bucket/prefix`, or any fsspec
URL whose filesystem is installed), worked on through a local mirror folder.

The steps need what an object store does not give: files replaced by an atomic rename,
span files an agent appends to, a DuckDB file. So a remote root is mirrored:
`locations.root_path` maps the URL to a folder of this machine (`$BAT_PIPELINE_CACHE`,
else the user's cache folder, then `<scheme>/<bucket>/<prefix>`), every step works there
on plain files, and files move between that folder and the store:

- up: each file storage.write_text_atomic writes, right after its rename (an episode is on
  the store before the next conversation starts: a worker that dies loses no stored
  episode); files written otherwise (the agent's spans and log, handoff pickles, charts)
  at the end of the step that wrote them (`push_changed`, `push`);
- down: what a step reads, before it reads it (its partition's folder, a judge answer, the
  records a resume or a report looks through): `pull_file`, `pull_tree`.

Only what differs moves: same size and, where the store lists a checksum (S3's ETag of an
object uploaded whole is its MD5), the same content. Without a checksum a file is copied.

The map of mirror folders to URLs belongs to this process: `root_path` fills it when given
the URL, so what runs elsewhere is handed the URL (`root_text`), never this machine's
mirror. The warehouse is never uploaded (a DuckDB file has one writer; see
docs/scaling.md). fsspec and the store's package are imported only for a remote root.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from bat_pipeline.engine.errors import InputError

CACHE_VAR = "BAT_PIPELINE_CACHE"
"""The folder mirrors of remote storage roots are kept in (default: `$XDG_CACHE_HOME/bat_pipeline`,
else `~/.cache/bat_pipeline`)."""
LOCAL_SCHEMES = ("file", "local")
REFUSED = {
    "memory": "it lives inside one process, and a run's steps are several",
    **dict.fromkeys(("http", "https", "zip", "tar", "github", "git", "reference", "data"), "it is read-only"),
}
EXTRAS = {"s3": "s3", "s3a": "s3"}
"""Schemes whose filesystem an extra of this project installs (`pip install 'bat_pipeline[s3]'`)."""

_MIRRORS: dict[Path, str] = {}


class StoreError(RuntimeError):
    """A file could not be copied to or from the object store."""


def is_remote(root: str | Path) -> bool:
    """Whether `root` is a URL of another scheme than file://."""
    text = str(root)
    return "://" in text and urlparse(text).scheme not in LOCAL_SCHEMES


def mirror_folder(url: str) -> Path:
    """The local mirror of the remote root `url`, known from now on to this process.
    Refuses (InputError, one line) a scheme fsspec does not know, one whose package is
    not installed (naming it), one that cannot hold a root, and a URL without a bucket."""
    parsed = urlparse(url)
    scheme = parsed.scheme
    if scheme in REFUSED:
        raise InputError(url, f"the storage root cannot be a {scheme}:// URL: {REFUSED[scheme]}")
    _filesystem_class(url, scheme)
    parts = [part for part in unquote(parsed.path).split("/") if part]
    if not parsed.netloc or any(part in (".", "..") for part in parts):
        raise InputError(url, f"expected {scheme}://<bucket>/<prefix> as the storage root")
    base = os.environ.get(CACHE_VAR) or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "bat_pipeline"
    folder = Path(base).expanduser().resolve().joinpath(scheme, parsed.netloc, *parts)
    _MIRRORS[folder] = f"{scheme}://{parsed.netloc}" + "".join(f"/{part}" for part in parts)
    return folder


def _filesystem_class(url: str, scheme: str) -> Any:
    from fsspec.registry import get_filesystem_class

    try:
        return get_filesystem_class(scheme)
    except ImportError as exc:
        extra = f" (pip install 'bat_pipeline[{EXTRAS[scheme]}]')" if scheme in EXTRAS else ""
        raise InputError(url, f"a {scheme}:// storage root needs a package: {exc}{extra}") from None
    except ValueError:
        raise InputError(
            url, f"the storage root must be a folder, a file:// URL or an object store fsspec knows, not {scheme}://"
        ) from None


def root_text(root: Path | str) -> str:
    """The root as handed to another process or machine: the URL of a mirror, else the path."""
    return _MIRRORS.get(Path(root), str(root))


def filesystem_module(root: Path | str) -> str | None:
    """The package of the fsspec filesystem a root on an object store is reached through
    (`s3fs` for s3://), for the processes that will use it to import ahead; None for a
    local root."""
    url = url_of(root)
    if url is None:
        return None
    return str(_filesystem_class(url, urlparse(url).scheme).__module__).split(".")[0]


def url_of(path: Path | str) -> str | None:
    """Where a file or folder of a mirror lives on the store; None outside every mirror."""
    if not _MIRRORS:
        return None
    path = Path(path)
    for folder, url in _MIRRORS.items():
        if path.is_relative_to(folder):
            relative = path.relative_to(folder).as_posix()
            return url if relative == "." else f"{url}/{relative}"
    return None


def _fs(url: str) -> Any:
    import fsspec

    # Listings are read fresh: other processes and machines write the same folders.
    return fsspec.filesystem(urlparse(url).scheme, use_listings_cache=False)


def push(*paths: Path) -> None:
    """Upload each file that lies in a mirror (others and missing files are skipped)."""
    for path in paths:
        url = url_of(path)
        if url is not None and Path(path).is_file():
            with _store_errors(f"upload {path} to {url}", absent=StoreError):
                _fs(url).put_file(str(path), url)


def push_changed(folder: Path) -> int:
    """Upload the files under a mirrored folder that the store lacks or holds otherwise
    (names starting with a dot, temporary files, stay); returns how many."""
    url = url_of(folder)
    if url is None or not Path(folder).is_dir():
        return 0
    stored = _listing(url)
    changed = [
        path
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
        and not _same(path, stored.get(path.relative_to(folder).as_posix()))
    ]
    push(*changed)
    return len(changed)


def pull_file(path: Path) -> bool:
    """Bring a mirrored file from the store when the local copy is missing or differs;
    whether the file is here now. Outside a mirror: whether it exists."""
    url = url_of(path)
    if url is None:
        return Path(path).is_file()
    fs = _fs(url)
    try:
        with _store_errors(f"read {url}"):
            info = fs.info(url)
    except FileNotFoundError:
        return Path(path).is_file()
    if info.get("type") == "file" and not _same(Path(path), info):
        _download(fs, url, Path(path))
    return Path(path).is_file()


def pull_tree(folder: Path, match: str | None = None) -> int:
    """Bring every file under a mirrored folder (those whose path relative to it matches
    the glob `match`) that is missing here or differs; files only here stay. Returns how
    many were copied."""
    url = url_of(folder)
    if url is None:
        return 0
    fs = _fs(url)
    copied = 0
    for relative, info in _listing(url).items():
        path = Path(folder) / relative
        if (match is None or fnmatch.fnmatchcase(relative, match)) and not _same(path, info):
            _download(fs, info["name"], path)
            copied += 1
    return copied


def child_folders(folder: Path) -> list[str]:
    """The names of the folders right under a mirrored folder on the store ([] outside a mirror)."""
    url = url_of(folder)
    if url is None:
        return []
    try:
        with _store_errors(f"list {url}"):
            entries = _fs(url).ls(url, detail=True)
    except FileNotFoundError:
        return []
    return sorted(str(e["name"]).rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "directory")


def remove_tree(folder: Path) -> None:
    """Delete a folder here and, when it lies in a mirror, its files on the store."""
    if Path(folder).exists():
        shutil.rmtree(folder)
    url = url_of(folder)
    if url is None:
        return
    with contextlib.suppress(FileNotFoundError), _store_errors(f"delete {url}"):
        _fs(url).rm(url, recursive=True)


def _listing(url: str) -> dict[str, dict[str, Any]]:
    """Every file under `url` on the store: path relative to it → its listing entry."""
    from fsspec.core import strip_protocol

    base = strip_protocol(url).rstrip("/") + "/"
    try:
        with _store_errors(f"list {url}"):
            found = _fs(url).find(url, detail=True)
    except FileNotFoundError:
        return {}
    return {
        name[len(base) :]: info
        for name, info in found.items()
        if name.startswith(base) and info.get("type", "file") == "file"
    }


def _same(path: Path, info: dict[str, Any] | None) -> bool:
    """Whether the local file holds what the store's object does: same size and the MD5 of
    an S3 object uploaded whole (its ETag). Without a checksum to compare: not the same."""
    if info is None or not path.is_file() or info.get("size") != path.stat().st_size:
        return False
    etag = str(info.get("ETag") or "").strip('"')
    return bool(etag) and "-" not in etag and hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest() == etag


def _download(fs: Any, name: str, path: Path) -> None:
    """The object `name` into `path`, replacing it whole (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        with _store_errors(f"download {name} to {path}", absent=StoreError):
            fs.get_file(name, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _store_errors(what: str, absent: type[Exception] = FileNotFoundError) -> Iterator[None]:
    """The store's own errors (each filesystem package raises its own) as StoreError saying
    what could not be done. FileNotFoundError (s3fs says so of a missing bucket too) is
    left for the caller unless `absent` is StoreError."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, FileNotFoundError) and absent is FileNotFoundError:
            raise
        raise StoreError(f"could not {what}: {exc}") from exc
