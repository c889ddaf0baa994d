"""The example's script grader: the answer's `decision` against the expected output's.

Reads the grader input on stdin (`output`: the answer text, `expected_output`: messages),
prints {pass, score, reason, checks}.
"""

from __future__ import annotations

import json
import sys


def expected_decision(messages: list) -> str | None:
    for message in messages or []:
        content = message.get("content")
        if isinstance(content, dict) and "decision" in content:
            return content["decision"]
    return None


def main() -> None:
    data = json.load(sys.stdin)
    want = expected_decision(data.get("expected_output"))
    try:
        got = json.loads(data.get("output") or "").get("decision")
    except (json.JSONDecodeError, AttributeError):
        got = None
    passed = want is not None and want == got
    check = {"text": f"decision {got} (expected {want})", "pass": passed, "reason": "matches" if passed else "differs"}
    print(
        json.dumps(
            {
                "pass": passed,
                "score": 1.0 if passed else 0.0,
                "reason": f"decision {'matches' if passed else 'differs'}: expected {want}, got {got}",
                "checks": [check],
            }
        )
    )


if __name__ == "__main__":
    main()
