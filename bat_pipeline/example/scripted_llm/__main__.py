"""`python -m bat_pipeline.example.scripted_llm --port 0`: serve on 127.0.0.1 until killed."""

import argparse

from bat_pipeline.example.scripted_llm.server import run_forever


def main() -> None:
    parser = argparse.ArgumentParser(description="Scripted model server (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    run_forever(parser.parse_args().port)


if __name__ == "__main__":
    main()
