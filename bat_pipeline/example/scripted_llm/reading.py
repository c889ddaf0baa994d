"""What the scripted personas understand of a user message: intents, cities, numbers."""

from __future__ import annotations

import re

CITIES = ["Paris", "Berlin", "London", "Rome", "Madrid", "Lisbon", "Vienna", "Oslo", "Tokyo", "New York"]

CAPITALS = {
    "france": "Paris",
    "germany": "Berlin",
    "italy": "Rome",
    "spain": "Madrid",
    "portugal": "Lisbon",
    "austria": "Vienna",
    "norway": "Oslo",
    "japan": "Tokyo",
    "united kingdom": "London",
    "england": "London",
}

NEED_CITY = "NEED_INPUT: Which city would you like the weather for?"


def cities_in(text: str) -> list[str]:
    """Known city names in order of appearance, without repeats."""
    found = sorted((m.start(), city) for city in CITIES for m in re.finditer(rf"\b{city}\b", text, re.IGNORECASE))
    out: list[str] = []
    for _, city in found:
        if city not in out:
            out.append(city)
    return out


def numbers_in(text: str) -> list[int | float]:
    """Numbers in order, as ints when integral."""
    out: list[int | float] = []
    for raw in re.findall(r"-?\d+(?:\.\d+)?", text):
        value = float(raw)
        out.append(int(value) if value.is_integer() else value)
    return out


def wants_forecast(text: str) -> bool:
    low = text.lower()
    return "forecast" in low or "tomorrow" in low


def wants_weather(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in ("weather", "temperature", "raining", "sunny", "how warm", "how cold"))


def wants_sum(text: str) -> bool:
    low = text.lower()
    return len(numbers_in(text)) >= 2 and any(w in low for w in ("add", "sum", "plus", "+", "total"))


def wants_recall(text: str) -> bool:
    low = text.lower()
    return ("which city" in low or "what city" in low) and ("i " in low or "did" in low or "my" in low)


def wants_self_check(text: str) -> bool:
    low = text.lower()
    return "self-check" in low or "self check" in low or "diagnostic" in low


def capital_asked(text: str) -> str | None:
    """The country whose capital the message asks for, if any."""
    match = re.search(r"capital of ([a-z ]+)", text.lower())
    if not match:
        return None
    asked = match.group(1).strip()
    return next((c for c in CAPITALS if asked.startswith(c)), asked)


def is_bare_city(text: str) -> bool:
    """A short reply that is little more than a city name."""
    words = re.findall(r"[A-Za-z]+", text)
    return bool(cities_in(text)) and len(words) <= 4
