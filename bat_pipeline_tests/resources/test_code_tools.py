"""The static quality of code answers: ruff and radon run as real processes on the code of
an answer, read into the `code_quality` scorer's rows."""

from __future__ import annotations

from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.code_tools import ScorerTools
from bat_pipeline_tests.support.judge_server import weather_episode, weather_task

GOOD = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```\n"
BRANCHY = (
    "```python\nimport os\n\n\ndef pick(x):\n"
    + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(14))
    + "    return -1\n```"
)
BROKEN = "```python\ndef f(:\n    pass\n```"


def rows(answer: str) -> dict[str, tuple]:
    [episode] = check_partition([weather_episode(answer_text=answer)], [weather_task()], options=ScorerTools())
    return {r.criterion: (r.value, r.raw, r.passed) for r in episode.scores if r.scorer == "code_quality"}


def test_clean_code_scores_full_marks():
    assert rows(GOOD) == {"parses": (1.0, 1.0, True), "lint": (1.0, 0, True), "complexity": (1.0, 1, True)}


def test_lint_findings_and_complexity_come_from_the_tools():
    found = rows(BRANCHY)
    assert found["parses"] == (1.0, 1.0, True)
    assert found["lint"][1] == 2  # F401 `os` unused, C901 `pick` too complex (ruff's mccabe, limit 10)
    assert found["complexity"] == (0.5, 15, False)  # radon: 14 branches + 1; 1 − (15 − 10)/10


def test_code_that_does_not_parse():
    found = rows(BROKEN)
    assert found["parses"] == (0.0, 0.0, False) and found["lint"][1] >= 1


def test_an_answer_without_python_code_gets_no_rows():
    assert rows("Paris: sunny, 21 C.") == {}
