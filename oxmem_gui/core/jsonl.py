"""Reading event records from JSON Lines: one ``{"session_id", "sequence", "payload"}`` object per line."""

from __future__ import annotations

import json
import os
from typing import Any

from .errors import InvalidInputError, NotFoundError

Record = tuple[str, int, Any]


def parse_record(line: str, lineno: int) -> Record:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise InvalidInputError(f"line {lineno}: expected an object with session_id, sequence and payload")
    missing = [k for k in ("session_id", "sequence", "payload") if k not in obj]
    if missing:
        raise InvalidInputError(f"line {lineno}: missing {', '.join(missing)}")
    sid, seq = obj["session_id"], obj["sequence"]
    if not isinstance(sid, str) or not sid.strip():
        raise InvalidInputError(f"line {lineno}: session_id must be a non-empty string")
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidInputError(f"line {lineno}: sequence must be an integer")
    return sid, seq, obj["payload"]


def read_jsonl(path: str | os.PathLike[str]) -> list[Record]:
    """All records of the file (blank lines skipped); the first bad line is an error naming its number."""
    try:
        with open(path, encoding="utf-8") as fh:
            return [parse_record(line, n) for n, line in enumerate(fh, 1) if line.strip()]
    except FileNotFoundError as exc:
        raise NotFoundError(f"{path} does not exist") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text") from exc
    except IsADirectoryError as exc:
        raise InvalidInputError(f"{path} is a directory") from exc
