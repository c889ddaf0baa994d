"""The trajectory of one conversation, rebuilt from the span index (SPEC §5).

- `build`: a conversation's turns and steps, and the tool calls among them;
- `plan`: one pass over a trace: parent links, graph nodes, which spans are steps;
- `steps`: a planned span into a step, nested under the call it ran in;
- `attributes`: what instrumentations put in span attributes, read.

Each trace is analysed once and the result cached on the index, so building every
trajectory of a run costs one pass over the spans in total.
"""

from bat_pipeline.engine.trajectories.build import build_trajectory, recorded_tool_calls

__all__ = ["build_trajectory", "recorded_tool_calls"]
