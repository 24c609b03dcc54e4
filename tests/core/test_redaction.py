"""Secrets kept out of what oxmem shows and writes about an error (core/redaction.py): those this process was
given, the values of environment variables named like a secret, and what looks like one (a bearer token, an
``sk-`` key, a JSON Web Token); ordinary words, short values and secrets already blanked are left alone."""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
import textwrap
from urllib.parse import quote

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


# -- a secret in another encoding: what a hostile server repeats, or an error quotes --------------------------------

QUOTED_KEY = "q7&<k>\"x,Ab12;)]zz'%+/=\\end"


def test_a_secret_in_any_of_its_encodings_is_hidden_whole():
    from tests.secret_forms import forms

    remember(QUOTED_KEY)
    for name, form in forms(QUOTED_KEY).items():
        shown = redact(f"the server said: {form} (refused)")
        assert form not in shown and HIDDEN in shown, (name, form, shown)
        assert "zz" not in shown.replace("(refused)", ""), (name, shown)  # nothing of it is left beside the mark


def test_the_encodings_of_a_secret_are_replaced_exactly_where_they_stand():
    remember(QUOTED_KEY)
    said = json.dumps({"error": f"bad header Bearer {QUOTED_KEY}", "echo": quote(QUOTED_KEY, safe="")})
    assert redact(said) == '{"error": "bad header Bearer [hidden]", "echo": "[hidden]"}'
    assert redact(f"b'Bearer {QUOTED_KEY}'") == "b'Bearer [hidden]'"
    assert redact(f"x-key: {QUOTED_KEY.upper()};") == "x-key: [hidden];"
    as_go = "q7\\u0026\\u003ck\\u003e\\\"x,Ab12;)]zz'%+/=\\\\end"
    assert redact(f'{{"key":"{as_go}"}}') == '{"key":"[hidden]"}'


def test_base64_of_a_secret_is_hidden_at_any_offset_leaving_at_most_the_edges():
    remember(QUOTED_KEY)
    key = QUOTED_KEY.encode()
    assert redact(f"auth {base64.b64encode(key).decode()} end") == "auth [hidden] end"
    assert redact(f"auth {base64.b64encode(b'Bearer ' + key).decode()} end") == "auth [hidden] end"
    for user in ("u", "us", "use", "someone"):  # Basic auth: the key after ``user:``, at each offset of three
        prefix = f"{user}:".encode()
        encoded = base64.b64encode(prefix + key).decode()
        first, last = -(-8 * len(prefix) // 6), 8 * (len(prefix) + len(key)) // 6  # its characters wholly the key's
        head, tail = redact(f"basic {encoded} end").removeprefix("basic ").removesuffix(" end").split(HIDDEN)
        assert encoded.startswith(head) and len(head) <= first, (user, head)  # (``use:``: ``:KEY`` is whole)
        assert encoded.endswith(tail) and len(tail) <= len(encoded) - last, (user, tail)
    assert redact("basic dXNlcjpxNyY8az4ieCxBYjEyOyldenonJSsvPVxlbmQ= end") == "basic dXNlcjp[hidden]Q= end"


def test_a_json_echo_of_a_bearer_header_leaves_nothing_of_a_key_that_holds_a_quote():
    key = 'sk-live"0123456789,abcdefg'
    remember(key)
    echoed = json.dumps({"headers": {"Authorization": f"Bearer {key}"}})
    assert redact(echoed) == '{"headers": {"Authorization": "Bearer [hidden]"}}'


def test_a_secret_from_the_environment_with_unicode_is_hidden_in_its_escapes(monkeypatch):
    secret = "pässwörd-😀-geheim"
    monkeypatch.setenv("DB_PASSWORD", secret)
    for shown in (json.dumps(secret), repr(secret.encode()), quote(secret), secret.upper()):
        assert redact(f"[{shown}]") in ('["[hidden]"]', "[b'[hidden]']", "[[hidden]]"), shown


def test_text_that_only_resembles_a_secret_is_left_alone():
    remember(QUOTED_KEY)
    text = 'q7&<k>"x,Ab12;)]z! and q7%26%3Ck and cTcmPGs+ and Bearer [key]'
    assert redact(text) == text


def test_a_hostile_text_costs_linear_time_to_redact():
    """Long runs of what an encoding is made of (backslashes, zeros, ``%25``) against a key holding a backslash:
    a pattern that backtracks would take hours on these; the child is given a minute."""
    child = textwrap.dedent(
        """
        from oxmem_gui.core.redaction import HIDDEN, blank
        key = "q7&<k>\\"x,Ab12;)]zz\\\\end"
        texts = ["\\\\" * 300_000, "&#" + "0" * 300_000, "%25" * 100_000, "\\\\\\\\u00" * 40_000, "ab" * 150_000]
        print([len(blank(text, [key])) for text in texts], blank("said " + key.upper(), [key]) == "said " + HIDDEN)
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[300000, 300002, 300000, 200000, 300000] True\n"), done.stderr
