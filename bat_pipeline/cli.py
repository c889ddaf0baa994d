"""The `bat-pipeline` command tree: parsing only; each command calls one function."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bat_pipeline.engine.errors import InputError

PROGRAM = "bat-pipeline"
"""The command's name (pyproject.toml's console script)."""
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

    overrides = Overrides(providers_file=Path(args.providers).resolve() if args.providers else None,
                          threshold=args.threshold, output_dir=Path(args.output).resolve() if args.output else None)
    return run_evaluation(_agent(args.agent), models=args.model, resume=args.resume, timings=args.timings,
                          overrides=overrides, executor=args.executor, address=args.address)


def cmd_demo(args) -> int:
    from bat_pipeline.locations import BUNDLED_AGENT_DIR
    from bat_pipeline.runner import run_evaluation

    return run_evaluation(BUNDLED_AGENT_DIR, models=args.model)


def cmd_ui(args) -> int:
    from bat_pipeline.locations import agent_dir_from_env
    from bat_pipeline.ui import serve_ui

    return serve_ui(_agent(args.agent) if args.agent else agent_dir_from_env(), port=args.port)


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

    p = sub.add_parser("run", help="evaluate the agent on its models, or an AgentV eval file on its targets "
                                   "(all by default, in parallel)")
    p.add_argument("agent", nargs="?", help="agent folder or AgentV eval file (default: the current folder)")
    p.add_argument("--model", "--target", action="append",
                   help="a model key or provider:model, or an AgentV target (repeatable)")
    p.add_argument("--providers", metavar="FILE", help="AgentV target definitions (agentv-providers.yaml shape)")
    p.add_argument("--threshold", type=_unit, help="AgentV pass threshold (default: the file's, else 0.8); "
                                                   "a failed test then makes the exit status 1")
    p.add_argument("--output", metavar="DIR", help="result files under DIR/<run id>/ (replaces "
                                                  "evaluation.output_dir)")
    p.add_argument("--resume", action="store_true",
                   help="re-run only the missing or eval-error episodes of the last run")
    p.add_argument("--timings", action="store_true",
                   help="print the seconds each phase of the run took, per model")
    p.add_argument("--executor", choices=EXECUTORS,
                   help="where the steps run (default: eval.yaml's execution.executor, else in_process)")
    p.add_argument("--address", metavar="tcp://HOST:PORT",
                   help="the Dask scheduler to run the steps on (implies --executor dask; without it, "
                        "dask starts a local cluster)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="the bundled example agent with scripted models, all partitions")
    p.add_argument("--model", action="append")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("ui", help="the Dagster UI on an agent (default: $BAT_AGENT_DIR, else the current "
                                  "folder when it holds eval/eval.yaml, else the bundled example)")
    p.add_argument("agent", nargs="?")
    p.add_argument("--port", type=int, default=3000)
    p.set_defaults(func=cmd_ui)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
