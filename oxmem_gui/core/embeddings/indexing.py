"""The indexing pipeline's pure parts (contract §4): extract, normalize, chunk, hash, identify.

No I/O here; :mod:`oxmem_gui.core.events` writes what these functions produce.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import blake3

CHUNK_CHARS = 640
CHUNK_OVERLAP = 96
CHUNK_STRIDE = CHUNK_CHARS - CHUNK_OVERLAP

ROLES = ("system", "user", "assistant", "tool")

# Python's str.split() whitespace minus the information separators \x1c-\x1f (which Rust's
# split_whitespace, used by the agent, does not split on) — Unicode's White_Space, written out (working it out over
# every code point took 70 ms of every process's start; a test checks the two agree)
_WS_CHARS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)
_WS_RUN = re.compile(f"[{re.escape(_WS_CHARS)}]+")


def dumps(value: Any) -> str:
    """JSON as the agent writes it: sorted keys, compact separators, non-ASCII kept; never NaN or Infinity."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def normalize(text: str) -> str:
    """Collapse every run of whitespace to one space and trim the ends."""
    return " ".join(part for part in _WS_RUN.split(text) if part)


def content_hash(text: str) -> str:
    """Lowercase hex BLAKE3 of the UTF-8 text."""
    return blake3.blake3(text.encode("utf-8")).hexdigest()


def chunk_text(text: str) -> list[str]:
    """Windows of 640 code points, each starting 96 before the previous one ended; each normalized again.

    A text of at most 640 characters is one chunk; an empty text gives no chunks.
    """
    if not text:
        return []
    chunks = []
    start = 0
    while True:
        end = start + CHUNK_CHARS
        piece = normalize(text[start:end])
        if piece:
            chunks.append(piece)
        if end >= len(text):
            return chunks
        start += CHUNK_STRIDE


def chunk_id(session_id: str, sequence: int, chunk_index: int, digest: str) -> str:
    return f"chunk:{session_id}:{sequence}:{chunk_index}:{digest[:16]}"


class PayloadNotIndexable(ValueError):
    """The payload is stored but not indexed; the message says why."""


@dataclass(frozen=True)
class ExtractedText:
    text: str
    role: str
    source: str
    tool_call_id: str | None


def _tool_call_part(call: Any, index: int) -> str:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise PayloadNotIndexable(f"tool_calls[{index}] is not an object with a string 'name'")
    args = call.get("arguments")
    if args is None:
        return f"tool {call['name']} invocation"
    rendered = args if isinstance(args, str) else dumps(args)
    return f"tool {call['name']} arguments {rendered}"


def source_for(role: str, has_tool_calls: bool) -> str:
    if role == "tool":
        return "tool_output"
    if role == "assistant":
        return "assistant_tool_call" if has_tool_calls else "assistant_message"
    return f"{role}_message"


def extract_text(payload: Any) -> ExtractedText:
    """The indexable text of a message object, or :class:`PayloadNotIndexable` saying what is wrong."""
    if not isinstance(payload, dict):
        raise PayloadNotIndexable(f"payload is a JSON {type(payload).__name__}, not a message object")
    role = payload.get("role")
    if role not in ROLES:
        raise PayloadNotIndexable(f"payload role {role!r} is not one of {', '.join(ROLES)}")
    content = payload.get("content")
    if content is not None and not isinstance(content, str):
        raise PayloadNotIndexable("payload 'content' is not a string")
    calls = payload.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise PayloadNotIndexable("payload 'tool_calls' is not a list")
    tool_call_id = payload.get("tool_call_id")
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        raise PayloadNotIndexable("payload 'tool_call_id' is not a string")
    parts = []
    if content and content.strip():
        parts.append(content.strip())
    parts.extend(_tool_call_part(call, i) for i, call in enumerate(calls or []))
    return ExtractedText("\n".join(parts), role, source_for(role, bool(calls)), tool_call_id)
