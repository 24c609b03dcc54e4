"""aidaemon's rows as oxmem's types (see :mod:`.aidaemon`): events and legacy messages as message payloads, embeddings
(flat float32 or a legacy JSON array), episodes as notes, legacy scheduled tasks as schedules, and the times and
numbers the agent writes in more than one form."""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from zoneinfo import available_timezones

import apsw
import numpy as np

from ..embeddings.indexing import dumps
from ..embeddings.model_files import MODEL_DIMS
from ..schedules.store import Schedule
from ..store.notes import Note
from ..store.tags import normalize_tags
from .times import parse_when, rfc3339, shown_time
from .value_budget import json_values, too_many

#: AllMiniLM-L6-v2 as flat little-endian float32
BINARY_EMBEDDING_BYTES = MODEL_DIMS * 4

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


# -- tables ---------------------------------------------------------------------------------------------


def table_names(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def table_columns(conn: apsw.Connection, table: str) -> list[str]:
    quoted = '"' + table.replace('"', '""') + '"'
    return [r[1] for r in conn.execute(f"PRAGMA table_info({quoted})")]


def select_list(conn: apsw.Connection, table: str, wanted: list[str]) -> str:
    """The columns ``wanted`` in order, ``NULL`` for those an older version of the table lacks."""
    have = set(table_columns(conn, table)) | {"rowid"}
    return ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)


def session_exists(conn: apsw.Connection, session_id: str, tables: set[str]) -> bool:
    return any(
        t in tables and conn.execute(f"SELECT 1 FROM {t} WHERE session_id = ? LIMIT 1", (session_id,)).fetchall()
        for t in ("events", "messages", "episodes")
    )


# -- values ---------------------------------------------------------------------------------------------


def json_or_reason(value: Any) -> tuple[Any, str | None]:
    """Parsed JSON, or None and why not (also when it holds too many values to decode: :mod:`.value_budget`)."""
    if value is None:
        return None, "is empty (NULL)"
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if too_big := too_many(json_values(text)):
        return None, too_big
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        return None, f"is not JSON ({exc})"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _text_of(data: Any) -> str:
    """The readable text of an event's data: its ``text``, ``content``, ``message`` or ``result``, else the
    compact JSON."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        for key in ("text", "content", "message", "result"):
            value = data.get(key)
            if isinstance(value, str):
                return value
            if value is not None:
                return _compact(value)
    return _compact(data)


def _said(data: Mapping[str, Any]) -> str:
    """The text of a message's data (``text``, ``content`` or ``message``), or empty."""
    for key in ("text", "content", "message"):
        if isinstance(data.get(key), str):
            return data[key]
    return ""


def shown_or_none(value: Any) -> str | None:
    return None if value is None else shown_time(value)


def when_key(value: Any) -> datetime:
    return parse_when(value) or _EARLIEST


def id_key(row: Mapping[str, Any]) -> int:
    return int_or_zero(row.get("id"))


def int_or_zero(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def float_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def raw_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return str(value).encode("utf-8", "replace")


def decode_embedding(value: Any) -> np.ndarray | str:
    """An embedding as aidaemon's ``decode_embedding`` reads it: 1536 bytes are 384 little-endian float32, a
    value starting with ``[`` is a legacy JSON array; anything else is an error (returned as its reason)."""
    raw = raw_bytes(value)
    if len(raw) == BINARY_EMBEDDING_BYTES:
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if raw[:1] == b"[":
        parsed, problem = json_or_reason(raw)
        if problem:
            return f"legacy JSON embedding {problem}"
        if not isinstance(parsed, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in parsed
        ):
            return "legacy JSON embedding is not an array of numbers"
        return np.asarray(parsed, dtype=np.float32).astype(np.float64)
    first = f"0x{raw[0]:02x}" if raw else "none"
    return f"unknown embedding encoding: {len(raw)} bytes (first byte {first}); neither 1536 bytes nor JSON"


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """aidaemon's ``cosine_similarity``: 0.0 when either vector has no length."""
    a = np.asarray(a, dtype=np.float64)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def episode_topics(value: Any) -> list[str]:
    """Episode topics: a JSON array, or comma-separated text."""
    if value is None:
        return []
    parsed, problem = json_or_reason(value)
    if problem is None and isinstance(parsed, list):
        items = [str(x).strip() for x in parsed if x is not None]
    else:
        text = parsed if problem is None and isinstance(parsed, str) else str(value)
        items = [part.strip() for part in text.split(",")]
    return [t for t in items if t]


def _tags(topics: Iterable[str]) -> list[str]:
    try:
        return normalize_tags(list(topics))
    except Exception:  # noqa: BLE001 - a topic oxmem's tags refuse is left out, never fatal
        return []


# -- sessions ------------------------------------------------------------------------------------------


@dataclass
class Span:
    """The first and last time among a session's rows (text that is no time is kept only if nothing parses)."""

    first: datetime | None = None
    last: datetime | None = None
    first_text: str = ""
    last_text: str = ""

    def widen(self, value: Any) -> None:
        when = parse_when(value)
        if when is None:
            text = "" if value is None else str(value)
            self.first_text = min(self.first_text, text) if self.first_text else text
            self.last_text = max(self.last_text, text)
            return
        self.first = when if self.first is None else min(self.first, when)
        self.last = when if self.last is None else max(self.last, when)

    def include(self, other: Span) -> None:
        """Widen to cover ``other`` too (a session with rows in two tables)."""
        for when in (other.first, other.last):
            if when is not None:
                self.first = when if self.first is None else min(self.first, when)
                self.last = when if self.last is None else max(self.last, when)
        for text in (other.first_text, other.last_text):
            if text:
                self.first_text = min(self.first_text, text) if self.first_text else text
                self.last_text = max(self.last_text, text)

    def first_shown(self) -> str:
        return rfc3339(self.first) if self.first else self.first_text

    def last_shown(self) -> str:
        return rfc3339(self.last) if self.last else self.last_text


def latest_episodes(conn: apsw.Connection, session_id: str | None = None) -> dict[str, dict[str, Any]]:
    """Each session's newest episode (by created_at, then id)."""
    cols = table_columns(conn, "episodes")
    if "session_id" not in cols:
        return {}
    sql, args = "SELECT * FROM episodes", ()
    if session_id is not None:
        sql, args = sql + " WHERE session_id = ?", (session_id,)
    latest: dict[str, dict[str, Any]] = {}
    for r in conn.execute(sql, args):
        row = dict(zip(cols, r, strict=False))
        sid = row.get("session_id")
        if sid is None:
            continue
        key = (when_key(row.get("created_at")), id_key(row))
        if str(sid) not in latest or key > latest[str(sid)]["__key"]:
            latest[str(sid)] = {**row, "__key": key}
    for row in latest.values():
        del row["__key"]
    return latest


# -- events ---------------------------------------------------------------------------------------------


def _tool_calls(value: Any) -> list[dict[str, Any]]:
    """Tool calls as the views take them (``{id, name, arguments}``), from aidaemon's or OpenAI's shape."""
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if not isinstance(item, dict):
            continue
        function = item.get("function") if isinstance(item.get("function"), dict) else {}
        out.append(
            {
                "id": item.get("id"),
                "name": item.get("name") or function.get("name"),
                "arguments": item["arguments"] if "arguments" in item else function.get("arguments"),
            }
        )
    return out


def event_payload(
    event_id: Any,
    event_type: Any,
    data_text: Any,
    created_at: Any,
    consolidated_at: Any,
    task_id: Any,
    tool_name: Any,
) -> dict[str, Any]:
    kind = str(event_type)
    extra: dict[str, Any] = {
        "event_type": event_type,
        "task_id": task_id,
        "tool_name": tool_name,
        "consolidated_at": consolidated_at,
    }
    data, problem = json_or_reason(data_text)
    if problem:
        raw = data_text.decode("utf-8", "replace") if isinstance(data_text, bytes) else data_text
        shown = "" if raw is None else f": {str(raw)[:200]!r}"
        return {
            "role": "system",
            "content": f"⚠ unreadable row: event {event_id} ({kind}) has data that {problem}{shown}",
            **extra,
            "raw_data": raw,
        }
    extra["data"] = data
    fields = data if isinstance(data, dict) else {}
    if kind == "user_message":
        return {"role": "user", "content": _text_of(data), **extra}
    if kind == "assistant_response":
        # a response with only tool calls has no text (its data is not shown as JSON)
        text = _text_of(data) if not isinstance(data, dict) else _said(data)
        payload = {"role": "assistant", "content": text, **extra}
        calls = _tool_calls(fields.get("tool_calls"))
        if calls:
            payload["tool_calls"] = calls
        return payload
    if kind == "tool_call":
        call = {
            "id": fields.get("tool_call_id") or fields.get("id") or f"event-{event_id}",
            "name": tool_name or fields.get("name"),
            "arguments": fields.get("arguments"),
        }
        summary = fields.get("summary") or fields.get("text") or fields.get("content")
        return {
            "role": "assistant",
            "content": summary if isinstance(summary, str) else "",
            "tool_calls": [call],
            **extra,
        }
    if kind == "tool_result":
        payload = {"role": "tool", "content": _text_of(data), **extra}
        if fields.get("tool_call_id") is not None:
            payload["tool_call_id"] = str(fields["tool_call_id"])
        return payload
    return {"role": "system", "content": f"[{kind}] {_text_of(data)}", **extra}


def message_payload(
    rowid: Any,
    message_id: Any,
    role: Any,
    content: Any,
    tool_call_id: Any,
    tool_name: Any,
    tool_calls_json: Any,
    created_at: Any,
    importance: Any,
    consolidated_at: Any,
    embedding_error: Any,
) -> dict[str, Any]:
    """A legacy ``messages`` row as a message object; its own fields under extra keys."""
    text = "" if content is None else str(content)
    payload: dict[str, Any] = {}
    if role in ("user", "assistant", "system", "tool"):
        payload["role"] = role
    else:
        payload["role"] = "system"
        payload["original_role"] = role
        text = f"[{role}] {text}"
    payload["content"] = text
    if tool_call_id is not None:
        payload["tool_call_id"] = str(tool_call_id)
    if tool_calls_json is not None:
        parsed, problem = json_or_reason(tool_calls_json)
        calls = _tool_calls(parsed) if problem is None else []
        if calls:
            payload["tool_calls"] = calls
        elif problem is not None or parsed not in ([], None):
            shown = str(tool_calls_json)[:200]
            payload["content"] = (text + "\n" if text else "") + f"⚠ unreadable tool_calls_json: {shown!r}"
        payload["tool_calls_json"] = tool_calls_json
    payload.update(
        {
            "message_id": message_id,
            "tool_name": tool_name,
            "importance": importance,
            "consolidated_at": consolidated_at,
        }
    )
    if embedding_error is not None:
        payload["embedding_error"] = embedding_error
    return payload


# -- notes: episodes ---------------------------------------------------------------------------------------


def episode_notes(conn: apsw.Connection, group: str) -> list[Note]:
    cols = table_columns(conn, "episodes")
    notes = []
    for r in conn.execute("SELECT * FROM episodes"):
        row = dict(zip(cols, r, strict=False))
        created = shown_or_none(row.get("created_at"))
        details: dict[str, Any] = {"id": row.get("id")}
        for key in ("importance", "emotional_tone", "outcome", "session_id", "message_count", "recall_count"):
            if key in cols:
                details[key] = row.get(key)
        details["start"] = shown_or_none(row.get("start_time"))
        details["end"] = shown_or_none(row.get("end_time"))
        if "last_recalled_at" in cols:
            details["last_recalled_at"] = shown_or_none(row.get("last_recalled_at"))
        if "channel_id" in cols:
            details["channel_id"] = row.get("channel_id")
        notes.append(
            Note(
                f"episode:{row.get('id')}",
                group,
                str(row.get("summary") or ""),
                _tags(episode_topics(row.get("topics"))),
                created,
                created,
                int_or_zero(row.get("id")),
                details,
            )
        )
    notes.sort(key=lambda n: (when_key(n.created_at), n.sequence), reverse=True)
    return notes


# -- schedules ------------------------------------------------------------------------------------------


def five_field_cron(cron: Any) -> tuple[str, str | None]:
    """aidaemon's cron (croner takes an optional leading seconds field) as oxmem's five fields, and a note when the
    seconds field was dropped."""
    fields = str(cron or "").split()
    if len(fields) == 6:
        return " ".join(fields[1:]), f"seconds field {fields[0]!r} dropped (oxmem's cron has five fields)"
    return " ".join(fields), None


def _task_schedule(
    row: Mapping[str, Any], user: str, name: str | None, goal: str, cadence: Mapping[str, Any], status: str,
    notes: list[str],
) -> Schedule:  # fmt: skip
    """What both layouts' rows share: id, times, runs (neither keeps a run history or failures)."""
    created = shown_time(row.get("created_at"))
    return Schedule(
        str(row.get("id")),
        user,
        name,
        goal,
        dumps(cadence),
        "always",
        status,
        created,
        shown_time(row.get("updated_at")) if row.get("updated_at") is not None else created,
        shown_or_none(row.get("next_run_at")),
        shown_or_none(row.get("last_run_at")),
        None,
        0,
        None,
        None,
        "; ".join(notes) or None,
    )


def legacy_schedule(row: Mapping[str, Any]) -> Schedule:
    """A legacy ``scheduled_tasks`` row. aidaemon evaluates cron with croner in UTC (standard weekdays,
    Sunday = 0); one-shots are deleted once they fire, so a one-shot row is always still to come."""
    notes = []
    if row.get("original_schedule"):
        notes.append(f"as written: {row['original_schedule']!r}")
    cron, dropped = five_field_cron(row.get("cron_expr"))
    notes += [dropped] if dropped else []
    next_run = row.get("next_run_at")
    if row.get("is_oneshot") and parse_when(next_run) is not None:
        cadence = {"type": "once", "at": shown_time(next_run)}
        notes.append(f"one-shot (cron {row.get('cron_expr')!r}); aidaemon deletes it after it fires")
    else:
        cadence = {"type": "cron", "expression": cron, "timezone": "UTC"}
        if row.get("is_oneshot"):
            notes.append("one-shot without a next run time: shown by its cron")
    if row.get("is_trusted"):
        notes.append("trusted (runs in a trusted session)")
    status = "paused" if row.get("is_paused") else "active"
    return _task_schedule(
        row, str(row.get("source") or "aidaemon"), row.get("name"), str(row.get("prompt") or ""), cadence, status,
        notes,
    )  # fmt: skip


#: the IANA zone names (a walk of the tz database's folders: done once)
_ZONES = functools.cache(available_timezones)


def local_zone() -> str:
    """This machine's IANA time zone — aidaemon's ``tz = 'local'`` when the inspector runs beside the agent
    (``$TZ``, else the ``/etc/localtime`` link), ``UTC`` when neither names one."""
    name = os.environ.get("TZ", "").lstrip(":")
    if not name:
        try:
            target = os.readlink("/etc/localtime")
        except OSError:
            target = ""
        name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""
    return name if name in _ZONES() else "UTC"


def goal_schedule(row: Mapping[str, Any], zone: str) -> Schedule:
    """A ``goal_schedules`` row (v0.9+) with its goal's ``description``, ``status`` and ``session_id``. aidaemon
    fires it by its cron in ``tz`` — only ``'local'`` is supported there, read as this machine's zone."""
    notes = []
    if row.get("original_schedule"):
        notes.append(f"as written: {row['original_schedule']!r}")
    tz = str(row.get("tz") or "local")
    if tz == "local":
        notes.append(f"tz 'local': the agent machine's zone, read as this one's ({zone})")
    cron, dropped = five_field_cron(row.get("cron_expr"))
    notes += [dropped] if dropped else []
    next_run = row.get("next_run_at")
    if row.get("is_one_shot") and parse_when(next_run) is not None:
        cadence: dict[str, Any] = {"type": "once", "at": shown_time(next_run)}
    else:
        cadence = {"type": "cron", "expression": cron, "timezone": zone if tz == "local" else tz}
    goal_status = str(row.get("goal_status") or "active")
    if goal_status not in ("active", "paused"):
        status = "disabled"
        notes.append(f"its goal is {goal_status}")
    else:
        status = "paused" if row.get("is_paused") or goal_status == "paused" else "active"
    notes.append(f"goal {row.get('goal_id')}, fire policy {row.get('fire_policy') or 'coalesce'}")
    description = str(row.get("description") or "")
    words = description.split()
    name = " ".join(words[:8]) + (" …" if len(words) > 8 else "") or None
    return _task_schedule(row, str(row.get("session_id") or "aidaemon"), name, description, cadence, status, notes)


# -- the recall -----------------------------------------------------------------------------------------
