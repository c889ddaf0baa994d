"""A standalone BAT agent used by bat_pipeline's tests.

A bat-adk ReAct loop over two tools (a fixed weather table and an adder). The model
comes from the environment (MODEL_PROVIDER, MODEL, BASE_URL) over config.yaml. When the
model answers "NEED_INPUT: <question>" the A2A task ends in input-required with the
question; the conversation's messages are kept between turns (config.yaml sets
`checkpoints: true`), so the next message can answer it.
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

NEED_INPUT = "NEED_INPUT:"

SYSTEM_PROMPT = (
    "You are a small weather and arithmetic assistant. For any question about the "
    "weather call the get_weather tool with the city, and to add numbers call the add "
    "tool; base your answer on what the tools return. If the user asks about the "
    "weather without saying which city, answer exactly "
    "'NEED_INPUT: Which city would you like the weather for?'. Keep in mind what the "
    "user said earlier in this conversation."
)

WEATHER = {
    "paris": "sunny, 22°C",
    "berlin": "cloudy, 15°C",
    "london": "rain, 12°C",
}


@tool
def get_weather(city: str) -> str:
    """Look up the current weather of a city; gives a short text like "rain, 12°C"."""
    found = WEATHER.get(city.strip().lower())
    if found is None:
        return f"no weather data for {city}"
    return found


@tool
def add(a: int, b: int) -> int:
    """Return the sum of the integers a and b."""
    return a + b


class WeatherState(AgentState):
    query: str = ""
    response: Optional[str] = None
    messages: List[AnyMessage] = []

    @classmethod
    def from_query(cls, query: str) -> Self:
        return cls(query=query)

    def update_after_checkpoint_restore(self, query: str) -> None:
        # A new turn of the same conversation: keep the messages, answer anew.
        self.query = query
        self.response = None

    def to_task_result(self) -> AgentTaskResult:
        if self.response is None:
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_WORKING,
                content="Thinking...",
            )
        text = self.response.strip()
        if text.startswith(NEED_INPUT):
            question = text[len(NEED_INPUT):].strip() or "Which city?"
            return AgentTaskResult(
                task_status=AgentTaskStatus.AGENT_TASK_STATUS_INPUT_REQUIRED,
                content=question,
            )
        return AgentTaskResult(
            task_status=AgentTaskStatus.AGENT_TASK_STATUS_COMPLETED,
            content=text,
        )


class WeatherAgentGraph(AgentGraph):
    """The root span of each request is named after this class: 'invoke_agent WeatherAgent'."""

    def setup(self, config: AgentConfig) -> None:
        client = ChatModelClient(
            system_instructions=SYSTEM_PROMPT,
            tools=[get_weather, add],
        )
        loop = ReActLoop(
            config=config,
            StateType=WeatherState,
            loop_name="react",
            chat_model_client=client,
            input_key="query",
            output_key="response",
            messages_key="messages",
        )
        self.graph_builder.add_node("react", loop.as_runnable())
        self.graph_builder.add_edge(START, "react")
        self.graph_builder.add_edge("react", END)


def main() -> None:
    AgentApplication(
        AgentGraphType=WeatherAgentGraph,
        AgentStateType=WeatherState,
    ).run()


if __name__ == "__main__":
    main()
