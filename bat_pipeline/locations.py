"""Where a process finds what it works on when it is not told: the agent folder every code
location evaluates (`dagster dev`, `dagster asset materialize`, the partition processes of
`bat-pipeline run`) and the Dagster instance's home."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from bat_pipeline.engine.agent_folder import EVAL_FILE
from bat_pipeline.engine.config.project import Overrides
from bat_pipeline.engine.errors import InputError
from bat_pipeline.remote_root import is_remote, mirror_folder

AGENT_DIR_VAR = "BAT_AGENT_DIR"
PROVIDERS_VAR = "BAT_PROVIDERS_FILE"
THRESHOLD_VAR = "BAT_THRESHOLD"
OUTPUT_VAR = "BAT_OUTPUT_DIR"
DATASET_VAR = "BAT_DATASET"
TRUST_VAR = "BAT_TRUST_DATASETS"
"""`--trust-datasets` of `bat-pipeline run` ("1"), for the code location."""
ADK_CONFIG_VAR = "BAT_ADK_CONFIG"
"""`--config FILE` of `bat-pipeline run` (a Google ADK test_config.json), for the code location."""
EXPORT_OTLP_VAR = "BAT_EXPORT_OTLP"
"""`--export-otlp URL` of `bat-pipeline run`, for the code location."""
WAREHOUSE_WAIT_VAR = "BAT_PIPELINE_WAREHOUSE_WAIT_S"
"""Seconds a step waits for another process holding the warehouse (default 60; the
end-of-run table of `bat-pipeline run`, 5)."""
WAREHOUSE_VAR = "BAT_PIPELINE_WAREHOUSE"
"""The warehouse's file, when not `<storage root>/warehouse.duckdb` (a root on an object
store keeps it in this machine's mirror: docs/scaling.md)."""
"""`--providers`, `--threshold`, `--output`, `--dataset` of `bat-pipeline run`, for the
code location (and `dagster asset materialize`, which may set them too)."""
DAGSTER_HOME_VAR = "DAGSTER_HOME"
BUNDLED_AGENT_DIR = Path(__file__).resolve().parent / "example" / "weather_agent"
"""The bundled example agent folder (scripted models, see its eval/eval.yaml)."""
INSTANCE_SETTINGS = Path(__file__).resolve().parent.parent / "dagster.yaml"
"""The project's Dagster instance settings, copied into a fresh home."""


def overrides_from_env() -> Overrides:
    """The command line's overrides as `bat-pipeline run` hands them to the code location."""
    threshold = os.environ.get(THRESHOLD_VAR)
    try:
        value = float(threshold) if threshold else None
    except ValueError:
        raise InputError(THRESHOLD_VAR, f"expected a number from 0 to 1, got {threshold!r}") from None
    return Overrides(
        providers_file=Path(os.environ[PROVIDERS_VAR]).resolve() if os.environ.get(PROVIDERS_VAR) else None,
        threshold=value,
        output_dir=Path(os.environ[OUTPUT_VAR]).resolve() if os.environ.get(OUTPUT_VAR) else None,
        dataset=Path(os.environ[DATASET_VAR]).resolve() if os.environ.get(DATASET_VAR) else None,
        trust_datasets=os.environ.get(TRUST_VAR) == "1",
        adk_config=Path(os.environ[ADK_CONFIG_VAR]).resolve() if os.environ.get(ADK_CONFIG_VAR) else None,
        export_otlp=os.environ.get(EXPORT_OTLP_VAR) or None,
    )


def agent_dir_from_env() -> Path:
    """`$BAT_AGENT_DIR` (an agent folder or an AgentV eval file), else the current folder
    when it holds eval/eval.yaml, else the bundled example; absolute."""
    if os.environ.get(AGENT_DIR_VAR):
        return Path(os.environ[AGENT_DIR_VAR]).expanduser().resolve()
    if (Path.cwd() / EVAL_FILE).is_file():
        return Path.cwd().resolve()
    return BUNDLED_AGENT_DIR


def dagster_home(root: Path) -> Path:
    """`$DAGSTER_HOME` when set, else `<storage root>/dagster` (made on first use, with the
    project's dagster.yaml when there is one)."""
    home = Path(os.environ.get(DAGSTER_HOME_VAR) or (root / "dagster")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    if not settings.exists() and INSTANCE_SETTINGS.is_file():
        settings.write_text(INSTANCE_SETTINGS.read_text(encoding="utf-8"), encoding="utf-8")
    return home


def root_path(root: str | Path) -> Path:
    """The storage root as a local folder: a path, a `file://` URL (a shared mount: every
    worker of a distributed run resolves the partitions' files against its own root), or
    the mirror folder of an object store's URL (`s3://bucket/prefix`: remote_root, which
    refuses with InputError a scheme whose fsspec filesystem is not installed)."""
    text = str(root)
    if is_remote(text):
        return mirror_folder(text)
    if "://" in text:
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise InputError(text, "a file:// storage root must be on this machine (file:///path)")
        text = unquote(parsed.path)
    return Path(text).expanduser().resolve()
