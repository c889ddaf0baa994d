"""Reading a judge's answer: the JSON objects in its text, after any reasoning the model
wrapped in `<think>…</think>`. The one parser every judge kind's reading uses
(engine.rubrics for bat-cli's rubrics, engine.scenario_judging, engine.llm_judges.graded)."""

from __future__ import annotations

import json
from typing import Any

from bat_pipeline.engine.trajectories.attributes import THINK_END


def after_thinking(text: str) -> str:
    """What follows the last `</think>` (the whole text without one)."""
    return text.rsplit(THINK_END, 1)[-1]


def json_objects(text: str, *, nested: bool = False) -> list[dict[str, Any]]:
    """The JSON objects in `text`, in the order of their opening braces. Unparsable braces
    are skipped, so an object inside a broken one is still found; an object inside a parsed
    one is listed too only when `nested`."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", i + 1 if nested else end)
    return found
