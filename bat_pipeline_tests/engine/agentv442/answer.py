"""The target of the AgentV 4.42 comparison: a fixed answer per question."""

import sys

ANSWERS = {
    "capital": "Paris is the capital of France.",
    "json": '{"decision": "CLEAR", "score": 3}',
    "greet": "Hello there, friend",
}

prompt = open(sys.argv[1], encoding="utf-8").read()
answer = next((text for key, text in ANSWERS.items() if key in prompt), "I do not know.")
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.write(answer)
