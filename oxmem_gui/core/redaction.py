"""Secrets kept out of everything oxmem shows or writes about an error: the error dialog, the log file (tracebacks
included) and the command line's error line.

The code that holds a secret blanks it itself where it can (the embeddings endpoint's key, the libSQL token).
This is the net under it, for an error nobody expected: :func:`redact` blanks every secret this process was given
(:func:`remember`), the values of environment variables named like a secret (``…_KEY``, ``…_TOKEN``, ``…SECRET``,
``…PASSWORD``), and what looks like one whatever its source (``Bearer …``, ``sk-…`` keys, JSON Web Tokens such as
libSQL's).
"""

from __future__ import annotations

import logging
import os
import re

#: what a secret is replaced with
HIDDEN = "[hidden]"
#: environment variables whose value is a secret
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE)$", re.IGNORECASE)
#: a value shorter than this is not blanked (a short value would blank ordinary words)
SHORTEST = 8
#: what looks like a secret wherever it comes from
LOOKS_SECRET = re.compile(
    r"(?<=Bearer )(?!\[)[^\s\"',;)\]]+"  # an Authorization header's token (not one already blanked: "[key]")
    r"|\bsk-[A-Za-z0-9_-]{16,}"  # an OpenAI-style key
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # a JSON Web Token (libSQL's, Turso's)
)

_given: set[str] = set()


def remember(secret: str | None) -> None:
    """A secret this process was given (a key typed in a dialog, a token read from a variable): never shown."""
    if secret and len(secret.strip()) >= SHORTEST:
        _given.add(secret.strip())


def redact(text: str) -> str:
    """``text`` with every secret it holds replaced by :data:`HIDDEN` (see the module's docstring)."""
    known = set(_given)
    known.update(v.strip() for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v.strip()) >= SHORTEST)
    for secret in sorted(known, key=len, reverse=True):  # (a longer secret first: one may hold another)
        text = text.replace(secret, HIDDEN)
    return LOOKS_SECRET.sub(HIDDEN, text)


class RedactingFormatter(logging.Formatter):
    """A log formatter whose every line (message and traceback) went through :func:`redact`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
