"""aidaemon's values as oxmem reads them (``core/formats/aidaemon_rows.py``): embeddings in both of aidaemon's
encodings (and why anything else is refused), JSON that may not be JSON, episode topics in either form, numbers
that may be text, and a session's first and last time across rows and tables whatever shape the times take."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from oxmem_gui.core.formats.aidaemon_rows import (
    Span,
    cosine_similarity,
    decode_embedding,
    episode_topics,
    float_or_none,
    int_or_zero,
    json_or_reason,
)


def test_embeddings_in_both_encodings_and_the_reason_for_anything_else():
    vector = np.arange(384, dtype="<f4") / 384
    assert np.array_equal(decode_embedding(vector.tobytes()), vector.astype(np.float64))
    assert decode_embedding("[0.5, -1, 2]").tolist() == [0.5, -1.0, 2.0]
    assert decode_embedding(b"[0.25]").tolist() == [0.25]
    assert decode_embedding("[1, true]") == "legacy JSON embedding is not an array of numbers"
    assert decode_embedding("[1,").startswith("legacy JSON embedding is not JSON (")
    assert decode_embedding(b"\x00junk") == (
        "unknown embedding encoding: 5 bytes (first byte 0x00); neither 1536 bytes nor JSON"
    )
    assert decode_embedding(b"") == "unknown embedding encoding: 0 bytes (first byte none); neither 1536 bytes nor JSON"


def test_json_that_is_not_json_says_why():
    assert json_or_reason('{"a": [1, 2]}') == ({"a": [1, 2]}, None)
    assert json_or_reason(b'"caf\xc3\xa9"') == ("café", None)
    assert json_or_reason(None) == (None, "is empty (NULL)")
    value, reason = json_or_reason("not json")
    assert value is None and reason.startswith("is not JSON (Expecting value")
    deep = "[" * 100_000 + "]" * 100_000
    assert json_or_reason(deep)[0] is None  # (too deep for the parser: a reason, never a crash)


def test_episode_topics_as_a_json_array_or_comma_separated_text():
    assert episode_topics('["deploy", " staging ", null, ""]') == ["deploy", "staging"]
    assert episode_topics("deploy, staging,,") == ["deploy", "staging"]
    assert episode_topics(json.dumps("one, two")) == ["one", "two"]
    assert episode_topics(None) == []


def test_numbers_that_may_be_text():
    assert [int_or_zero(v) for v in (7, "12", "x", None, 3.9)] == [7, 12, 0, 0, 3]
    assert [float_or_none(v) for v in ("0.85", 1, "nan", "inf", None, "high")] == [0.85, 1.0, None, None, None, None]


def test_cosine_is_zero_for_a_vector_without_length():
    assert cosine_similarity(np.array([1.0, 0.0]), np.array([0.0, 0.0])) == 0.0
    assert cosine_similarity(np.array([1.0, 1.0]), np.array([2.0, 2.0])) == pytest.approx(1.0)
    assert cosine_similarity(np.array([1.0, 0.0]), np.array([0.0, 3.0])) == 0.0


def test_a_sessions_span_takes_times_of_every_shape_and_keeps_text_only_when_nothing_parses():
    span = Span()
    for value in ("2026-03-01 10:00:00", "2026-03-01T12:00:00+02:00", "2026-03-01T10:30:00.5+00:00", "soon", None):
        span.widen(value)
    assert (span.first, span.last) == (
        datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc),
        datetime(2026, 3, 1, 10, 30, 0, 500000, tzinfo=timezone.utc),
    )
    assert span.first_shown().startswith("2026-03-01T10:00:00") and span.last_shown().startswith(
        "2026-03-01T10:30:00.5"
    )
    words = Span()
    words.widen("yesterday")
    words.widen("later")
    assert (words.first_shown(), words.last_shown()) == ("later", "yesterday")
    words.include(span)
    assert words.first == span.first and words.last == span.last and words.first_shown() == span.first_shown()
