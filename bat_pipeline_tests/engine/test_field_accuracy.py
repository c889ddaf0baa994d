"""`field-accuracy` details the AgentV 4.42 parity fixture does not spell out: how dates and
numbers are read (as Node 20's Date and parseFloat read them, on a UTC machine, where
AgentV 4.42.4 ran), and how a seed-format file is refused where a 4.x file is lenient."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.field_accuracy import MISSING, parse_day, resolve, to_number

TARGET = {"provider": "cli", "command": "python3 run.py {PROMPT}"}


@pytest.mark.parametrize(
    "text, day",
    [
        # what `new Date(text)` gives in Node 20 (getFullYear, getMonth, getDate; TZ=UTC)
        ("2025-01-15", date(2025, 1, 15)),
        ("2025-01-15T23:30:00Z", date(2025, 1, 15)),
        ("2025-01-15T23:30:00-05:00", date(2025, 1, 16)),
        ("01/02/2025", date(2025, 1, 2)),
        ("01-02-2025", date(2025, 1, 2)),
        ("15-JAN-2025", date(2025, 1, 15)),
        ("January 15, 2025", date(2025, 1, 15)),
        ("15 Jan 2025", date(2025, 1, 15)),
        ("2025/01/15", date(2025, 1, 15)),
        ("Jan 15 2025", date(2025, 1, 15)),
        ("2025-1-5", date(2025, 1, 5)),
        ("20250115", None),
        ("tomorrow", None),
        ("2025-13-01", None),
        # Node cannot read these; AgentV then reads them day first
        ("15/01/2025", date(2025, 1, 15)),
        ("15-01-2025", date(2025, 1, 15)),
    ],
)
def test_dates_read_as_agentv_reads_them(text, day):
    assert parse_day(text, []) == day


def test_day_first_only_when_the_formats_allow_it():
    assert parse_day("15/01/2025", ["MM/DD/YYYY"]) is None
    assert parse_day("15/01/2025", ["DD/MM/YYYY"]) == date(2025, 1, 15)
    assert parse_day("01/02/2025", ["DD/MM/YYYY"]) == date(2025, 1, 2)  # Node reads it first, month first


@pytest.mark.parametrize(
    "value, number",
    [
        (" 12.5abc", 12.5),
        ("1e3x", 1000.0),
        ("abc", None),
        (".5", 0.5),
        ("-", None),
        ("0x10", 0.0),
        (True, None),
        (3, 3.0),
        (None, None),
    ],
)
def test_numbers_read_as_parse_float(value, number):
    assert to_number(value) == number


def test_paths():
    data = {"a": {"b": [{"c": 1}, None]}, "n": None}
    assert resolve(data, "a.b[0].c") == 1 and resolve(data, "a.b.0.c") == 1
    assert resolve(data, "n") is None and resolve(data, "a.b[1].c") is MISSING and resolve(data, "x.y") is MISSING
    assert resolve({}, "a") is MISSING and resolve([5], "0") == 5


def test_a_bad_field_is_refused_in_the_seed_format(tmp_path):
    grader = {"type": "field-accuracy", "fields": [{"path": "a", "match": "fuzzy"}]}
    eval_file = tmp_path / "e.yaml"
    eval_file.write_text(
        yaml.safe_dump(
            {"providers": {"t": TARGET}, "tests": [{"id": "a", "vars": {"input": "x"}, "assert": [grader]}]}
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_suite(Path(eval_file))
    assert caught.value.field == "assert[0].fields[0].match" and "'fuzzy' is not exact" in str(caught.value)
