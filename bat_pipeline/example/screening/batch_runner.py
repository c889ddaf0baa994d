"""A batch screening engine for the AgentV example: reads the eval file, decides every
test's row at once, writes one JSONL record per test id.

    python3 batch_runner.py --eval screening.yaml --output out.jsonl
    python3 batch_runner.py --healthcheck

The rule: amounts of 10,000 or more go to REVIEW, the rest are CLEAR. Knobs for tests:
SCREENING_SKIP (comma-separated ids left out of the output), SCREENING_UNHEALTHY (the
healthcheck fails).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import yaml  # PyYAML: installed with bat_pipeline

REVIEW_FROM = 10_000


def row_of(test: dict) -> dict:
    """The `row` of the test's structured user message."""
    for message in test["vars"]["input"]:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, dict):
            return content.get("row", {})
    return {}


def screen(row: dict) -> dict:
    """One tool call to the screening check, and the decision it gives."""
    amount = row.get("amount", 0)
    decision = "REVIEW" if amount >= REVIEW_FROM else "CLEAR"
    reasons = [f"amount {amount} >= {REVIEW_FROM}"] if decision == "REVIEW" else []
    call = {"tool": "screening_check", "input": {"amount": amount}, "output": {"decision": decision}}
    return {"decision": decision, "reasons": reasons, "call": call}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval")
    parser.add_argument("--output")
    parser.add_argument("--healthcheck", action="store_true")
    args = parser.parse_args()
    if args.healthcheck:
        if os.environ.get("SCREENING_UNHEALTHY"):
            print("batch-runner: screening list unavailable", file=sys.stderr)
            return 3
        print("batch-runner: healthy")
        return 0
    with open(args.eval, encoding="utf-8") as handle:
        tests = yaml.safe_load(handle)["tests"]
    skip = set(filter(None, os.environ.get("SCREENING_SKIP", "").split(",")))
    with open(args.output, "w", encoding="utf-8") as out:
        for test in tests:
            if test["id"] in skip:
                continue
            result = screen(row_of(test))
            answer = {"id": test["id"], "decision": result["decision"], "reasons": result["reasons"]}
            record = {
                "id": test["id"],
                "text": json.dumps(answer),
                "output": [
                    {"role": "assistant", "tool_calls": [result["call"]]},
                    {"role": "assistant", "content": {"decision": result["decision"]}},
                ],
            }
            out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
