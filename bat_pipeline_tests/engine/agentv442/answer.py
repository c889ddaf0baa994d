"""The target of the AgentV 4.42 comparison: a fixed answer per question."""

import sys

ANSWERS = {
    "capital": "Paris is the capital of France.",
    "json": '{"decision": "CLEAR", "score": 3}',
    "greet": "Hello there, friend",
    "invoice": 'Extracted:\n```json\n{"invoice_number": "INV-001", "total": 102.5, "tax": "20.4 EUR", '
    '"date": "15-JAN-2025", "due": "03/04/2025", "issued": "2025-01-15T23:30:00-05:00", '
    '"vendor": {"name": "Acme", "tags": ["a", "b"]}, "paid": 1, "items": [{"sku": "X1", "qty": 2}], '
    '"note": null}\n```',
}

prompt = open(sys.argv[1], encoding="utf-8").read()
answer = next((text for key, text in ANSWERS.items() if key in prompt), "I do not know.")
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.write(answer)
