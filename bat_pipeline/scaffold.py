"""`bat-pipeline init` and `show`: write a starting eval/ folder, print the resolved settings."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

from bat_pipeline.engine.agent_folder import AGENT_CARD, EVAL_FILE
from bat_pipeline.engine.config.files import read_json
from bat_pipeline.engine.config.project import load_project, project_tasks
from bat_pipeline.engine.contracts import EvaluationSettings
from bat_pipeline.engine.errors import InputError

TEMPLATE_FILES = (EVAL_FILE.as_posix(), EvaluationSettings.model_fields["dataset"].default)
"""What `init` writes, from the files of the same paths under bat_pipeline/templates."""


def _agent_name(agent_dir: Path) -> str:
    card = agent_dir / AGENT_CARD
    if card.is_file():
        try:
            return str(read_json(card).get("name") or agent_dir.name)
        except (InputError, AttributeError):  # a card that does not read: the folder's name
            pass
    return agent_dir.name


def init_eval_folder(agent_dir: Path, *, force: bool = False) -> list[Path]:
    """Writes eval/eval.yaml and eval/input/tasks.json from the templates.

    Refuses (InputError) when either exists, unless `force`."""
    agent_dir = Path(agent_dir)
    targets = [agent_dir / name for name in TEMPLATE_FILES]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        raise InputError(str(existing[0]), "already exists; pass --force to overwrite it")
    name = _agent_name(agent_dir)
    templates = resources.files("bat_pipeline") / "templates"
    for relative, target in zip(TEMPLATE_FILES, targets, strict=True):
        text = (templates / relative).read_text(encoding="utf-8").replace("{agent_name}", name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return targets


def describe(agent_dir: Path) -> str:
    """The resolved configuration as YAML, variable values masked, then one `# warning:`
    line per key of eval.yaml or the dataset that is ignored."""
    config = load_project(agent_dir)  # an agent folder or an AgentV eval file
    warnings = list(config.warnings)
    tasks = project_tasks(config, warnings)
    data = config.model_dump(mode="json", exclude={"agent_dir", "source", "warnings", "agentv", "evalbench"})
    for model in data["models"]:
        model["env"] = dict.fromkeys(model.get("env", {}), "<set>")
    for llm in ("judge", "simulated_user"):
        if data.get(llm):
            data[llm]["env"] = dict.fromkeys(data[llm].get("env", {}), "<set>")
    data["agent"]["env"] = dict.fromkeys(data["agent"].get("env", {}), "<set>")
    resolved = {
        "agent_dir": str(config.agent_dir),
        "eval_file": str(config.source),
        "dataset": f"{config.resolve(config.evaluation.dataset)} ({len(tasks)} tasks)",
        "agent_id": config.agent_id,
        "partitions": [f"{m.partition_key} = {m.name}" for m in config.models],
        **data,
    }
    text = yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True)
    return text + "".join(f"# warning: {warning}\n" for warning in warnings)
