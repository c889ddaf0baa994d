"""The `bat-pipeline` command tree: parsing only; each command calls one function."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bat_pipeline import PROGRAM
from bat_pipeline.engine.errors import InputError
from bat_pipeline.remote_root import StoreError

EXIT_CONFIG = 2


def _agent(arg: str | None) -> Path:
    from bat_pipeline.engine.config.project import resolve_project

    return resolve_project(arg, Path.cwd())


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
    )
    return run_evaluation(
        _agent(args.agent),
        models=args.model,
        resume=args.resume,
        timings=args.timings,
        overrides=overrides,
        executor=args.executor,
        address=args.address,
    )


def cmd_demo(args) -> int:
    from bat_pipeline.locations import BUNDLED_AGENT_DIR
    from bat_pipeline.runner import run_evaluation

    return run_evaluation(BUNDLED_AGENT_DIR, models=args.model)


def cmd_export(args) -> int:
    from bat_pipeline.engine.config.project import load_project
    from bat_pipeline.resources.evalbench_export import export_run
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.storage import default_root, warehouse_path

    agent_id = load_project(_agent(args.agent)).agent_id if args.agent else None
    return export_run(
        Warehouse(warehouse_path(default_root())),
        args.run,
        agent_id=agent_id,
        csv_dir=Path(args.csv).resolve() if args.csv else None,
        parquet_dir=Path(args.parquet).resolve() if args.parquet else None,
    )


def cmd_ui(args) -> int:
    from bat_pipeline.locations import agent_dir_from_env
    from bat_pipeline.ui import serve_ui

    return serve_ui(_agent(args.agent) if args.agent else agent_dir_from_env(), port=args.port)


def cmd_report(args) -> int:
    from bat_pipeline.report_commands import report_command
    from bat_pipeline.storage import default_root

    return report_command(default_root(), args.run, args.format, args.output, args.agent)


def cmd_compare(args) -> int:
    from bat_pipeline.compare_command import compare_command
    from bat_pipeline.engine.config.project import load_project
    from bat_pipeline.resources.warehouse import Warehouse
    from bat_pipeline.storage import default_root, warehouse_path

    agent_id = load_project(_agent(args.agent)).agent_id if args.agent else None
    return compare_command(
        Warehouse(warehouse_path(default_root())),
        args.base,
        args.candidate,
        agent_id=agent_id,
        fmt=args.format,
        confidence=args.confidence,
        allow_dataset_change=args.allow_dataset_change,
    )


def _confidence(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def cmd_evaluate(args) -> int:
    from bat_pipeline.report_commands import evaluate_command

    return evaluate_command(args.results, args.rubric, args.output, args.fail_under, args.judge, args.judge_base_url)


def _unit(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from bat_pipeline.engine.contracts.config import EXECUTORS

    parser = argparse.ArgumentParser(prog=PROGRAM, description="Evaluate A2A agents across models with Dagster.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("init", help="write eval/eval.yaml and eval/input/tasks.json for an agent")
    p.add_argument("agent", nargs="?", help="agent folder (default: the current folder)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("show", help="print the resolved configuration")
    p.add_argument("agent", nargs="?")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "run",
        help="evaluate the agent on its models, or an AgentV eval file on its targets (all by default, in parallel)",
    )
    p.add_argument("agent", nargs="?", help="agent folder or AgentV eval file (default: the current folder)")
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
        help="the tasks: a tasks.json or an EvalBench evalset (replaces evaluation.dataset)",
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
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the bundled example agent with scripted models, all partitions")
    p.add_argument("--model", action="append")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("export", help="write a run's rows from the warehouse: EvalBench's CSV report, Parquet")
    p.add_argument("run", nargs="?", help="a run id or a unique prefix (default: the latest run)")
    p.add_argument("--agent", help="the agent folder or eval file whose runs are meant (default: any agent's)")
    p.add_argument("--csv", metavar="DIR", help="write DIR/<run id>/{configs,evals,scores,summary}.csv")
    p.add_argument("--parquet", metavar="DIR", help="write DIR/<run id>/<table>.parquet (e.g. for BigQuery)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "ui",
        help="the Dagster UI on an agent (default: $BAT_AGENT_DIR, else the current "
        "folder when it holds eval/eval.yaml, else the bundled example)",
    )
    p.add_argument("agent", nargs="?")
    p.add_argument("--port", type=int, default=3000)
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
    p.add_argument("--format", choices=["markdown", "json", "html"], default="markdown")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of printing it")
    p.add_argument("--agent", help="the agent id whose runs count (default: any agent)")
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
    p.add_argument("--agent", help="the agent folder or eval file whose runs are meant (default: any agent's)")
    p.add_argument("--format", choices=["text", "json"], default="text", help="a table (default) or a JSON object")
    p.add_argument("--confidence", type=_confidence, default=0.95, help="the level of the intervals (default: 0.95)")
    p.add_argument(
        "--allow-dataset-change",
        action="store_true",
        help="compare sides whose datasets differ (on the tasks both ran)",
    )
    p.set_defaults(func=cmd_compare)

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
