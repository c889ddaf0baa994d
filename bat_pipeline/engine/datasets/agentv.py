"""An AgentV eval file read into an AgentvSuite (SPEC §9, §12): its tests, their graders,
and (engine.datasets.agentv_targets) the targets they run against.

Both generations users have: the seed's newer format (`prompts` + `vars` + `assert`,
`providers`) and the 4.x format (`input` / `expected_output` / `criteria`, `assertions`,
`.agentv/targets.yaml`), with the older spellings 4.x still reads (`evalcases`,
`input_messages`, `expected_messages`, `expected_outcome`, `evaluators`). Every refusal
is an InputError naming the file, the test (`tests[2] (id 'x')`) and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.config.files import parse_json, read_text, read_yaml
from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.agentv import IMPLICIT_KEY, AgentvCase, AgentvFormat, AgentvSuite, Assertion, Message
from bat_pipeline.engine.contracts.config import MAX_K
from bat_pipeline.engine.contracts.names import check_id_file_names
from bat_pipeline.engine.datasets import agentv_vars
from bat_pipeline.engine.datasets.agentv_composite import composite_options
from bat_pipeline.engine.datasets.agentv_content import file_shorthand, prompt_text, resolve_files, search_roots
from bat_pipeline.engine.datasets.agentv_graders import (
    GRADING_KEY,
    GraderContext,
    checked_options,
    fold_rubric_strings,
)
from bat_pipeline.engine.datasets.agentv_judge import LLM_TYPES, find_judge
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions, agentv_environ, interpolate_env, load_targets
from bat_pipeline.engine.datasets.trust import TRUST_HINT
from bat_pipeline.engine.errors import InputError

CASE_KEYS = ("tests", "evalcases", "eval_cases")
FILE_REF = "file://"
TYPE_ALIASES = {
    "code-grader": "script",
    "code-judge": "script",
    "script": "script",
    "llm-grader": "llm-rubric",
    "llm-judge": "llm-rubric",
    "llm-rubric": "llm-rubric",
    "rubric": "llm-rubric",
    "rubrics": "llm-rubric",
    "tool-trajectory": "trajectory",
    "trajectory": "trajectory",
}
TEXT_TYPES = (
    "contains",
    "contains-any",
    "contains-all",
    "icontains",
    "icontains-any",
    "icontains-all",
    "starts-with",
    "ends-with",
    "regex",
    "equals",
    "is-json",
    "json-subset",
)
RUN_TYPES = (
    "script",
    "trajectory",
    "llm-rubric",
    "field-accuracy",
    "execution-metrics",
    "composite",
    *TEXT_TYPES,
)
"""Types this release grades; others are refused before anything runs."""
DEPRECATED_TYPES = ("code-judge", "llm-judge")
"""4.x files: AgentV 4.42.4 skips graders of these types with a warning (their criteria are
graded instead when nothing else grades the test)."""
EMPTY = "an empty rubric string is left out (as AgentV 4.42 does)"
_ASSERTION_FIELDS = {"name", "type", "weight", "required", "min_score", "negate", "value"}
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


CUSTOM_GRADER_FOLDERS = ("graders", "judges", "assertions")
"""Where AgentV 4.42.4 finds custom grader types (`.agentv/<folder>/<type>.ts|.js|.mts|.mjs`,
from the eval file's folder up: grader-discovery.ts, assertion-discovery.ts)."""


def custom_grader_file(eval_file: Path, grader_type: str) -> Path | None:
    """The custom grader script AgentV would take for `grader_type`, if there is one."""
    for root in search_roots(eval_file):
        for folder in CUSTOM_GRADER_FOLDERS:
            for suffix in (".ts", ".js", ".mts", ".mjs"):
                candidate = root / ".agentv" / folder / f"{grader_type}{suffix}"
                if candidate.is_file():
                    return candidate
    return None


V4_INPUT = {"input", "turns", "input_files"}
"""A test with one of these is a 4.x test even when it has `vars` (detect_format)."""


def detect_format(data: Mapping[str, Any], cases: Any) -> AgentvFormat:
    """SPEC §13: the seed's format when the file has top-level `providers` or `prompts` or
    a test has `vars` (and no `input`, `turns` or `input_files` of its own: a 4.x test's
    `vars` fill placeholders in its fields, as AgentV 4.42.4's, engine.datasets.agentv_vars);
    else the 4.x format."""
    if "providers" in data or "prompts" in data:
        return "seed"
    if isinstance(cases, list) and any(isinstance(c, dict) and "vars" in c and not V4_INPUT & c.keys() for c in cases):
        return "seed"
    return "v4"


def load_suite(path: Path, options: TargetOptions | None = None) -> AgentvSuite:
    """The eval file, its tests and its targets, validated. `options`: `--providers`
    and `--threshold`."""
    path = Path(path).resolve()
    file = str(path)
    options = options or TargetOptions()
    data = read_yaml(path, core_schema=True)
    if not isinstance(data, dict):
        raise InputError(file, f"an AgentV eval file is a mapping with `tests:`, got {kind(data)}")
    key = next((k for k in CASE_KEYS if k in data), None)
    if key is None:
        raise InputError(file, f"no tests: expected one of {', '.join(CASE_KEYS)}")
    warnings: list[str] = []
    cases, sources = _case_list(data[key], path, key, warnings)
    fmt = detect_format(data, cases)
    if fmt == "v4":  # as AgentV 4.42.4: `${{ VAR }}` anywhere in the file (unset: empty)
        environ = agentv_environ(path, options)
        # the targets' names keep their variables: target definitions refuse an unset one by name
        written, data, cases = data, interpolate_env(data, environ), interpolate_env(cases, environ)
    else:
        written = data
    execution: dict[str, Any] = data["execution"] if isinstance(data.get("execution"), dict) else {}
    prompts = data.get("prompts") or ["{{ input }}"]
    if isinstance(prompts, str):
        prompts = [prompts]
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        raise InputError(file, "expected a list of template strings", field="prompts")
    if len(prompts) > 1:
        warnings.append(f"{file}: prompts: only the first prompt is used ({len(prompts)} given)")
    shared = [*_graders(data, file, "top level", fmt, warnings), *_graders(execution, file, "execution", fmt, warnings)]
    tests: list[AgentvCase] = []
    seen: dict[str, int] = {}
    for index, (raw, external) in enumerate(zip(cases, sources, strict=True)):
        entry = _entry(key, index, raw)
        if external is not None and not options.trust_datasets:
            _refuse_scripts(raw, external, entry, fmt)
        case = _case(raw, index, entry, fmt, prompts[0], shared, path, warnings, data.get("input_files"))
        if case.id in seen:
            raise InputError(file, f"duplicate id '{case.id}' (also {key}[{seen[case.id]}])", entry=entry, field="id")
        seen[case.id] = index
        tests.append(case)
    check_id_file_names([t.id for t in tests], file, key, [str(source or path) for source in sources])
    threshold = options.threshold
    if threshold is None:
        threshold = _number(data.get("threshold", execution.get("threshold", 0.8)), file, "threshold")
    # A test's own threshold wins; then --threshold, then the file's, then 0.8.
    tests = [t if t.threshold is not None else t.model_copy(update={"threshold": threshold}) for t in tests]
    targets, target_warnings = load_targets(written, path, fmt, options)
    judge = find_judge(written, path, [t.name for t in targets], tests, options, warnings)
    try:
        return AgentvSuite(
            source=path,
            format=fmt,
            description=str(data.get("description") or ""),
            tests=tests,
            targets=targets,
            threshold=threshold,
            trials=_trials(execution, file),
            workers=execution.get("workers"),
            judge=judge,
            warnings=list(dict.fromkeys([*warnings, *target_warnings])),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(file, error["msg"], field=".".join(map(str, error["loc"]))) from None


def _case_list(value: Any, path: Path, key: str, warnings: list[str]) -> tuple[list[Any], list[Path | None]]:
    """`tests` as a list, or a path to a YAML list or a JSONL file (relative to the file);
    a `file://PATH` item of the list is the tests of that file (a glob with `*` / `?`:
    of each file it matches, in order), as AgentV 4.42.4's expandFileReferences. With
    each test, the file it is written in (None: the eval file)."""
    if isinstance(value, str):
        source = (path.parent / value).resolve()
        found = _external_tests(source, str(path), key)
        if not found:
            raise InputError(str(path), f"expected a non-empty list of tests in {source}", field=key)
        return found, [source] * len(found)
    if not isinstance(value, list) or not value:
        raise InputError(str(path), f"expected a non-empty list of tests, got {kind(value)}", field=key)
    cases: list[Any] = []
    sources: list[Path | None] = []
    for i, item in enumerate(value):
        if not (isinstance(item, str) and item.startswith(FILE_REF)):
            cases.append(item)
            sources.append(None)
            continue
        written = item.removeprefix(FILE_REF)
        if any(c in written for c in "*?"):
            matches = sorted(p for p in path.parent.glob(written) if p.is_file())
            if not matches:
                warnings.append(f"{path}: {key}[{i}]: {item} matches no file; no tests from it (as AgentV)")
        else:
            matches = [(path.parent / written).resolve()]
        for match in matches:
            found = _external_tests(match.resolve(), str(path), f"{key}[{i}]")
            if not found:
                warnings.append(f"{path}: {key}[{i}]: {match} holds no tests")
            cases += found
            sources += [match.resolve()] * len(found)
    if not cases:
        raise InputError(str(path), "expected a non-empty list of tests", field=key)
    return cases, sources


def _external_tests(source: Path, file: str, field: str) -> list[Any]:
    """The tests of an external file: JSONL (an object a line) or YAML (a list, or a
    mapping holding one under `tests`)."""
    if source.suffix not in (".jsonl", ".yaml", ".yml"):
        raise InputError(file, f"{source.name}: external tests are .yaml, .yml or .jsonl files", field=field)
    if not source.is_file():
        raise InputError(file, f"external tests file {source} not found", field=field)
    if source.suffix == ".jsonl":
        lines = read_text(source).splitlines()
        return [parse_json(line, str(source), line=n) for n, line in enumerate(lines, 1) if line.strip()]
    value = read_yaml(source, core_schema=True)
    if isinstance(value, dict):
        value = next((value[k] for k in CASE_KEYS if k in value), value)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(str(source), f"expected a list of tests, got {kind(value)}")
    return value


def _refuse_scripts(raw: Any, source: Path, entry: str, fmt: AgentvFormat) -> None:
    """A script grader in a test of an external tests file runs a command: refused unless
    the datasets are trusted (engine.datasets.trust)."""
    if not isinstance(raw, dict):
        return
    execution = raw["execution"] if isinstance(raw.get("execution"), dict) else {}
    for owner, prefix in ((raw, ""), (execution, "execution.")):
        for key in ("assert", "assertions", "evaluators"):
            items = owner.get(key)
            for i, item in enumerate(items if isinstance(items, list) else []):
                grader = assertion(item, GraderContext(str(source), entry, f"{prefix}{key}[{i}]", fmt, []))
                if grader is not None and grader.type == "script":
                    raise InputError(
                        str(source),
                        f"script grader '{grader.name}' in an external tests file runs a command; {TRUST_HINT}",
                        entry=entry,
                        field=f"{prefix}{key}[{i}]",
                    )


def _entry(key: str, index: int, raw: Any) -> str:
    test_id = raw.get("id") if isinstance(raw, dict) else None
    return f"{key}[{index}] (id '{test_id}')" if test_id else f"{key}[{index}]"


def _case(
    raw: Any,
    index: int,
    entry: str,
    fmt: AgentvFormat,
    template: str,
    shared: list[Assertion],
    path: Path,
    warnings: list[str],
    suite_files: Any = None,
) -> AgentvCase:
    file = str(path)
    if not isinstance(raw, dict):
        raise InputError(file, f"expected a test mapping, got {kind(raw)}", entry=entry)
    test_id = raw.get("id")
    if not isinstance(test_id, (str, int)) or str(test_id) == "":
        raise InputError(
            file, "every test needs an `id` (it routes batch output and names the episode)", entry=entry, field="id"
        )
    for field in ("vars", "metadata"):
        if raw.get(field) is not None and not isinstance(raw[field], dict):
            raise InputError(file, f"expected a mapping, got {kind(raw[field])}", entry=entry, field=field)
    if fmt == "v4":
        raw = agentv_vars.filled(raw)
    variables = dict(raw.get("vars") or {})
    written_input = raw.get("input", raw.get("input_messages"))
    source_input = variables.get("input", written_input) if fmt == "seed" else written_input
    if fmt == "v4" and "input" in raw:
        source_input = file_shorthand(raw, None if execution_skips(raw) else suite_files)
    if source_input is None:
        raise InputError(
            file,
            "the test has no input (`vars.input`, `input` or `input_messages`)",
            entry=entry,
            field="vars.input" if fmt == "seed" else "input",
        )
    expected = variables.get("expected_output", raw.get("expected_output", raw.get("expected_messages")))
    execution: dict[str, Any] = raw["execution"] if isinstance(raw.get("execution"), dict) else {}
    graders = [
        *_graders(raw, file, entry, fmt, warnings),
        *_graders(execution, file, f"{entry} execution", fmt, warnings),
    ]
    graders = _unique_names([*graders, *([] if execution_skips(raw) else shared)])
    if fmt == "seed":  # issue 15: required unless said otherwise; 4.x: not required
        graders = [g if g.options["required_given"] else g.model_copy(update={"required": True}) for g in graders]
    criteria = str(raw.get("criteria") or raw.get("expected_outcome") or "")
    if fmt == "v4" and not graders and criteria.strip():  # as AgentV 4.42: the judge grades the criteria
        graders = [
            Assertion(
                name="llm-grader",
                type="llm-rubric",
                options={"written_type": "llm-grader", "required_given": False, GRADING_KEY: "", IMPLICIT_KEY: True},
            )
        ]
    if graders and not any(g.weight > 0 for g in graders):
        raise InputError(
            file,
            f"every grader of the test weighs 0 ({', '.join(g.name for g in graders)}): its score would be 0/0; "
            "give one a weight above 0",
            entry=entry,
            field="assertions",
        )
    for grader in graders:
        if grader.type in LLM_TYPES and not grader.options[GRADING_KEY] and not criteria.strip():
            raise InputError(
                file,
                f"LLM grader '{grader.name}' has no rubric text and the test no `criteria` to grade against",
                entry=entry,
                field="criteria",
            )
    input_messages = messages(source_input, "user", file, entry, "input")
    expected_messages = messages(expected, "assistant", file, entry, "expected_output") if expected is not None else []
    input_files = [str(f) for f in raw.get("input_files") or []]
    if fmt == "v4":  # as AgentV 4.42.4: file parts read, the prompt built from the parts
        roots = search_roots(path)
        input_messages, input_files = resolve_files(input_messages, roots, f"{file}: {entry}, input", warnings)
        expected_messages, _ = resolve_files(expected_messages, roots, f"{file}: {entry}, expected_output", warnings)
        prompt = prompt_text(input_messages, "agent")
    else:
        prompt = render(template, {"input": source_input, **variables})
    threshold = execution.get("threshold", raw.get("threshold"))
    try:
        return AgentvCase(
            id=str(test_id),
            prompt=prompt,
            input=input_messages,
            expected_output=expected_messages,
            criteria=criteria,
            assertions=graders,
            threshold=None if threshold is None else _number(threshold, file, "execution.threshold", entry),
            vars=variables,
            metadata=dict(raw.get("metadata") or {}),
            input_files=input_files,
            format=fmt,
            eval_file=path,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"] if p != "[key]")
        raise InputError(file, error["msg"], entry=entry, field=field or None) from None


def execution_skips(raw: Mapping[str, Any]) -> bool:
    """`execution.skip_defaults: true`: the file-level graders and `input_files` are left out."""
    execution = raw.get("execution")
    return isinstance(execution, dict) and execution.get("skip_defaults") is True


def messages(value: Any, role: str, file: str, entry: str, field: str) -> list[Message]:
    """A string or mapping is one message of `role`; a list holds role/content messages
    (a bare string item is a message of `role`)."""
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            if isinstance(item, dict) and "role" in item:
                out.append(Message(role=str(item["role"]), content=item.get("content")))
            elif isinstance(item, (str, dict)):
                out.append(Message(role=role, content=item))
            else:
                raise InputError(
                    file, f"expected a role/content message, got {kind(item)}", entry=entry, field=f"{field}[{i}]"
                )
        return out
    return [Message(role=role, content=value)]


def content_text(content: Any) -> str:
    """Text content as it is; structured content as compact JSON."""
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def messages_text(items: list[Message]) -> str:
    """One message: its content; several: each as `@[Role]:` and its content, blank-line separated."""
    if len(items) == 1:
        return content_text(items[0].content)
    return "\n\n".join(f"@[{m.role.capitalize()}]:\n{content_text(m.content)}" for m in items)


def render(template: str, variables: Mapping[str, Any]) -> str:
    """`{{ name }}` (dotted paths into mappings too) replaced by the variable: text as it is,
    role/content messages as `messages_text`, anything else as JSON; unknown names stay."""

    def value(match: re.Match[str]) -> str:
        current: Any = variables
        for part in match.group(1).split("."):
            if not isinstance(current, Mapping) or part not in current:
                return match.group(0)
            current = current[part]
        if isinstance(current, list) and current and all(isinstance(m, dict) and "role" in m for m in current):
            return messages_text([Message(role=str(m["role"]), content=m.get("content")) for m in current])
        return content_text(current)

    return _PLACEHOLDER.sub(value, template)


def _graders(
    owner: Mapping[str, Any], file: str, entry: str, fmt: AgentvFormat, warnings: list[str]
) -> list[Assertion]:
    found: list[Assertion] = []
    for key in ("assert", "assertions", "evaluators"):
        items = owner.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise InputError(file, f"expected a list of graders, got {kind(items)}", entry=entry, field=key)
        placed = fold_rubric_strings(items) if fmt == "v4" else list(enumerate(items))
        if fmt == "v4":
            warnings += [
                f"{file}: {entry}, {key}[{i}]: {EMPTY}"
                for i, x in enumerate(items)
                if isinstance(x, str) and not x.strip()
            ]
        for i, item in placed:
            grader = assertion(item, GraderContext(file, entry, f"{key}[{i}]", fmt, warnings))
            if grader is not None:
                found.append(grader)
    return found


def assertion(raw: Any, at: GraderContext) -> Assertion | None:
    """One grader: a plain string is an LLM rubric (4.x files fold them first:
    `fold_rubric_strings`); `_` and `-` in types are the same; `not-X` is X negated.
    None: left out (a deprecated 4.x type, or engine.datasets.agentv_graders)."""
    file, entry, field = at.file, at.entry, at.field
    if isinstance(raw, str):
        raw = {"type": "llm-rubric", "value": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise InputError(
            file, "a grader is a mapping with a `type` (or a plain rubric string)", entry=entry, field=field
        )
    written = raw["type"].strip().lower().replace("_", "-")
    if at.fmt == "v4" and written in DEPRECATED_TYPES:
        at.warn(
            f"left out: '{raw['type']}' is deprecated (AgentV 4.42 skips it; use "
            f"'{written.replace('-judge', '-grader')}')"
        )
        return None
    negate = bool(raw.get("negate", False))
    base = written
    if base.startswith("not-"):
        base, negate = base[4:], not negate
    if base.startswith("trajectory:"):
        base = "trajectory"
    normal = TYPE_ALIASES.get(base, base)
    if normal not in RUN_TYPES:
        custom = custom_grader_file(Path(file), str(raw["type"]))
        raise InputError(
            file,
            (
                f"grader type '{raw['type']}' is AgentV's custom grader {custom}, which is not run here: "
                "write it as a `code-grader` whose command prints {score, assertions}"
                if custom
                else f"grader type '{raw['type']}' is not supported; supported: {', '.join(RUN_TYPES)} "
                "(and their 4.x names)"
            ),
            entry=entry,
            field=f"{field}.type",
        )
    required = raw.get("required", None)
    if required is not None and not isinstance(required, (bool, int, float)):
        raise InputError(
            file,
            f"`required` is true, false or a minimum score, got {kind(required)}",
            entry=entry,
            field=f"{field}.required",
        )
    at.name = raw.get("name") if isinstance(raw.get("name"), str) else None
    at.value = raw.get("value")
    given = {
        "written_type": raw["type"],
        "required_given": required is not None,
        **{k: v for k, v in raw.items() if k not in _ASSERTION_FIELDS},
    }
    if normal == "composite":
        options = composite_options(raw, given, at, assertion)
    else:
        options = checked_options(normal, given, at)
    if options is None:
        return None
    try:
        return Assertion(
            name=str(raw.get("name") or written),
            type=normal,
            weight=raw.get("weight", 1.0),
            required=required if required is not None else False,
            min_score=raw.get("min_score"),
            negate=negate,
            value=raw.get("value"),
            options=options,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(file, error["msg"], entry=entry, field=f"{field}.{error['loc'][0]}") from None


def _unique_names(graders: list[Assertion]) -> list[Assertion]:
    """Graders named alike get `-2`, `-3`, ...: each is one row of the score table."""
    counts: dict[str, int] = {}
    out = []
    for grader in graders:
        counts[grader.name] = counts.get(grader.name, 0) + 1
        n = counts[grader.name]
        out.append(grader if n == 1 else grader.model_copy(update={"name": f"{grader.name}-{n}"}))
    return out


def _number(value: Any, file: str, field: str, entry: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(file, f"expected a number from 0 to 1, got {value!r}", entry=entry, field=field)
    return float(value)


def _trials(execution: Mapping[str, Any], file: str) -> int:
    trials = execution.get("trials", 1)
    if isinstance(trials, dict):
        trials = trials.get("count", 1)
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= MAX_K:
        raise InputError(
            file, f"expected a whole number of attempts from 1 to {MAX_K}, got {trials!r}", field="execution.trials"
        )
    return trials
