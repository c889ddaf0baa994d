"""The engine knows nothing of Dagster: every module under bat_pipeline/engine, imported in a
fresh interpreter, leaves no `dagster` module in sys.modules. A new engine module is covered
the day it is added (the package is walked, and the walk checked against the files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bat_pipeline.engine

ENGINE = Path(bat_pipeline.engine.__file__).parent

# Imports the package and every module pkgutil finds under it (argv[2:]: folders added to
# the package's path first), then reports what it imported and which dagster modules came along.
GUARD = """\
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
package.__path__.extend(sys.argv[2:])
names = [package.__name__]
names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names,
                  "dagster": sorted(m for m in sys.modules if m.split(".")[0] == "dagster")}))
"""


def import_everything(*extra_folders: Path) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", GUARD, "bat_pipeline.engine", *map(str, extra_folders)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def engine_files() -> set[str]:
    """The module name of every .py file under bat_pipeline/engine."""
    names = set()
    for path in ENGINE.rglob("*.py"):
        parts = path.relative_to(ENGINE.parent.parent).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_no_engine_module_imports_dagster():
    report = import_everything()
    assert set(report["modules"]) == engine_files()  # no module the walk missed
    assert report["dagster"] == []


def test_the_guard_catches_an_engine_module_that_imports_dagster(tmp_path):
    (tmp_path / "leaky.py").write_text("import dagster  # what the engine must never do\n")
    report = import_everything(tmp_path)
    assert "bat_pipeline.engine.leaky" in report["modules"]
    assert "dagster" in report["dagster"]
