# AgentV's own example files (README.md): their Python files and tests are data here.
collect_ignore = ["v4", "v2"]
