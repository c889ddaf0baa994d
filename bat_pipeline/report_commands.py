"""`bat-pipeline report` and `bat-pipeline evaluate` (SPEC §11–§13).

`report [RUN]` renders the report of a past run (resources.reports); without `--output`
it prints the Markdown. `evaluate RESULTS` scores a results file someone brings with a
weighted rubric and no agent, as agentic-v2-eval 0.3.0's `evaluate` does: the records are
a JSON list, `{"results": [...]}`, or one object (its CLI tests' files, the runtime's run
files); the rubric is read as agentic-v2-eval's (yaml_rubrics.load); it prints `Result i:
0.8300` per record and `Average Score: 0.8300`, and `--output` writes `{rubric, results}`
with `rubric` the path as given or `<builtin:NAME>`. Exit codes as agentic-v2-eval's: 1
when the input cannot be loaded, 2 when the mean is below `--fail-under` (the other way
round from every other command here, so that scripts written for it keep working).
`report FILE.json` is agentic-v2-eval's `report` of a results file
(engine.reports.results_file)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts import Episode, EpisodeTrace, Expected, JudgeSettings, Task
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.yaml_rubrics import Rubric, load_rubric, score

LOAD_ERROR, BELOW = 1, 2
INPUT_KEYS = ("input", "prompt", "question", "query")
OUTPUT_KEYS = ("output", "response", "completion", "answer", "final_output")
EXPECTED_KEYS = ("expected", "expected_output", "reference", "ground_truth", "expected_outcome")


def report_command(root: Path, run: str | None, fmt: str, output: str | None, agent: str | None) -> int:
    """Write (or print, as Markdown by default) the report of RUN; 2 when RUN is unknown.
    A RUN that is a `.json` file is a results file, reported as agentic-v2-eval reports one
    (engine.reports.results_file)."""
    from bat_pipeline.resources.reports import make_report, render

    if run is not None and run.endswith(".json") and Path(run).is_file():
        from bat_pipeline.engine.reports.results_file import render_results

        try:
            records = _records(Path(run))
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        text = render_results(records, fmt or "markdown", f"Results of {Path(run).name}")
        if output is not None:
            _write(Path(output), text)
            print(f"Report generated: {output}")
            return 0
    else:
        text = render(make_report(root, run, agent_id=agent), fmt or "markdown")
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    _write(Path(output), text)
    print(f"wrote {output}")
    return 0


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _records(path: Path) -> list[dict[str, Any]]:
    """The records of a results file, as agentic-v2-eval reads them: the list under
    `results`, a list, or the one object the file holds (a runtime run file: `run_id`,
    `steps`, ... scores as one record). InputError naming the file when it cannot be read,
    is not JSON, lists something other than objects (agentic-v2-eval skips those
    silently; we refuse, naming the entry), or holds no record."""
    from bat_pipeline.engine.config.files import read_json

    data = read_json(path, missing="results file not found")
    if isinstance(data, dict) and "results" in data:
        data = data["results"]
        if not isinstance(data, list):
            raise InputError(str(path), "`results` must be a list of result objects", field="results")
    elif not isinstance(data, list):
        data = [data]
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise InputError(
                str(path),
                f"expected a result object, found {type(record).__name__} (a JSON list of objects, "
                '{"results": [...]}, or one object)',
                entry=str(index),
            )
    if not data:  # scored, it would read as a mean of 0 and fail --fail-under for that
        raise InputError(str(path), "the results file has no records")
    return data


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> str:
    value = next((record[k] for k in keys if record.get(k) is not None), "")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


async def _judged(records: list[dict[str, Any]], rubric: Rubric, settings: JudgeSettings) -> list[dict[str, Any]]:
    """Each record with the judge's values for the rubric's criteria (on their own scales)."""
    from bat_pipeline.engine.llm_judges.rubric_rows import ask_by_choice, raw_values
    from bat_pipeline.engine.llm_judges.view import episode_view
    from bat_pipeline.resources.judge import JudgeClient

    client = JudgeClient(settings)
    async with client.opened():

        async def one(record: dict[str, Any]) -> dict[str, Any]:
            task = Task(
                id="result",
                turns=[_pick(record, INPUT_KEYS) or "(no input given)"],
                expected=Expected(expected_outcome=_pick(record, EXPECTED_KEYS)),
            )
            episode = Episode(
                model_name="results", task_id="result", final_output=_pick(record, OUTPUT_KEYS), trace=EpisodeTrace()
            )
            rows = await ask_by_choice(
                "rubric", rubric, episode_view(task, episode, settings, steps=False), client, prefix="", summary=None
            )
            return {**record, **raw_values(rows, rubric, "")}

        return list(await asyncio.gather(*(one(r) for r in records)))


def evaluate_command(
    results: str,
    rubric_spec: str,
    output: str | None,
    fail_under: float | None,
    judge: str | None,
    judge_base_url: str | None,
) -> int:
    """Score RESULTS with the rubric (module docstring): each record's weighted score, then
    the Average Score, as agentic-v2-eval prints them."""
    try:
        records = _records(Path(results))
        rubric = load_rubric(rubric_spec, Path.cwd(), agentic=True)
    except (OSError, ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return LOAD_ERROR
    if judge is not None:
        provider, _, model = judge.partition(":")
        try:
            settings = JudgeSettings(provider=provider, model=model, base_url=judge_base_url)
            records = asyncio.run(_judged(records, rubric, settings))
        except ValueError as exc:
            print(f"error: the judge cannot run: {exc}", file=sys.stderr)
            return LOAD_ERROR
    scored = []
    for index, record in enumerate(records):
        result = score(rubric, record)
        if len(result.missing_criteria) == len(rubric.criteria):
            print(
                f"warning: {results}: record {index} has none of the rubric's criteria "
                f"({', '.join(result.missing_criteria)}): it scores 0",
                file=sys.stderr,
            )
        scored.append(result.record(index))
        print(f"Result {index}: {result.weighted_score:.4f}")
    mean = sum(r["weighted_score"] for r in scored) / len(scored) if scored else 0.0
    if scored:
        print(f"\nAverage Score: {mean:.4f}")
    else:
        print(f"warning: {results} holds no result", file=sys.stderr)
    if output is not None:
        source = (
            f"<builtin:{rubric.source.removeprefix('builtin:')}>"
            if rubric.source.startswith("builtin:")
            else rubric_spec
        )
        _write(Path(output), json.dumps({"rubric": source, "results": scored}, indent=2))
        print(f"\nScored results written to: {output}")
    if fail_under is not None and mean < fail_under:
        print(f"below --fail-under {fail_under:g}: average {mean:.4f}", file=sys.stderr)
        return BELOW
    return 0
