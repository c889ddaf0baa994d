"""The blueprint's concierge: hands every message to the weather agent over A2A with
bat-adk's CallAgentNode and relays the answer, including an input-required question.

The weather agent is found by name in config.yaml's `remote-agents` (its URL lives
there). The message carries the concierge's context id, so the weather agent keeps the
conversation's history, and the W3C trace context, so its spans join this trace.
"""

from typing import Optional, Self

from bat.agent import (
    AgentApplication,
    AgentConfig,
    AgentGraph,
    AgentState,
    AgentTaskResult,
    AgentTaskStatus,
)
from bat.prebuilt import CallAgentNode
from langgraph.graph import END, START

WEATHER_AGENT = "WeatherAgent"  # a `remote-agents` name in config.yaml


class ConciergeState(AgentState):
    query: str = ""
    answer: str = ""
    status: Optional[AgentTaskStatus] = None
    weather_needs_input: bool = False
    weather_status: Optional[AgentTaskStatus] = None
    weather_content: Optional[str] = None
    relayed: bool = False

    @classmethod
    def from_query(cls, query: str) -> Self:
        return cls(query=query)

    def to_task_result(self) -> AgentTaskResult:
        if not self.relayed:
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_WORKING,
                content="Asking the weather agent...",
            )
        if self.weather_status == AgentTaskStatus.AGENT_TASK_STATUS_INPUT_REQUIRED:
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_INPUT_REQUIRED,
                content=self.answer,
            )
        if self.weather_status == AgentTaskStatus.AGENT_TASK_STATUS_COMPLETED:
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_COMPLETED,
                content=self.answer,
            )
        return AgentTaskResult(
            task_status=AgentTaskStatus.AGENT_TASK_STATUS_FAILED,
            content=self.weather_content or "The weather agent gave no answer.",
        )


def _relayed(state: ConciergeState) -> ConciergeState:
    state.relayed = True
    return state


class ConciergeAgentGraph(AgentGraph):
    def setup(self, config: AgentConfig) -> None:
        ask_weather = CallAgentNode(
            config=config,
            StateType=ConciergeState,
            loop_name="ask_weather",
            agent_name=WEATHER_AGENT,
            build_message=AgentGraph.build_message,
            input_key="query",
            output_key="answer",
            status_key="status",
            agent_input_required_key="weather_needs_input",
            agent_response_status_key="weather_status",
            agent_response_content_key="weather_content",
        )
        self.graph_builder.add_node("ask_weather", ask_weather.as_runnable())
        self.graph_builder.add_node("relay", _relayed)
        self.graph_builder.add_edge(START, "ask_weather")
        self.graph_builder.add_edge("ask_weather", "relay")
        self.graph_builder.add_edge("relay", END)


def main() -> None:
    AgentApplication(
        AgentGraphType=ConciergeAgentGraph, AgentStateType=ConciergeState
    ).run()
