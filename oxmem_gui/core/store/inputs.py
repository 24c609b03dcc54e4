"""What the core accepts as a value: text that is valid Unicode, integers that fit SQLite, JSON it can read back.

Each check raises :class:`InvalidInputError` with one line naming the value, before anything is written:

* text must encode as UTF-8 — a lone surrogate (how Python carries an undecodable byte of a command line or a
  ``\\ud800`` escape of a JSON file) cannot be stored or searched;
* integers must fit SQLite's signed 64 bits;
* JSON must be what SQLite's JSON functions and any agent's parser read back: no ``NaN``/``Infinity``, nesting at
  most :data:`MAX_JSON_DEPTH` levels, integers of at most 4,300 digits (Python's own conversion limit).
"""

from __future__ import annotations

import json
from typing import Any

from ..embeddings.indexing import dumps
from ..errors import InvalidInputError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Deeper nesting is refused: far beyond any message an agent writes, well inside SQLite's JSON limit (1000).
MAX_JSON_DEPTH = 256


def check_text(value: Any, what: str, *, empty: bool = True) -> str:
    """``value`` as a string that UTF-8 can encode; ``empty=False`` also refuses blank text."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} is not valid UTF-8 text (character {exc.start + 1} is {value[exc.start]!r}, "
            "an undecodable byte or a lone surrogate)"
        ) from None
    if not empty and not value.strip():
        raise InvalidInputError(f"{what} is empty")
    return value


def check_int(value: Any, what: str, low: int = INT64_MIN, high: int = INT64_MAX) -> int:
    """``value`` as an integer in ``[low, high]`` (booleans are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{what} must be an integer, got {shown(value)}")
    if not low <= value <= high:
        raise InvalidInputError(f"{what} must be between {low:,} and {high:,}, got {shown(value)}")
    return value


def check_positive(value: Any, what: str, high: int = INT64_MAX) -> int:
    """A count or a limit: an integer from 1 to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidInputError(f"{what} must be a positive integer, got {shown(value)}")
    if value > high:
        raise InvalidInputError(f"{what} must be at most {high:,}, got {shown(value)}")
    return value


def shown(value: Any) -> str:
    """A value for a message, short: a 5,000-digit integer is named by its size, a value that cannot even be
    printed (nested 100,000 deep, holding such an integer) by its type."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= 60 else text[:57] + "…"


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (lists and dicts) nests deeper than ``limit``; iterative, so any depth is safe."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def check_json(value: Any, what: str) -> str:
    """``value`` serialized as the agent does (sorted keys, compact), after checking it can be stored and read
    back; returns the text."""
    if json_depth_exceeds(value):
        raise InvalidInputError(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        text = dumps(value)
    except ValueError as exc:  # NaN / Infinity, or an integer beyond Python's digit limit
        if "Out of range" in str(exc):
            raise InvalidInputError(f"{what} holds NaN or Infinity, which JSON cannot represent") from None
        raise InvalidInputError(f"{what} holds an integer of more than 4,300 digits") from None
    except TypeError as exc:
        raise InvalidInputError(f"{what} is not JSON data: {exc}") from None
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deeply") from None
    check_text(text, what)
    return text


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``/``Infinity``, and reports nesting or huge numbers as
    :class:`InvalidInputError` (the caller adds where: a line number)."""

    def no_constants(name: str) -> Any:
        raise InvalidInputError(f"{name} is not valid JSON")

    try:
        value = json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInputError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:  # Python's 4,300-digit limit on integers
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError("a number has too many digits (at most 4,300)") from None
    if json_depth_exceeds(value):
        raise InvalidInputError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    return value


def parse_stored(raw: Any) -> Any:
    """JSON from a row of the store, or the raw text when Python cannot read it as JSON (not JSON, a number of more
    than 4,300 digits, nesting deeper than the interpreter's stack): a foreign row is shown as it is, never fatal."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return raw
