"""The judge of an AgentV file's LLM graders (SPEC §13 "A judge for peer files"): the
target an evaluated target names as `judge_target` / `grader_target`, else the file's
`judge:` block (eval.yaml's shape). A file with an LLM grader and neither is refused
before anything runs.

A judge target is one of the targets files' LLM definitions: `provider` (openai,
anthropic, deepseek, nvidia, ollama; `openai-compatible` counts as openai), `model` (also
`deployment`), `base_url` (also `endpoint`, `baseUrl`), and `api_key` naming the variable
that holds the key (`${{ VAR }}`, `{{ env.VAR }}` or a bare VAR): the key itself is never
copied out of the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.datasets.agentv_agents import KEY_VARIABLE
from bat_pipeline.engine.datasets.agentv_targets import (
    TargetOptions,
    agentv_environ,
    defined_targets,
    expand,
    resolve_use_target,
)
from bat_pipeline.engine.errors import InputError

JUDGE_KEYS = ("judge_target", "grader_target")
LLM_TYPES = ("llm-rubric",)
"""Grader types the judge grades."""


def asks_judge(grader: Assertion) -> bool:
    """Whether the judge grades it: an LLM grader, or a composite with an LLM member or
    aggregator (engine.datasets.agentv_composite)."""
    return grader.type in LLM_TYPES or bool(grader.options.get("needs_judge"))


JUDGE_PROVIDERS = {
    "openai": "openai",
    "openai-compatible": "openai",
    "anthropic": "anthropic",
    "deepseek": "deepseek",
    "nvidia": "nvidia",
    "ollama": "ollama",
    "gemini": "gemini",
}


def find_judge(
    data: Mapping[str, Any],
    path: Path,
    targets: list[str],
    tests: list[AgentvCase],
    options: TargetOptions,
    warnings: list[str],
) -> dict[str, Any] | None:
    """The judge block (eval.yaml's `judge:` fields) for the file's LLM graders, or None
    when no test has one (the judge target is then not read at all). `targets`: the names
    of the evaluated targets, in order; the one they name as judge target gives it (two
    different ones are refused: one judge grades a file); an LLM target that names none
    grades its own answers when the file has no `judge:` block (AgentV 4.42.4's
    `graderTarget ?? name`). Targets and judge targets are followed through `use_target`.
    A judge target of a provider we cannot ask (AgentV's `azure`, `gemini`, ...) gives way
    to the file's `judge:` block, with a warning."""
    graded = [(t, g) for t in tests for g in t.assertions if asks_judge(g)]
    if not graded:
        return None
    block = data.get("judge")
    defined = defined_targets(data, path, options)
    environ = agentv_environ(path, options)
    named = {}
    for name in targets:
        body, where = resolve_use_target(name, defined, environ) if name in defined else ({}, "")
        judge = next((body[k] for k in JUDGE_KEYS if body.get(k)), None)
        if judge is None and block is None and str(body.get("provider") or "") in JUDGE_PROVIDERS:
            judge = name
        if judge is not None:
            named[str(judge)] = where
    if len(named) > 1:
        first, *others = named
        raise InputError(
            str(path),
            f"the targets name different judge targets ({first}, {', '.join(others)}): one judge grades a file",
            field="judge_target",
        )
    if named:
        [(name, where)] = named.items()
        if name not in defined:
            raise InputError(
                where,
                f"judge target '{name}' is not defined in the targets files read (as AgentV, the nearest "
                ".agentv/targets.yaml): define it there, or add a `judge:` block to the eval file",
                field="judge_target",
            )
        body, at = resolve_use_target(name, defined, environ)
        provider = str(body.get("provider") or "")
        if provider in JUDGE_PROVIDERS or block is None:
            return judge_from_target(body, at, environ)
        warnings.append(
            f"{at}: judge target of provider '{provider}' cannot be asked here (judge providers: "
            f"{', '.join(JUDGE_PROVIDERS)}): the eval file's judge block grades instead"
        )
    if block is not None:
        if not isinstance(block, dict):
            raise InputError(str(path), f"expected the judge's settings as a mapping, got {kind(block)}", field="judge")
        return dict(block)
    test, grader = graded[0]
    raise InputError(
        str(path),
        f"grader '{grader.name}' needs a judge model, and none is given: set "
        "`judge_target` on the target (naming an LLM target) or add a `judge:` block "
        "(provider, model, base_url, api_key_env) to the eval file",
        entry=f"test '{test.id}'",
    )


def judge_from_target(body: Mapping[str, Any], where: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """eval.yaml's judge fields from an LLM target definition (module docstring);
    `environ`: what `${{ VAR }}` reads (agentv_targets.agentv_environ)."""
    provider = str(body.get("provider") or "")
    if provider not in JUDGE_PROVIDERS:
        raise InputError(
            where,
            f"a judge target's provider is one of {', '.join(JUDGE_PROVIDERS)}, got "
            f"'{provider}' (or add a `judge:` block to the eval file)",
            field="provider",
        )
    model = body.get("model", body.get("deployment"))
    if not isinstance(model, str) or not model:
        raise InputError(where, "a judge target needs a `model`", field="model")
    judge: dict[str, Any] = {"provider": JUDGE_PROVIDERS[provider], "model": expand(model, environ, where, "model")}
    base = next((body[k] for k in ("base_url", "endpoint", "baseUrl") if body.get(k)), None)
    if base is not None:
        judge["base_url"] = expand(str(base), environ, where, "base_url")
    key = body.get("api_key", body.get("apiKey"))
    if key is not None:
        match = KEY_VARIABLE.match(str(key))
        if match is None:
            raise InputError(
                where,
                "give the judge's key as the variable holding it (`${{ VAR }}`), not the key itself",
                field="api_key",
            )
        judge["api_key_env"] = next(g for g in match.groups() if g)
    for field in ("timeout_s", "max_retries", "max_concurrency"):
        if field in body:
            judge[field] = body[field]
    return judge
