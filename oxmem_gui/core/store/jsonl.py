"""Reading event records from JSON Lines: one ``{"session_id", "sequence", "payload"}`` object per line."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ..errors import InvalidInputError, NotFoundError
from .events import validate_sequence, validate_session_id
from .inputs import check_json, loads_strict


class Record(NamedTuple):
    """One event to store; ``line`` is where it came from (for messages), when it came from a file."""

    session_id: str
    sequence: int
    payload: Any
    line: int | None = None


def parse_record(line: str, lineno: int) -> Record:
    """One line as a record; every problem is :class:`InvalidInputError` naming the line."""
    try:
        obj = loads_strict(line)
        if not isinstance(obj, dict):
            raise InvalidInputError("expected an object with session_id, sequence and payload")
        missing = [k for k in ("session_id", "sequence", "payload") if k not in obj]
        if missing:
            raise InvalidInputError(f"missing {', '.join(missing)}")
        sid, seq = obj["session_id"], obj["sequence"]
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise InvalidInputError("sequence must be an integer")
        validate_session_id(sid)
        validate_sequence(seq)
        check_json(obj["payload"], "payload")
    except InvalidInputError as exc:
        raise InvalidInputError(f"line {lineno}: {exc}") from None
    return Record(sid, seq, obj["payload"], lineno)


def read_jsonl(path: str | os.PathLike[str]) -> list[Record]:
    """All records of the file (blank lines skipped); the first bad line is an error naming its number. A byte
    order mark at its start (as some editors save UTF-8) is not part of the first record."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return [parse_record(line, n) for n, line in enumerate(fh, 1) if line.strip()]
    except FileNotFoundError as exc:
        raise NotFoundError(f"{path} does not exist") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text{_bad_line(path)}") from exc
    except IsADirectoryError as exc:
        raise InvalidInputError(f"{path} is a directory") from exc
    except PermissionError as exc:
        raise InvalidInputError(f"{path} cannot be read: permission denied") from exc


def _bad_line(path: str | os.PathLike[str]) -> str:
    """`` (line N)`` for the first line that is not UTF-8."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f" (line {n}, byte {exc.start + 1}: {raw[exc.start : exc.start + 1]!r})"
    return ""
