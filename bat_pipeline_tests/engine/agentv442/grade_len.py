"""A 4.x code grader: score = share of the words of the expected answer found."""

import json
import sys

data = json.load(sys.stdin)
if "fail-hard" in (data.get("criteria") or ""):
    print("grader refuses", file=sys.stderr)
    sys.exit(2)
expected = data.get("expected_output") or []
want = " ".join(str(m.get("content", "")) for m in expected if isinstance(m, dict)).split()
got = data.get("output") or ""
found = [w for w in want if w in got]
print(
    json.dumps(
        {
            "score": len(found) / len(want) if want else 0.0,
            "assertions": [{"text": w, "passed": w in got} for w in want],
        }
    )
)
