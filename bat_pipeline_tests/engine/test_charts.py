"""Charts render to small valid PNGs, for real data, missing values and no data."""

from __future__ import annotations

import struct

import pytest

from bat_pipeline.engine.charts import (
    CHARTS,
    MAX_CRITERIA,
    ChartData,
    judge_scores_chart,
    model_colors,
    pass_rate_chart,
    render,
    render_all,
    score_grid,
    scores_chart,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 150_000


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def sample() -> ChartData:
    models = ["openai-gpt-x", "ollama-llama3", "anthropic-a-very-long-model-name-that-gets-cut"]
    return ChartData(
        models=[
            {
                "model_key": m,
                "pass_rate": 0.2 * (i + 1),
                "avg_wall_ms": 1500.0 * (i + 1),
                "prompt_tokens_total": 9000 * (i + 1),
                "completion_tokens_total": 700 * (i + 1),
                "total_tokens_total": 9700 * (i + 1),
                "pass_at_k": 0.9 - 0.1 * i,
                "pass_hat_k": None if i == 2 else 0.3,
                "k": 3,
                "response_relevance": 0.8,
                "task_completion_quality": None if i else 0.6,
                "hallucination_score": 0.9,
                "tool_call_appropriateness": None,
            }
            for i, m in enumerate(models)
        ],
        episodes=[
            {
                "model_key": m,
                "task_id": f"t{j}",
                "wall_ms": 300.0 * (j + 1) + i,
                "tokens_in": 100 * j,
                "tokens_out": 10 * j,
            }
            for i, m in enumerate(models)
            for j in range(12)
        ],
        tasks=[
            {"model_key": m, "task_id": f"t{j}", "attempts": 3, "passed": (i + j) % 4}
            for i, m in enumerate(models)
            for j in range(6)
        ],
        trend=[
            {
                "model_key": m,
                "run_id": f"2024010{r}T000000Z",
                "pass_rate": None if (r, i) == (1, 0) else 0.1 * r + 0.1 * i,
            }
            for i, m in enumerate(models)
            for r in range(5)
        ],
        scores=[
            {
                "model_key": m,
                "scorer": scorer,
                "criterion": criterion,
                "first_position": p,
                "mean": None if (criterion, i) == ("task_completion_quality", 1) else 0.1 * (p + i + 1),
            }
            for i, m in enumerate(models)
            for p, (scorer, criterion) in enumerate(SCORERS)
        ],
    )


SCORERS = [
    ("status", "status"),
    ("output_contains", "output[0]"),
    ("tool_calls", "tool_call:get_weather"),
    ("relevance", "response_relevance"),
    ("task_completion", "task_completion_quality"),
    ("hallucination", "hallucination_score"),
]


@pytest.fixture(scope="module")
def rendered() -> dict[str, bytes]:
    return render(sample())


@pytest.fixture(scope="module")
def rendered_empty() -> dict[str, bytes]:
    return render(ChartData())


def test_every_chart_is_a_small_png_of_800_by_450(rendered):
    assert list(rendered) == list(CHARTS)
    for name, png in rendered.items():
        assert png_size(png) == (800, 450), name
        assert len(png) < MAX_BYTES, name


def test_no_data_gives_a_chart_not_an_exception(rendered_empty, rendered):
    for name, png in rendered_empty.items():
        assert png_size(png) == (800, 450), name
        assert len(png) < len(rendered[name]), name  # a message only, no bars


def test_judge_chart_with_every_score_null():
    scores = [
        {"model_key": "a", "scorer": "relevance", "criterion": "response_relevance", "mean": None},
        {"model_key": "b", "scorer": "status", "criterion": "status", "mean": 1.0},
    ]
    png = judge_scores_chart(scores)
    assert png_size(png) == (800, 450)
    assert len(png) < len(judge_scores_chart([*scores[:1], {**scores[0], "mean": 0.5}]))


def test_judge_chart_reads_the_rubric_rows_only():
    rubric = {"model_key": "a", "scorer": "relevance", "criterion": "response_relevance", "mean": 0.5}
    other = {"model_key": "a", "scorer": "answer_length", "criterion": "chars", "mean": 0.25}
    assert judge_scores_chart([rubric, other]) == judge_scores_chart([rubric])
    assert judge_scores_chart([other]) == judge_scores_chart([{**rubric, "mean": None}])  # "no judge scores"


def test_a_new_scorer_shows_in_the_scores_chart_with_no_other_change():
    scores = sample().scores
    labels, models, grid, total = score_grid(scores)
    assert labels == [
        "status",
        "output_contains: output[0]",
        "tool_calls: tool_call:get_weather",
        "relevance: response_relevance",
        "task_completion: task_completion_quality",
        "hallucination: hallucination_score",
    ]
    assert models == sorted(models) and total == len(labels) and len(grid[0]) == 3
    assert grid[4][models.index("ollama-llama3")] != grid[4][models.index("ollama-llama3")]  # no value: NaN
    new = [
        {"model_key": "openai-gpt-x", "scorer": "answer_length", "criterion": "chars", "mean": 0.4, "first_position": 2}
    ]
    labels, _, grid, _ = score_grid(scores + new)
    assert labels[2] == "answer_length: chars" and grid[2][models.index("openai-gpt-x")] == 0.4
    assert scores_chart(scores + new) != scores_chart(scores)


def test_scores_chart_keeps_the_weakest_criteria():
    scores = [
        {"model_key": "m", "scorer": "phrase", "criterion": f"c{j:02d}", "mean": j / 100, "first_position": 100 - j}
        for j in range(MAX_CRITERIA + 10)
    ]
    labels, _, grid, total = score_grid(scores)
    assert total == MAX_CRITERIA + 10 and len(labels) == MAX_CRITERIA
    assert labels[0] == f"phrase: c{MAX_CRITERIA - 1:02d}" and labels[-1] == "phrase: c00"
    assert [row[0] for row in grid] == sorted((row[0] for row in grid), reverse=True)
    assert png_size(scores_chart(scores)) == (800, 450)


def test_many_tasks_and_models_stay_small():
    data = ChartData(
        tasks=[
            {"model_key": f"m{i}", "task_id": f"task_{j:03d}", "attempts": 5, "passed": (i * j) % 6}
            for i in range(15)
            for j in range(120)
        ],
        trend=[
            {"model_key": f"m{i}", "run_id": f"run{r:02d}", "pass_rate": ((i + r) % 10) / 10}
            for i in range(15)
            for r in range(30)
        ],
    )
    pngs = render(data)
    assert len(pngs["task_pass_rate"]) < MAX_BYTES and len(pngs["pass_rate_trend"]) < MAX_BYTES


def test_render_all_writes_one_file_per_chart_with_fixed_names(tmp_path):
    paths = render_all(ChartData(), tmp_path / "charts")
    assert {name: p.name for name, p in paths.items()} == {name: f"{name}.png" for name in CHARTS}
    assert all(p.read_bytes().startswith(PNG_SIGNATURE) for p in paths.values())
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) == sorted(f"{n}.png" for n in CHARTS)


def test_same_data_same_bytes_and_colours_stable():
    models = sample().models
    assert pass_rate_chart(models) == pass_rate_chart(models)
    assert model_colors(["b", "a"]) == model_colors(["a", "b", "a"])


def _dark_pixels(png: bytes) -> int:
    """Near-black pixels of a chart: text, axes and error bars (bars are coloured)."""
    import io

    from matplotlib import image

    pixels = image.imread(io.BytesIO(png))
    return int(((pixels[..., :3] < 0.2).all(axis=-1)).sum())


def test_pass_rate_chart_draws_each_interval_as_an_error_bar():
    # The same bars with and without the warehouse's interval columns: the error bars add
    # dark pixels (vertical line and caps), one model's missing bound draws no bar for it.
    plain = [{"model_key": "a", "pass_rate": 0.5}, {"model_key": "b", "pass_rate": 0.8}]
    with_ci = [
        {**plain[0], "pass_rate_ci_low": 0.2, "pass_rate_ci_high": 0.8},
        {**plain[1], "pass_rate_ci_low": 0.6, "pass_rate_ci_high": None},
    ]
    both = [with_ci[0], {**plain[1], "pass_rate_ci_low": 0.6, "pass_rate_ci_high": 0.95}]
    bare, one, two = (_dark_pixels(pass_rate_chart(rows)) for rows in (plain, with_ci, both))
    assert bare < one < two
    # A tall interval (0.2 to 0.8 of a 0-105 axis at ~300 px) is over 100 px of line.
    assert one - bare > 100
