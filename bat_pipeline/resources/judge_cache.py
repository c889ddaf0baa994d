"""Judge answers kept by content, so re-judging asks only what changed.

The key is the sha256 of the judge (provider, model), the question's purpose, its full
messages, whether it was asked as structured output (with the schema) or plain text, and
its sample index (SPEC §13: N askings of one question are N answers). A new judge model
or an edited prompt therefore gives new keys; everything else is served from disk. Only
usable answers are stored (a failure is asked again next time), as the answer's text: the
asking scorer parses it again on every hit, so a hit is read exactly as a fresh answer.

Layout: `<storage root>/judge_cache/<first 2 hex of key>/<key>.json` holding
`{"text", "purpose", "provider", "model", "sample"}`. Files are written atomically, so
concurrent writers of one key (same content, same answer) cannot corrupt it.

Entries written before the scorer model (`{"score", "reasoning", "rubric", ...}`, keyed
without schema and sample) are still found for sample 0 under their old key, their text
rebuilt as the answer object they came from.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from bat_pipeline.engine.scorers.judging import JudgeQuestion
from bat_pipeline.remote_root import pull_file
from bat_pipeline.storage import read_json, write_json

CACHE_DIR_NAME = "judge_cache"


def cache_key(
    provider: str,
    model: str,
    purpose: str,
    messages: list[dict[str, Any]],
    *,
    structured: bool,
    schema: dict[str, Any] | None = None,
    sample: int = 0,
) -> str:
    """The content key of one answer (64 hex characters); `schema` counts only when
    `structured`."""
    content: dict[str, Any] = {
        "provider": provider,
        "model": model,
        "purpose": purpose,
        "messages": messages,
        "mode": "structured" if structured else "text",
        "sample": sample,
    }
    if structured:
        content["schema"] = schema
    return _digest(content)


def question_key(provider: str, model: str, question: JudgeQuestion[Any], *, structured: bool) -> str:
    """The content key of `question`'s answer from this judge (`cache_key`)."""
    return cache_key(
        provider,
        model,
        question.purpose,
        question.messages,
        structured=structured,
        schema=question.schema,
        sample=question.sample,
    )


def legacy_key(provider: str, model: str, purpose: str, messages: list[dict[str, Any]], structured: bool) -> str:
    """The key the same question had before the scorer model (purpose = rubric name)."""
    return _digest(
        {
            "provider": provider,
            "model": model,
            "rubric": purpose,
            "messages": messages,
            "mode": "structured" if structured else "text",
        }
    )


def _digest(content: dict[str, Any]) -> str:
    blob = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """Answer texts on disk under `<root>/judge_cache/`; counts hits and misses."""

    def __init__(self, root: Path | str) -> None:
        self.dir = Path(root) / CACHE_DIR_NAME
        self.hits = 0
        self.misses = 0

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def answer(self, provider: str, model: str, question: JudgeQuestion[Any], *, structured_first: bool) -> str | None:
        """The stored text of `question` to this judge, asked structured or in plain text
        (`structured_first` says which is looked up first; a question without a schema is
        only ever plain text), else None. Sample 0 also finds entries of the earlier layout."""
        modes = [structured_first, not structured_first] if question.schema is not None else [False]
        keys = [question_key(provider, model, question, structured=m) for m in modes]
        if question.sample == 0:
            keys += [legacy_key(provider, model, question.purpose, question.messages, m) for m in modes]
        return self.get(*keys)

    def keep(self, provider: str, model: str, question: JudgeQuestion[Any], text: str, *, structured: bool) -> None:
        """Store the usable answer `text` of `question`, asked structured or not."""
        key = question_key(provider, model, question, structured=structured)
        self.put(key, text, purpose=question.purpose, provider=provider, model=model, sample=question.sample)

    def get(self, *keys: str) -> str | None:
        """The answer text stored under the first of `keys` that has one, else None. One
        lookup counts one hit or one miss however many keys it tries; an unreadable or
        malformed file counts as absent."""
        for key in keys:
            text = self._read(key)
            if text is not None:
                self.hits += 1
                return text
        self.misses += 1
        return None

    def put(self, key: str, text: str, **about: Any) -> None:
        """Store a usable answer's text; `about` (purpose, provider, model, sample) is kept
        for readers."""
        write_json(self.path(key), {"text": text, **about})

    def clear(self) -> int:
        """Remove every stored answer; returns how many there were."""
        if not self.dir.is_dir():
            return 0
        count = sum(1 for _ in self.dir.glob("*/*.json"))
        shutil.rmtree(self.dir)
        return count

    def __len__(self) -> int:
        return sum(1 for _ in self.dir.glob("*/*.json")) if self.dir.is_dir() else 0

    def _read(self, key: str) -> str | None:
        path = self.path(key)
        if not pull_file(path):  # an object store's root: another machine's answer
            return None
        try:
            data = read_json(path)
            if isinstance(data.get("text"), str):
                return str(data["text"])
            score = data["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                return None
            return json.dumps({"reasoning": str(data.get("reasoning") or ""), "score": score}, ensure_ascii=False)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
