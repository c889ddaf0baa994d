"""What one step hands the next, kept under the storage root so that a step running in
another process or on another machine (multiprocess, Dask) reads it from the root it has.

A PartitionRef is handed over as a pointer, `runs/<run id>/<model key>` relative to the
root, to the partition.json the step saved; anything else (the task list) is pickled.
Files are keyed like Dagster's own file-system I/O manager: by asset key and partition,
so a step materialised alone reads its upstream's latest output.

On an object store's root (remote_root) a step ends by uploading what it wrote that is not
there yet (the JSON files went up as they were written; the agent's spans and log, the
pickles, a chart go now), and a step starts by fetching the pointer and its partition's
folder into this machine's mirror: a worker whose mirror is empty finds everything.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import dagster as dg

from bat_pipeline.engine.contracts.names import safe_key
from bat_pipeline.locations import root_path
from bat_pipeline.remote_root import pull_file, pull_tree, push, push_changed
from bat_pipeline.storage import PartitionRef, load_ref, read_json, ref_location, save_ref, write_json

HANDOFF_DIR = "handoff"
UNPARTITIONED = "__all__"


class HandoffIOManager(dg.ConfigurableIOManager):
    """Step outputs under `<root>/handoff/<asset key>/<partition>.{json,pickle}`."""

    root: str
    """The storage root: a folder, a `file://` URL or an object store's (locations.root_path)."""

    def _base(self, context: dg.OutputContext | dg.InputContext) -> Path:
        partition = context.asset_partition_key if context.has_asset_partitions else UNPARTITIONED
        return root_path(self.root).joinpath(HANDOFF_DIR, *map(safe_key, context.asset_key.path), safe_key(partition))

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        base = self._base(context)
        if isinstance(obj, PartitionRef):
            save_ref(obj)
            push_changed(obj.dir)
            write_json(base.with_suffix(".json"), {"partition": ref_location(obj)})
            return
        base.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=base.parent, prefix=f".{base.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            pickle.dump(obj, out)
        os.replace(tmp, base.with_suffix(".pickle"))
        push(base.with_suffix(".pickle"))

    def load_input(self, context: dg.InputContext) -> Any:
        base = self._base(context)
        pointer = base.with_suffix(".json")
        if pull_file(pointer):
            folder = root_path(self.root) / read_json(pointer)["partition"]
            pull_tree(folder)
            return load_ref(folder)
        pull_file(base.with_suffix(".pickle"))
        return pickle.loads(base.with_suffix(".pickle").read_bytes())
