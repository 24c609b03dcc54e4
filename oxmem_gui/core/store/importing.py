"""Importing many events beside a live agent: checked first, then committed in bounded batches, resumable.

One transaction for a whole file would hold the store's write lock for the import's whole length, and the agent
writing to the same file would wait on it and fail. Instead:

1. every record is validated and the plan is checked against the store in one snapshot — per session the
   file's sequences must increase, and a sequence the store already has must hold the same payload (it was
   stored by an earlier, interrupted run of this import: it is skipped). Any problem stops the import here, with
   the line named and **nothing written**;
2. the rest is written in batches of :data:`BATCH_EVENTS` events: each batch is embedded with no transaction
   open, then written in one short ``BEGIN IMMEDIATE`` transaction (tens of milliseconds), so the agent's own
   writes interleave. A batch is all or nothing; a crash or a cancel keeps the batches before it, and running the
   same import again resumes after them (step 1 skips what is stored).

If the agent writes the same session's next sequence between two batches, the import stops there with a
:class:`SequenceError` that says how much was stored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..database import read_transaction
from ..embeddings.backends import EmbeddingBackend
from ..errors import InvalidInputError, OperationCancelled, SequenceError
from .events import PreparedEvent, StoreResult, embed_prepared, last_sequence, prepare_event, write_events
from .inputs import parse_stored

#: Events per transaction: about 40 ms of write lock with deterministic vectors on a laptop.
BATCH_EVENTS = 500

#: ``progress(done, total)``: events handled (stored or skipped) of the records given; from the worker thread.
ImportProgress = Callable[[int, int], None]


@dataclass
class ImportResult:
    stored: int = 0
    #: already in the store with the same payload (an earlier run of the same import got that far)
    skipped: int = 0
    batches: int = 0
    #: ``(session_id, sequence, reason)`` of stored events whose payload is not an indexable message
    not_indexed: list[tuple[str, int, str]] = field(default_factory=list)


def _where(record: Sequence[Any], index: int) -> str:
    line = record[3] if len(record) > 3 and record[3] is not None else None
    return f"line {line}" if line is not None else f"record {index + 1}"


def prepare_records(records: Sequence[Sequence[Any]]) -> list[PreparedEvent]:
    """Validate and chunk every record (no embedding); an error names the line (or record number). Every record
    has its sequence: without one, a resumed import could not tell a stored event from a new one."""
    prepared = []
    for i, r in enumerate(records):
        try:
            if r[1] is None:  # store() appends such an event; an import must say where each one goes
                raise InvalidInputError(
                    "an imported event needs its sequence (a resumed import finds what is stored by it); "
                    "nothing was imported"
                )
            prepared.append(prepare_event(r[0], r[1], r[2]))
        except InvalidInputError as exc:
            raise InvalidInputError(f"{_where(r, i)}: {exc}") from None
    return prepared


def plan_import(
    conn: apsw.Connection, records: Sequence[Sequence[Any]], prepared: Sequence[PreparedEvent]
) -> list[int]:
    """Indices of the records still to write, in order; raises :class:`SequenceError` (nothing written) for a
    sequence that cannot be stored."""
    todo: list[int] = []
    previous: dict[str, tuple[int, str]] = {}
    with read_transaction(conn):
        last: dict[str, int | None] = {}
        for i, event in enumerate(prepared):
            sid, seq = event.session_id, event.sequence
            where = _where(records[i], i)
            if sid in previous and seq <= previous[sid][0]:
                raise SequenceError(
                    f"{where}: sequence {seq} of session {sid!r} is not greater than {previous[sid][0]} "
                    f"({previous[sid][1]}); nothing was imported"
                )
            previous[sid] = (seq, where)
            if sid not in last:
                last[sid] = last_sequence(conn, sid)
            current = last[sid]
            if current is None or seq > current:
                todo.append(i)
                continue
            stored = conn.execute(
                "SELECT payload_json FROM conversation_events WHERE session_id = ? AND sequence = ?", (sid, seq)
            ).fetchall()
            if not stored or not _same_json(stored[0][0], event.payload):
                raise SequenceError(
                    f"{where}: sequence {seq} of session {sid!r} is not greater than its last stored sequence "
                    f"{current}" + (" (and differs from the stored event)" if stored else "") + "; nothing was imported"
                )
    return todo


def _same_json(stored: str, payload: Any) -> bool:
    return parse_stored(stored) == payload


def import_records(
    conn: apsw.Connection,
    records: Sequence[Sequence[Any]],
    backend: EmbeddingBackend,
    *,
    batch_events: int = BATCH_EVENTS,
    progress: ImportProgress | None = None,
    stop: threading.Event | None = None,
    committed: Callable[[list[StoreResult]], None] | None = None,
) -> ImportResult:
    """:func:`prepare_records` (a bad record writes nothing), then :func:`import_prepared`."""
    prepared = prepare_records(records)
    return import_prepared(
        conn, records, prepared, backend, batch_events=batch_events, progress=progress, stop=stop, committed=committed
    )


def import_prepared(
    conn: apsw.Connection,
    records: Sequence[Sequence[Any]],
    prepared: list[PreparedEvent],
    backend: EmbeddingBackend,
    *,
    batch_events: int = BATCH_EVENTS,
    progress: ImportProgress | None = None,
    stop: threading.Event | None = None,
    committed: Callable[[list[StoreResult]], None] | None = None,
) -> ImportResult:
    """Plan, then embed and write batch by batch; ``committed(results)`` runs after each batch's commit
    (to update caches). Cancelling (``stop``) ends with :class:`OperationCancelled` after the current batch."""
    todo = plan_import(conn, records, prepared)
    result = ImportResult(skipped=len(prepared) - len(todo))
    total = len(prepared)
    if progress:
        progress(result.skipped, total)
    for start in range(0, len(todo), batch_events):
        if stop is not None and stop.is_set():
            raise OperationCancelled(_stopped("cancelled", result, total))
        batch = [prepared[i] for i in todo[start : start + batch_events]]
        try:
            embed_prepared(batch, backend, None, stop)
            results = write_events(conn, batch, backend.model_name)
        except SequenceError as exc:
            raise SequenceError(
                f"{exc}: another program wrote it during the import; {_stopped('', result, total)}"
            ) from None
        except OperationCancelled:
            raise OperationCancelled(_stopped("cancelled", result, total)) from None
        result.stored += len(results)
        result.batches += 1
        result.not_indexed += [(r.session_id, r.sequence, r.not_indexed_reason or "") for r in results if not r.indexed]
        if committed:
            committed(results)
        if progress:
            progress(result.skipped + result.stored, total)
    return result


def _stopped(what: str, result: ImportResult, total: int) -> str:
    if not result.stored:
        return f"{what}; nothing was written" if what else "nothing was written"
    head = f"{what} after storing" if what else "stored"
    return f"{head} {result.stored:,} of {total:,} events; import the same file again to resume"
