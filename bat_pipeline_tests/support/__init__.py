"""What the tests share, one module per kind of thing (the fixtures are in conftest.py):

- `paths`: where the repository, the fixtures, the bundled example and the CLI are.
- `polling`: waiting on a condition with a deadline, never a bare sleep.
- `scripted`: the scripted model and judge server as a process (one per session).
- `example_agent`: trimmed copies of the bundled example agent, the environment that
  evaluates them, and the example agent started alone.
- `bat_adk`: the bat-adk test agents: their prepared environment (once per session),
  their configs, `uv run .` as the pipeline runs them, A2A conversations.
- `pipeline_runs`: `bat-pipeline run` as a user runs it, on a copy of a bat-adk agent.
- `dagster_runs`: in-process runs of the `evaluate` job and what they leave.
- `processes`: the process table: what runs for a folder, its sockets, leftovers; starting
  a process the way the tests watch one.
- `forked_cli`: `bat-pipeline` commands forked from a server that imported the pipeline
  once (what `example_agent.run` and `processes.start_logged` do with them); cli/ tests
  and test_bundled_example run the console script itself.
- `spans`: reading span files.
- `files`: fingerprints of files and folders, JSON.
- `judge_server`: a judge whose every answer a test scripts, recording each request (for
  the judge client's protocol tests; the scripted server answers by persona instead).
"""
