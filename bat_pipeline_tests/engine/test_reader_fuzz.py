"""A fuzz test of the readers of every format (issue 38): whatever a file holds, reading it
either gives the records or raises InputError naming one of the files read — never another
exception, never more than a bounded amount of memory.

The values come from hypothesis, derandomised so that every run tries the same inputs:
JSON-like trees (with lone surrogates and non-finite numbers among the scalars), YAML-ish
token soup (anchors, aliases, tags, flow brackets, `!ENV`, non-UTF-8 bytes) and raw bytes,
each put where a realistic file of that format has a value (bat_pipeline_tests/support/
readers.py), or as the whole file. The process's address space is capped while a value is
read, so an expansion that escaped the limits ends in MemoryError, which fails the test."""

from __future__ import annotations

import json
import math
import resource
import tempfile
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings, strategies as st

from bat_pipeline.engine.errors import InputError
from bat_pipeline_tests.support.readers import JSON_READERS, TEXT_READERS, YAML_READERS

HEADROOM = 1 << 30
"""Address space a read may add (1 GiB): an alias bomb expanded takes many times that."""

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
)
trees = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=16,
)
TOKENS = [
    "&a ", "*a", "&b ", "*b", "[", "]", "{", "}", ", ", ": ", "- ", "\n", "  ", "!!str ", "!!binary ",
    "!!python/object:os.system ", "!ENV ", "${HOME}", "${UNSET_X}", "'", '"', "x", "1", "-1", ".inf", ".nan",
    "\\ud800", "\\u", "\u00e9", "\x00", "#", "? ", "|", ">", "---", "...", "%YAML 1.1\n", "id", "tests",
]  # fmt: skip
soup = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)


def _encoded(text: str, latin: bool) -> bytes:
    return text.encode("latin-1", "replace") if latin else text.encode("utf-8", "surrogatepass")


values = st.one_of(
    trees.map(lambda v: json.dumps(v, ensure_ascii=True, allow_nan=True).encode()),
    trees.map(lambda v: json.dumps(v, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")),
    st.builds(_encoded, soup, st.booleans()),
    st.binary(max_size=64),
)
READERS = {**YAML_READERS, **JSON_READERS, **TEXT_READERS}


@contextmanager
def bounded_memory():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    used = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    cap = used + HEADROOM if hard == resource.RLIM_INFINITY else min(used + HEADROOM, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _check(reader: str, value: bytes, whole: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        read, holder = READERS[reader](tmp, b'"placeholder"')
        if whole:
            holder.write_bytes(value)
        else:
            READERS[reader](tmp, value)
        try:
            with bounded_memory():
                read()
        except InputError as exc:
            assert folder in str(exc), f"{reader}: the refusal names no file read: {exc}"


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(reader=st.sampled_from(sorted(READERS)), value=values, whole=st.booleans())
@example(reader="AgentV eval file", value=b",0", whole=False)  # found: a metadata key 0 was a traceback
def test_any_value_loads_or_is_refused_naming_the_file(reader, value, whole):
    _check(reader, value, whole)


def test_the_strategies_reach_the_hostile_shapes():
    """The fuzz is worth its time only if it tries what broke the readers before."""
    assert math.isnan(json.loads("NaN")) and "\\ud800" in TOKENS and "&a " in TOKENS and "!ENV " in TOKENS
    _check("tasks.json", b'"\\ud800"', whole=False)
    _check("AgentV eval file", b"[&a [x, x], [*a, *a]]", whole=False)
