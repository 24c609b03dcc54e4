"""Values the core refuses, each with one line and nothing written."""

from __future__ import annotations

import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.store.inputs import check_int, check_json, check_positive, check_text, loads_strict
from oxmem_gui.core.store.jsonl import parse_record


def nested(depth):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_text("ho\udcfftel", "query"), "query is not valid UTF-8 text (character 3 is '\\udcff'"),
        (lambda: check_text(b"x", "tag"), "tag must be text, got bytes"),
        (lambda: check_text("  ", "user", empty=False), "user is empty"),
        (lambda: check_int(2**63, "sequence"), "sequence must be between -9,223,372,036,854,775,808 and"),
        (lambda: check_int(10**5000, "sequence"), "got an integer of about 5,001 digits"),
        (lambda: check_int(True, "sequence"), "sequence must be an integer, got True"),
        (lambda: check_positive(0, "limit"), "limit must be a positive integer, got 0"),
        (lambda: check_positive(2000, "top_k", 1000), "top_k must be at most 1,000, got 2000"),
        (lambda: check_json({"x": float("nan")}, "payload"), "payload holds NaN or Infinity"),
        (lambda: check_json([float("-inf")], "payload"), "payload holds NaN or Infinity"),
        (lambda: check_json({"n": 10**5000}, "payload"), "payload holds an integer of more than 4,300 digits"),
        (lambda: check_json(nested(257), "payload"), "payload is nested more than 256 levels deep"),
        (lambda: check_json(nested(100_000), "payload"), "payload is nested more than 256 levels deep"),
        (lambda: check_json({"b": b"raw"}, "payload"), "payload is not JSON data"),
        (lambda: check_json({"k": "\ud800"}, "payload"), "payload is not valid UTF-8 text"),
        (lambda: loads_strict('{"a": NaN}'), "NaN is not valid JSON"),
        (lambda: loads_strict("[Infinity]"), "Infinity is not valid JSON"),
        (lambda: loads_strict("1" * 5000), "a number has too many digits (at most 4,300)"),
        (lambda: loads_strict("[" * 100_000 + "]" * 100_000), "JSON nested more than 256 levels deep"),
        (lambda: loads_strict("{"), "not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
    ],
)
def test_refused_values(call, message):
    with pytest.raises(InvalidInputError) as caught:
        call()
    assert message in str(caught.value) and "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_accepted_values():
    assert check_json({"b": 1, "a": [1.5, None, "é"]}, "payload") == '{"a":[1.5,null,"é"],"b":1}'
    assert check_json(nested(256), "payload").count("[") == 256
    assert check_int(-(2**63), "sequence") == -(2**63) and check_positive(1000, "top_k", 1000) == 1000
    assert parse_record('{"session_id": "s", "sequence": 9223372036854775807, "payload": {"n": 1e308}}', 4) == (
        "s",
        2**63 - 1,
        {"n": 1e308},
        4,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"session_id": "s", "sequence": 1, "payload": {"c": "\\ud800"}}', "line 3: payload is not valid UTF-8 text"),
        ('{"session_id": "\\udcff", "sequence": 1, "payload": {}}', "line 3: session id is not valid UTF-8 text"),
        ('{"session_id": "s", "sequence": 18446744073709551616, "payload": {}}', "line 3: sequence must be between"),
        ('{"session_id": "s", "sequence": 1.5, "payload": {}}', "line 3: sequence must be an integer"),
        ('{"session_id": "s", "sequence": 1, "payload": -Infinity}', "line 3: -Infinity is not valid JSON"),
        ('["not", "an", "object"]', "line 3: expected an object with session_id, sequence and payload"),
    ],
)
def test_jsonl_lines(line, message):
    with pytest.raises(InvalidInputError) as caught:
        parse_record(line, 3)
    assert str(caught.value).startswith(message)


def test_the_store_refuses_and_writes_nothing(store):
    store.store("s", 1, {"role": "user", "content": "first"})
    for call in (
        lambda: store.store("s", 2, {"role": "user", "content": "x", "score": float("nan")}),
        lambda: store.store("s", 2**63, {"role": "user", "content": "x"}),
        lambda: store.store("s\udcff", 2, {"role": "user", "content": "x"}),
        lambda: store.store("s", 2, {"role": "user", "content": "ab\ud800"}),
        lambda: store.store("s", 2, nested(1000)),
        lambda: store.save_note("u", "text", ["tag\udcff"]),
        lambda: store.save_note("u\ud800", "text"),
        lambda: store.schedules.create("u", "goal", {"type": "interval", "every_secs": 3600}, name="n\ud800"),
    ):
        with pytest.raises(InvalidInputError):
            call()
    assert store.sql("SELECT count(*) FROM conversation_events") == [(1,)]
    assert store.sql("SELECT count(*) FROM sessions") == [(1,)] and store.schedules.count() == 0
    for call, message in (
        (lambda: store.hybrid_query("s", "ho\udcfftel"), "query is not valid UTF-8 text"),
        (lambda: store.hybrid_query("s", "hotel", 10**20), "top_k must be at most 1,000"),
        (lambda: store.recall("s", 2**64), "limit must be at most"),
        (lambda: store.recall("s\udcff"), "text is not valid UTF-8"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            call()
