"""The trajectory of one conversation, rebuilt from the span index (SPEC §5).

- `partition`: every episode of a partition given its trajectory, once the span files
  are quiet;
- `build`: a conversation's turns and steps, and the tool calls among them;
- `plan`: one pass over a trace: parent links, graph nodes, which spans are steps;
- `steps`: a planned span into a step, nested under the call it ran in;
- `attributes`: what instrumentations put in span attributes, read.

Each trace is analysed once and the result cached on the index, so building every
trajectory of a run costs one pass over the spans in total.
"""

from bat_pipeline.engine.trajectories.build import build_trajectory, recorded_tool_calls
from bat_pipeline.engine.trajectories.partition import RebuiltTrajectories, rebuild_trajectories

__all__ = ["RebuiltTrajectories", "build_trajectory", "rebuild_trajectories", "recorded_tool_calls"]
