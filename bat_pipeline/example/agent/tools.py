"""The example agent's tools: fixed weather table, adding, and the Forecaster sub-agent."""

from __future__ import annotations

from typing import Any

WEATHER = {
    "paris": "sunny, 22°C",
    "berlin": "cloudy, 15°C",
    "london": "rain, 12°C",
    "rome": "clear, 26°C",
    "madrid": "hot, 31°C",
    "oslo": "snow, -2°C",
}

FORECASTS = {
    "paris": "tomorrow in Paris: showers, 18°C",
    "berlin": "tomorrow in Berlin: windy, 13°C",
    "london": "tomorrow in London: fog, 10°C",
    "rome": "tomorrow in Rome: sunny, 28°C",
}

SYSTEM_PROMPT = (
    "You are the example weather assistant. Answer weather questions with the get_weather tool, "
    "sums with the add tool, and questions about tomorrow or any forecast with the ask_forecaster "
    "tool; base your answer on what the tools return. When the user wants the weather but no city "
    "is known from the conversation, answer exactly "
    "'NEED_INPUT: Which city would you like the weather for?'. Keep track of earlier turns."
)


def _function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }


SCHEMAS = [
    _function("get_weather", "Current weather of a city, like 'sunny, 22°C'.", {"city": {"type": "string"}}),
    _function("add", "Sum of two integers.", {"a": {"type": "integer"}, "b": {"type": "integer"}}),
    _function("ask_forecaster", "Ask the Forecaster agent about tomorrow's weather.", {"question": {"type": "string"}}),
]


def get_weather(city: str) -> str:
    """The table's weather for `city`; an unknown city is reported, not raised."""
    return WEATHER.get(str(city).strip().lower(), f"no weather data for {city}")


def add(a: Any, b: Any) -> str:
    total = float(a) + float(b)
    return str(int(total)) if total.is_integer() else str(total)


def forecast(question: str) -> str:
    """The Forecaster's answer: the first known city in the question, else what it covers."""
    low = question.lower()
    hits = sorted((low.find(city), city) for city in FORECASTS if city in low)
    if not hits:
        return "I only forecast Paris, Berlin, London and Rome. Which city?"
    return FORECASTS[hits[0][1]]
