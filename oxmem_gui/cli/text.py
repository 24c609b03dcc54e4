"""Printing for a terminal and for scripts: stored text made harmless (:func:`safe`), one JSON document
(:func:`print_json`), plain tables, previews and a progress bar on a terminal."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

#: Control characters (C0, DEL, C1) and the invisible formatting ones that reorder or hide text in a terminal.
#: (lone surrogates too: an undecodable byte of a file name cannot be printed as UTF-8)
_INVISIBLE = r"\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ud800-\udfff\ufeff"


_UNSAFE = re.compile(rf"[\x00-\x1f{_INVISIBLE}]")


#: what JSON leaves raw inside strings (it escapes C0 itself; its own indentation newlines must stay)
UNSAFE_IN_JSON = re.compile(rf"[{_INVISIBLE}]")


def safe(text: object, keep_newlines: bool = False) -> str:
    """Stored data made harmless for a terminal: control characters (an ``ESC]0;…BEL`` in a session id would
    retitle the terminal) and bidirectional overrides are shown as escapes like ``\\x1b``, never sent raw."""

    def escape(m: re.Match[str]) -> str:
        c = m.group(0)
        if keep_newlines and c == "\n":
            return c
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"

    return _UNSAFE.sub(escape, str(text))


def plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _finite(value: Any) -> Any:
    """``value`` with every float JSON cannot hold (``1e999``, NaN) as the string Python writes for it
    (``"inf"``, ``"-inf"``, ``"nan"``): what ``--json`` prints is always valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def print_json(value: Any) -> None:
    text = json.dumps(_finite(plain(value)), indent=2, ensure_ascii=False, allow_nan=False)
    # JSON escapes C0 controls itself; DEL, C1 and bidirectional controls are escaped too (inside strings, the
    # only place they can occur), so piping the document to a terminal is as safe as the table
    sys.stdout.write(UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n")


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[("" if v is None else safe(v)) for v in row] for row in rows]
    headers = [safe(h) for h in headers]  # a column name is the file's text too (``SELECT 1 AS "\x1b]0;…"``)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def preview(text: str, width: int = 70) -> str:
    text = safe(" ".join(str(text).split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def progress_printer() -> Callable[[str, int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(stage: str, done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r{stage:<10} [{'#' * filled}{' ' * (width - filled)}] {done}/{total}")
        if stage == "storing" and done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def cell_csv(value: Any) -> Any:
    """A cell for CSV: a BLOB as its hex, text with its control characters escaped (line ends kept: CSV quotes
    them), a number as it is."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.hex()
    return safe(value, keep_newlines=True) if isinstance(value, str) else value


def cell_json(value: Any) -> Any:
    """A cell for JSON: a BLOB as its hex (JSON has no bytes)."""
    return {"blob_hex": value.hex()} if isinstance(value, bytes) else value
