"""eval.yaml's rules across fields, checked once the types are right."""

from __future__ import annotations

import difflib
import re

from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.contracts.scores import RUBRICS
from bat_pipeline.engine.errors import InputError

MAX_PROMPT_CHARS = 1000
"""Longest operator prompt per rubric (`judge.prompts`)."""

_CRON_ALIASES = ("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually")
_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_CRON_NAMES = re.compile(
    r"^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)$", re.IGNORECASE
)


def cron_problem(cron: str) -> str | None:
    """Why a cron expression would not schedule (Dagster takes five fields, or an alias such
    as @daily), or None when it reads as one."""
    if cron.strip().lower() in _CRON_ALIASES:
        return None
    fields = cron.split()
    if len(fields) != 5:
        return f"'{cron}' has {len(fields)} fields; a cron needs 5 (minute hour day month weekday), e.g. '0 3 * * *'"
    for text, (name, low, high) in zip(fields, _CRON_FIELDS, strict=True):
        for part in text.split(","):
            span, _, step = part.partition("/")
            if step and not step.isdigit():
                return f"'{cron}': the {name} step '{step}' is not a number"
            for bound in [] if span == "*" else span.split("-", 1):
                if _CRON_NAMES.match(bound):
                    continue
                if not bound.isdigit() or not low <= int(bound) <= high:
                    return f"'{cron}': '{bound}' is not a valid {name} ({low}-{high})"
    return None


def check_config(config: EvalConfig, file: str) -> None:
    """Refuse (InputError) what breaks a rule across fields: a cron that does not schedule,
    `qualitative` without a judge, an unknown rubric or a prompt too long in
    `judge.prompts`, two models with one partition key, an empty `agent.command`, or both
    `agent.command` and `agent.url`."""
    if config.evaluation.schedule is not None:
        problem = cron_problem(config.evaluation.schedule)
        if problem:
            raise InputError(file, problem, entry="evaluation", field="schedule")
    judge = config.judge
    if config.evaluation.qualitative and judge is None:
        raise InputError(
            file,
            "qualitative: true needs a `judge:` section (provider and model)",
            entry="evaluation",
            field="qualitative",
        )
    if judge is not None:
        for rubric, prompt in judge.prompts.items():
            if rubric not in RUBRICS:
                hint = difflib.get_close_matches(rubric, RUBRICS, n=1, cutoff=0.6)
                mean = f"did you mean '{hint[0]}'? " if hint else ""
                raise InputError(
                    file,
                    f"unknown rubric '{rubric}'; {mean}allowed: {', '.join(RUBRICS)}",
                    entry="judge",
                    field=f"prompts.{rubric}",
                )
            if len(prompt) > MAX_PROMPT_CHARS:
                raise InputError(
                    file,
                    f"prompt is {len(prompt)} characters; at most {MAX_PROMPT_CHARS}",
                    entry="judge",
                    field=f"prompts.{rubric}",
                )
    first_index: dict[str, int] = {}
    for index, model in enumerate(config.models):
        key = model.partition_key
        if key in first_index:
            field = "key" if model.key else "model"
            raise InputError(
                file,
                f"partition key '{key}' is also the key of models[{first_index[key]}]; "
                "give one of them a distinct `key:`",
                entry=f"models[{index}]",
                field=field,
            )
        first_index[key] = index
    target = config.agent
    if target.command is not None and not target.command:
        raise InputError(file, "command must not be empty", entry="agent", field="command")
    if target.command and target.url:
        raise InputError(
            file, "give either command (start the agent) or url (already running), not both", entry="agent", field="url"
        )
