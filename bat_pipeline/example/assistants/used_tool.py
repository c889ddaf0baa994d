"""The example's script grader for tool use: passes when the target called TOOL with
ARG=VALUE (`python3 used_tool.py get_weather city=Paris`).

Reads the grader input on stdin: `tool_calls` are the calls the episode's trajectory
holds (an A2A agent's come from its spans); prints {pass, score, reason, checks}.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    tool, wanted = sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:])
    calls = json.load(sys.stdin).get("tool_calls") or []
    named = [c for c in calls if c.get("tool") == tool]
    matching = [c for c in named if all(str((c.get("input") or {}).get(k)) == v for k, v in wanted.items())]
    passed = bool(matching)
    if passed:
        reason = f"called {tool} with {wanted}"
    elif named:
        reason = f"called {tool}, not with {wanted}: {[c.get('input') for c in named]}"
    else:
        reason = f"never called {tool} (calls: {[c.get('tool') for c in calls] or 'none'})"
    print(
        json.dumps(
            {
                "pass": passed,
                "score": 1.0 if passed else 0.0,
                "reason": reason,
                "checks": [{"text": f"{tool} {wanted}", "pass": passed, "reason": reason}],
            }
        )
    )


if __name__ == "__main__":
    main()
