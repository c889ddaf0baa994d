"""A code-grader aggregator (our own): reads {"results": {name: {score, verdict, ...}}} and
scores the `quality` member's score when `safety` passes, else 0; logs what it read to
stderr only on failure. Exits 3 when told to by a member named `crash`."""

import json
import sys

results = json.load(sys.stdin)["results"]
if "crash" in results:
    print("aggregator crashed", file=sys.stderr)
    sys.exit(3)
safe = results["safety"]["verdict"] == "pass" and results["safety"]["expectedAspectCount"] >= 1
score = results["quality"]["score"] if safe else 0
print(
    json.dumps(
        {
            "score": score,
            "verdict": "pass" if score >= 0.5 else "fail",
            "assertions": [{"text": f"safe: {safe}", "passed": safe}],
        }
    )
)
