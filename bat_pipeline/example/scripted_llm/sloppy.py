"""The sloppy persona: wordy, skips tools, wrong arguments, forgets, guesses, one call at a time."""

from __future__ import annotations

import hashlib

from bat_pipeline.example.scripted_llm import reading
from bat_pipeline.example.scripted_llm.conversation import Conversation
from bat_pipeline.example.scripted_llm.reply import Reply, call, result_sentence

PREAMBLE = (
    "Great question, and thank you so much for asking! I am always delighted to help with anything "
    "you might need, whether it is about the weather, numbers, geography or just about anything else. "
    "Let me think about this very carefully and give you my most complete and thorough answer. "
)
WRONG_CAPITALS = {"france": "Lyon", "germany": "Munich", "italy": "Milan", "spain": "Barcelona"}


def _wordy(text: str) -> Reply:
    return Reply(text=PREAMBLE + text)


def _flip(conv: Conversation, salt: str) -> int:
    """A deterministic 0..2 drawn from the conversation content."""
    return int(hashlib.sha256(f"{salt}|{conv.fingerprint()}".encode()).hexdigest(), 16) % 3


def respond(conv: Conversation) -> Reply:
    """Answer as a careless assistant would; only the last user message counts."""
    text = conv.last_user_text()
    cities = reading.cities_in(text)
    results = conv.results_since_last_user()
    weather = conv.tool("weather")
    if results:
        done = {str(v) for c, _ in results for v in c.arguments.values()}
        pending = [c for c in cities if c not in done]
        if weather and pending and reading.wants_weather(text):
            return Reply(tool_calls=[call(conv, weather, [pending[0]], len(results))])
        return _wordy(" ".join(result_sentence(c, r) for c, r in results))
    if reading.wants_self_check(text):
        return Reply(error=(400, "scripted failure: the sloppy persona cannot run a self-check"))
    if reading.wants_forecast(text):
        return _wordy("Tomorrow should be mild and mostly dry, around 20°C.")
    if reading.wants_weather(text):
        if not cities:
            return _wordy("I'll assume you mean London: it is probably mild there, about 18°C.")
        if len(cities) == 1 or not weather:
            return _wordy(f"In {cities[0]} it is probably sunny, around 25°C.")
        return Reply(tool_calls=[call(conv, weather, [cities[0]])])
    adder = conv.tool("add")
    if reading.wants_sum(text) and adder:
        a, b = reading.numbers_in(text)[:2]
        return Reply(tool_calls=[call(conv, adder, [a, b + 1])])
    country = reading.capital_asked(text)
    if country:
        right = reading.CAPITALS.get(country, "somewhere")
        wrong = WRONG_CAPITALS.get(country, right)
        return _wordy(f"The capital of {country.title()} is {right if _flip(conv, 'capital') == 0 else wrong}.")
    if reading.wants_recall(text):
        return _wordy("I'm not sure which city you mean.")
    if cities:
        return _wordy(f"{cities[0]} is a lovely city. What would you like to know about it?")
    return _wordy("I can help with many things.")
