"""The `bat-pipeline` command tree: parsing only; each command calls one function."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import NoReturn

from bat_pipeline import PROGRAM
from bat_pipeline.engine.errors import InputError
from bat_pipeline.remote_root import StoreError

EXIT_CONFIG = 2


AGENT_HELP = (
    "the agent whose runs are meant: its folder, its eval file, or its id in the history "
    "(default: the agent folder you are in, else any agent's)"
)
"""`--agent` means the same in every command that reads the history."""


def _agent(arg: str | None) -> Path:
    from bat_pipeline.engine.config.project import resolve_project

    return resolve_project(arg, Path.cwd())


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"not a port number (1 to 65535): {text!r}")
    return int(text)


def _history(arg: str | None) -> Path:
    """The storage root the history commands read (storage.history_root): `--agent`'s when
    it names a folder or an eval file; a note on stderr when it is the bundled example's."""
    from bat_pipeline.storage import history_root

    project = _agent(arg) if arg and Path(arg).expanduser().exists() else None
    root, note = history_root(project)
    if note:
        print(note, file=sys.stderr)
    return root


def _agent_id(arg: str | None) -> str | None:
    """`--agent` (AGENT_HELP): an existing folder or eval file is read for its agent id;
    anything else is taken as the id itself. Without it, in an agent folder, that agent."""
    if not arg:
        from bat_pipeline.engine.agent_folder import is_agent_folder

        if not is_agent_folder(Path.cwd()):
            return None
        arg = "."
    if Path(arg).expanduser().exists():
        from bat_pipeline.engine.config.project import load_project

        return load_project(_agent(arg)).agent_id
    return arg


def cmd_init(args) -> int:
    from bat_pipeline.scaffold import init_eval_folder

    agent_dir = Path(args.agent or ".").resolve()
    for path in init_eval_folder(agent_dir, force=args.force):
        print(f"wrote {path}")
    return 0


def cmd_show(args) -> int:
    from bat_pipeline.scaffold import describe

    print(describe(_agent(args.agent)), end="")
    return 0


def cmd_run(args) -> int:
    from bat_pipeline.engine.config.project import Overrides
    from bat_pipeline.runner import run_evaluation

    overrides = Overrides(
        providers_file=Path(args.providers).resolve() if args.providers else None,
        threshold=args.threshold,
        output_dir=Path(args.output).resolve() if args.output else None,
        dataset=Path(args.dataset).resolve() if args.dataset else None,
        trust_datasets=args.trust_datasets,
        export_otlp=args.export_otlp,
        adk_config=Path(args.config).resolve() if args.config else None,
    )
    return run_evaluation(
        _agent(args.agent),
        models=args.model,
        resume=args.resume,
        timings=args.timings,
        overrides=overrides,
        executor=args.executor,
        address=args.address,
        otlp_port=args.otlp_port,
    )


def cmd_demo(args) -> int:
    from bat_pipeline.locations import BUNDLED_AGENT_DIR
    from bat_pipeline.runner import run_evaluation

    return run_evaluation(BUNDLED_AGENT_DIR, models=args.model)


def cmd_export(args) -> int:
    from bat_pipeline.resources.evalbench_export import export_run
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.storage import warehouse_path

    return export_run(
        Warehouse(warehouse_path(_history(args.agent))),
        args.run,
        agent_id=_agent_id(args.agent),
        csv_dir=Path(args.csv).resolve() if args.csv else None,
        parquet_dir=Path(args.parquet).resolve() if args.parquet else None,
    )


def cmd_ui(args) -> int:
    from bat_pipeline.ui import serve_ui

    return serve_ui(_ui_agent(args.agent), port=args.port)


def _ui_agent(arg: str | None) -> Path:
    """The agent `ui` shows: the one named, `$BAT_AGENT_DIR`, the agent folder here, else
    the agent of the newest run in the history (said on the terminal); with none of them,
    refused rather than opening an agent with nothing to show."""
    import os

    from bat_pipeline.engine.agent_folder import is_agent_folder
    from bat_pipeline.locations import AGENT_DIR_VAR, agent_dir_from_env
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.storage import history_root, warehouse_path

    if arg:
        return _agent(arg)
    here = Path.cwd()
    if os.environ.get(AGENT_DIR_VAR) or is_agent_folder(here):
        return agent_dir_from_env() if os.environ.get(AGENT_DIR_VAR) else here.resolve()
    root, _ = history_root()
    newest = [
        Path(r["agent_dir"])
        for r in reversed(Warehouse(warehouse_path(root)).history_runs())
        if r.get("agent_dir") and is_agent_folder(Path(r["agent_dir"]))
    ]
    if not newest:
        raise InputError(
            str(here),
            "nothing to show: no agent folder here and no results yet in "
            f"{root}; run `{PROGRAM} demo` first, or name an agent: `{PROGRAM} ui PATH`",
        )
    print(f"no agent folder here: showing {newest[0]}, whose run is the newest in {root}", file=sys.stderr)
    return newest[0]


def cmd_report(args) -> int:
    from bat_pipeline.report_commands import report_command

    return report_command(_history(args.agent), args.run, args.format, args.output, _agent_id(args.agent))


def cmd_compare(args) -> int:
    from bat_pipeline.compare_command import compare_command
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.storage import warehouse_path

    return compare_command(
        Warehouse(warehouse_path(_history(args.agent))),
        args.base,
        args.candidate,
        agent_id=_agent_id(args.agent),
        fmt=args.format,
        confidence=args.confidence,
        allow_dataset_change=args.allow_dataset_change,
    )


def _confidence(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def cmd_sql(args) -> int:
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.sql_command import sql_command
    from bat_pipeline.storage import warehouse_path

    return sql_command(Warehouse(warehouse_path(_history(None))), args.query, args.format)


def cmd_evaluate(args) -> int:
    from bat_pipeline.report_commands import evaluate_command

    return evaluate_command(args.results, args.rubric, args.output, args.fail_under, args.judge, args.judge_base_url)


def _unit(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text}")
    return value


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a mistyped command, choice or option."""

    def error(self, message: str) -> NoReturn:
        super().error(message + _suggestion(message, self))

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # The option belongs to the command given: its parser says so, with its usage.
            chosen = _subparsers(self).get(getattr(parsed, "command", None) or "", self)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """` (did you mean X?)` for argparse's invalid-choice and unrecognized-arguments errors."""
    if "invalid choice: " in message:
        wrong = message.split("invalid choice: ", 1)[1].split(" (choose from", 1)[0].strip("'\"")
        choices = [c.strip(" '\"") for c in message.split("(choose from", 1)[-1].rstrip(")").split(",")]
    elif message.startswith("unrecognized arguments: "):
        wrong = message.split(": ", 1)[1].split()[0].split("=", 1)[0]
        choices = [o for a in parser._actions for o in a.option_strings]
    else:
        return ""
    close = difflib.get_close_matches(wrong, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PROGRAM} {version('bat_pipeline')}"
    except PackageNotFoundError:
        return f"{PROGRAM} (version unknown: not installed as a package)"


def build_parser() -> argparse.ArgumentParser:
    from bat_pipeline.engine.contracts.config import EXECUTORS

    parser = Parser(prog=PROGRAM, description="Evaluate A2A agents across models with Dagster.")
    parser.add_argument("--version", action="version", version=_version(), help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    p = sub.add_parser("init", help="write eval/eval.yaml and eval/input/tasks.json for an agent")
    p.add_argument("agent", nargs="?", help="agent folder (default: the current folder)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("show", help="print the resolved configuration")
    p.add_argument("agent", nargs="?", help="agent folder or eval file (default: the current folder)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "run",
        help="evaluate the agent on its models, or an AgentV eval file on its targets (all by default, in parallel)",
    )
    p.add_argument(
        "agent", nargs="?", help="agent folder, AgentV eval file or ADK eval file/folder (default: the current folder)"
    )
    p.add_argument(
        "--model", "--target", action="append", help="a model key or provider:model, or an AgentV target (repeatable)"
    )
    p.add_argument("--providers", metavar="FILE", help="AgentV target definitions (agentv-providers.yaml shape)")
    p.add_argument(
        "--threshold",
        type=_unit,
        help="AgentV pass threshold (default: the file's, else 0.8); a failed test then makes the exit status 1",
    )
    p.add_argument("--output", metavar="DIR", help="result files under DIR/<run id>/ (replaces evaluation.output_dir)")
    p.add_argument(
        "--dataset",
        metavar="FILE",
        help="the tasks: a tasks.json, an EvalBench evalset or ADK eval files (replaces evaluation.dataset)",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="an ADK test_config.json for ADK eval files (default: the one beside each file, else ADK's defaults)",
    )
    p.add_argument(
        "--trust-datasets",
        action="store_true",
        help="take what dataset files make the pipeline run: a scenario's variables that load code "
        "(PYTHONSTARTUP, LD_PRELOAD, ...), script graders of an external AgentV tests file (refused by default)",
    )
    p.add_argument(
        "--resume", action="store_true", help="re-run only the missing or eval-error episodes of the last run"
    )
    p.add_argument("--timings", action="store_true", help="print the seconds each phase of the run took, per model")
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        help="where the steps run (default: eval.yaml's execution.executor, else in_process)",
    )
    p.add_argument(
        "--address",
        metavar="tcp://HOST:PORT",
        help="the Dask scheduler to run the steps on (implies --executor dask; without: a local cluster)",
    )
    p.add_argument(
        "--export-otlp",
        metavar="URL",
        help="send every score row to this OTLP/HTTP endpoint as a gen_ai.evaluation.result event "
        "(replaces export.otlp_endpoint)",
    )
    p.add_argument(
        "--otlp-port",
        type=_port,
        metavar="PORT",
        help="keep an OTLP/HTTP receiver on 127.0.0.1:PORT open for the run; agents at agent.url "
        "(their collector) export there and their trajectories are read from what arrives",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the bundled example agent with scripted models, all partitions")
    p.add_argument(
        "--model", action="append", help="only this partition of the example, e.g. openai-competent (repeatable)"
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("export", help="write a run's rows from the warehouse: EvalBench's CSV report, Parquet")
    p.add_argument("run", nargs="?", help="a run id or a unique prefix (default: the latest run)")
    p.add_argument("--agent", help=AGENT_HELP)
    p.add_argument("--csv", metavar="DIR", help="write DIR/<run id>/{configs,evals,scores,summary}.csv")
    p.add_argument("--parquet", metavar="DIR", help="write DIR/<run id>/<table>.parquet (e.g. for BigQuery)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "ui",
        help="the Dagster UI on an agent (default: $BAT_AGENT_DIR, else the agent folder here, "
        "else the agent of the newest run in the history, e.g. the demo's)",
    )
    p.add_argument("agent", nargs="?", help="agent folder or eval file (default: as above)")
    p.add_argument("--port", type=int, default=3000, help="the UI's port on 127.0.0.1 (default: 3000)")
    p.set_defaults(func=cmd_ui)

    p = sub.add_parser(
        "report",
        help="the report of a past run: Markdown (printed without --output), JSON or one self-contained HTML page",
    )
    p.add_argument(
        "run",
        nargs="?",
        help="a run id or a unique prefix of one (default: the latest run), or a "
        "results .json file (agentic-v2-eval's report of it)",
    )
    p.add_argument(
        "--format",
        choices=["markdown", "json", "html"],
        default="markdown",
        help="the report's form (default: markdown)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of printing it")
    p.add_argument("--agent", help=AGENT_HELP)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare",
        help="is the candidate better or worse than the base? two partitions of one agent, paired on "
        "the tasks both ran, with confidence intervals (exit 1 when the candidate is significantly worse)",
        description="Compare two partitions of one agent on the tasks both ran: the per-task pass rates, the "
        "tasks that flipped, the difference in pass rate and in each scorer's mean with its confidence "
        "interval (paired per-task differences), and a verdict: better, worse or no detectable difference. "
        "Exit 0; 1 when the candidate's pass rate is significantly lower; 2 on refused input.",
    )
    for side, what in (("base", "the side compared against"), ("candidate", "the side judged")):
        p.add_argument(
            side,
            help=f"{what}: RUN/PARTITION (a run id or a unique prefix) or PARTITION alone (its newest run)",
        )
    p.add_argument("--agent", help=AGENT_HELP)
    p.add_argument("--format", choices=["text", "json"], default="text", help="a table (default) or a JSON object")
    p.add_argument("--confidence", type=_confidence, default=0.95, help="the level of the intervals (default: 0.95)")
    p.add_argument(
        "--allow-dataset-change",
        action="store_true",
        help="compare sides whose datasets differ (on the tasks both ran)",
    )
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "sql",
        help="query the warehouse read-only and print the rows (a table, CSV or JSON); the warehouse of "
        "$BAT_PIPELINE_HOME, else of the agent folder here, else the bundled example's",
        description="Run one SQL query over the warehouse ($BAT_PIPELINE_HOME/warehouse.duckdb), read-only: "
        "tables runs, tasks, episodes, episode_scores, trajectory_totals, model_metrics, task_metrics and "
        "views latest_model_metrics, model_trend, verdict_checks, judge_scores (docs/formats.md §8). "
        "Exit 0; 2 when DuckDB refuses the query or there is no warehouse yet.",
    )
    p.add_argument("query", help='the query, e.g. "SELECT model_key, pass_rate FROM latest_model_metrics"')
    p.add_argument(
        "--format", choices=["table", "csv", "json"], default="table", help="how rows are printed (default: table)"
    )
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser(
        "evaluate",
        help="score a results file with a weighted rubric, without an agent (agentic-v2-eval's "
        "evaluate: exit 1 when the input cannot be loaded, 2 below --fail-under — the other "
        "way round from the other commands)",
        description='Score each record of RESULTS (a JSON list, {"results": [...]}, or one object such as a '
        "runtime run file) against a rubric, read as agentic-v2-eval reads it: the records' values per "
        "criterion name (0..1 unless the rubric gives a range), or with --judge the judge's; a missing "
        "criterion counts 0. Prints each record's weighted score and the Average Score. Exit codes "
        "follow agentic-v2-eval: 0 done, 1 the results or the rubric could not be "
        "loaded, 2 the mean is below --fail-under (the other way round from the other commands, "
        "where 1 is a quality failure and 2 refused input).",
    )
    p.add_argument("results", help="results JSON file")
    p.add_argument(
        "--rubric",
        default="default",
        help="a built-in rubric (default, agent, code, coding_standards, pattern) or a YAML file (default: default)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write {rubric, results: [...]} here")
    p.add_argument("--fail-under", type=float, metavar="X", help="exit 2 when the mean weighted score is below X")
    p.add_argument(
        "--judge",
        metavar="PROVIDER:MODEL",
        help="ask this judge for the criterion values (its key from the provider's usual variable)",
    )
    p.add_argument("--judge-base-url", metavar="URL", help="the judge's base URL")
    p.set_defaults(func=cmd_evaluate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except StoreError as exc:  # the storage root's object store, unreachable or refusing
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        from bat_pipeline.resources.partition_lock import PartitionBusy

        if not isinstance(exc, PartitionBusy):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
