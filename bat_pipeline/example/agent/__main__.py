"""`python -m bat_pipeline.example.agent [--role weather|forecaster] [--port N]`."""

import argparse
import sys

# a2a-sdk imports its optional SQL task stores whenever sqlalchemy is installed (dagster brings
# it), about a second per process start; this agent keeps tasks in memory, so hide it.
sys.modules.setdefault("sqlalchemy", None)  # type: ignore[arg-type]

from bat_pipeline.example.agent.config import load_config  # noqa: E402 - after hiding sqlalchemy


def main() -> None:
    parser = argparse.ArgumentParser(description="Example A2A weather agent.")
    parser.add_argument("--role", choices=["weather", "forecaster"], default="weather")
    parser.add_argument("--port", type=int, help="forecaster only: the port to serve on")
    args = parser.parse_args()
    config = load_config()
    if args.role == "forecaster":
        if not args.port:
            parser.error("--role forecaster needs --port")
        from bat_pipeline.example.agent.server import run_forecaster

        run_forecaster(config, args.port)
    else:
        from bat_pipeline.example.agent.server import run_weather_agent

        run_weather_agent(config)


if __name__ == "__main__":
    main()
