"""The scripted judge of the corpus's judged case (judge/answers.json), for the judge server
of bat_pipeline_tests.support.judge_server: it answers a question about one criterion with
that criterion's scripted text (the only criterion name the request holds), and every
question about the empty answer (`No idea.`) with `1`. Used by scripts/record-agentic-corpus
(agentic-v2-eval's LLMEvaluator asks it) and by test_corpus.py (our `evaluate --judge` asks
it), so both judges hear the same answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bat_pipeline_tests.support.judge_server import Reply

ANSWERS = json.loads((Path(__file__).resolve().parent / "judge" / "answers.json").read_text(encoding="utf-8"))


def reply(record: dict[str, Any]) -> Reply:
    asked = json.dumps(record["body"], ensure_ascii=False)
    if ANSWERS["empty_answer"]["marker"] in asked:
        return Reply(content=ANSWERS["empty_answer"]["answer"])
    named = [name for name in ANSWERS["criteria"] if name in asked]
    return Reply(content=ANSWERS["criteria"][named[0]] if len(named) == 1 else ANSWERS["unknown"])
