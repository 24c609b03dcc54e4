"""Secrets kept out of everything oxmem shows or writes about an error: the error dialog, the log file (tracebacks
included), the command line's error line and an uncaught exception's traceback (:func:`excepthook`).

The code that holds a secret blanks it itself where it can (the embeddings endpoint's key, the libSQL token).
This is the net under it, for an error nobody expected: :func:`redact` blanks every secret this process was given
(:func:`remember`), the values of environment variables named like a secret (``…_KEY``, ``…_TOKEN``, ``…SECRET``,
``…PASSWORD``), and what looks like one whatever its source (``Bearer …``, ``sk-…`` keys, JSON Web Tokens such as
libSQL's).

A known secret is found in any letter case and in every encoding a server or a library may repeat it in, each
character on its own (so a mix of them too): URL-quoted (``%26``, ``+`` for a space, quoted twice), JSON- and
Go-escaped (``\\"``, ``\\u0026``), Python's ``repr`` (``\\x26``, ``\\'``), HTML entities (``&amp;``,
``&#38;``); and in base64 (standard and URL-safe, padded or not), whole or inside a longer text such as
``Bearer KEY`` or ``user:KEY`` — there only the characters that hold nothing but the secret's bits are certain, so
the one or two beside them, which mix its first or last bits with their neighbour's, are left. The pattern's every
repetition is bounded: a hostile text costs time in proportion to its length.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import logging
import os
import re
import sys
import traceback
from collections.abc import Iterable, Iterator
from types import TracebackType

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


def known() -> set[str]:
    """The secrets :func:`redact` hides by their value: those given to this process and those of the environment."""
    found = set(_given)
    found.update(v.strip() for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v.strip()) >= SHORTEST)
    return found


#: the control characters JSON, Go and Python write with a letter (``\n``)
_SHORT_ESCAPES = {"\n": "n", "\t": "t", "\r": "r", "\b": "b", "\f": "f", "\0": "0"}
#: the characters HTML writes with a name (``&amp;``)
_ENTITIES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}
#: before an escape: one backslash or a few more (an escape escaped again: JSON inside a repr); every repetition
#: is bounded, so that a hostile text (a long run of backslashes) costs linear time, never quadratic
_BACKSLASHES = r"\\{1,8}"


def _character(c: str) -> str:
    """A pattern matching ``c`` in any of the encodings of the module's docstring."""
    code = ord(c)
    utf8 = c.encode("utf-8")
    ways = [re.escape(c) if c.isalnum() else r"\\{0,8}" + re.escape(c)]  # itself, or escaped by backslashes (``\"``)
    ways.append("".join(f"%(?:25)?{b:02x}" for b in utf8))  # URL-quoted, once or twice
    ways.append("".join(f"{_BACKSLASHES}x{b:02x}" for b in utf8))  # the repr of its bytes
    if code < 0x10000:
        ways.append(f"{_BACKSLASHES}u0{{0,4}}{code:04x}")  # JSON, Go, JavaScript, Python
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        ways.append(f"{_BACKSLASHES}u{high:04x}{_BACKSLASHES}u{low:04x}")  # JSON's surrogate pair
        ways.append(f"{_BACKSLASHES}U{code:08x}")  # Python
        ways.append(f"{_BACKSLASHES}u\\{{0{{0,4}}{code:x}\\}}")  # JavaScript, Rust
    if code < 0x100:
        ways.append(f"{_BACKSLASHES}x{code:02x}")  # the repr of a str
    if c in _SHORT_ESCAPES:
        ways.append(_BACKSLASHES + _SHORT_ESCAPES[c])
    ways.append(f"&#(?:0{{0,4}}{code}|x0{{0,4}}{code:x});")
    if c in _ENTITIES:
        ways.append(f"&{_ENTITIES[c]};")
    if c == " ":
        ways.append(r"\+")  # a form's space
    return "(?:" + "|".join(ways) + ")"


def _base64(secret: bytes) -> list[str]:
    """The base64 of ``secret`` whole, of ``Bearer SECRET`` and of ``:SECRET`` (padded or not), and the characters
    that hold only its bits wherever it starts in a longer text (three offsets: base64 encodes three bytes at a
    time)."""
    found = []
    for before in (b"Bearer ", b":", b""):
        whole = base64.b64encode(before + secret).decode()
        found += [whole, whole.rstrip("=")]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode()
        first, last = -(-8 * offset // 6), 8 * (offset + len(secret)) // 6
        if last - first >= SHORTEST:
            found.append(encoded[first:last])
    return found


@functools.lru_cache(maxsize=16)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for every encoding of each of ``secrets`` (a longer one first: one may hold another)."""
    ways: list[str] = []
    for secret in secrets:
        for b64 in _base64(secret.encode("utf-8")):  # (before the characters: a base64 text may start like the key)
            ways += [re.escape(b64), re.escape(b64.replace("+", "-").replace("/", "_"))]
        ways.append("".join(_character(c) for c in secret))
    return re.compile("|".join(ways), re.IGNORECASE) if ways else None


def blank(text: str, secrets: Iterable[str | None], mark: str = HIDDEN) -> str:
    """``text`` with each of ``secrets`` (None and short ones ignored), in any of its encodings, replaced by
    ``mark``."""
    wanted = sorted({s for s in secrets if s and len(s) >= SHORTEST}, key=lambda s: (-len(s), s))
    pattern = _pattern(tuple(wanted))
    return pattern.sub(mark, text) if pattern is not None else text


def redact(text: str) -> str:
    """``text`` with every secret it holds replaced by :data:`HIDDEN` (see the module's docstring)."""
    return LOOKS_SECRET.sub(HIDDEN, blank(text, known()))


def excepthook(kind: type[BaseException], error: BaseException | None, trace: TracebackType | None) -> None:
    """``sys.excepthook`` for the programs: an uncaught exception's traceback as Python prints it, through
    :func:`redact` (an interrupt too, as Python shows it)."""
    text = "".join(traceback.format_exception(kind, error if error is not None else kind(), trace))
    sys.stderr.write(redact(text))
    sys.stderr.flush()


class RedactingFormatter(logging.Formatter):
    """A log formatter whose every line (message and traceback) went through :func:`redact`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


@contextlib.contextmanager
def stderr_redacted() -> Iterator[None]:
    """What is written on standard error inside the block (argparse's usage error, which may repeat an argument)
    written out through :func:`redact`."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            yield
    finally:
        sys.stderr.write(redact(said.getvalue()))
