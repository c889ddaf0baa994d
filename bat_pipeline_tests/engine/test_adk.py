"""Google ADK's eval files (issue 37): reading `*.test.json` / `*.evalset.json` (both
schemas, real files from google/adk-python in fixtures/adk), their test_config.json, the
refusals; and ADK's metrics as scorers, the expected figures worked out from ADK's
evaluator code (each test names the file it follows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config.dataset import load_tasks
from bat_pipeline.engine.contracts import Episode, Task, ToolStep, Trajectory, Turn
from bat_pipeline.engine.contracts.adk import AdkToolCall, effective_rubrics
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.contracts.scenario import ConversationLog, ConversationTurn
from bat_pipeline.engine.contracts.trajectory import ModelStep
from bat_pipeline.engine.datasets.adk import check_judge
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.adk_efficiency import adk_efficiency
from bat_pipeline.engine.scorers.adk_response import response_match_score, rouge_1
from bat_pipeline.engine.scorers.adk_response_v2 import majority
from bat_pipeline.engine.scorers.adk_session_state import final_session_state
from bat_pipeline.engine.scorers.adk_support import ToolCall
from bat_pipeline.engine.scorers.adk_trajectory import matches, precision_recall, tool_trajectory_avg_score
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.verdicts import score_checks

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "adk"
DEVICE_OFF = {"location": "Bedroom", "device_id": "device_2", "status": "OFF"}
DEVICE_ON = {"location": "Bedroom", "status": "ON", "device_id": "device_2"}


def _content(text: str, role: str = "user") -> dict:
    return {"parts": [{"text": text}], "role": role}


def _invocation(user: str, answer: str, calls: list[tuple[str, dict]]) -> dict:
    return {
        "invocationId": "i",
        "userContent": _content(user),
        "finalResponse": _content(answer, "model"),
        "intermediateData": {"toolUses": [{"name": n, "args": a} for n, a in calls]},
    }


def _write(folder: Path, name: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data))
    return path


# --- reading ---------------------------------------------------------------------------


def test_evalset_schema_from_adk_with_its_config():
    warnings: list[str] = []
    [task] = load_tasks(CORPUS / "home_automation_agent" / "simple_test.test.json", warnings)
    case = task.adk
    assert case is not None and case.format == "evalset"
    assert task.id == "tests/integration/fixture/home_automation_agent/simple_test.test.json"
    assert task.turns == ["Turn off device_2 in the Bedroom."]
    [invocation] = case.conversation or []
    assert invocation.final_response == "I have set the device_2 status to off."
    assert invocation.tool_uses == [AdkToolCall(name="set_device_info", args=DEVICE_OFF)]
    assert [(c.metric, c.threshold, c.match_type) for c in case.criteria] == [
        ("tool_trajectory_avg_score", 1.0, "EXACT")
    ]
    assert case.config_source == str(CORPUS / "home_automation_agent" / "test_config.json")
    assert warnings == []
    # The ADK case selects no EvalBench or bat-cli scorer; the A2A status is still checked.
    assert task.scenario is not None and task.scenario.scorers == {}
    assert task.expected.status == "completed"


def test_legacy_list_format_reads_as_one_case_with_adks_warning():
    warnings: list[str] = []
    [task] = load_tasks(CORPUS / "legacy_home_automation" / "simple_test.test.json", warnings)
    assert task.adk is not None and task.adk.format == "legacy"
    assert task.id == "simple_test"
    [invocation] = task.adk.conversation or []
    assert invocation.user == "Turn off device_2 in the Bedroom."
    assert invocation.final_response == "I have set the device_2 status to off."
    assert invocation.tool_uses == [AdkToolCall(name="set_device_info", args=DEVICE_OFF)]
    assert len(warnings) == 1 and "older list format" in warnings[0]


def test_a_folder_of_eval_files_each_with_its_config():
    tasks = load_tasks(CORPUS / "home_automation_agent")
    assert len(tasks) == 2
    multi = next(t for t in tasks if len(t.turns) == 2)
    assert multi.turns == ["Turn off device_2 in the Bedroom.", "Turn on device_2 in the Bedroom."]
    assert all(t.id.startswith(t.adk.eval_set_id + ".") for t in tasks if t.adk)


def test_no_config_applies_adks_defaults_and_says_so(tmp_path):
    path = _write(
        tmp_path,
        "x.evalset.json",
        {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [_invocation("hi", "hello", [])]}]},
    )
    warnings: list[str] = []
    [task] = load_tasks(path, warnings)
    assert task.adk is not None
    assert [(c.metric, c.threshold) for c in task.adk.criteria] == [
        ("tool_trajectory_avg_score", 1.0),
        ("response_match_score", 0.8),
    ]
    assert task.adk.config_source is None
    assert any("ADK's default criteria apply" in w for w in warnings)


def test_starter_pack_layout_with_config_flag_camel_case_and_a_scenario(tmp_path):
    """agent-starter-pack: tests/eval/evalsets/*.evalset.json, tests/eval/eval_config.json
    given with --config (ADK's `adk eval ... --config_file_path`); camelCase keys as the
    ADK web UI writes them."""
    evalsets = tmp_path / "tests" / "eval" / "evalsets"
    _write(
        evalsets,
        "basic.evalset.json",
        {
            "evalSetId": "basic",
            "evalCases": [
                {
                    "evalId": "weather",
                    "conversation": [_invocation("Weather in Paris?", "Sunny", [("get_weather", {"city": "Paris"})])],
                    "sessionInput": {"appName": "app", "userId": "u", "state": {"unit": "C"}},
                },
                {
                    "evalId": "plan",
                    "conversationScenario": {"startingPrompt": "Hi", "conversationPlan": "Ask for Rome's weather."},
                },
            ],
        },
    )
    config = _write(
        tmp_path / "tests" / "eval", "eval_config.json", {"criteria": {}, "user_simulator_config": {"model": "g"}}
    )
    warnings: list[str] = []
    tasks = load_tasks(evalsets, warnings, adk_config=config)
    weather, plan = tasks
    assert weather.adk is not None and weather.adk.session_state == {"unit": "C"}
    assert plan.adk is not None and plan.adk.scenario is not None
    assert plan.turns == ["Hi"] and plan.scenario is not None
    assert plan.scenario.conversation_plan == "Ask for Rome's weather."
    assert weather.adk.criteria == [] and weather.adk.config_source == str(config)
    # What an A2A run cannot use is said, not dropped silently.
    assert any("'session_input.state': not given to the agent" in w and "'weather'" in w for w in warnings)
    assert any("'user_simulator_config': not used" in w for w in warnings)


def _refusal(tmp_path: Path, cases: list, criteria: object = None) -> InputError:
    path = _write(tmp_path, "bad.evalset.json", {"eval_set_id": "s", "eval_cases": cases})
    if criteria is not None:
        _write(tmp_path, "test_config.json", {"criteria": criteria})
    with pytest.raises(InputError) as caught:
        load_tasks(path)
    return caught.value


GOOD = {"eval_id": "c", "conversation": [_invocation("hi", "hello", [])]}


@pytest.mark.parametrize(
    ("cases", "criteria", "field", "words"),
    [
        ([GOOD], {"tool_trajectory_avg_scor": 1.0}, "criteria.tool_trajectory_avg_scor", "unknown ADK metric"),
        ([GOOD], {"token_usage_v1": 100}, "criteria.token_usage_v1", "takes no threshold"),
        ([GOOD], {"safety_v1": 0.8}, "criteria.safety_v1", "Vertex AI's evaluation service"),
        (
            [GOOD],
            {"per_turn_user_simulator_quality_v1": 0.8},
            "criteria.per_turn_user_simulator_quality_v1",
            "not scored by bat-pipeline yet",
        ),
        ([GOOD], {"multi_turn_task_success_v1": 0.8}, "criteria.multi_turn_task_success_v1", "Vertex AI"),
        (
            [GOOD],
            {"hallucinations_v1": {"threshold": 0.8, "evaluate_intermediate_nl_responses": True}},
            "criteria.hallucinations_v1.evaluate_intermediate_nl_responses",
            "final answer only",
        ),
        (
            [GOOD],
            {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "SOME"}},
            "criteria.tool_trajectory_avg_score.match_type",
            "EXACT, IN_ORDER, ANY_ORDER",
        ),
        (
            [GOOD],
            {"response_match_score": {"match_type": "EXACT"}},
            "criteria.response_match_score.threshold",
            "needs 'threshold'",
        ),
        ([{"eval_id": "c"}], {}, None, "exactly one of conversation and conversation_scenario"),
        ([{"conversation": []}], {}, "eval_id", "non-empty string"),
        (
            [{"eval_id": "c", "conversation": [{"user_content": {"parts": [{"inline_data": {}}]}}]}],
            {},
            "conversation[0].user_content.parts",
            "no text part",
        ),
        (
            [{"eval_id": "c", "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "p"}}],
            {"response_match_score": 0.5},
            "criteria.response_match_score",
            "conversation_scenario",
        ),
    ],
)
def test_refusals_name_file_case_and_field(tmp_path, cases, criteria, field, words):
    error = _refusal(tmp_path, cases, criteria)
    assert words in error.detail
    assert error.field == field
    if field is None or not field.startswith("criteria"):
        assert (
            error.file.endswith("bad.evalset.json")
            and error.entry is not None
            and error.entry.startswith("eval_cases[0]")
        )
    else:
        assert error.file.endswith("test_config.json")


# --- metrics -----------------------------------------------------------------------------

T1, T11, T2, T21, T22, T3, T31, T4 = (ToolCall(n, {}) for n in ("T1", "T1.1", "T2", "T2.1", "T2.2", "T3", "T3.1", "T4"))


def _want(*calls: ToolCall) -> list[AdkToolCall]:
    return [AdkToolCall(name=c.name, args=c.args) for c in calls]


@pytest.mark.parametrize(
    ("match_type", "actual", "expected", "matched"),
    [
        # eval_metrics.py ToolTrajectoryCriterion.MatchType: the docstring's examples.
        ("IN_ORDER", [T1, T11, T2, T21, T22, T3, T31], [T1, T2, T3], True),
        ("IN_ORDER", [T1, T11, T2, T21, T22, T3, T31], [T1, T2, T3, T4], False),
        ("IN_ORDER", [T2, T1, T3], [T1, T2, T3], False),
        ("ANY_ORDER", [T2, T21, T1, T11, T1, T3, T31], [T1, T2, T3], True),
        ("ANY_ORDER", [T1, T11, T2, T21, T22, T3, T31], [T1, T2, T3, T4], False),
        ("ANY_ORDER", [T1], [T1, T1], False),  # each expected call takes its own actual one
        ("EXACT", [T1, T2], [T1, T2], True),
        ("EXACT", [T1, T2, T3], [T1, T2], False),
        # trajectory_evaluator.py: no expected calls match IN_ORDER / ANY_ORDER, EXACT only none.
        ("IN_ORDER", [T1], [], True),
        ("EXACT", [T1], [], False),
        ("EXACT", [], [], True),
    ],
)
def test_match_types_follow_adks_trajectory_evaluator(match_type, actual, expected, matched):
    assert matches(actual, _want(*expected), match_type, ignore_args=False) is matched


def test_arguments_compared_unless_ignored():
    actual = [ToolCall("set_device_info", {**DEVICE_OFF, "status": "ON"})]
    expected = [AdkToolCall(name="set_device_info", args=DEVICE_OFF)]
    assert not matches(actual, expected, "EXACT", ignore_args=False)
    assert matches(actual, expected, "EXACT", ignore_args=True)


def test_precision_and_recall():
    assert precision_recall([[T1, T2, T3, T4]], [_want(T1, T2)], False) == (0.5, 1.0)
    assert precision_recall([[]], [_want(T1)], False) == (None, 0.0)
    # Each invocation's calls against its own expected ones: T2 in the first turn is not T2 expected later.
    assert precision_recall([[T1, T2], [T3]], [_want(T1), _want(T2, T3)], False) == (2 / 3, 2 / 3)


def test_rouge_1_as_adk_computes_it():
    """final_response_match_v1.py: rouge_score's ROUGE-1 F with Porter stemming; here
    "the weather in pari is sunni" against "it is sunni in pari": 4 shared of 6 and 5,
    F = 2·(4/6)·(4/5) / (4/6 + 4/5) = 8/11. `_` splits words (ADK's tokenizer)."""
    assert rouge_1("The weather in Paris is sunny", "It is sunny in Paris") == pytest.approx(8 / 11)
    assert rouge_1("I have set the device_2 status to off.", "I have set the device 2 status to off.") == 1.0
    assert rouge_1("东京天气", "东京下雨") == pytest.approx(0.5)  # CJK: one token per character
    assert rouge_1("", "anything") == 0.0


def _episode(task: Task, turns: list[tuple[str, list[ToolStep]]], *, found: bool = True) -> Episode:
    log = ConversationLog(
        turns=[ConversationTurn(user=u, agent=a) for u, (a, _) in zip(task.turns, turns, strict=True)]
    )
    trajectory = Trajectory(
        found=found,
        turns=[
            Turn(user=u, steps=[ModelStep(tokens_in=10, tokens_out=5), *steps])
            for u, (_, steps) in zip(task.turns, turns, strict=True)
        ],
    )
    return Episode(
        model_name="m",
        task_id=task.id,
        final_status="completed",
        final_output=turns[-1][0],
        aux={"conversation": log.model_dump(mode="json")},
        trace=EpisodeTrace(trajectory=trajectory),
    )


def _multi_turn(tmp_path: Path, criteria: dict) -> Task:
    folder = tmp_path / "case"
    source = CORPUS / "home_automation_agent" / "simple_multi_turn_conversation.test.json"
    _write(folder, "multi.test.json", json.loads(source.read_text()))
    _write(folder, "test_config.json", {"criteria": criteria})
    [task] = load_tasks(folder / "multi.test.json")
    return task


def _by_criterion(rows):
    return {r.criterion: r for r in rows}


def test_multi_turn_trajectory_and_rouge_decide_the_case(tmp_path):
    """ADK's multi-turn fixture (simple_multi_turn_conversation.test.json), turn by turn:
    the first turn calls the expected tool, the second calls it with status OFF again. Per
    trajectory_evaluator.py 1 then 0, mean 0.5 < 1.0: the case fails; ROUGE-1
    (final_response_match_v1.py) 1.0 and 1.0 against the expected answers: 1.0 ≥ 0.8."""
    task = _multi_turn(tmp_path, {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8})
    episode = _episode(
        task,
        [
            ("I have set the device 2 status to off.", [ToolStep(name="set_device_info", args=DEVICE_OFF)]),
            ("I have set the device 2 status to on.", [ToolStep(name="set_device_info", args=json.dumps(DEVICE_OFF))]),
        ],
    )
    rows = _by_criterion(score_checks(task, episode))
    trajectory = rows["tool_trajectory_avg_score"]
    assert trajectory.value == 0.5 and trajectory.passed is False and trajectory.gating
    assert trajectory.details["per_invocation"] == [1.0, 0.0]
    assert rows["trajectory_precision"].value == 0.5 and rows["trajectory_recall"].value == 0.5
    assert not rows["trajectory_precision"].gating
    assert rows["response_match_score"].value == 1.0 and rows["response_match_score"].passed
    assert rows["status"].passed
    # The efficiency metrics: per turn 1 tool call, 1 model call, 15 tokens; informational.
    for metric, value in (("tool_call_count_v1", 1.0), ("inference_call_count_v1", 1.0), ("token_usage_v1", 15.0)):
        assert rows[metric].value == value and rows[metric].passed is None and not rows[metric].gating


def test_in_order_passes_with_extra_calls_and_turn_count_mismatch_is_an_error(tmp_path):
    task = _multi_turn(tmp_path, {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "in-order"}})
    extra = ToolStep(name="get_device_info", args={"device_id": "device_2"})
    episode = _episode(
        task,
        [
            ("ok", [extra, ToolStep(name="set_device_info", args=DEVICE_OFF)]),
            ("ok", [ToolStep(name="set_device_info", args=DEVICE_ON), extra]),
        ],
    )
    [row, precision, recall] = tool_trajectory_avg_score(ScoringInput(task=task, episode=episode))
    assert (row.value, row.passed) == (1.0, True)
    assert (precision.value, recall.value) == (0.5, 1.0)
    one_turn = _episode(task.model_copy(update={"turns": task.turns[:1]}), [("ok", [])])
    [error] = tool_trajectory_avg_score(ScoringInput(task=task, episode=one_turn))
    assert error.passed is False and error.gating and error.value is None
    assert "1 turn(s) and the eval case 2 invocation(s)" in error.reason


def test_no_spans_is_an_error_and_efficiency_is_na(tmp_path):
    task = _multi_turn(tmp_path, {"tool_trajectory_avg_score": 1.0})
    episode = _episode(task, [("a", []), ("b", [])], found=False)
    [error] = tool_trajectory_avg_score(ScoringInput(task=task, episode=episode))
    assert error.passed is False and "no spans" in error.reason
    rows = _by_criterion(adk_efficiency(ScoringInput(task=task, episode=episode)))
    assert all(rows[m].value is None for m in ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1"))


def test_response_match_below_threshold_fails(tmp_path):
    task = _multi_turn(tmp_path, {"response_match_score": 0.8})
    episode = _episode(task, [("Done.", []), ("I have set the device 2 status to on.", [])])
    [row] = response_match_score(ScoringInput(task=task, episode=episode))
    # "done" against 9 reference tokens: no overlap, 0; the second 1.0; mean 0.5 < 0.8.
    assert row.details["per_invocation"] == [0.0, 1.0]
    assert (row.value, row.passed) == (0.5, False)


def test_final_session_state_cannot_be_checked_over_a2a(tmp_path):
    path = _write(
        tmp_path,
        "s.evalset.json",
        {"eval_set_id": "s", "eval_cases": [{**GOOD, "final_session_state": {"lights": "off"}}]},
    )
    _write(tmp_path, "test_config.json", {"criteria": {}})
    [task] = load_tasks(path)
    [row] = final_session_state(ScoringInput(task=task, episode=_episode(task, [("hello", [])])))
    assert row.passed is False and row.gating and "not compared" in row.reason
    exposed = _episode(task, [("hello", [])])
    exposed.aux["session_state"] = {"lights": "off", "_adk": 1}
    [row] = final_session_state(ScoringInput(task=task, episode=exposed))
    assert row.passed is True and row.gating
    exposed.aux["session_state"] = {"lights": "on"}
    [row] = final_session_state(ScoringInput(task=task, episode=exposed))
    assert row.passed is False and '\'lights\' is "on", expected "off"' in row.reason


@pytest.mark.parametrize(
    ("labels", "score"),
    [
        # final_response_match_v2.py aggregate_per_invocation_samples: the majority of the
        # samples with a label; a tie is invalid; no label at all, no score.
        ([True, False, True], 1.0),
        ([True, False], 0.0),
        ([False, None, True, True], 1.0),
        ([None, None], None),
        ([False, False, True, True, None], 0.0),
    ],
)
def test_num_samples_majority_vote(labels, score):
    assert majority(labels) == score


def test_judged_metric_options_and_no_judge_refused(tmp_path):
    criteria = {
        "final_response_match_v2": {"threshold": 0.6, "judge_model_options": {"judge_model": "g", "num_samples": 3}}
    }
    path = _write(tmp_path, "j.evalset.json", {"eval_set_id": "s", "eval_cases": [GOOD]})
    _write(tmp_path, "test_config.json", {"criteria": criteria})
    tasks = load_tasks(path)
    [criterion] = tasks[0].adk.criteria
    assert (criterion.threshold, criterion.judge_model, criterion.num_samples) == (0.6, "g", 3)
    check_judge(tasks, True, "eval.yaml")
    with pytest.raises(InputError) as caught:
        check_judge(tasks, False, "eval.yaml")
    assert caught.value.field == "criteria.final_response_match_v2" and "judge" in caught.value.detail
    _write(
        tmp_path,
        "test_config.json",
        {"criteria": {"final_response_match_v2": {"threshold": 1, "judge_model_options": {"num_samples": 0}}}},
    )
    with pytest.raises(InputError) as caught:
        load_tasks(path)
    assert caught.value.field == "criteria.final_response_match_v2.judge_model_options.num_samples"


def _rubric(rubric_id: str, text: str, kind: str | None = None) -> dict:
    return {"rubricId": rubric_id, "rubricContent": {"textProperty": text}, **({"type": kind} if kind else {})}


def test_effective_rubrics_follow_adks_scopes_and_types(tmp_path):
    """rubric_based_evaluator.py create_effective_rubrics_list: the criterion's rubrics, then
    the case's and the invocation's of the metric's type; none, or an id twice, is refused."""
    invocation = {**_invocation("hi", "hello", []), "rubrics": [_rubric("inv", "polite", "FINAL_RESPONSE_QUALITY")]}
    case = {
        "eval_id": "c",
        "conversation": [invocation],
        "rubrics": [
            _rubric("case", "short", "FINAL_RESPONSE_QUALITY"),
            _rubric("tools", "no tools", "TOOL_USE_QUALITY"),
        ],
    }
    path = _write(tmp_path, "r.evalset.json", {"eval_set_id": "s", "eval_cases": [case]})
    metric = "rubric_based_final_response_quality_v1"
    _write(
        tmp_path,
        "test_config.json",
        {"criteria": {metric: {"threshold": 0.5, "rubrics": [_rubric("crit", "in English")]}}},
    )
    [task] = load_tasks(path)
    assert task.adk is not None
    [criterion] = task.adk.criteria
    [expected] = task.adk.conversation or []
    assert [r.rubric_id for r in effective_rubrics(task.adk, criterion, expected)] == ["crit", "case", "inv"]
    _write(tmp_path, "test_config.json", {"criteria": {"rubric_based_tool_use_quality_v1": 0.5}})
    assert [
        r.rubric_id for r in effective_rubrics(load_tasks(path)[0].adk, load_tasks(path)[0].adk.criteria[0], None)
    ] == ["tools"]
    _write(
        tmp_path, "test_config.json", {"criteria": {metric: {"threshold": 0.5, "rubrics": [_rubric("case", "again")]}}}
    )
    with pytest.raises(InputError, match="rubric_id 'case' is given twice"):
        load_tasks(path)
    bare = _write(tmp_path / "bare", "b.evalset.json", {"eval_set_id": "s", "eval_cases": [GOOD]})
    _write(tmp_path / "bare", "test_config.json", {"criteria": {metric: 0.5}})
    with pytest.raises(InputError, match="needs rubrics") as caught:
        load_tasks(bare)
    assert caught.value.field == f"criteria.{metric}.rubrics"


def test_sentences_as_hallucinations_v1_judges_them():
    from bat_pipeline.engine.scorers.adk_hallucinations import sentences

    assert sentences("Weather in Paris: sunny, 22°C. Anything else?\n- Berlin: rain") == [
        "Weather in Paris: sunny, 22°C.",
        "Anything else?",
        "- Berlin: rain",
    ]
    assert sentences("東京は晴れ。大阪は雨。") == ["東京は晴れ。", "大阪は雨。"]
    assert sentences("...") == []


EXAMPLE_AGENT = Path(__file__).resolve().parents[2] / "bat_pipeline" / "example" / "weather_agent"


def test_which_agent_an_adk_file_runs_on(tmp_path):
    """In an agent folder: that agent (ADK keeps an app's eval sets in its folder); the
    agent-starter-pack layout (tests/eval/evalsets, tests/eval/eval_config.json) outside
    one: refused, saying to name the agent, which then reads it with --config."""
    from bat_pipeline.engine.config.project import Overrides, load_project, project_kind, project_tasks

    shipped = EXAMPLE_AGENT / "adk" / "weather.evalset.json"
    assert project_kind(shipped) == ("adk", shipped)
    config = load_project(shipped)
    assert config.agent_dir == EXAMPLE_AGENT and config.evaluation.dataset == str(shipped)
    assert [t.id for t in project_tasks(config)] == ["weather_paris", "add_then_capital"]

    evalsets = tmp_path / "project" / "tests" / "eval" / "evalsets"
    file = _write(evalsets, "basic.evalset.json", {"eval_set_id": "basic", "eval_cases": [GOOD]})
    eval_config = _write(evalsets.parent, "eval_config.json", {"criteria": {"response_match_score": 0.3}})
    assert project_kind(evalsets) == ("adk", evalsets)
    with pytest.raises(InputError, match="bat-pipeline run AGENT --dataset"):
        load_project(file)
    named = load_project(EXAMPLE_AGENT, Overrides(dataset=evalsets, adk_config=eval_config))
    [task] = project_tasks(named)
    assert task.adk is not None and [(c.metric, c.threshold) for c in task.adk.criteria] == [
        ("response_match_score", 0.3)
    ]
    # EvalBench's evalsets are named *.evalset.json too: they stay EvalBench's.
    bench = _write(tmp_path, "bench.evalset.json", {"scenarios": [{"id": "s", "starting_prompt": "hi"}]})
    with pytest.raises(InputError, match="EvalBench evalset"):
        project_kind(bench)


def test_adk_result_shape_and_a_failed_inference(tmp_path):
    """eval_result.py EvalSetResult / EvalCaseResult: the verdict as final_eval_status, each
    metric with ADK's status numbers, per invocation; an attempt that failed is FAILED with
    no metric results (never NOT_EVALUATED, ADK's 3)."""
    from bat_pipeline.engine.adk_results import result_files
    from bat_pipeline.engine.contracts.episode import Verdict
    from bat_pipeline.engine.verdicts import verdict_from_rows

    task = _multi_turn(tmp_path, {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "ANY_ORDER"}})
    episode = _episode(
        task,
        [
            ("off", [ToolStep(name="set_device_info", args=DEVICE_OFF)]),
            ("on", [ToolStep(name="get_device_info", args={})]),
        ],
    )
    episode.scores = score_checks(task, episode)
    episode.verdict = verdict_from_rows(episode.scores)
    broken = Episode(model_name="m", task_id=task.id, aux={"attempt_index": 1, "eval_error": "agent gone"})
    broken.verdict = Verdict(passed=False, reason="attempt failed")
    [(name, result)] = result_files([episode, broken], [task], "app", 1700000000.5).items()
    assert name == "app_4412cca6-dfcd-43ab-bbc5-9155380c7137_1700000000.5.evalset_result.json"
    passed, failed = result["eval_case_results"]
    assert (passed["final_eval_status"], failed["final_eval_status"]) == (1, 2)
    assert failed["overall_eval_metric_results"] == [] and failed["eval_metric_result_per_invocation"] == []
    metrics = {m["metric_name"]: m for m in passed["overall_eval_metric_results"]}
    assert (
        metrics["tool_trajectory_avg_score"]["score"] == 0.5
        and metrics["tool_trajectory_avg_score"]["eval_status"] == 1
    )
    assert metrics["tool_trajectory_avg_score"]["criterion"]["match_type"] == 2  # ANY_ORDER
    first, second = passed["eval_metric_result_per_invocation"]
    per = {m["metric_name"]: m for m in second["eval_metric_results"]}
    assert (per["tool_trajectory_avg_score"]["score"], per["tool_trajectory_avg_score"]["eval_status"]) == (0.0, 2)
    assert first["expected_invocation"]["intermediate_data"]["tool_uses"][0]["args"] == DEVICE_OFF


def test_the_adk_modules_import_first_in_a_fresh_process():
    """engine.datasets.adk reads files through engine.config, which reads ADK files: neither
    may need the other imported first."""
    import subprocess
    import sys

    for module in ("bat_pipeline.engine.datasets.adk", "bat_pipeline.engine.scorers.adk_rubrics"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
