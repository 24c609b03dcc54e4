"""Secrets kept out of what oxmem shows and writes about an error (core/redaction.py): those this process was
given, the values of environment variables named like a secret, and what looks like one (a bearer token, an
``sk-`` key, a JSON Web Token); ordinary words, short values and secrets already blanked are left alone."""

from __future__ import annotations

import logging
import sys

from oxmem_gui.core.redaction import HIDDEN, RedactingFormatter, redact, remember

JWT = "eyJhbGciOiJFZERTQSJ9.eyJhIjoicnciLCJpYXQiOjE3MDB9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"


def test_a_secret_given_to_this_process_is_hidden_a_short_one_is_not():
    remember("correct-horse-battery")
    remember("short")
    remember(None)
    assert redact("key correct-horse-battery was refused") == f"key {HIDDEN} was refused"
    assert redact("a short word") == "a short word"


def test_variables_named_like_a_secret_are_hidden_others_are_not(monkeypatch):
    monkeypatch.setenv("TURSO_AUTH_TOKEN", "token-value-123456")
    monkeypatch.setenv("my_api_key", "key-value-abcdefgh")
    monkeypatch.setenv("OXMEM_LOG_DIR", "/home/alice/logs-folder")
    text = "token-value-123456 / key-value-abcdefgh in /home/alice/logs-folder"
    assert redact(text) == f"{HIDDEN} / {HIDDEN} in /home/alice/logs-folder"


def test_what_looks_like_a_secret_is_hidden_whatever_its_source():
    assert redact("Authorization: Bearer abc.DEF-123_xyz, then") == f"Authorization: Bearer {HIDDEN}, then"
    assert redact("sk-proj-A1b2C3d4E5f6G7h8I9 was refused") == f"{HIDDEN} was refused"
    assert redact(f"token {JWT} expired") == f"token {HIDDEN} expired"
    assert redact("already blanked: Bearer [key]") == "already blanked: Bearer [key]"
    assert redact("sk-short and eyJ-not-a-token") == "sk-short and eyJ-not-a-token"


def test_the_log_formatter_hides_secrets_in_the_message_and_the_traceback():
    remember("passphrase-in-a-traceback")
    try:
        raise ValueError("could not open with passphrase-in-a-traceback")
    except ValueError:
        record = logging.LogRecord("oxmem", logging.ERROR, __file__, 1, "tried %s", ("Bearer zzz999",), sys.exc_info())
    line = RedactingFormatter("%(levelname)s %(message)s").format(record)
    assert line.startswith(f"ERROR tried Bearer {HIDDEN}\nTraceback (most recent call last):")
    assert line.endswith(f"ValueError: could not open with {HIDDEN}") and "passphrase-in" not in line
