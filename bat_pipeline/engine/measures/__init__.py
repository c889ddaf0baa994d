"""Metrics without an LLM (agentic-v2-eval's, SPEC §11): classification (accuracy,
precision/recall/F1 per label, the confusion matrix), performance (time against a
threshold, latency percentiles, throughput) and the static quality of code answers read
from ruff and radon (which resources.code_tools runs). Pure functions."""
