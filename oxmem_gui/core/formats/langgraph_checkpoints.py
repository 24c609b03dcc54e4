"""LangGraph's ``SqliteSaver`` checkpoints (``langgraph-checkpoint-sqlite`` 3.1.2 with ``langgraph-checkpoint``
4.3, ``langgraph/checkpoint/sqlite/__init__.py``): each thread's conversation and its checkpoints, read-only.

What LangGraph writes
=====================
``setup()`` (lines 134–186) creates ``checkpoints(thread_id, checkpoint_ns DEFAULT '', checkpoint_id,
parent_checkpoint_id, type, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))``
(lines 147–156) and ``writes(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path DEFAULT '', idx, channel,
type, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))`` (lines 157–168);
``task_path`` is added by ``ALTER TABLE`` to older files (line 175), so a file may lack it. The names are fixed in
its SQL; the file is found by the columns (:func:`.detect.langgraph_checkpoint_tables`), never by its name.

* ``put`` (lines 400–456) is ``INSERT OR REPLACE`` of one checkpoint: ``type`` and ``checkpoint`` are
  ``serde.dumps_typed(checkpoint)``; ``metadata`` is ``json.dumps(…)`` as UTF-8 bytes (line 434) — JSON, not the
  serializer's; ``parent_checkpoint_id`` is the checkpoint the run went on from. A checkpoint (``Checkpoint``,
  ``checkpoint/base/__init__.py``) holds ``v``, ``id``, ``ts`` (ISO 8601), ``channel_values`` (the graph's state:
  ``messages`` for ``MessagesState``), ``channel_versions``, ``versions_seen`` and, in ``v`` 4,
  ``updated_channels``; the metadata ``source`` (``input``, ``loop``, ``update``, ``fork``), ``step``, ``parents``
  (older versions: ``writes``, what each node wrote).
* ``put_writes`` (lines 458–496) keeps what each task wrote to each channel against the checkpoint it ran from
  (the writes of the next step, or pending ones of a step that was interrupted or failed), each ``value`` through
  the serializer.
* ``get_tuple`` without an id reads the thread's checkpoint with the greatest ``checkpoint_id`` (line 259);
  ``list`` reads them ``ORDER BY checkpoint_id DESC`` (line 354), each with its writes sorted by ``(task_path,
  task_id, idx)`` (``utils.py``, ``load_pending_writes``).

The serializer is ``JsonPlusSerializer`` (``checkpoint/serde/jsonplus.py``): ``loads_typed`` (lines 295–312) reads
``null``, ``bytes``, ``bytearray``, ``json`` (files from before msgpack, with LangChain's ``lc`` objects) and
``msgpack`` (``ormsgpack`` with ``OPT_NON_STR_KEYS``), and ``pickle`` only with ``pickle_fallback=True``;
``EncryptedSerializer`` (``serde/encrypted.py``) writes ``msgpack+aes`` and the like. Objects are msgpack
extensions (lines 317–324, built in ``_msgpack_default``, 327–556): a tuple ``(module, name, data[, method])``
which LangGraph's ``ext_hook`` (568–770) turns back into the class by **importing the module it names** — a
LangChain message is extension 5 (pydantic v2) with the message's ``model_dump()`` as ``data``.

How oxmem decodes
=================
Without LangGraph and without running anything from the file: msgpack with ``ormsgpack`` itself (the decoder
LangGraph uses, so a blob reads here exactly when it reads there), through an extension hook of its own that
imports nothing — each extension becomes an :class:`Ext`, the class it names and the data it was built from
(shown as ``{"__type__": "module.Name", "value": …}``); ``json`` with :func:`json.loads` and no reviver (LangChain's
``lc`` objects stay dicts). **``pickle`` is never unpickled** (unpickling runs code the file chooses): such a
checkpoint is shown flagged, not decoded; an encrypted one too (its key is in the program).

What oxmem shows
================
Each thread is a session (*Threads*, one *thread*): its ``thread_id``, or ``thread_id|checkpoint_ns`` for a
subgraph's namespace. Its events are the messages of its **latest checkpoint** (the one ``get_tuple`` and
``graph.get_state`` read) — ``channel_values["messages"]``, or the first channel holding a list of messages —,
numbered from 1: a human message as the user's, an AI message as the assistant's (its ``tool_calls`` as
``{"id", "name", "arguments"}`` with the arguments as JSON text; its ``invalid_tool_calls`` with their ``error``), a
tool message as the tool's (``tool_call_id``), a system message as the system's; the message as stored under
``message`` and its class under ``message_class``. An event's time is the ``ts`` of the first checkpoint of the
thread that holds a message with its id; a thread's times are its first and latest checkpoints' (a checkpoint
whose ``ts`` cannot be read: the time in its id, a UUID 6 made with it). A graph whose state has no messages shows
its channels, one event each. The session's ``details``: checkpoints, the latest one's id, step and source (and
``writes``, where older versions kept them), and ``problems``. The stored channel values are shown as they are:
writes pending at the latest checkpoint are listed in its timeline entry, not merged in (``get_state`` applies
those of a null task, ``pregel/main.py`` 1316–1322).

:meth:`LangGraphCheckpointsReader.checkpoints` is the thread's timeline, newest first as ``list`` gives it — each
checkpoint's id, parent, step, source, ``ts``, the channels it changed (``updated_channels``, or its channel
versions against its parent's), how many messages it holds, its writes and problems —, and
:meth:`~LangGraphCheckpointsReader.events_at` the messages as of any one of them. Search is oxmem's keyword search
(:mod:`.keywords`): LangGraph keeps none over its threads.

Hazards (flagged, never fatal): a blob that does not decode (LangGraph's ``get_tuple``/``list`` raise on it); a
``pickle`` or encrypted blob (not decoded, and said why); a checkpoint whose parent is not in the file; writes of a
checkpoint that is no longer there; a message channel that holds no value at the latest checkpoint (a
``DeltaChannel``, beta, which LangGraph rebuilds by replaying earlier writes: oxmem does not replay them). ``info``
names every one of them in the file.

Why nothing is edited
=====================
``EDITS`` is empty. ``SqliteSaver`` deletes only a whole thread (``delete_thread``, lines 498–515: every checkpoint
and write of the ``thread_id``, in every namespace); ``delete_for_runs``, ``copy_thread`` and ``prune``
(``checkpoint/base/__init__.py`` 355–440) are not implemented by it. No operation of the library deletes "the
checkpoints after this one": LangGraph's time travel does not rewind a thread, it **forks** — running from a past
checkpoint (``graph.invoke(…, config)`` with its ``checkpoint_id``, or ``update_state`` on it: ``source``
``update``, or ``fork`` for a copy, ``pregel/main.py`` 1904) writes new checkpoints whose parent is that one and keeps
every later one. A rewind by deleting
would be oxmem's invention, so it is left out.

A file that holds both this and LangGraph's store (``store``, :mod:`.langgraph_store`: a program may keep both in
one file) is read as checkpoints (detection tries them first); ``info`` then says how many store items there are,
which the table browser shows.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import apsw

from ..errors import NotFoundError
from ..store.browse import SessionRow
from ..store.events import Event
from .base import Capabilities
from .detect import column_set, langgraph_store_tables
from .keywords import KeywordSearch
from .times import rfc3339, shown_time
from .value_budget import json_values, msgpack_values, too_many

_ormsgpack: Any
try:  # LangGraph's own msgpack decoder (a dependency of langgraph-checkpoint)
    import ormsgpack as _ormsgpack
except ImportError:  # pragma: no cover - then msgpack blobs are flagged as not decoded
    _ormsgpack = None

#: the thread and a subgraph's namespace in a session's id
SEPARATOR = "|"
#: LangGraph's msgpack extension codes (jsonplus.py 317–324)
EXT_METHOD_SINGLE_ARG, EXT_PYDANTIC_V2 = 3, 5
EXT_NUMPY_ARRAY, EXT_DELTA_SNAPSHOT = 6, 7
#: the types ``loads_typed`` reads without a key (jsonplus.py 295–312; ``pickle`` only with pickle_fallback)
DECODED_TYPES = ("null", "bytes", "bytearray", "json", "msgpack")
PICKLE = (
    "is of type 'pickle' (a serializer with pickle_fallback=True wrote it) and is not decoded: unpickling runs code "
    "the file chooses, so oxmem never does; LangGraph loads it only with pickle_fallback=True, else raises"
)
#: roles of LangChain's message types (``type``, or the class name less ``Message`` / ``MessageChunk``)
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}
CHAT_ROLES = {**ROLES, "user": "user", "assistant": "assistant", "developer": "system"}
#: the deepest a value is shown (deeper parts are cut, said where)
_DEPTH = 100


# -- decoding -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Ext:
    """An object LangGraph's serializer wrote as a msgpack extension, not rebuilt: its extension ``code``, the
    class it names (``module.Name``), the data it was built from, the method named (extension 3: a ``datetime``'s
    ``fromisoformat``), and why it could not be read, if it could not (LangGraph reads such a one as None)."""

    code: int
    type: str
    value: Any = None
    method: str | None = None
    problem: str | None = None


def _unpack(data: bytes) -> Any:
    return _ormsgpack.unpackb(data, ext_hook=_ext_hook, option=_ormsgpack.OPT_NON_STR_KEYS)


def _ext_hook(code: int, data: bytes) -> Any:
    """One extension as an :class:`Ext`: its payload decoded (its own extensions too), no module imported."""
    try:
        inner = _unpack(data)
    except Exception as exc:  # foreign bytes: whatever the decoder raises is said, never raised
        return Ext(code, f"msgpack extension {code}", problem=f"does not decode ({exc}); LangGraph reads it as None")
    if code == EXT_DELTA_SNAPSHOT:
        return Ext(code, "langgraph.checkpoint.serde.types._DeltaSnapshot", inner)
    if code == EXT_NUMPY_ARRAY and isinstance(inner, list) and len(inner) == 4:
        dtype, shape, order, buf = inner
        size = len(buf) if isinstance(buf, (bytes, bytearray)) else None
        return Ext(code, "numpy.ndarray", {"dtype": dtype, "shape": shape, "order": order, "bytes": size})
    named = isinstance(inner, list) and len(inner) >= 3 and isinstance(inner[0], str) and isinstance(inner[1], str)
    if code <= EXT_PYDANTIC_V2 and named:
        method = inner[3] if code == EXT_METHOD_SINGLE_ARG and len(inner) > 3 else None
        return Ext(code, f"{inner[0]}.{inner[1]}", inner[2], method if isinstance(method, str) else None)
    unknown = "of a kind LangGraph does not know; it reads it as None"
    return Ext(code, f"msgpack extension {code}", inner, problem=unknown)


def decode(kind: Any, blob: Any) -> tuple[Any, str | None]:
    """``(value, None)``: a blob of ``type`` ``kind`` as ``loads_typed`` reads it, objects left as :class:`Ext` or
    LangChain's ``lc`` dicts; or ``(None, why)`` when it is not read (nothing from the file is ever run)."""
    if kind == "null":
        return None, None
    if kind in ("bytes", "bytearray"):
        return (bytes(blob) if isinstance(blob, (bytes, bytearray)) else blob), None
    if kind == "pickle":
        return None, PICKLE
    if isinstance(kind, str) and "+" in kind:
        return None, (
            f"is of type {kind!r}, encrypted by the program's EncryptedSerializer, whose key is not in the file: not "
            "decoded"
        )
    if kind not in DECODED_TYPES:
        return None, (
            f"is of type {kind!r}, which LangGraph's serializer does not read (it raises 'Unknown serialization type')"
        )
    if kind == "json":
        data = blob.encode("utf-8", "surrogatepass") if isinstance(blob, str) else blob
        if not isinstance(data, (bytes, bytearray)):
            return None, f"is {'NULL' if blob is None else type(blob).__name__}, not JSON"
        if too_big := too_many(json_values(data)):
            return None, too_big
        try:
            return json.loads(data), None
        except (ValueError, RecursionError) as exc:
            return None, f"is not JSON ({exc})"
    if not isinstance(blob, (bytes, bytearray)):
        what = "NULL" if blob is None else "text" if isinstance(blob, str) else type(blob).__name__
        return None, f"is {what}, not msgpack bytes"
    if _ormsgpack is None:  # pragma: no cover
        return None, "not decoded: ormsgpack (the msgpack decoder LangGraph uses) is not installed"
    if too_big := too_many(msgpack_values(blob)):
        return None, too_big
    try:
        return _unpack(bytes(blob)), None
    except Exception as exc:  # foreign bytes: whatever the decoder raises is said, never raised
        return None, f"does not decode as msgpack ({exc})"


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    return json.dumps(plain(key), ensure_ascii=False, default=str)


def plain(value: Any, depth: int = 0) -> Any:
    """A decoded value as JSON holds it: an :class:`Ext` as ``{"__type__", "value"}`` (with ``method`` or
    ``problem``), bytes as their size, keys that are no text as their JSON."""
    if depth > _DEPTH:
        return f"… (nested deeper than {_DEPTH})"
    if isinstance(value, Ext):
        out: dict[str, Any] = {"__type__": value.type, "value": plain(value.value, depth + 1)}
        if value.method:
            out["method"] = value.method
        if value.problem:
            out["problem"] = value.problem
        return out
    if isinstance(value, dict):
        return {_key(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"__type__": "bytes", "size": len(value)}
    return value


def _metadata(blob: Any) -> tuple[dict[str, Any], str | None]:
    """A checkpoint's metadata (JSON: line 434), or ``{}`` and why not (LangGraph's ``json.loads`` raises)."""
    if blob is None:
        return {}, None
    if isinstance(blob, (str, bytes)) and (too_big := too_many(json_values(blob))):
        return {}, f"its metadata {too_big}"
    try:
        found = json.loads(blob)
    except (ValueError, TypeError, RecursionError) as exc:
        return {}, f"its metadata is not JSON ({exc}): LangGraph's get_tuple and list raise on it"
    if not isinstance(found, dict):
        return {}, f"its metadata is JSON but no object ({type(found).__name__})"
    return found, None


# -- messages -----------------------------------------------------------------------------------------------------


def _message_class(name: str) -> bool:
    return name.endswith(("Message", "MessageChunk"))


def as_message(item: Any) -> tuple[str, dict[str, Any]] | None:
    """``(class, fields)`` of a LangChain message as stored — a msgpack extension naming a ``…Message`` class with
    its fields (``model_dump()``), or a ``json`` file's ``lc`` constructor dict —, else None."""
    if isinstance(item, Ext) and isinstance(item.value, dict) and _message_class(item.type.rsplit(".", 1)[-1]):
        return item.type, item.value
    if (
        isinstance(item, dict)
        and item.get("lc") in (1, 2)
        and item.get("type") == "constructor"
        and isinstance(item.get("id"), list)
        and item["id"]
        and all(isinstance(p, str) for p in item["id"])
        and _message_class(item["id"][-1])
        and isinstance(item.get("kwargs", {}), dict)
    ):
        return ".".join(item["id"]), dict(item.get("kwargs", {}))
    return None


def _kind(cls: str, fields: Mapping[str, Any]) -> str:
    """``human``, ``ai``, ``tool``…: the message's ``type``, or its class's name less ``Message``/``Chunk``."""
    kind = fields.get("type")
    name = kind if isinstance(kind, str) else cls.rsplit(".", 1)[-1]
    for suffix in ("MessageChunk", "Message", "Chunk"):
        if name.endswith(suffix) and name != suffix:
            name = name[: -len(suffix)]
            break
    return name.lower()


def content_text(content: Any) -> str:
    """A message's content as text: the string, or its blocks' texts one a line (a block without text by its
    type)."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False, default=str)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif isinstance(part, dict):
            parts.append(f"[{part.get('type', 'part')}]")
        else:
            parts.append(json.dumps(part, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _arguments(args: Any) -> Any:
    return args if isinstance(args, str) or args is None else json.dumps(args, ensure_ascii=False, default=str)


def tool_calls(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An AI message's tool calls as ``{"id", "name", "arguments"}`` (``args`` as JSON text), its
    ``invalid_tool_calls`` with their ``error``; an older message's OpenAI-style ``additional_kwargs.tool_calls``
    where it has no ``tool_calls``."""
    out = []
    calls = fields.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            out.append({"id": call.get("id"), "name": str(call.get("name")), "arguments": _arguments(call.get("args"))})
    bad = fields.get("invalid_tool_calls")
    for call in bad if isinstance(bad, list) else []:
        if isinstance(call, dict):
            out.append(
                {
                    "id": call.get("id"),
                    "name": str(call.get("name")),
                    "arguments": _arguments(call.get("args")),
                    "error": call.get("error"),
                }
            )
    extra = fields.get("additional_kwargs")
    if not isinstance(calls, list) and isinstance(extra, dict) and isinstance(extra.get("tool_calls"), list):
        for call in extra["tool_calls"]:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                out.append(
                    {"id": call.get("id"), "name": str(function.get("name")), "arguments": function.get("arguments")}
                )
    return out


def message_payload(item: Any) -> dict[str, Any]:
    """One item of a messages channel as the payload the views show (see the module's docstring); an item that is
    no message is a system line with its value."""
    found = as_message(item)
    if found is None:
        value = plain(item)
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        return {"role": "system", "content": f"[not a message] {shown}", "value": value}
    cls, fields = found
    message = plain(fields)
    kind = _kind(cls, fields)
    role = CHAT_ROLES.get(str(fields.get("role")), "system") if kind == "chat" else ROLES.get(kind, "system")
    payload: dict[str, Any] = {"role": role, "content": content_text(message.get("content"))}
    if kind == "remove":
        payload["content"] = f"[remove] message {message.get('id')}"
    calls = tool_calls(message)
    if calls:
        payload["tool_calls"] = calls
    if isinstance(message.get("tool_call_id"), str):
        payload["tool_call_id"] = message["tool_call_id"]
    if isinstance(message.get("name"), str):
        payload["name"] = message["name"]
    payload["message"] = message
    payload["message_class"] = cls
    return payload


# -- rows ---------------------------------------------------------------------------------------------------------


@dataclass
class PendingWrite:
    """One row of ``writes``: what a task wrote to a channel against a checkpoint (``value`` as :func:`plain`
    shows it; ``problem`` when it was not decoded)."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    type: str | None
    value: Any
    problem: str | None = None


@dataclass
class CheckpointInfo:
    """One checkpoint of a thread's timeline (:meth:`LangGraphCheckpointsReader.checkpoints`)."""

    checkpoint_id: str
    parent_id: str | None
    step: int | None
    source: str | None
    #: ``checkpoint["ts"]`` as written, and as the store shows a time (RFC 3339 UTC; unreadable: its id's time)
    ts: str | None
    created_at: str
    #: the channels this checkpoint changed (None: not known — the checkpoint or its parent is unreadable)
    changed: list[str] | None
    #: the messages it holds (None: no messages channel here, or unreadable)
    messages: int | None
    metadata: dict[str, Any]
    writes: list[PendingWrite] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class _Checkpoint:
    """One ``checkpoints`` row, decoded (``checkpoint`` None and ``problem`` said when it could not be)."""

    checkpoint_id: str
    parent_id: str | None
    checkpoint: dict[str, Any] | None
    problem: str | None
    metadata: dict[str, Any]
    metadata_problem: str | None

    @property
    def ts(self) -> str | None:
        ts = self.checkpoint.get("ts") if self.checkpoint is not None else None
        return ts if isinstance(ts, str) else None

    @property
    def when(self) -> str:
        """Its ``ts`` as shown; where that cannot be read, the time in its id (:func:`id_time`), else ``""``."""
        return shown_time(self.ts) if self.ts is not None else id_time(self.checkpoint_id) or ""


_UUID_EPOCH = datetime(1582, 10, 15, tzinfo=timezone.utc)


def id_time(checkpoint_id: str) -> str | None:
    """The time in a checkpoint's id — LangGraph's ids are UUID version 6 (``checkpoint/base/id.py``, ``uuid6``:
    60 bits of 100 ns since 1582-10-15), made with the checkpoint, microseconds from its ``ts`` — or None."""
    try:
        found = uuid.UUID(checkpoint_id)
    except ValueError:
        return None
    if found.version != 6:
        return None
    n = found.int
    ticks = ((n >> 96) << 28) | (((n >> 80) & 0xFFFF) << 12) | ((n >> 64) & 0x0FFF)
    try:
        return rfc3339(_UUID_EPOCH + timedelta(microseconds=ticks // 10))
    except OverflowError:
        return None


_COLUMNS = "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"


def _checkpoint(row: Any) -> _Checkpoint:
    checkpoint_id, parent, kind, blob, metadata = row
    value, problem = decode(kind, blob)
    if problem is None and not isinstance(value, dict):
        value, problem = None, f"is no map but {type(value).__name__}"
    meta, meta_problem = _metadata(metadata)
    return _Checkpoint(str(checkpoint_id), None if parent is None else str(parent), value, problem, meta, meta_problem)


def _read(conn: apsw.Connection, thread: str, ns: str, checkpoint_id: str | None = None) -> _Checkpoint:
    """The thread's checkpoint ``checkpoint_id``, or its latest (``get_tuple``'s, line 259)."""
    if checkpoint_id is None:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread, ns),
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, ns, checkpoint_id),
        ).fetchall()
    if not rows:
        raise NotFoundError(f"no checkpoint {checkpoint_id!r} in thread {session_name(thread, ns)!r}")
    return _checkpoint(rows[0])


def session_name(thread: str, ns: str) -> str:
    """A session's id: the thread's, with a subgraph's namespace after :data:`SEPARATOR`."""
    return thread if ns == "" else f"{thread}{SEPARATOR}{ns}"


def _exists(conn: apsw.Connection, thread: str, ns: str) -> bool:
    return bool(
        conn.execute(
            "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? LIMIT 1", (thread, ns)
        ).fetchall()
    )


def thread_of(conn: apsw.Connection, session_id: str) -> tuple[str, str]:
    """``(thread_id, checkpoint_ns)`` of a session's id (:func:`session_name`); :class:`NotFoundError` when the file
    has no checkpoint of it."""
    if _exists(conn, session_id, ""):
        return session_id, ""
    at = session_id.find(SEPARATOR)
    while at >= 0:
        thread, ns = session_id[:at], session_id[at + len(SEPARATOR) :]
        if ns and _exists(conn, thread, ns):
            return thread, ns
        at = session_id.find(SEPARATOR, at + 1)
    raise NotFoundError(f"no thread {session_id!r}")


def _has_writes(conn: apsw.Connection) -> set[str]:
    """The columns of ``writes`` (none when the file has no such table)."""
    return column_set(conn, "writes")


def _writes(conn: apsw.Connection, thread: str, ns: str) -> dict[str, list[PendingWrite]]:
    """The thread's writes by checkpoint id, each checkpoint's in ``load_pending_writes``' order."""
    columns = _has_writes(conn)
    if not columns:
        return {}
    path = "task_path" if "task_path" in columns else "''"
    out: dict[str, list[PendingWrite]] = {}
    for checkpoint_id, task_id, task_path, idx, channel, kind, blob in conn.execute(
        f"SELECT checkpoint_id, task_id, {path}, idx, channel, type, value FROM writes "
        "WHERE thread_id = ? AND checkpoint_ns = ?",
        (thread, ns),
    ):
        value, problem = decode(kind, blob)
        out.setdefault(str(checkpoint_id), []).append(
            PendingWrite(
                str(task_id),
                str(task_path or ""),
                int(idx) if isinstance(idx, int) else 0,
                str(channel),
                None if kind is None else str(kind),
                None if problem else plain(value),
                problem,
            )
        )
    for found in out.values():
        found.sort(key=lambda w: (w.task_path, w.task_id, w.idx))
    return out


def _message_list(checkpoint: _Checkpoint) -> tuple[str | None, list[Any] | None, str | None]:
    """``(channel, items, problem)``: the checkpoint's messages channel and what it holds — ``messages``, else the
    first channel holding a list of messages; ``(None, None, None)`` when it has none."""
    values = checkpoint.checkpoint.get("channel_values") if checkpoint.checkpoint is not None else None
    if not isinstance(values, dict):
        return None, None, None
    name = "messages" if "messages" in values else None
    for key, value in values.items():
        if name is None and isinstance(value, list) and value and all(as_message(v) for v in value):
            name = key
    if name is None:
        versions = checkpoint.checkpoint.get("channel_versions") if checkpoint.checkpoint is not None else None
        if isinstance(versions, dict) and "messages" in versions:
            counters = checkpoint.metadata.get("counters_since_delta_snapshot")
            if isinstance(counters, dict) and "messages" in counters:
                why = (
                    "its messages channel is a DeltaChannel (beta) that holds no value at this checkpoint: LangGraph "
                    "rebuilds it by replaying the writes of earlier checkpoints, which oxmem does not do"
                )
            else:
                why = "its messages channel has a version but holds no value at this checkpoint"
            return "messages", None, why
        return None, None, None
    value = values[name]
    if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
        value = value.value
    if not isinstance(value, list):
        return name, None, f"its {name} channel holds {type(value).__name__}, not a list of messages"
    return name, value, None


def _internal(channel: str) -> bool:
    """LangGraph's own channels (edges, triggers, the input), not the graph's state."""
    return channel.startswith(("branch:", "__", "start:", "join:")) and channel != "__root__"


def checkpoint_events(checkpoint: _Checkpoint, first_seen: Mapping[str, str] | None = None) -> list[Event]:
    """The events of one checkpoint: its messages, numbered from 1 (each at the time in ``first_seen`` of its id,
    else the checkpoint's); a graph without messages its state's channels; one flagged line when unreadable."""
    when = checkpoint.when
    where = f"checkpoint {checkpoint.checkpoint_id}"
    if checkpoint.problem is not None:
        content = f"⚠ {where} not shown: its blob {checkpoint.problem}"
        return [Event(1, when, {"role": "system", "content": content, "checkpoint_id": checkpoint.checkpoint_id})]
    name, items, problem = _message_list(checkpoint)
    if problem is not None:
        return [Event(1, when, {"role": "system", "content": f"⚠ {where}: {problem}", "channel": name})]
    if items is not None:
        seen = first_seen or {}
        events = []
        for i, item in enumerate(items, 1):
            payload = message_payload(item)
            message_id = payload.get("message", {}).get("id")
            events.append(Event(i, seen.get(message_id, when) if isinstance(message_id, str) else when, payload))
        return events
    values = checkpoint.checkpoint.get("channel_values") if checkpoint.checkpoint is not None else None
    events = []
    for channel, value in (values or {}).items() if isinstance(values, dict) else ():
        if _internal(str(channel)):
            continue
        shown = plain(value)
        text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, default=str)
        events.append(
            Event(
                len(events) + 1,
                when,
                {"role": "system", "content": f"{channel} = {text}", "channel": str(channel), "value": shown},
            )
        )
    return events


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _checkpoint_problems(checkpoint: _Checkpoint, known: set[str]) -> list[str]:
    out = []
    if checkpoint.problem is not None:
        out.append(f"its blob {checkpoint.problem}")
    if checkpoint.metadata_problem is not None:
        out.append(checkpoint.metadata_problem)
    if checkpoint.parent_id is not None and checkpoint.parent_id not in known:
        out.append(f"its parent checkpoint {checkpoint.parent_id} is not in the file")
    return out


def _step(metadata: Mapping[str, Any]) -> int | None:
    step = metadata.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def _source(metadata: Mapping[str, Any]) -> str | None:
    source = metadata.get("source")
    return source if isinstance(source, str) else None


@dataclass
class Timeline:
    """A thread's checkpoints newest first, and the time each message id was first held (shown)."""

    checkpoints: list[CheckpointInfo]
    first_seen: dict[str, str]


def timeline(conn: apsw.Connection, thread: str, ns: str) -> Timeline:
    """Every checkpoint of the thread (see :class:`CheckpointInfo`), decoded one at a time."""
    writes = _writes(conn, thread, ns)
    known = {
        str(r[0])
        for r in conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?", (thread, ns)
        )
    }
    versions: dict[str, dict[Any, Any] | None] = {}
    infos: list[tuple[CheckpointInfo, Any]] = []
    first_seen: dict[str, str] = {}
    for row in conn.execute(  # one blob at a time
        f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id",
        (thread, ns),
    ):
        cp = _checkpoint(row)
        problems = _checkpoint_problems(cp, known)
        name, items, problem = _message_list(cp)
        if problem is not None:
            problems.append(problem)
        when = cp.when
        for item in items or []:
            found = as_message(item)
            message_id = found[1].get("id") if found is not None else None
            if isinstance(message_id, str):
                first_seen.setdefault(message_id, when)
        own = writes.get(cp.checkpoint_id, [])
        for w in own:
            if w.problem is not None:
                problems.append(f"its write of task {w.task_id} to {w.channel} (idx {w.idx}) {w.problem}")
        cv = cp.checkpoint.get("channel_versions") if cp.checkpoint is not None else None
        versions[cp.checkpoint_id] = cv if isinstance(cv, dict) else None
        updated = cp.checkpoint.get("updated_channels") if cp.checkpoint is not None else None
        info = CheckpointInfo(
            cp.checkpoint_id,
            cp.parent_id,
            _step(cp.metadata),
            _source(cp.metadata),
            cp.ts,
            when,
            [str(c) for c in updated] if isinstance(updated, list) else None,
            None if items is None else len(items),
            plain(cp.metadata),
            own,
            problems,
        )
        infos.append((info, isinstance(updated, list)))
    for info, given in infos:  # channels changed, from the versions where the checkpoint does not name them
        mine = versions.get(info.checkpoint_id)
        if given or mine is None:
            continue
        if info.parent_id is None:
            info.changed = sorted(str(c) for c in mine)
            continue
        theirs = versions.get(info.parent_id)
        if theirs is not None:
            info.changed = sorted(str(c) for c, v in mine.items() if theirs.get(c) != v)
    return Timeline([info for info, _ in reversed(infos)], first_seen)


# -- the whole file ---------------------------------------------------------------------------------------------


def _orphan_writes(conn: apsw.Connection) -> list[tuple[str, str, int, int]]:
    """``(thread, ns, rows, checkpoints)`` of writes whose checkpoint is not in the file."""
    if not _has_writes(conn):
        return []
    return [
        (str(t), str(ns), int(n), int(c))
        for t, ns, n, c in conn.execute(
            "SELECT thread_id, checkpoint_ns, count(*), count(DISTINCT checkpoint_id) FROM writes w WHERE NOT EXISTS "
            "(SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns "
            "AND c.checkpoint_id = w.checkpoint_id) GROUP BY thread_id, checkpoint_ns ORDER BY 1, 2"
        )
    ]


_MISSING_PARENT = (
    "parent_checkpoint_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id "
    "AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)"
)
_UNDECODED = "type IS NULL OR type NOT IN ('null', 'bytes', 'bytearray', 'json', 'msgpack')"


def _first(found: list[str]) -> str:
    return ", ".join(found[:3]) + (" …" if len(found) > 3 else "")


def problems(conn: apsw.Connection) -> list[str]:
    """Every hazard of the file, one line each (every blob is decoded: this reads the whole file)."""
    out = []
    undecoded: dict[str, list[str]] = {}
    unreadable: list[str] = []
    bad_metadata: list[str] = []
    for thread, ns, *row in conn.execute(f"SELECT thread_id, checkpoint_ns, {_COLUMNS} FROM checkpoints"):
        at = f"{session_name(str(thread), str(ns))} @ {row[0]}"
        kind = row[2]
        if kind not in DECODED_TYPES:
            undecoded.setdefault(str(kind), []).append(at)
            continue
        cp = _checkpoint(row)
        if cp.problem is not None:
            unreadable.append(at)
        if cp.metadata_problem is not None:
            bad_metadata.append(at)
    for kind, found in sorted(undecoded.items()):
        why = decode(None if kind == "None" else kind, None)[1]
        out.append(f"{_count(len(found), 'checkpoint')} whose blob {why}: {_first(found)}")
    if unreadable:
        out.append(
            f"{_count(len(unreadable), 'checkpoint')} whose blob does not decode (LangGraph's get_tuple and list "
            f"raise on it): {_first(unreadable)}"
        )
    if bad_metadata:
        said = "whose metadata is not a JSON object (LangGraph's get_tuple and list raise on it)"
        out.append(f"{_count(len(bad_metadata), 'checkpoint')} {said}: {_first(bad_metadata)}")
    orphans = [
        f"{session_name(str(t), str(ns))} @ {cid} (parent {parent})"
        for t, ns, cid, parent in conn.execute(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints c WHERE "
            f"{_MISSING_PARENT} ORDER BY 1, 2, 3"
        )
    ]
    if orphans:
        out.append(f"{_count(len(orphans), 'checkpoint')} whose parent is not in the file: {_first(orphans)}")
    lost = _orphan_writes(conn)
    if lost:
        rows, gone = sum(n for *_, n, _ in lost), sum(c for *_, c in lost)
        threads = [session_name(t, ns) for t, ns, *_ in lost]
        out.append(
            f"{_count(rows, 'write')} of {_count(gone, 'checkpoint')} no longer in the file (threads {_first(threads)})"
        )
    if _has_writes(conn):
        bad = []
        for thread, ns, cid, channel, kind, blob in conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, channel, type, value FROM writes"
        ):
            if decode(kind, blob)[1] is not None:
                bad.append(f"{session_name(str(thread), str(ns))} @ {cid} {channel} ({kind})")
        if bad:
            out.append(f"{_count(len(bad), 'write')} whose value is not decoded: {_first(bad)}")
    return out


# -- the reader ---------------------------------------------------------------------------------------------------


class LangGraphCheckpointsReader(KeywordSearch):
    """A file of LangGraph's ``SqliteSaver`` (see the module's docstring)."""

    FORMAT = "langgraph-checkpoints"
    LABEL = "LangGraph checkpoints"
    REASON = (
        "oxmem reads LangGraph's checkpoints without changing them: SqliteSaver deletes only whole threads, and "
        "LangGraph goes back to a checkpoint by forking from it, never by deleting the ones after it"
    )

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_notes=False,
            has_schedules=False,
            sessions_label="Threads",
            session_noun="thread",
            refusals=self.refusals(),
        )

    def _markers(self, conn: apsw.Connection) -> list[str]:
        counted: list[Any] = conn.execute(
            "SELECT count(*), count(DISTINCT thread_id), count(DISTINCT thread_id || char(0) || checkpoint_ns) "
            "FROM checkpoints"
        ).fetchall()
        ((count, threads, spaces),) = counted
        out = [f"{_count(int(count), 'checkpoint')} in {_count(int(threads), 'thread')}"]
        if spaces != threads:
            out[0] += f" ({_count(int(spaces) - int(threads), 'subgraph namespace')})"
        types = ", ".join(
            f"{kind} {n:,}" for kind, n in conn.execute("SELECT type, count(*) FROM checkpoints GROUP BY 1 ORDER BY 1")
        )
        out.append(f"checkpoint types: {types or 'none'}")
        columns = _has_writes(conn)
        if columns:
            (writes,) = conn.execute("SELECT count(*) FROM writes").fetchall()[0]
            older = "" if "task_path" in columns else " (no task_path column: written before LangGraph added it)"
            out.append(f"writes: {writes:,}{older}")
        out += [f"⚠ {p}" for p in self._per_state(conn, "problems", None, lambda: problems(conn))]
        if langgraph_store_tables(conn):
            items: list[Any] = conn.execute("SELECT count(*) FROM store").fetchall()
            out.append(
                f"this file also holds LangGraph's store ({_count(int(items[0][0]), 'item')}): its threads are shown; "
                "the store's items only in the table browser"
            )
        return out

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        needle = contains.casefold() if contains else None
        lost = {(t, ns): (n, c) for t, ns, n, c in _orphan_writes(conn)}
        rows = []
        threads: list[Any] = conn.execute(
            f"SELECT thread_id, checkpoint_ns, count(*), min(checkpoint_id), max(checkpoint_id), "
            f"total({_UNDECODED}), total({_MISSING_PARENT}) FROM checkpoints c GROUP BY thread_id, checkpoint_ns"
        ).fetchall()
        for thread, ns, count, first, last, undecoded, orphaned in threads:
            thread, ns = str(thread), str(ns)
            shown_id = session_name(thread, ns)
            if needle and needle not in shown_id.casefold():
                continue
            latest = _read(conn, thread, ns, str(last))
            oldest = latest if first == last else _read(conn, thread, ns, str(first))
            details: dict[str, Any] = {"thread_id": thread, "namespace": ns} if ns else {}
            details["checkpoints"] = _count(int(count), "checkpoint")
            details["latest checkpoint"] = latest.checkpoint_id
            if _step(latest.metadata) is not None:
                details["step"] = f"step {_step(latest.metadata)}"
            if _source(latest.metadata) is not None:
                details["source"] = _source(latest.metadata)
            written = latest.metadata.get("writes")
            if isinstance(written, dict) and written:
                details["writes"] = ", ".join(str(k) for k in written)
            said = [f"the latest checkpoint: {p}" for p in _checkpoint_problems(latest, {latest.parent_id or ""})]
            if undecoded:
                kinds = "of a type oxmem does not decode (pickle, encrypted…)"
                said.append(f"{_count(int(undecoded), 'checkpoint')} {kinds}")
            if orphaned:
                said.append(f"{_count(int(orphaned), 'checkpoint')} whose parent is not in the file")
            if (thread, ns) in lost:
                n, c = lost[thread, ns]
                said.append(f"{_count(n, 'write')} of {_count(c, 'checkpoint')} no longer in the file")
            if said:
                details["problems"] = said
            rows.append(SessionRow(shown_id, None, oldest.when, latest.when, details))
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _timeline(self, conn: apsw.Connection, thread: str, ns: str) -> Timeline:
        return self._per_state(conn, "timeline", (thread, ns), lambda: timeline(conn, thread, ns))

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        thread, ns = thread_of(conn, session_id)
        return checkpoint_events(_read(conn, thread, ns), self._timeline(conn, thread, ns).first_seen)

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        thread, ns = thread_of(conn, session_id)
        events = checkpoint_events(_read(conn, thread, ns))
        return len(events), events[-1].sequence if events else None

    async def checkpoints(self, session_id: str) -> list[CheckpointInfo]:
        """The thread's timeline, newest first (as ``SqliteSaver.list`` gives it): see :class:`CheckpointInfo`."""

        def read(conn: apsw.Connection) -> list[CheckpointInfo]:
            thread, ns = thread_of(conn, session_id)
            return self._timeline(conn, thread, ns).checkpoints

        return await self._db.read(read)

    async def events_at(self, session_id: str, checkpoint_id: str) -> list[Event]:
        """The thread's events as of checkpoint ``checkpoint_id`` (its messages then, as ``graph.get_state`` with
        that ``checkpoint_id`` reads them); :class:`NotFoundError` when the thread has no such checkpoint."""

        def read(conn: apsw.Connection) -> list[Event]:
            thread, ns = thread_of(conn, session_id)
            return checkpoint_events(
                _read(conn, thread, ns, checkpoint_id), self._timeline(conn, thread, ns).first_seen
            )

        return await self._db.read(read)


__all__ = [
    "CheckpointInfo",
    "Ext",
    "LangGraphCheckpointsReader",
    "PendingWrite",
    "Timeline",
    "as_message",
    "checkpoint_events",
    "decode",
    "message_payload",
    "plain",
    "problems",
    "session_name",
    "thread_of",
    "timeline",
]
