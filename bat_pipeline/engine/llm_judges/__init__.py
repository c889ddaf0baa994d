"""The agentic-v2-eval judge kinds (SPEC §11–§12), pure: prompts, answer parsing, the
rubrics their scores are summed up with. The scorers that ask them are in engine.scorers
(`rubric`, `choice`, `quality`, `standard`, `pattern`)."""
