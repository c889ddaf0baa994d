"""Secret values kept out of everything the pipeline writes: files, tables, logs, UI metadata.

A model or judge server may echo the key it was called with, and an agent may log its
environment; whatever comes back passes through a `Redactor` before it is stored.

Which values are secrets (`secret_values`):
- the judge's API key;
- the model provider's key the agent gets (the MODEL_KEY_ENV variable of its provider);
- values of variables named like a key, token, secret, password or credential
  (`looks_secret`) in the environment layers the pipeline itself sets for the agent or the
  judge: the project's `.env`, `agent.env`, the model's `env`, `judge.env`;
- values of variables named so in the environment the agent and the judge inherit (the
  shell's: `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, ...), except absolute
  paths (`SSH_AUTH_SOCK`, `XAUTHORITY`, `GOOGLE_APPLICATION_CREDENTIALS` name a file, not
  a secret, and replacing a folder's path would garble every path under it).

Values shorter than MIN_SECRET_CHARS are never treated as secrets: replacing `true`,
`local` or `8080` wherever they occur would garble ordinary output, and provider keys are
far longer (OpenAI and Anthropic keys have 40+ characters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from bat_pipeline.engine.contracts import EvalConfig
from bat_pipeline.engine.environment import MODEL_KEY_ENV

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 12
"""Shortest value treated as a secret."""

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH", re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


def looks_secret(name: str) -> bool:
    """Whether a variable name says it holds a secret (`OPENAI_API_KEY`, `HF_TOKEN`,
    `DB_PASSWORD`, `client_secret`, `AUTH_HEADER`)."""
    return bool(_SECRET_NAME.search(name))


def secret_values(
    config: EvalConfig,
    *,
    judge_key: str | None,
    agent_envs: Mapping[str, Mapping[str, str]],
    dotenv: Mapping[str, str],
    inherited: Mapping[str, str] | None = None,
) -> list[str]:
    """Every secret of the evaluation (module docstring), unfiltered by length.

    `agent_envs`: partition key → the environment its agent gets (its model provider's
    key, and every secret-named variable of it); `dotenv`: the project's `.env` values;
    `inherited`: the environment the agent and the judge inherit (the shell's)."""
    values: list[str | None] = [judge_key]
    for model in config.models:
        env = agent_envs.get(model.partition_key) or {}
        name = MODEL_KEY_ENV.get(model.provider)
        values.append(env.get(name) if name else None)
    layers: list[Mapping[str, str]] = [dotenv, config.agent.env, *(m.env for m in config.models)]
    if config.judge is not None:
        layers.append(config.judge.env)
    if config.evalbench is not None and config.evalbench.harness is not None:
        layers.append(config.evalbench.harness.env)  # an EvalBench CLI generator's model config
    values += [value for layer in layers for name, value in layer.items() if looks_secret(name)]
    for env in [*agent_envs.values(), inherited or {}]:
        values += [value for name, value in env.items() if looks_secret(name) and not value.startswith("/")]
    return list(dict.fromkeys(v for v in values if isinstance(v, str) and v))


class Redactor:
    """Replaces secret values with `[redacted]`, longest first, so a secret that contains
    another is replaced whole. A value is also found in its JSON-escaped form (as it
    appears inside a JSON string). Without values it returns everything unchanged."""

    def __init__(self, values: Iterable[str] = (), *, min_chars: int = MIN_SECRET_CHARS) -> None:
        kept = {v for v in values if isinstance(v, str) and len(v) >= min_chars}
        forms = set(kept)
        for value in kept:
            forms.add(json.dumps(value)[1:-1])
            forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
        self.values: tuple[str, ...] = tuple(sorted(kept, key=lambda v: (-len(v), v)))
        ordered = sorted(forms, key=lambda v: (-len(v), v))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:
        return f"Redactor({len(self.values)} values)"

    def plus(self, *values: str | None, min_chars: int = 1) -> Redactor:
        """A redactor for these values as well (by default whatever their length: for
        values known to be secrets, such as the key a client sends)."""
        extra = [v for v in values if v and len(v) >= min_chars]
        return Redactor([*self.values, *extra], min_chars=1)

    def text(self, text: str) -> str:
        """`text` with every secret replaced."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def contains_secret(self, text: str) -> bool:
        return self._pattern is not None and bool(text) and self._pattern.search(text) is not None

    def data(self, value: Any) -> Any:
        """JSON-like data (dicts, lists, tuples, strings) with every string redacted, keys
        included; other values are returned as they are."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value

    def record(self, record: M) -> M:
        """A pydantic record with every string redacted (the same object when nothing was
        secret); the copy is validated again, so it is of the same type."""
        if self._pattern is None or not self.contains_secret(record.model_dump_json()):
            return record
        return type(record).model_validate(self.data(record.model_dump(mode="json")))
