"""Weighted YAML rubrics: loading (defaults, refusals naming file and field) and scoring
(clamping, weights, missing criteria, gates on medians), against hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.yaml_rubrics import BUILTIN, Rubric, load_rubric, score
from bat_pipeline.engine.yaml_rubrics.scoring import medians, score_samples

THREE = Rubric.model_validate(
    {
        "name": "t",
        "criteria": [
            {"name": "a", "weight": 2},
            {"name": "b", "weight": 1, "min_value": 0, "max_value": 10},
            {"name": "c", "weight": 1, "levels": {0: "none", 5: "all"}},
        ],
    }
)


@pytest.mark.parametrize(
    ("values", "weighted", "total", "missing"),
    [
        ({"a": 1, "b": 10, "c": 5}, 1.0, 1.0, []),
        ({"a": 0, "b": 0, "c": 0}, 0.0, 0.0, []),
        # a .5 (×2), b 5/10 = .5, c 2.5/5 = .5
        ({"a": 0.5, "b": 5, "c": 2.5}, 0.5, 0.5, []),
        # clamping: a 3 → 1, b -4 → 0, c 9 → 1 ; weighted (2·1 + 0 + 1) / 4
        ({"a": 3, "b": -4, "c": 9}, 0.75, 2 / 3, []),
        # weights: a 1 (×2), b 0, c 0 → 2/4 ; unweighted mean 1/3
        ({"a": 1, "b": 0, "c": 0}, 0.5, 1 / 3, []),
        # missing: only a and b given → divided by their weight (3); c listed
        ({"a": 1, "b": 4}, (2 * 1 + 0.4) / 3, 0.7, ["c"]),
        # non-numbers are missing; numeric text is a number
        ({"a": "x", "b": "10", "c": None}, 1.0, 1.0, ["a", "c"]),
        ({}, 0.0, 0.0, ["a", "b", "c"]),
    ],
)
def test_weighted_scoring(values: dict[str, object], weighted: float, total: float, missing: list[str]) -> None:
    result = score(THREE, values)
    assert result.weighted_score == pytest.approx(weighted)
    assert result.total_score == pytest.approx(total)
    assert result.missing_criteria == missing


def test_defaults_weight_one_range_unit_levels_span() -> None:
    rubric = Rubric.model_validate({"criteria": [{"name": "x"}, {"name": "y", "levels": {1: "low", 4: "high"}}]})
    x, y = rubric.criteria
    assert (x.weight, x.low, x.high) == (1.0, 0.0, 1.0)
    assert (y.weight, y.low, y.high) == (1.0, 1.0, 4.0)
    assert score(rubric, {"x": 0.5, "y": 2.5}).criterion_scores == {"x": 0.5, "y": 0.5}


GATED = Rubric.model_validate(
    {
        "criteria": [
            {"name": "structure", "levels": {0: "", 5: ""}},
            {"name": "safety", "levels": {0: "", 5: ""}, "hard_gate": True, "minimum": 2},
        ],
        "hard_gates": [{"criterion": "structure", "minimum": 3}],
        "thresholds": {"pass": 3.5, "excellent": 4.5, "warning": 2.5},
    }
)


@pytest.mark.parametrize(
    ("values", "failed", "band", "passed"),
    [
        ({"structure": 5, "safety": 5}, [], "excellent", True),
        ({"structure": 4, "safety": 4}, [], "pass", True),  # 0.8 ≥ 3.5/5
        ({"structure": 3, "safety": 3}, [], "warning", False),  # 0.6: under pass, over warning
        ({"structure": 2, "safety": 5}, ["structure"], "fail", False),
        ({"structure": 5, "safety": 1}, ["safety"], "fail", False),  # a per-criterion gate
        ({"structure": 5}, ["safety"], "fail", False),  # a missing gated criterion fails
    ],
)
def test_gates_and_thresholds(values: dict[str, float], failed: list[str], band: str, passed: bool) -> None:
    result = score(GATED, values)
    assert [g.criterion for g in result.failed_gates] == failed
    assert (result.band, result.passed) == (band, passed)


def test_gates_apply_to_medians_not_single_runs() -> None:
    runs = [{"structure": 5, "safety": 0}, {"structure": 2, "safety": 4}, {"structure": 4, "safety": 3}]
    assert medians(runs) == {"structure": 4, "safety": 3}
    result = score_samples(GATED, runs)
    assert result.failed_gates == []  # one run under each gate; the medians pass
    assert result.weighted_score == pytest.approx(0.7)
    assert score_samples(GATED, runs[:2]).failed_gates == []  # medians: structure 3.5 ≥ 3, safety 2 ≥ 2
    assert [
        g.criterion
        for g in score_samples(
            GATED, [{"structure": 1, "safety": 5}] * 2 + [{"structure": 5, "safety": 5}]
        ).failed_gates
    ] == ["structure"]


def test_agentic_v2_eval_record_shape() -> None:
    """A built-in rubric is agentic-v2-eval's: the missing Efficiency counts 0 against all the weight."""
    record = score(load_rubric("default"), {"Accuracy": 0.8, "Completeness": 1}).record(3)
    assert set(record) == {"index", "weighted_score", "total_score", "criterion_scores", "missing_criteria"}
    assert record["weighted_score"] == pytest.approx(0.8 * 0.5 + 0.3)
    assert record["total_score"] == pytest.approx(1.8 / 3)
    assert record["missing_criteria"] == ["Efficiency"]


LEVELS_RUBRIC = """
criteria:
  - {name: a, weight: 3, levels: {0: none, 5: all}}
  - {name: b, weight: 1, min_value: 0, max_value: 10}
  - {name: c, weight: 1}
hard_gates: [{criterion: a, minimum: 4}]
"""


@pytest.mark.parametrize(
    ("metadata", "agentic_flag", "agentic"),
    [("", False, False), ("", True, True), ("metadata: {author: agentic-v2-eval}\n", False, True)],
)
def test_which_rubric_files_are_agentic_v2_evals(
    tmp_path: Path, metadata: str, agentic_flag: bool, agentic: bool
) -> None:
    """Ours: levels give the range, missing criteria are left out of the division. agentic-v2-eval's
    (its metadata.author, or `evaluate`'s flag): 0..1 unless written, missing count 0, clamped values
    kept, a gate's minimum written on the levels' scale read on it."""
    path = tmp_path / f"r{agentic_flag}{bool(metadata)}.yaml"
    path.write_text(metadata + LEVELS_RUBRIC)
    rubric = load_rubric(str(path), agentic=agentic_flag)
    assert rubric.agentic is agentic
    result = score(rubric, {"a": 0.85, "b": 5})
    if agentic:
        assert (rubric.criteria[0].low, rubric.criteria[0].high) == (0.0, 1.0)
        assert result.weighted_score == pytest.approx((3 * 0.85 + 0.5) / 5)
        assert result.total_score == pytest.approx((0.85 + 0.5) / 3)
        assert result.criterion_scores == {"a": 0.85, "b": 5}
        assert [(g.criterion, g.minimum) for g in result.failed_gates] == []  # 0.85 ≥ 4/5
        assert [g.minimum for g in score(rubric, {"a": 0.75}).failed_gates] == [pytest.approx(0.8)]
    else:
        assert (rubric.criteria[0].low, rubric.criteria[0].high) == (0.0, 5.0)
        assert result.weighted_score == pytest.approx((3 * 0.17 + 0.5) / 4)
        assert result.total_score == pytest.approx((0.17 + 0.5) / 2)
        assert result.criterion_scores == {"a": pytest.approx(0.17), "b": 0.5}
        assert [g.minimum for g in result.failed_gates] == [4]


def test_builtin_rubrics_load_with_our_texts() -> None:
    for name in BUILTIN:
        rubric = load_rubric(name)
        assert rubric.source == f"builtin:{name}" and all(c.description for c in rubric.criteria)
    default = load_rubric("default")
    assert [(c.name, c.weight) for c in default.criteria] == [
        ("Accuracy", 0.5),
        ("Completeness", 0.3),
        ("Efficiency", 0.2),
    ]
    assert [g.criterion for g in load_rubric("pattern").gates()] == [
        "Phase Ordering",
        "Phase Completeness",
        "Constraint Adherence",
    ]


BROKEN = {  # the rubric's text → (the field named, words of the message)
    "criteria: [{name: a, weight: -1}]": ("criteria[0].weight", "greater than or equal to 0"),
    "criteria: [{name: a, min_value: 2, max_value: 1}]": ("criteria[0]", "must be above min_value"),
    "criteria: []": ("criteria", "at least 1"),
    "criteria: [{weight: 1}]": ("criteria[0].name", "Field required"),
    "criteria: [{name: a}]\nhard_gates: [{criterion: b, minimum: 1}]": (None, "not a criterion"),
    "criteria: [{name: a, hard_gate: true}]": ("criteria[0]", "needs a minimum"),
    "- a\n- b": ("criteria", "a mapping"),
}


@pytest.mark.parametrize(("text", "expected"), BROKEN.items())
def test_a_broken_rubric_is_refused_naming_file_and_field(
    tmp_path: Path, text: str, expected: tuple[str | None, str]
) -> None:
    field, words = expected
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_rubric(str(path))
    assert caught.value.file == str(path) and caught.value.field == field
    assert words in caught.value.detail


def _agent(tmp_path: Path, judge: str) -> Path:
    (tmp_path / "eval").mkdir(exist_ok=True)
    (tmp_path / "eval" / "eval.yaml").write_text(
        f"evaluation: {{qualitative: true}}\njudge: {judge}\nmodels: ['ollama:m']\n"
    )
    return tmp_path


def test_eval_yaml_names_rubrics_and_files_resolve(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("criteria: [{name: tone, description: polite}]\n")
    config = load_eval_config(_agent(tmp_path, "{provider: ollama, model: j, rubrics: [bat, default, mine.yaml]}"))
    assert config.judge is not None
    assert config.judge.rubrics == ["bat", "default", str((tmp_path / "mine.yaml").resolve())]
    unset = load_eval_config(_agent(tmp_path, "{provider: ollama, model: j}"))
    assert unset.judge is not None and unset.judge.rubrics is None


def test_eval_yaml_refuses_unknown_and_broken_rubrics(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_eval_config(_agent(tmp_path, "{provider: ollama, model: j, rubrics: [default, defualt]}"))
    assert (caught.value.entry, caught.value.field) == ("judge", "rubrics[1]")
    (tmp_path / "bad.yaml").write_text("criteria: [{name: a, weight: heavy}]\n")
    with pytest.raises(InputError) as caught:
        load_eval_config(_agent(tmp_path, "{provider: ollama, model: j, rubrics: [bad.yaml]}"))
    assert caught.value.file == str((tmp_path / "bad.yaml").resolve())
    assert caught.value.field == "criteria[0].weight"


def test_a_task_names_its_own_rubrics(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("criteria: [{name: a}]\n")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": "t", "turns": ["hi"], "judge": {"rubrics": ["code", "r.yaml"]}}]))
    assert load_tasks(tasks)[0].judge.rubrics == ["code", str((tmp_path / "r.yaml").resolve())]
    tasks.write_text(json.dumps([{"id": "t", "turns": ["hi"], "judge": {"rubrics": ["nope"]}}]))
    with pytest.raises(InputError) as caught:
        load_tasks(tasks)
    assert caught.value.field == "judge.rubrics[0]"


def test_a_named_eval_file_is_read_for_its_agent_folder(tmp_path: Path) -> None:
    from bat_pipeline.engine.config.project import load_project, resolve_project

    agent = _agent(tmp_path, "{provider: ollama, model: j}")
    (agent / "eval" / "judges.yaml").write_text(
        "evaluation: {qualitative: true, agent_id: judged}\njudge: {provider: ollama, model: j, rubrics: [code]}\n"
        "models: ['ollama:m']\n"
    )
    named = resolve_project(str(agent / "eval" / "judges.yaml"), tmp_path)
    assert named == (agent / "eval" / "judges.yaml").resolve()
    config = load_project(named)
    assert config.agent_dir == agent.resolve() and config.agent_id == "judged" and config.judge.rubrics == ["code"]
    assert resolve_project(str(agent / "eval" / "eval.yaml"), tmp_path) == agent.resolve()
    assert load_project(agent).judge.rubrics is None
