"""`uv run .` runs this file (uv runs `python .` for a folder)."""

from weather_agent import main

main()
