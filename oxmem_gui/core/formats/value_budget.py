"""How many values a blob would decode into, counted before it is decoded, so that a small blob cannot become a
huge Python structure.

A byte of msgpack (``0x80``, an empty map) decodes into a Python dict of about 64 bytes, and three bytes of JSON
(``{},``) into another: an 8 MB checkpoint of empty maps took 1.2 GB to show. Another program's blob is decoded
only when it holds at most :data:`MAX_VALUES` values; else it is said to be too big to show, as a blob that does
not decode is. Counting costs one step per value and none per byte of a string or binary, and stops at the bound.
"""

from __future__ import annotations

#: the most values (containers, scalars, strings) one blob may decode into: about 100 MB of Python objects
MAX_VALUES = 1_000_000

#: msgpack's fixed-size headers: first byte → bytes after it (the payload of ints, floats, fixext)
_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}
_FIXED.update({0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8})
#: fixext 1, 2, 4, 8, 16: first byte → payload size (after the type byte)
_FIXEXT = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
#: headers with a length: first byte → (bytes of the length, whether it is an ext with a type byte after it)
_SIZED = {0xC4: (1, False), 0xC5: (2, False), 0xC6: (4, False), 0xD9: (1, False), 0xDA: (2, False)}
_SIZED.update({0xDB: (4, False), 0xC7: (1, True), 0xC8: (2, True), 0xC9: (4, True)})
#: array16/32 and map16/32: first byte → bytes of the count (the elements follow, counted as they come)
_CONTAINERS = {0xDC: 2, 0xDD: 4, 0xDE: 2, 0xDF: 4}


def msgpack_values(data: bytes, limit: int = MAX_VALUES) -> int:
    """The values in ``data``, msgpack, an extension's payload counted as the msgpack it holds (LangGraph's
    decoder decodes it so); more than ``limit`` stops the count at ``limit + 1``. Bytes that are not msgpack are
    counted as far as they go: the decoder itself says what is wrong with them."""
    count, pos, end = 0, 0, len(data)
    while pos < end and count <= limit:
        first = data[pos]
        pos += 1
        count += 1
        if first <= 0x7F or first >= 0xE0 or 0x80 <= first <= 0x9F:  # fixint, negative fixint, fixmap, fixarray
            continue
        if first <= 0xBF:  # fixstr
            pos += first & 0x1F
        elif first in _FIXED:
            pos += _FIXED[first]
        elif first in _FIXEXT:
            pos += 1 + _FIXEXT[first]
        elif first in _CONTAINERS:
            pos += _CONTAINERS[first]
        elif first in _SIZED:
            width, ext = _SIZED[first]
            size = int.from_bytes(data[pos : pos + width], "big")
            pos += width + ext
            if ext:
                count += msgpack_values(data[pos : pos + size], limit - count)
            pos += size
    return min(count, limit + 1)


def json_values(data: bytes | str, limit: int = MAX_VALUES) -> int:
    """An upper bound on the values in ``data``, JSON: one more than its commas, colons, brackets and braces (each
    value after the first is behind a comma or a key's colon, or opens a container; inside strings they count too,
    so the bound errs high). Counted by the bytes' own ``count``, at C speed; at most ``limit + 1``."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return min(1 + sum(raw.count(mark) for mark in (b"{", b"[", b",", b":")), limit + 1)


def too_many(count: int, limit: int = MAX_VALUES) -> str | None:
    """Why a blob of ``count`` values is not decoded, or None when it may be."""
    if count <= limit:
        return None
    return f"holds more than {limit:,} values: too big to show (oxmem decodes at most that many)"
