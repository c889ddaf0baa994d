"""Dagster's filesystem IO manager, but each output file is replaced in one rename.

The partitions of one `bat-pipeline run` (or two `dagster asset materialize` at once) are
separate Dagster runs at the same time, and each materialises the unpartitioned
`task_specs`: the same file under the instance's storage folder, which another partition
may be reading for its next step just then. Dagster's own manager truncates that file and
writes into it, so a reader can find it empty (`EOFError: Ran out of input` loading
`task_specs`); here the pickle is written beside it and renamed over it, which POSIX makes
atomic: a reader sees the old file or the new one, whole."""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any

import dagster as dg
from upath import UPath


class AtomicPickleIOManager(dg.UPathIOManager):
    """Pickles each output to `<base>/<asset key>[/<partition>]`, as Dagster's own does."""

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        folder = str(path.parent)  # a local folder: the instance storage directory
        os.makedirs(folder, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump(obj, out, pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, str(path))
        except BaseException:
            os.unlink(temporary)
            raise

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        with path.open("rb") as source:
            return pickle.load(source)


class AtomicFilesystemIOManager(dg.ConfigurableIOManagerFactory):
    """The `io_manager` of the definitions: files under the Dagster instance's storage
    folder (as Dagster's default), each written whole or not at all."""

    base_dir: str | None = None

    def create_io_manager(self, context: dg.InitResourceContext) -> AtomicPickleIOManager:
        base = self.base_dir or context.instance.storage_directory()  # type: ignore[union-attr]
        return AtomicPickleIOManager(base_path=UPath(base))
