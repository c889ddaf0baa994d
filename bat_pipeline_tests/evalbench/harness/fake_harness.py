"""A stand-in for an agent CLI under EvalBench: prints, for scenario EVAL_ID and turn TURN,
the envelope EvalBench's generators hand its scorers (transcripts.json beside it), as the
harness's stdout. Usage: fake_harness.py EVAL_ID TURN PROMPT"""

import json
import sys
from pathlib import Path

eval_id, turn, prompt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
turns = json.loads((Path(__file__).parent / "transcripts.json").read_text())[eval_id]
envelope = turns[min(turn, len(turns)) - 1]
print(json.dumps(envelope))
