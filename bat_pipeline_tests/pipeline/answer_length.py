"""A project's own scorer, written as a user would and named in eval.yaml
(`evaluation.scorers: [bat_pipeline_tests.pipeline.answer_length]`): how long the final
answer is. Informative only (not gating): it never changes a verdict."""

from bat_pipeline.engine.scorers import ScoreRow, ScoringInput, check

LIMIT = 400
"""Characters; a longer answer does not pass."""


@check("answer_length")
def answer_length(item: ScoringInput) -> list[ScoreRow]:
    chars = len(item.episode.final_output)
    return [
        ScoreRow(
            scorer="answer_length",
            criterion="characters",
            value=max(0.0, 1 - chars / LIMIT),
            raw=chars,
            scale="count",
            passed=chars <= LIMIT,
            reason=f"{chars} characters, at most {LIMIT}",
        )
    ]
