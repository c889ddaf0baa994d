"""Google ADK's eval files as tasks: `*.evalset.json` (an `EvalSet`), `*.test.json` (the
same schema, or ADK's legacy list of `{query, expected_tool_use, reference}`), a folder of
them, and the `test_config.json` beside each (docs/formats.md, "Google ADK").

Read as google/adk-python reads them (src/google/adk/evaluation/: eval_set.py, eval_case.py,
eval_config.py, eval_metrics.py, agent_evaluator.py, local_eval_sets_manager.py): keys in
snake_case or camelCase; `eval_id` per case; exactly one of `conversation` and
`conversation_scenario`; a file that is not an EvalSet but a list of `query` entries is the
legacy format (one case, named after the file, each entry an invocation), read with a
warning as ADK reads it; no test_config.json: ADK's default criteria
(`tool_trajectory_avg_score` 1.0, `response_match_score` 0.8), said in a warning (ADK
applies them silently). Where ADK would fail later or guess, this refuses at once, naming
the file, the case and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bat_pipeline.engine.agent_folder import is_agent_folder
from bat_pipeline.engine.config.files import parse_json, read_text
from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.adk import (
    EFFICIENCY,
    JUDGED,
    MATCH_TYPES,
    RESPONSE_MATCH,
    RESPONSE_MATCH_V2,
    RUBRIC_TRAJECTORY,
    RUBRIC_TYPES,
    TRAJECTORY,
    AdkCase,
    AdkCriterion,
    AdkInvocation,
    AdkRubric,
    AdkScenario,
    AdkToolCall,
    effective_rubrics,
)
from bat_pipeline.engine.contracts.scenario import Scenario
from bat_pipeline.engine.contracts.tasks import Expected, Task
from bat_pipeline.engine.errors import InputError

SUFFIXES = (".evalset.json", ".test.json")
CONFIG_FILE = "test_config.json"
DEFAULT_CRITERIA: dict[str, float] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
"""ADK's `_DEFAULT_EVAL_CONFIG` (eval_config.py)."""

REFERENCE_METRICS = (TRAJECTORY, RESPONSE_MATCH, RESPONSE_MATCH_V2)
"""Metrics that compare each invocation with the expected one (no scenario has them)."""
EFFICIENCY_NOT_REPORTED = ("invocation_duration_v1",)
SCORED = (TRAJECTORY, RESPONSE_MATCH, *JUDGED)
NOT_SCORED = (
    "response_evaluation_score",
    "safety_v1",
    "per_turn_user_simulator_quality_v1",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)
"""ADK's prebuilt metrics (eval_metrics.py PrebuiltMetrics) that bat-pipeline does not
score yet: refused by name rather than skipped (docs/formats.md)."""
VERTEX = (
    "response_evaluation_score",
    "safety_v1",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)
"""Of those, the ones ADK has Vertex AI's evaluation service (Google Cloud) score."""
LEGACY_WARNING = (
    "{file}: ADK's older list format (query / expected_tool_use / reference, before "
    "2025-05-15); read as one eval case, as ADK reads it with a warning. ADK's "
    "AgentEvaluator.migrate_eval_data_to_new_schema writes it as an EvalSet"
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _get(data: dict[str, Any], name: str, default: Any = None) -> Any:
    """A key in snake_case or camelCase (ADK's models take both)."""
    if name in data:
        return data[name]
    return data.get(_camel(name), default)


def _has(data: dict[str, Any], name: str) -> bool:
    return name in data or _camel(name) in data


def is_adk_path(path: Path) -> bool:
    """A folder holding ADK eval files (`eval_files`)."""
    return path.is_dir() and bool(eval_files(path))


def is_legacy(data: Any) -> bool:
    """ADK's older list format: an array of objects, each with `query`."""
    return isinstance(data, list) and bool(data) and all(isinstance(e, dict) and "query" in e for e in data)


def is_adk_file(path: Path) -> bool:
    """A file named `*.evalset.json` / `*.test.json` holding an EvalSet or the older list
    (EvalBench names its evalsets `*.evalset.json` too: those hold `scenarios`)."""
    if not path.is_file() or not path.name.endswith(SUFFIXES):
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return is_adk_data(data) or is_legacy(data)


def agent_folder_of(path: Path) -> Path:
    """The agent folder an ADK eval file or folder is run on: the nearest folder holding
    it (itself included) that is an agent folder (config.yaml or eval/eval.yaml), as ADK
    keeps an app's eval sets in the app's folder. Refused when there is none."""
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if is_agent_folder(folder):
            return folder
    raise InputError(
        str(path),
        "no agent folder (config.yaml or eval/eval.yaml) holds this ADK eval file: run it on an agent "
        f"with `bat-pipeline run AGENT --dataset {path}`",
    )


def is_adk_data(data: Any) -> bool:
    """An EvalSet object: `eval_set_id` (or `evalSetId`) and `eval_cases`."""
    return isinstance(data, dict) and _has(data, "eval_set_id") and _has(data, "eval_cases")


def eval_files(folder: Path) -> list[Path]:
    """The ADK eval files under `folder`, recursively, sorted (ADK's AgentEvaluator walks a
    folder for `*.test.json`; `*.evalset.json` are taken too)."""
    return sorted(p for p in folder.rglob("*") if is_adk_file(p))


def load_adk_tasks(path: Path, warnings: list[str] | None = None, config: Path | None = None) -> list[Task]:
    """The tasks of an ADK eval file or folder. `config`: `--config FILE` (every file's
    criteria), else each file's own test_config.json beside it, else ADK's defaults."""
    files = eval_files(path) if path.is_dir() else [path]
    if not files:
        raise InputError(str(path), f"no ADK eval file ({' or '.join('*' + s for s in SUFFIXES)}) in this folder")
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for file in files:
        cases, notes = read_eval_file(file, config)
        if warnings is not None:
            warnings.extend(notes)
        for case in cases:
            task_id = case.eval_id if len(files) == 1 else f"{case.eval_set_id}.{case.eval_id}"
            if task_id in seen:
                raise InputError(
                    str(file),
                    f"eval case '{case.eval_id}' of eval set '{case.eval_set_id}' is also in {seen[task_id]}",
                    entry=f"eval case '{case.eval_id}'",
                    field="eval_id",
                )
            seen[task_id] = str(file)
            tasks.append(as_task(task_id, case))
    return tasks


def as_task(task_id: str, case: AdkCase) -> Task:
    """An ADK case as a task: its invocations' user texts are the turns (a scenario: the
    starting prompt, then the simulated user by the plan); the A2A status is checked (a
    failed inference is a failed case); no EvalBench or bat-cli scorer is selected."""
    if case.scenario is not None:
        turns, plan = [case.scenario.starting_prompt], case.scenario.conversation_plan
    else:
        turns, plan = [inv.user for inv in case.conversation or []], ""
    return Task(
        id=task_id,
        turns=turns,
        expected=Expected(expected_outcome=plan),
        meta={"adk_eval_set": case.eval_set_id},
        # A conversation's invocations are all sent (a scenario's length is the simulated
        # user's, eval.yaml's simulated_user.max_turns).
        scenario=Scenario(conversation_plan=plan, scorers={}, max_turns=None if plan else len(turns)),
        adk=case,
    )


def read_eval_file(file: Path, config: Path | None = None) -> tuple[list[AdkCase], list[str]]:
    """The cases of one eval file with their criteria, and the warnings reading it gave."""
    where = str(file)
    data = parse_json(read_text(file, missing="ADK eval file not found"), where, check=False)
    notes: list[str] = []
    config_path = config or file.parent / CONFIG_FILE
    criteria, config_source = read_config(config_path, explicit=config is not None)
    if config_source is None:
        notes.append(
            f"{where}: no {CONFIG_FILE} beside it (nor --config): ADK's default criteria apply "
            + ", ".join(f"{k} >= {v}" for k, v in DEFAULT_CRITERIA.items())
        )
    if is_adk_data(data):
        assert isinstance(data, dict)
        cases = _eval_set(data, where)
    elif is_legacy(data):
        notes.append(LEGACY_WARNING.format(file=where))
        cases = [_legacy_case(data, where)]
    else:
        found = ", ".join(map(str, data)) if isinstance(data, dict) else kind(data, json_words=True)
        raise InputError(
            where,
            "not an ADK eval file: expected an EvalSet object (eval_set_id, eval_cases) or ADK's older list of "
            f"{{query, expected_tool_use, reference}} entries; found: {found}",
        )
    for case in cases:
        _check_criteria(case, criteria, config_source or where)
    notes += _unused(cases, criteria, where, config_source)
    if config_source is not None and _user_simulator(config_path):
        notes.append(
            f"{config_source}, field 'user_simulator_config': not used; eval.yaml's simulated_user "
            "plays the user of conversation_scenario cases"
        )
    return [c.model_copy(update={"criteria": criteria, "config_source": config_source}) for c in cases], notes


def _unused(cases: list[AdkCase], criteria: list[AdkCriterion], file: str, config: str | None) -> list[str]:
    """Warnings for what ADK would use and an A2A run cannot: the initial session state,
    the judge model named in the config (eval.yaml's judge answers)."""
    notes = [
        f"{file}, eval case '{c.eval_id}', field 'session_input.state': not given to the agent (an A2A "
        "agent's session cannot be set from outside); ADK would start the session with it"
        for c in cases
        if c.session_state
    ]
    notes += [
        f"{config}, field 'criteria.{c.metric}.judge_model_options.judge_model': '{c.judge_model}' is not "
        "asked; eval.yaml's judge answers"
        for c in criteria
        if c.judge_model is not None
    ]
    return notes


def _user_simulator(path: Path) -> bool:
    data = parse_json(read_text(path, missing="test_config.json not found"), str(path), check=False)
    return isinstance(data, dict) and _get(data, "user_simulator_config") is not None


def read_config(path: Path, *, explicit: bool = False) -> tuple[list[AdkCriterion], str | None]:
    """The criteria of a test_config.json (ADK's EvalConfig), and its path; ADK's defaults
    and None when there is none (refused when `--config` named a file that is missing)."""
    if not path.is_file():
        if explicit:
            raise InputError(str(path), "the --config file (an ADK test_config.json) does not exist")
        return [AdkCriterion(metric=m, threshold=t) for m, t in DEFAULT_CRITERIA.items()], None
    where = str(path)
    data = parse_json(read_text(path, missing="test_config.json not found"), where, check=False)
    if not isinstance(data, dict):
        raise InputError(
            where, f"an ADK eval config must be an object with 'criteria', got {kind(data, json_words=True)}"
        )
    unknown = [k for k in data if k not in _CONFIG_KEYS]
    if unknown:
        raise InputError(where, f"unknown key '{unknown[0]}' (ADK's EvalConfig has {', '.join(_CONFIG_KEYS[::2])})")
    if _get(data, "custom_metrics"):
        raise InputError(
            where,
            "custom metrics run Python code of the ADK project: bat-pipeline does not run them",
            field="custom_metrics",
        )
    criteria = _get(data, "criteria", {})
    if not isinstance(criteria, dict):
        raise InputError(
            where, f"expected an object of metric: threshold, got {kind(criteria, json_words=True)}", field="criteria"
        )
    return [_criterion(name, value, where) for name, value in criteria.items()], where


_CONFIG_KEYS = (
    "criteria",
    "criteria",
    "custom_metrics",
    "customMetrics",
    "user_simulator_config",
    "userSimulatorConfig",
    "live_model_config",
    "liveModelConfig",
)


def _criterion(name: str, value: Any, file: str) -> AdkCriterion:
    field = f"criteria.{name}"
    if name in EFFICIENCY or name in EFFICIENCY_NOT_REPORTED:
        raise InputError(
            file,
            f"'{name}' is one of ADK's informational efficiency metrics: it reports a value and never passes "
            "or fails, so it takes no threshold (ADK refuses one too); remove it, it is reported anyway",
            field=field,
        )
    if name in VERTEX:
        raise InputError(
            file,
            f"ADK has Vertex AI's evaluation service (Google Cloud) score '{name}'; bat-pipeline does not "
            f"call it (it scores {', '.join(SCORED)} and reports {', '.join(EFFICIENCY)}; docs/formats.md, Google ADK)",
            field=field,
        )
    if name in NOT_SCORED:
        raise InputError(
            file,
            f"ADK's metric '{name}' is not scored by bat-pipeline yet (it scores {', '.join(SCORED)} and "
            f"reports {', '.join(EFFICIENCY)}; docs/formats.md, Google ADK)",
            field=field,
        )
    if name not in SCORED:
        raise InputError(file, f"unknown ADK metric '{name}' (known: {', '.join((*SCORED, *NOT_SCORED))})", field=field)
    if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
        raise InputError(
            file,
            f"expected a threshold (a number) or a criterion object, got {kind(value, json_words=True)}",
            field=field,
        )
    if not isinstance(value, dict):
        return AdkCriterion(metric=name, threshold=float(value))
    threshold = _get(value, "threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise InputError(file, "a criterion object needs 'threshold', a number", field=f"{field}.threshold")
    options: dict[str, Any] = {"metric": name, "threshold": float(threshold)}
    if _has(value, "match_type"):
        options["match_type"] = _match_type(_get(value, "match_type"), file, f"{field}.match_type")
    if _has(value, "judge_model_options"):
        options.update(_judge_options(_get(value, "judge_model_options"), file, f"{field}.judge_model_options"))
    if _has(value, "rubrics"):
        options["rubrics"] = _rubrics(_get(value, "rubrics") or [], file, None, f"{field}.rubrics")
    for flag in ("evaluate_intermediate_nl_responses", "include_intermediate_responses_in_final"):
        if _get(value, flag):
            raise InputError(
                file,
                "the agent's intermediate messages are not kept apart from its answer over A2A: "
                "bat-pipeline judges the final answer only",
                field=f"{field}.{flag}",
            )
    if _has(value, "ignore_args"):
        ignore = _get(value, "ignore_args")
        if not isinstance(ignore, bool):
            raise InputError(
                file, f"expected true or false, got {kind(ignore, json_words=True)}", field=f"{field}.ignore_args"
            )
        options["ignore_args"] = ignore
    return AdkCriterion.model_validate(options)


def _judge_options(value: Any, file: str, field: str) -> dict[str, Any]:
    """`judge_model_options`: the judge model (recorded; eval.yaml's judge answers) and
    `num_samples` (ADK's default 5), a whole number of at least 1."""
    if not isinstance(value, dict):
        raise InputError(file, f"expected an object, got {kind(value, json_words=True)}", field=field)
    found: dict[str, Any] = {}
    if _has(value, "judge_model"):
        found["judge_model"] = str(_get(value, "judge_model"))
    if _has(value, "num_samples"):
        samples = _get(value, "num_samples")
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise InputError(
                file, f"expected a whole number of at least 1, got {json.dumps(samples)}", field=f"{field}.num_samples"
            )
        found["num_samples"] = samples
    return found


def check_judge(tasks: list[Task], judged: bool, config_file: str) -> None:
    """Refuse ADK's LLM metrics when the run has no judge (eval.yaml's `judge:` with
    `evaluation.qualitative: true`): they would give no row, and the case would pass."""
    if judged:
        return
    for task in tasks:
        case = task.adk
        found = next((c for c in case.criteria if c.metric in JUDGED), None) if case is not None else None
        if case is not None and found is not None:
            raise InputError(
                case.config_source or case.source,
                f"'{found.metric}' is asked of a judge, and the run has none: give {config_file} a `judge:` "
                "block and `evaluation.qualitative: true`",
                field=f"criteria.{found.metric}",
            )


def _match_type(value: Any, file: str, field: str) -> str:
    """ADK's MatchType: its name in any case, `-` or space for `_`, or its number."""
    if isinstance(value, int) and not isinstance(value, bool) and value in MATCH_TYPES:
        return MATCH_TYPES[value]
    if isinstance(value, str):
        normal = value.strip().upper().replace("-", "_").replace(" ", "_")
        if normal in MATCH_TYPES.values():
            return normal
    raise InputError(file, f"expected one of EXACT, IN_ORDER, ANY_ORDER, got {json.dumps(value)}", field=field)


def _check_criteria(case: AdkCase, criteria: list[AdkCriterion], config: str) -> None:
    for criterion in criteria:
        if criterion.metric in RUBRIC_TYPES:
            _check_rubrics(case, criterion, config)
    if case.scenario is None:
        return
    for criterion in criteria:
        if criterion.metric in REFERENCE_METRICS:
            raise InputError(
                config,
                f"'{criterion.metric}' compares each invocation with an expected one, and eval case "
                f"'{case.eval_id}' of {case.source} is a conversation_scenario (it has none): ADK fails it "
                "when it runs; remove the metric or give the case a conversation",
                field=f"criteria.{criterion.metric}",
            )


def _check_rubrics(case: AdkCase, criterion: AdkCriterion, config: str) -> None:
    """A rubric metric needs rubrics for every invocation, each id once (ADK raises later)."""
    invocations: list[AdkInvocation | None] = list(case.conversation) if case.conversation else [None]
    if criterion.metric == RUBRIC_TRAJECTORY:
        invocations = invocations[-1:]  # judged once, as of the last turn
    for invocation in invocations:
        rubrics = effective_rubrics(case, criterion, invocation)
        where = f"eval case '{case.eval_id}' of {case.source}"
        if not rubrics:
            raise InputError(
                config,
                f"'{criterion.metric}' needs rubrics: none in the criterion, nor of type "
                f"{RUBRIC_TYPES[criterion.metric]} in {where}",
                field=f"criteria.{criterion.metric}.rubrics",
            )
        ids = [r.rubric_id for r in rubrics]
        twice = next((i for i in ids if ids.count(i) > 1), None)
        if twice is not None:
            raise InputError(
                config, f"rubric_id '{twice}' is given twice for {where}", field=f"criteria.{criterion.metric}.rubrics"
            )


def _eval_set(data: dict[str, Any], file: str) -> list[AdkCase]:
    set_id = _get(data, "eval_set_id")
    if not isinstance(set_id, str) or not set_id:
        raise InputError(file, "expected the eval set's id, a non-empty string", field="eval_set_id")
    cases = _get(data, "eval_cases")
    if not isinstance(cases, list):
        raise InputError(
            file, f"expected an array of eval cases, got {kind(cases, json_words=True)}", field="eval_cases"
        )
    if not cases:
        raise InputError(file, "the eval set has no eval cases", field="eval_cases")
    found: list[AdkCase] = []
    ids: dict[str, int] = {}
    for index, raw in enumerate(cases):
        entry = f"eval_cases[{index}]"
        if not isinstance(raw, dict):
            raise InputError(file, f"expected an eval case object, got {kind(raw, json_words=True)}", entry=entry)
        case_id = _get(raw, "eval_id")
        if not isinstance(case_id, str) or not case_id:
            raise InputError(file, "expected the case's id, a non-empty string", entry=entry, field="eval_id")
        entry = f"eval_cases[{index}] (eval_id '{case_id}')"
        if case_id in ids:
            raise InputError(file, f"duplicate eval_id (also eval_cases[{ids[case_id]}])", entry=entry, field="eval_id")
        ids[case_id] = index
        found.append(_case(raw, set_id, case_id, file, entry))
    return found


def _case(raw: dict[str, Any], set_id: str, case_id: str, file: str, entry: str) -> AdkCase:
    conversation, scenario = _get(raw, "conversation"), _get(raw, "conversation_scenario")
    if (conversation is None) == (scenario is None):
        raise InputError(
            file, "exactly one of conversation and conversation_scenario must be given (ADK's EvalCase)", entry=entry
        )
    session = _get(raw, "session_input") or {}
    if not isinstance(session, dict):
        raise InputError(
            file, f"expected an object, got {kind(session, json_words=True)}", entry=entry, field="session_input"
        )
    state = _get(session, "state") or {}
    final_state = _get(raw, "final_session_state") or {}
    for value, field in ((state, "session_input.state"), (final_state, "final_session_state")):
        if not isinstance(value, dict):
            raise InputError(file, f"expected an object, got {kind(value, json_words=True)}", entry=entry, field=field)
    invocations: list[AdkInvocation] | None = None
    if conversation is not None:
        if not isinstance(conversation, list) or not conversation:
            raise InputError(file, "expected a non-empty array of invocations", entry=entry, field="conversation")
        invocations = [_invocation(inv, file, entry, f"conversation[{i}]") for i, inv in enumerate(conversation)]
    return AdkCase(
        source=file,
        eval_set_id=set_id,
        eval_id=case_id,
        conversation=invocations,
        scenario=_scenario(scenario, file, entry) if scenario is not None else None,
        session_state=state,
        app_name=_get(session, "app_name"),
        final_session_state=final_state,
        rubrics=_rubrics(_get(raw, "rubrics") or [], file, entry, "rubrics"),
    )


def _scenario(raw: Any, file: str, entry: str) -> AdkScenario:
    field = "conversation_scenario"
    if not isinstance(raw, dict):
        raise InputError(file, f"expected an object, got {kind(raw, json_words=True)}", entry=entry, field=field)
    values: dict[str, str] = {}
    for name in ("starting_prompt", "conversation_plan"):
        value = _get(raw, name)
        if not isinstance(value, str) or not value.strip():
            raise InputError(file, "expected a non-empty string", entry=entry, field=f"{field}.{name}")
        values[name] = value
    return AdkScenario(**values, user_persona=_get(raw, "user_persona"))


def _text(content: Any, file: str, entry: str, field: str) -> str | None:
    """The text parts of a genai `Content`, joined by newlines (ADK's `_get_text_from_content`)."""
    if content is None:
        return None
    if not isinstance(content, dict):
        raise InputError(
            file,
            f"expected a Content object (parts, role), got {kind(content, json_words=True)}",
            entry=entry,
            field=field,
        )
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise InputError(
            file, f"expected an array of parts, got {kind(parts, json_words=True)}", entry=entry, field=f"{field}.parts"
        )
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"])


def _invocation(raw: Any, file: str, entry: str, field: str) -> AdkInvocation:
    if not isinstance(raw, dict):
        raise InputError(
            file, f"expected an invocation object, got {kind(raw, json_words=True)}", entry=entry, field=field
        )
    if not _has(raw, "user_content"):
        raise InputError(file, "an invocation needs user_content", entry=entry, field=f"{field}.user_content")
    user = _text(_get(raw, "user_content"), file, entry, f"{field}.user_content")
    if not user:
        raise InputError(
            file,
            "user_content has no text part: bat-pipeline sends the user's text to the agent over A2A",
            entry=entry,
            field=f"{field}.user_content.parts",
        )
    data = _get(raw, "intermediate_data") or {}
    if not isinstance(data, dict):
        raise InputError(
            file,
            f"expected an object, got {kind(data, json_words=True)}",
            entry=entry,
            field=f"{field}.intermediate_data",
        )
    calls: list[AdkToolCall] = []
    responses: list[tuple[str, str]] = []
    if _has(data, "invocation_events"):
        events = _get(data, "invocation_events") or []
        for i, event in enumerate(events if isinstance(events, list) else []):
            content = event.get("content") if isinstance(event, dict) else None
            for part in (content or {}).get("parts") or []:
                call = _get(part, "function_call") if isinstance(part, dict) else None
                if call is not None:
                    calls.append(_call(call, file, entry, f"{field}.intermediate_data.invocation_events[{i}]"))
    else:
        for i, call in enumerate(_get(data, "tool_uses") or []):
            calls.append(_call(call, file, entry, f"{field}.intermediate_data.tool_uses[{i}]"))
        for item in _get(data, "intermediate_responses") or []:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
                text = "\n".join(p.get("text", "") for p in item[1] if isinstance(p, dict) and p.get("text"))
                responses.append((item[0], text))
    return AdkInvocation(
        invocation_id=str(_get(raw, "invocation_id") or ""),
        user=user,
        final_response=_text(_get(raw, "final_response"), file, entry, f"{field}.final_response"),
        tool_uses=calls,
        intermediate_responses=responses,
        rubrics=_rubrics(_get(raw, "rubrics") or [], file, entry, f"{field}.rubrics"),
    )


def _call(raw: Any, file: str, entry: str, field: str) -> AdkToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise InputError(file, "expected a function call with a 'name'", entry=entry, field=field)
    args = raw.get("args") or {}
    if not isinstance(args, dict):
        raise InputError(
            file,
            f"expected the arguments as an object, got {kind(args, json_words=True)}",
            entry=entry,
            field=f"{field}.args",
        )
    return AdkToolCall(name=raw["name"], args=args)


def _rubrics(raw: Any, file: str, entry: str | None, field: str) -> list[AdkRubric]:
    if not isinstance(raw, list):
        raise InputError(
            file, f"expected an array of rubrics, got {kind(raw, json_words=True)}", entry=entry, field=field
        )
    found = []
    for i, item in enumerate(raw):
        content = _get(item, "rubric_content") if isinstance(item, dict) else None
        text = _get(content, "text_property") if isinstance(content, dict) else None
        rubric_id = _get(item, "rubric_id") if isinstance(item, dict) else None
        if not isinstance(rubric_id, str) or not isinstance(text, str):
            raise InputError(
                file, "a rubric needs rubric_id and rubric_content.text_property", entry=entry, field=f"{field}[{i}]"
            )
        found.append(AdkRubric(rubric_id=rubric_id, text=text, type=item.get("type")))
    return found


def _legacy_case(data: list[dict[str, Any]], file: str) -> AdkCase:
    """ADK's older format: the file is one case (named after the file), each entry an
    invocation (local_eval_sets_manager._convert_invocation_to_pydantic_schema)."""
    invocations = []
    for index, item in enumerate(data):
        entry = f"[{index}]"
        query = item["query"]
        if not isinstance(query, str) or not query.strip():
            raise InputError(file, "expected the user's query, a non-empty string", entry=entry, field="query")
        calls = []
        tool_uses = item.get("expected_tool_use") or []
        if not isinstance(tool_uses, list):
            raise InputError(file, "expected an array of tool uses", entry=entry, field="expected_tool_use")
        for i, use in enumerate(tool_uses):
            field = f"expected_tool_use[{i}]"
            if not isinstance(use, dict) or not isinstance(use.get("tool_name"), str) or "tool_input" not in use:
                raise InputError(
                    file, "a tool use needs tool_name and tool_input (ADK's older format)", entry=entry, field=field
                )
            if not isinstance(use["tool_input"], dict):
                raise InputError(file, "expected tool_input as an object", entry=entry, field=f"{field}.tool_input")
            calls.append(AdkToolCall(name=use["tool_name"], args=use["tool_input"]))
        reference = item.get("reference", "")
        if not isinstance(reference, str):
            raise InputError(file, "expected the reference answer as a string", entry=entry, field="reference")
        responses = [
            (str(r.get("author", "")), str(r.get("text", "")))
            for r in item.get("expected_intermediate_agent_responses") or []
            if isinstance(r, dict)
        ]
        invocations.append(
            AdkInvocation(user=query, final_response=reference, tool_uses=calls, intermediate_responses=responses)
        )
    name = re.sub(r"\.test\.json$|\.json$", "", Path(file).name)
    return AdkCase(source=file, eval_set_id=name, eval_id=name, format="legacy", conversation=invocations)
