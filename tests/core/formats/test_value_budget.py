"""Counting a blob's values before it is decoded (``core/formats/value_budget.py``): exact for msgpack, an upper
bound for JSON, and what a reader says of a blob over the bound."""

from __future__ import annotations

import json

import ormsgpack
import pytest

from oxmem_gui.core.formats.aidaemon_rows import json_or_reason
from oxmem_gui.core.formats.value_budget import json_values, msgpack_values, too_many


def values_in(value) -> int:
    if isinstance(value, dict):
        return 1 + sum(values_in(k) + values_in(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(values_in(v) for v in value)
    return 1


CASES = [
    {},
    [],
    [1, -1, 200, -200, 70_000, -70_000, 2**40, -(2**40), 2**64 - 1, 1.5, None, True, False],
    {"text": "x" * 70_000, "bytes": b"y" * 300, "nested": {"a": [{"b": []}] * 20}},
    list(range(70_000)),
    {str(i): i for i in range(20)},
]


@pytest.mark.parametrize("value", CASES, ids=range(len(CASES)))
def test_msgpack_is_counted_exactly_and_json_never_under(value):
    assert msgpack_values(ormsgpack.packb(value)) == values_in(value)
    if not isinstance(value, dict) or "bytes" not in value:
        assert json_values(json.dumps(value)) >= values_in(value)


def test_an_extensions_payload_counts_as_the_msgpack_it_holds():
    inner = ormsgpack.packb(["module", "Name", {"a": 1}])  # 1 + 2 + (1 + 2) values
    blob = b"\xc7" + len(inner).to_bytes(1, "big") + b"\x05" + inner
    assert msgpack_values(blob) == 1 + 6


def test_the_count_stops_at_the_bound_and_says_why():
    blob = b"\xdd" + (5_000).to_bytes(4, "big") + b"\x80" * 5_000
    assert msgpack_values(blob, limit=100) == 101 and json_values("[" + "{}," * 500 + "{}]", limit=100) == 101
    assert too_many(100, limit=100) is None
    assert too_many(101, limit=100) == "holds more than 100 values: too big to show (oxmem decodes at most that many)"
    assert json_or_reason("[" + "{}," * 1_000_000 + "{}]") == (
        None,
        "holds more than 1,000,000 values: too big to show (oxmem decodes at most that many)",
    )
    assert json_or_reason('{"a": [1, 2]}') == ({"a": [1, 2]}, None)


def test_bytes_that_are_not_msgpack_are_counted_as_far_as_they_go():
    assert msgpack_values(b"\xc1\xc1 not msgpack") == 14
    assert msgpack_values(b"\xdb\xff\xff\xff\xff") == 1  # a string longer than the blob: counted, not read
