"""The encodings a hostile server (or an error message) may repeat a secret in, for the tests that make sure none of
them reaches what oxmem shows or writes: URL-quoted, JSON- and Go-escaped, Python's ``repr`` of its bytes, HTML
entities, base64 of the secret and of ``Bearer SECRET`` / ``user:SECRET`` (standard and URL-safe, with and without
padding), and the secret in other letter case."""

from __future__ import annotations

import base64
import html
import json
import random
from urllib.parse import quote, quote_plus

#: what a random key is made of: every character a header can carry that a tokenizer might stop at, and letters
KEY_ALPHABET = "&<>\"'%+/=;,)]\\" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~:!*({}[#$@^|`?"


def go_escaped(text: str) -> str:
    """``text`` as Go's ``encoding/json`` writes it: JSON, with ``& < >`` as ``\\u0026 \\u003c \\u003e``."""
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    return escaped.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def base64_forms(data: bytes) -> list[str]:
    """``data`` in base64, standard and URL-safe, with and without padding."""
    standard, urlsafe = base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()
    return [standard, standard.rstrip("="), urlsafe, urlsafe.rstrip("=")]


def forms(secret: str) -> dict[str, str]:
    """Every encoding of ``secret`` these tests look for, by name (the raw secret included)."""
    raw = secret.encode("utf-8")
    found = {
        "raw": secret,
        "lower": secret.lower(),
        "upper": secret.upper(),
        "url": quote(secret, safe=""),
        "url-lower": quote(secret, safe="").lower(),
        "url-path": quote(secret),
        "url-plus": quote_plus(secret),
        "json": json.dumps(secret)[1:-1],
        "json-unicode": json.dumps(secret, ensure_ascii=False)[1:-1],
        "go": go_escaped(secret),
        "repr-bytes": repr(raw)[2:-1],
        "html": html.escape(secret),
    }
    for label, data in (("", raw), ("bearer-", b"Bearer " + raw), ("basic-", b"user:" + raw), ("at2-", b"me:" + raw)):
        for name, text in zip(("b64", "b64-bare", "b64url", "b64url-bare"), base64_forms(data), strict=True):
            found[label + name] = text
    return found


def random_key(rng: random.Random) -> str:
    """A key of 16 to 48 characters an HTTP header can carry, rich in the characters that end a token."""
    return "".join(rng.choice(KEY_ALPHABET) for _ in range(rng.randint(16, 48)))


def leaks(secret: str, text: str) -> list[str]:
    """The names of the encodings of ``secret`` found in ``text``, and ``tail`` when its last 7 characters are (what
    a redaction cut short leaves behind)."""
    found = [name for name, form in forms(secret).items() if form and form in text]
    if len(secret) >= 14 and secret[-7:] in text:
        found.append("tail")
    return found
