"""Judge answers kept by content, so re-judging asks only what changed.

The key is the sha256 of the judge (provider, model), the rubric, the full prompt
messages and whether the answer was asked as structured output or plain text. A new
judge model or an edited rubric prompt therefore gives new keys; everything else is
served from disk. Only usable answers are stored: a failure is asked again next time.

Layout: `<storage root>/judge_cache/<first 2 hex of key>/<key>.json` holding
`{"score", "reasoning", "rubric", "provider", "model"}`. Files are written atomically,
so concurrent writers of one key (same content, same answer) cannot corrupt it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from bat_pipeline.storage import read_json, write_json

CACHE_DIR_NAME = "judge_cache"


def cache_key(provider: str, model: str, rubric: str, messages: list[dict[str, Any]], structured: bool) -> str:
    """The content key of one judge question (64 hex characters)."""
    content = {
        "provider": provider,
        "model": model,
        "rubric": rubric,
        "messages": messages,
        "mode": "structured" if structured else "text",
    }
    blob = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """Parsed judge answers on disk under `<root>/judge_cache/`; counts hits and misses."""

    def __init__(self, root: Path | str) -> None:
        self.dir = Path(root) / CACHE_DIR_NAME
        self.hits = 0
        self.misses = 0

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, *keys: str) -> tuple[float, str] | None:
        """`(score, reasoning)` stored under the first of `keys` that has one, else None.
        One lookup counts one hit or one miss however many keys it tries; an unreadable
        or malformed file counts as absent."""
        for key in keys:
            answer = self._read(key)
            if answer is not None:
                self.hits += 1
                return answer
        self.misses += 1
        return None

    def put(self, key: str, score: float, reasoning: str, **about: str) -> None:
        """Store a usable answer; `about` (rubric, provider, model) is kept for readers."""
        write_json(self.path(key), {"score": score, "reasoning": reasoning, **about})

    def clear(self) -> int:
        """Remove every stored answer; returns how many there were."""
        if not self.dir.is_dir():
            return 0
        count = sum(1 for _ in self.dir.glob("*/*.json"))
        shutil.rmtree(self.dir)
        return count

    def __len__(self) -> int:
        return sum(1 for _ in self.dir.glob("*/*.json")) if self.dir.is_dir() else 0

    def _read(self, key: str) -> tuple[float, str] | None:
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            data = read_json(path)
            score = data["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
                return None
            return float(score), str(data.get("reasoning") or "")
        except (OSError, ValueError, KeyError, TypeError):
            return None
