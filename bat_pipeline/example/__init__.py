"""An offline demo: a scripted model server and a real A2A example agent that uses it.

- `scripted_llm`: OpenAI/Anthropic/Ollama-compatible HTTP server whose answers are scripted
  per model name (personas `competent`, `sloppy`, `judge`).
- `agent`: an A2A weather agent (tool loop over HTTP, OpenTelemetry spans, a Forecaster
  sub-agent) laid out like a standalone BAT agent in `weather_agent/`.
"""
