"""`response_match_score`: ADK's ROUGE-1 metric (google/adk-python
src/google/adk/evaluation/final_response_match_v1.py, `RougeEvaluator`).

Per invocation the ROUGE-1 F-measure of the agent's answer against the expected
`final_response` (Google's `rouge-score` package, Porter stemming, ADK's tokenisation:
NFKC and lower case; ASCII words by rouge-score's own tokenizer; CJK characters one token
each; Thai, Lao, Khmer and Myanmar by base character with its marks; other words as they
are); the case's value is their mean, passing at or above the threshold.
"""

from __future__ import annotations

import unicodedata

from rouge_score import rouge_scorer, tokenizers

from bat_pipeline.engine.contracts.adk import RESPONSE_MATCH, AdkCriterion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.adk_support import (
    actual_invocations,
    case_of,
    configured,
    error_row,
    invocation_count_mismatch,
    threshold_row,
)
from bat_pipeline.engine.scorers.registry import ScoringInput, check

_CJK = ((0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7AF))
_UNSPACED = ((0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F))


def _within(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= ord(char) <= high for low, high in ranges)


class UnicodeTokenizer(tokenizers.Tokenizer):  # type: ignore[misc]
    """ADK's tokenisation for ROUGE (its `_UnicodeAwareTokenizer`'s rules)."""

    def __init__(self) -> None:
        self._ascii = tokenizers.DefaultTokenizer(use_stemmer=True)

    def tokenize(self, text: str) -> list[str]:
        spaced: list[str] = []
        for char in unicodedata.normalize("NFKC", text).lower():
            mark = unicodedata.category(char).startswith("M")
            if _within(char, _CJK):
                spaced += [" ", char, " "]
            elif _within(char, _UNSPACED):
                spaced += [char] if mark else [" ", char]
            else:
                spaced.append(char if char.isalnum() or mark else " ")
        tokens: list[str] = []
        for word in "".join(spaced).split():
            tokens += self._ascii.tokenize(word) if word.isascii() else [word]
        return tokens


_SCORER = rouge_scorer.RougeScorer(["rouge1"], tokenizer=UnicodeTokenizer())


def rouge_1(response: str, reference: str) -> float:
    """ROUGE-1 F of `response` against `reference`."""
    return float(_SCORER.score(reference, response)["rouge1"].fmeasure)


@check(RESPONSE_MATCH, applies=configured(RESPONSE_MATCH), order=81)
def response_match_score(item: ScoringInput) -> list[ScoreRow]:
    case = case_of(item)
    criterion = case.criterion(RESPONSE_MATCH)
    assert isinstance(criterion, AdkCriterion)  # configured
    actual = actual_invocations(item)
    mismatch = invocation_count_mismatch(case, actual)
    if mismatch:
        return [error_row(RESPONSE_MATCH, mismatch)]
    scores: list[float | None] = [
        rouge_1(a.text, inv.final_response or "") for a, inv in zip(actual, case.conversation or [], strict=True)
    ]
    value = sum(s or 0.0 for s in scores) / len(scores)
    return [threshold_row(criterion, value, scores, "ROUGE-1 F against final_response, mean over the invocations")]
