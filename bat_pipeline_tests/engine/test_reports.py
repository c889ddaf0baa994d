"""Reports of a run, built from episodes: partitions, tasks, regressions against the
previous run, colours by threshold, the Markdown for a pull-request comment and the
self-contained HTML page."""

from __future__ import annotations

import re

import pytest

from bat_pipeline.engine.contracts import ScoreRow, Verdict
from bat_pipeline.engine.judge_samples import MEDIAN
from bat_pipeline.engine.reports.build import PartitionInput, build_report
from bat_pipeline.engine.reports.html import render_html
from bat_pipeline.engine.reports.markdown import MAX_CHARS, render_markdown
from bat_pipeline_tests.support.judge_server import weather_episode


def episode(task: str, passed: bool, value: float, *, attempt: int = 0, answer: str = "Paris: sunny, 21 C."):
    found = weather_episode(task_id=task, attempt=attempt, answer_text=answer)
    found.verdict = Verdict(passed=passed, reason="ok" if passed else "status: wrong")
    found.scores = [
        ScoreRow(scorer="status", criterion="status", value=float(passed), passed=passed, gating=True, reason="s"),
        ScoreRow(
            scorer="choice", criterion="outcome", value=value, raw=value, judge="openai:j", sample=0, reason="run 0"
        ),
        ScoreRow(
            scorer="choice",
            criterion="outcome",
            value=value,
            raw=value,
            judge="openai:j",
            sample=MEDIAN,
            reason="median",
            details={"spread": 0.25},
        ),
    ]
    return found


def part(key: str, *episodes) -> PartitionInput:
    return PartitionInput(
        key=key,
        model=f"openai:{key}",
        episodes=list(episodes),
        metrics={
            "summary": {"latency_ms": {"p50": 900.0, "p95": 1200.0}, "pass_at_k": 0.5},
            "classification": {
                "count": 2,
                "accuracy": 0.5,
                "labels": ["a", "b"],
                "per_label": {},
                "confusion": {"a": {"a": 1, "b": 1}, "b": {"a": 0, "b": 0}},
            },
        },
    )


NOW = [
    part("good", episode("t1", True, 1.0), episode("t2", False, 0.5)),
    part("bad", episode("t1", False, 0.25), episode("t2", False, 0.0)),
]
BEFORE = [
    part("good", episode("t1", True, 1.0), episode("t2", True, 1.0)),
    part("bad", episode("t1", False, 0.25), episode("t2", False, 0.0)),
]


def report(**over):
    return build_report("run-2", "agent", NOW, generated_at="now", previous=BEFORE, previous_run_id="run-1", **over)


def test_partitions_tasks_and_the_median_rows_with_the_last_word():
    built = report()
    good = built.partitions[0]
    assert (good.episodes, good.passed, good.pass_rate, good.previous_pass_rate) == (2, 1, 0.5, 1.0)
    outcome = next(s for s in good.scores if s.scorer == "choice")
    assert outcome.mean == 0.75 and outcome.count == 2 and outcome.spread == 0.25  # the median rows only
    assert {t.task_id: (t.cells["good"].passed, t.cells["bad"].mean_score) for t in built.tasks} == {
        "t1": (1, 0.25),
        "t2": (0, 0.0),
    }
    assert [t.task_id for t in built.worst_tasks()] == ["t2", "t1"]
    assert len(built.episodes) == 4 and built.episodes[0].rows[0].scorer == "status"


def test_regressions_against_the_previous_run():
    found = {(r.partition, r.what, r.before, r.after) for r in report().regressions}
    assert found == {
        ("good", "pass rate", 1.0, 0.5),
        ("good", "choice/outcome", 1.0, 0.75),
        ("good", "status/status", 1.0, 0.5),
        ("good", "task t2", 1.0, 0.0),
    }
    first = build_report("run-1", "agent", BEFORE, generated_at="now")
    assert first.regressions == [] and first.previous_run_id is None


@pytest.mark.parametrize(
    ("value", "colour"), [(0.8, "high"), (0.79, "medium"), (0.5, "medium"), (0.49, "low"), (None, "none")]
)
def test_colours_by_threshold(value, colour):
    assert report().colour(value) == colour


def test_thresholds_are_configurable():
    assert report(green=0.9, amber=0.3).colour(0.85) == "medium"
    assert report(green=0.9, amber=0.3).colour(0.3) == "medium"


def test_markdown_for_a_pull_request_comment():
    text = render_markdown(report())
    assert text.startswith("## Evaluation of `agent` — run `run-2`")
    # Two tasks: the intervals span the whole range (t with 1 df), and the paired drop is noise.
    assert "| good | openai:good | 2 | 🟡 50% | 0–100% | -50 pts [-100, +100] (noise) | 0 | 0.9s |" in text
    assert "### Regressions against run `run-1`" in text and "- **good** pass rate: 1.00 → 0.50" in text
    assert text.index("| t2 |") < text.index("| t1 |")  # worst first
    many = build_report(
        "r",
        "agent",
        [part("p", *[episode(f"task-{i}-" + "x" * 300, False, 0.1) for i in range(400)])],
        generated_at="now",
    )
    assert len(render_markdown(many, worst=400)) <= MAX_CHARS


def test_html_is_self_contained_and_escapes_what_it_shows():
    hostile = part("p", episode("t<1>", True, 1.0, answer="<script>alert(1)</script> & <img src=x>"))
    page = render_html(build_report("r", "agent", [hostile], generated_at="now"))
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page and "t&lt;1&gt;" in page
    # No request leaves the page: no linked file, stylesheet, image, font or script source.
    assert not re.search(r"<link\b|<img\b|<[^>]*\s(?:src|href)=|@import|url\(", page)
    assert page.count("<script") == 1 and '<script type="application/json" id="report-data">' in page
    for test_id in (
        "partitions-table",
        "tasks-table",
        "scores-p",
        "chart-pass-rate",
        "chart-scores-p",
        "chart-confusion-p",
        "classification-p",
        "episode",
        "score-rows",
        "trajectory",
    ):
        assert f'data-testid="{test_id}"' in page
    assert 'class="num score-high">1.00' in page


HOSTILE_IDS = ["<img src=x onerror=alert(1)>", "**bold** and [link](http://x)", "pipe|in `ticks``", "_under_"]


def test_markdown_shows_ids_literally():
    """Ids come from the user's files (task ids, target names): rendered as Markdown (a
    pull-request comment), none becomes markup; each reads as written."""
    from markdown_it import MarkdownIt

    hostile = build_report(
        "run-<b>1</b>",
        "agent*x*",
        [part(key, *[episode(task, False, 0.5) for task in HOSTILE_IDS]) for key in ("p<i>q</i>", "ok")],
        generated_at="now",
    )
    text = render_markdown(hostile)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in html and "<strong>bold" not in html and "<a href" not in html and "<i>" not in html
    assert "<b>" not in html and "<em>" not in html, html
    cells = re.findall(r"<td>(.*?)</td>", html)
    shown = {re.sub(r"</?code>", "", c).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"') for c in cells}
    assert set(HOSTILE_IDS) <= shown, shown
    assert "| t1 |" in render_markdown(report())  # plain ids stay as they are


def test_intervals_flaky_tasks_paired_difference_and_provenance_in_the_report():
    # Six tasks, two attempts each: t0 flaky (one of two), the others pass both; the previous
    # run failed every attempt. Pass rate 11/12 with its clustered interval; Δ vs previous
    # +92 pts on six paired tasks, significant.
    now = [episode(f"t{i}", i != 0 or a == 0, 1.0, attempt=a) for i in range(6) for a in range(2)]
    before = [episode(f"t{i}", False, 0.0, attempt=a) for i in range(6) for a in range(2)]
    current = PartitionInput(
        key="m", model="openai:m", episodes=now, provenance={"agent_commit": "0123456789abcdef", "agent_dirty": True}
    )
    previous = PartitionInput(key="m", model="openai:m", episodes=before)
    built = build_report("r2", "agent", [current], generated_at="now", previous=[previous], previous_run_id="r1")
    (p,) = built.partitions
    assert p.pass_rate == pytest.approx(11 / 12)
    low, high = p.pass_rate_ci
    assert low < 11 / 12 < high <= 1.0
    assert [(t.task_id, t.passed, t.attempts) for t in p.flaky_tasks] == [("t0", 1, 2)]
    v = p.versus_previous
    assert v.tasks == 6 and v.difference == pytest.approx(11 / 12) and v.significant and v.verdict == "better"

    page = render_html(built)
    assert "95% interval" in page and "flaky tasks" in page
    assert f"{low * 100:.0f}–{high * 100:.0f}%" in page
    assert "+92 pts [" in page and "· better" in page
    assert page.count('class="error-bar"') >= 1 + sum(1 for s in p.scores if s.ci is not None)
    assert '<ul data-testid="flaky-m"><li><b>t0</b>: 1 of 2 attempts passed</li></ul>' in page
    assert "agent commit <code>0123456789ab</code> · uncommitted changes <code>yes</code>" in page

    text = render_markdown(built)
    assert "### Flaky tasks" in text and "- **m** t0: 1 of 2 attempts passed" in text
    assert "+92 pts [" in text and "better" in text
