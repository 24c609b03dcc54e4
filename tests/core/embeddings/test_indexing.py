import pytest

from oxmem_gui.core.embeddings.indexing import (
    PayloadNotIndexable,
    chunk_id,
    chunk_text,
    content_hash,
    dumps,
    extract_text,
    normalize,
)
from oxmem_gui.core.retrieval.hybrid import fts_expression, fts_terms


def letters(n: int) -> str:
    return "".join("abcdefghij"[i % 10] for i in range(n))


@pytest.mark.parametrize(
    ("n", "bounds"),
    [
        (640, [(0, 640)]),
        (641, [(0, 640), (544, 641)]),
        (1184, [(0, 640), (544, 1184)]),
        (1185, [(0, 640), (544, 1184), (1088, 1185)]),
    ],
)
def test_chunk_counts_and_boundaries(n, bounds):
    text = letters(n)
    assert chunk_text(text) == [text[a:b] for a, b in bounds]


def test_chunks_are_by_code_point_and_renormalized():
    text = "é" * 544 + " " + "ü" * 200  # 745 code points (far more bytes); window 2 starts on the space
    assert chunk_text(text) == ["é" * 544 + " " + "ü" * 95, "ü" * 200]


def test_short_and_empty_text():
    assert chunk_text("hi") == ["hi"]
    assert chunk_text("") == []


def test_normalize_splits_on_unicode_whitespace_but_not_separators():
    assert normalize("  a\tb\n\u2003c\u00a0d ") == "a b c d"
    assert normalize("a\x1cb \x1f c") == "a\x1cb \x1f c"


def test_hash_and_chunk_id():
    digest = content_hash("hello")
    assert digest == "ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f"
    assert chunk_id("s1", 3, 0, digest) == "chunk:s1:3:0:ea8f163db3868292"


def test_dumps_sorted_compact():
    assert dumps({"b": 1, "a": [1, {"z": None, "y": "é"}]}) == '{"a":[1,{"y":"é","z":null}],"b":1}'


def test_extract_text_with_tool_calls():
    got = extract_text(
        {
            "role": "assistant",
            "content": "  Let me check.  ",
            "tool_calls": [
                {"id": "1", "name": "search", "arguments": {"q": "x", "n": 2}},
                {"id": "2", "name": "shell", "arguments": "ls -la"},
                {"id": "3", "name": "ping", "arguments": None},
            ],
        }
    )
    assert (
        got.text
        == 'Let me check.\ntool search arguments {"n":2,"q":"x"}\ntool shell arguments ls -la\ntool ping invocation'
    )
    assert (got.role, got.source, got.tool_call_id) == ("assistant", "assistant_tool_call", None)


@pytest.mark.parametrize(
    ("payload", "source"),
    [
        ({"role": "user", "content": "x"}, "user_message"),
        ({"role": "system", "content": "x"}, "system_message"),
        ({"role": "assistant", "content": "x"}, "assistant_message"),
        ({"role": "tool", "content": "x", "tool_call_id": "c1"}, "tool_output"),
    ],
)
def test_sources(payload, source):
    assert extract_text(payload).source == source


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("text", "payload is a JSON str, not a message object"),
        ([1, 2], "payload is a JSON list, not a message object"),
        ({"role": "robot", "content": "x"}, "payload role 'robot' is not one of"),
        ({"role": "user", "content": 42}, "'content' is not a string"),
        ({"role": "assistant", "tool_calls": [{"arguments": {}}]}, "tool_calls[0] is not an object"),
    ],
)
def test_payloads_that_are_not_messages(payload, message):
    with pytest.raises(PayloadNotIndexable, match=message.replace("[", r"\[").replace("]", r"\]")):
        extract_text(payload)


def test_fts_terms_mode_quotes_every_alphanumeric_run():
    assert fts_terms('say "hi" AND (x:y*) - née_42') == ["say", "hi", "AND", "x", "y", "née", "42"]
    assert fts_expression('"a" AND (b:*', "terms") == '"a" OR "AND" OR "b"'
    assert fts_expression("*** : ()", "terms") is None


def test_fts_phrase_mode_doubles_quotes():
    assert fts_expression('  say "hi" now ', "phrase") == '"say ""hi"" now"'
