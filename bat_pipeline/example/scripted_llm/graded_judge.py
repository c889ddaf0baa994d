"""The judge persona's answers to the agentic-v2-eval judge kinds (engine.llm_judges): a
choice 1–5 on the last line, or the standard (0–10) and pattern (0–5) JSON grades. The
prompt's closing `Answer format:` line says which.

The grade comes from the same keyword evidence as the rubric answers (judge.py): the share
of the expected outcome's key terms found in the final answer. Words in the model name
shift it, so a panel of judges can disagree: `harsh` one step down, `lenient` one step up,
`noisy` a different step on each asking of the same question (0, +1, −1, 0, …), so N runs
have a median and a spread."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter

from bat_pipeline.example.scripted_llm import judge
from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply

_FORMAT = re.compile(r"Answer format: (choice 1-5|standard json|pattern json)\s*$")
_DIMENSION = re.compile(r"^- ([a-z_]+): ", re.MULTILINE)
_asked: Counter[str] = Counter()
_lock = threading.Lock()
_NOISE = (0, 1, -1)


def _shift(conv: Conversation) -> int:
    name = conv.model.lower()
    shift = -1 if "harsh" in name else 1 if "lenient" in name else 0
    if "noisy" in name:
        key = f"{conv.model}|{conv.fingerprint()}"
        with _lock:
            nth = _asked[key]
            _asked[key] += 1
        shift += _NOISE[nth % len(_NOISE)]
    return shift


def _evidence(prompt: str) -> tuple[float, str]:
    expected = judge._field(prompt, ["expected[ _]outcome"])
    final = judge._field(prompt, ["final[ _]answer"])
    terms = judge._terms(expected)
    share, found = judge._share(terms, final)
    if not final or final == "(empty)":
        return 0.0, "no final answer"
    value = 0.6 if share is None else share
    return value, f"expected-outcome terms in the final answer: {len(found)} of {len(terms)}"


def respond(conv: Conversation) -> Reply | None:
    """The answer when the prompt is one of the judge kinds' questions, else None."""
    prompt = conv.prompt_text()
    match = _FORMAT.search(prompt.rstrip())
    if match is None:
        return None
    value, why = _evidence(prompt)
    shift = _shift(conv)
    kind = match.group(1)
    if kind == "choice 1-5":
        label = min(5, max(1, 1 + round(value * 4) + shift))
        return Reply(text=f"Scripted stand-in judge: {why}.\n{label}")
    dims = list(dict.fromkeys(_DIMENSION.findall(conv.messages[0].text if conv.messages else prompt)))
    top = 10 if kind == "standard json" else 5
    scores = {
        d: min(top, max(0, round(value * top) + shift * (2 if top == 10 else 1) - (i % 2))) for i, d in enumerate(dims)
    }
    if kind == "standard json":
        body = {"scores": scores, "improvements": ["Quote the figures the request asked for."], "confidence": 0.8}
    else:
        body = {"scores": scores, "reasoning": f"Scripted stand-in judge: {why}."}
    return Reply(text=json.dumps(body))
