"""What bat-cli reads in its own way in eval.yaml, turned into the records' shape before
they validate: shorthand (`"provider:model"`), empty sections and values, a single path
where a list is expected."""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.config import PROVIDERS
from bat_pipeline.engine.errors import InputError

_DEFAULTED_WHEN_EMPTY = ("dataset", "output_dir", "run_name")
_SHORTHAND = "expected '<provider>:<model>' or a mapping with provider and model, got"


def lenient_sections(data: dict[str, Any], file: str) -> dict[str, Any]:
    """What bat-cli reads in its own way, turned into the records' shape: an empty
    `evaluation`, `agent` or `judge` section is absent; an empty dataset, output_dir or
    run_name takes its default; a single `extra_spans` path is a list of one; a judge
    (or simulated user) written `provider:model` is split like a model."""
    for section in ("evaluation", "agent", "judge", "simulated_user"):
        if section in data and not data[section]:
            del data[section]
    evaluation = data.get("evaluation")
    if isinstance(evaluation, dict):
        evaluation = dict(evaluation)
        for name in _DEFAULTED_WHEN_EMPTY:
            if name in evaluation and evaluation[name] in (None, ""):
                del evaluation[name]
        if evaluation.get("extra_spans") is None:
            evaluation.pop("extra_spans", None)
        elif isinstance(evaluation["extra_spans"], str):
            evaluation["extra_spans"] = [evaluation["extra_spans"]]
        data["evaluation"] = evaluation
    for section in ("judge", "simulated_user"):
        value = data.get(section)
        if isinstance(value, str):
            data[section] = _from_shorthand(value, file, section)
        elif isinstance(value, dict):
            data[section] = _split_model(value)
    judge = data.get("judge")
    if isinstance(judge, dict):
        for name in ("rubrics", "kinds", "panel"):
            if isinstance(judge.get(name), str):
                judge[name] = [judge[name]]
    for section in ("metrics", "report"):
        if section in data and not data[section]:
            del data[section]
    return data


def normalize_models(models: Any, file: str) -> Any:
    """`models` as a list of mappings: `"provider:model"` split at the first colon, a
    mapping whose `model` is written `provider:model` (and no provider) split the same
    way. Refuses a half shorthand, `- openai: gpt-4o` (a space after the colon) and an
    entry that is neither text nor a mapping."""
    if not isinstance(models, list):
        return models
    normalized = []
    for index, item in enumerate(models):
        entry = f"models[{index}]"
        if isinstance(item, str):
            item = _from_shorthand(item, file, entry)
        elif isinstance(item, dict):
            if len(item) == 1 and next(iter(item)) in PROVIDERS:
                provider, model = next(iter(item.items()))
                raise InputError(
                    file,
                    f"write '{provider}:{model}' without a space after the colon, or a mapping with provider and model",
                    entry=entry,
                    field=str(provider),
                )
            item = _split_model(item)
            if isinstance(item.get("env"), dict):
                item["env"] = dict(item["env"])
        else:
            raise InputError(file, f"{_SHORTHAND} {kind(item)}", entry=entry)
        normalized.append(item)
    return normalized


def _from_shorthand(text: str, file: str, entry: str) -> dict[str, str]:
    provider, sep, model = text.partition(":")
    if not sep or not provider.strip() or not model.strip():
        raise InputError(file, f"{_SHORTHAND} '{text}'", entry=entry, field="model")
    return {"provider": provider.strip(), "model": model.strip()}


def _split_model(section: dict[str, Any]) -> dict[str, Any]:
    """A copy of a model or judge mapping, its `model: provider:model` split when it names
    no provider."""
    section = dict(section)
    model = section.get("model")
    if not section.get("provider") and isinstance(model, str) and ":" in model:
        section["provider"], section["model"] = (part.strip() for part in model.split(":", 1))
    return section
