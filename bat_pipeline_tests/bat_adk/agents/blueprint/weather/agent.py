"""The blueprint's weather agent: a bat-adk ReAct loop over one tool, get_weather.

Answers "NEED_INPUT: <question>" become the A2A state input-required; the conversation's
messages are kept between turns (config.yaml: `checkpoints: true`).
"""

from typing import List, Optional, Self

from bat.agent import (
    AgentApplication,
    AgentConfig,
    AgentGraph,
    AgentState,
    AgentTaskResult,
    AgentTaskStatus,
)
from bat.chat_model_client import ChatModelClient
from bat.prebuilt import ReActLoop
from langchain_core.messages import AnyMessage
from langchain_core.tools import tool
from langgraph.graph import END, START

ASK_PREFIX = "NEED_INPUT:"

INSTRUCTIONS = (
    "You answer questions about the current weather. Always call the get_weather tool "
    "for the city the user names and answer from its result. When no city is named, "
    "reply exactly 'NEED_INPUT: Which city would you like the weather for?'. Use what "
    "the user said earlier in the conversation."
)

CONDITIONS = {"paris": "sunny, 22°C", "berlin": "cloudy, 15°C", "london": "rain, 12°C"}


@tool
def get_weather(city: str) -> str:
    """Current weather of the given city, as text such as "cloudy, 15°C"."""
    return CONDITIONS.get(city.strip().lower(), f"no weather data for {city}")


class ForecastState(AgentState):
    query: str = ""
    response: Optional[str] = None
    messages: List[AnyMessage] = []

    @classmethod
    def from_query(cls, query: str) -> Self:
        return cls(query=query)

    def update_after_checkpoint_restore(self, query: str) -> None:
        self.query = query
        self.response = None

    def to_task_result(self) -> AgentTaskResult:
        if self.response is None:
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_WORKING,
                content="Looking it up...",
            )
        reply = self.response.strip()
        if reply.startswith(ASK_PREFIX):
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_INPUT_REQUIRED,
                content=reply.removeprefix(ASK_PREFIX).strip(),
            )
        return AgentTaskResult(
            task_status=AgentTaskStatus.AGENT_TASK_STATUS_COMPLETED,
            content=reply,
        )


class WeatherAgentGraph(AgentGraph):
    def setup(self, config: AgentConfig) -> None:
        model = ChatModelClient(system_instructions=INSTRUCTIONS, tools=[get_weather])
        react = ReActLoop(
            config=config,
            StateType=ForecastState,
            loop_name="react",
            chat_model_client=model,
            input_key="query",
            output_key="response",
            messages_key="messages",
        )
        self.graph_builder.add_node("react", react.as_runnable())
        self.graph_builder.add_edge(START, "react")
        self.graph_builder.add_edge("react", END)


def main() -> None:
    AgentApplication(AgentGraphType=WeatherAgentGraph, AgentStateType=ForecastState).run()
