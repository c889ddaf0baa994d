"""The competent persona: uses the offered tools well, asks when unsure, remembers."""

from __future__ import annotations

import re

from bat_pipeline.example.scripted_llm import reading
from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply, call, result_sentence

HELP = "I can look up the current weather, add numbers, and ask the Forecaster about tomorrow."


def remembered_city(conv: Conversation) -> str | None:
    """The most recent city named in an earlier user turn."""
    for text in reversed(conv.user_texts()[:-1]):
        cities = reading.cities_in(text)
        if cities:
            return cities[-1]
    return None


def _compare(results: list[tuple[str, str]]) -> str:
    temps = []
    for city, result in results:
        match = re.search(r"(-?\d+)\s*°", result)
        if match:
            temps.append((int(match.group(1)), city))
    if len(temps) < 2:
        return ""
    temps.sort()
    return f" {temps[-1][1]} is the warmest and {temps[0][1]} the coolest."


def answer_from_results(conv: Conversation) -> Reply:
    results = conv.results_since_last_user()
    text = " ".join(result_sentence(c, r) for c, r in results)
    weather = [(str(next(iter(c.arguments.values()), "")), r) for c, r in results if "weather" in c.name.lower()]
    return Reply(text=text + _compare(weather))


def respond(conv: Conversation) -> Reply:
    """Answer as a careful assistant would."""
    if conv.results_since_last_user():
        return answer_from_results(conv)
    text = conv.last_user_text()
    cities = reading.cities_in(text)
    forecaster = conv.tool("forecast")
    if reading.wants_forecast(text) and forecaster:
        city = cities[0] if cities else remembered_city(conv)
        question = text if cities or not city else f"{text} (city: {city})"
        return Reply(tool_calls=[call(conv, forecaster, [question])])
    bare_reply = reading.is_bare_city(text) and conv.previous_assistant_text().startswith("NEED_INPUT")
    if reading.wants_weather(text) or bare_reply:
        if not cities:
            city = remembered_city(conv)
            cities = [city] if city else []
        if not cities:
            return Reply(text=reading.NEED_CITY)
        weather = conv.tool("weather")
        if not weather:
            return Reply(text="I have no weather tool, so I cannot look that up.")
        return Reply(tool_calls=[call(conv, weather, [c], i) for i, c in enumerate(cities)])
    adder = conv.tool("add")
    if reading.wants_sum(text) and adder:
        a, b = reading.numbers_in(text)[:2]
        return Reply(tool_calls=[call(conv, adder, [a, b])])
    country = reading.capital_asked(text)
    if country:
        capital = reading.CAPITALS.get(country)
        return Reply(text=f"The capital of {country.title()} is {capital}." if capital else "I don't know that one.")
    if reading.wants_recall(text):
        city = remembered_city(conv)
        return Reply(text=f"You asked about {city}." if city else "You have not named a city yet.")
    if reading.wants_self_check(text):
        names = ", ".join(t.name for t in conv.tools) or "none"
        return Reply(text=f"Self-check passed. Tools available: {names}.")
    return Reply(text=HELP)
