"""``MemoryStore``: the async public API of the memory system, one object per open store.

Every method runs its SQL (and embedding) on the store's worker thread and is awaited from the caller's
event loop, so the CLI (``asyncio.run``) and the GUI (qasync) drive the same code. Each write method is one
transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from . import vector_index
from .database import (
    BUSY_TIMEOUT_MS,
    Database,
    data_version,
    defer_to_first_write,
    refuse_damaged,
    write_transaction,
)
from .embeddings.backends import (
    DETERMINISTIC_MODEL,
    BackendChoice,
    DeterministicEmbedding,
    EmbeddingBackend,
    ModelBackends,
    backend_for,
    choose_backend,
)
from .embeddings.example import Example
from .embeddings.reindex import ReindexResult
from .embeddings.reindex import reindex as reindex_chunks
from .errors import InvalidInputError, ReadOnlyError
from .formats.base import EDIT_KINDS, Capabilities, Retriever
from .formats.detect import LABELS, detect_schema
from .formats.info import DatabaseInfo, native_info
from .formats.oxydra import LIBSQL_REASON
from .formats.table_browser import PAGE as TABLE_PAGE
from .formats.table_browser import TableInfo, TablePage, list_tables, table_page
from .libsql_writer import LibsqlWriter, have_libsql
from .retrieval import hybrid as retrieval
from .retrieval import notes as note_hits
from .retrieval import why_not
from .retrieval.caches import SearchCaches
from .retrieval.options import SearchOptions
from .retrieval.persisted import DiskCache
from .retrieval.ranking import TUNED, RankingProfile, native_query, profile_query
from .retrieval.scope import AllSessions, Scope
from .retrieval.vectors import DEFAULT_MAX_BYTES
from .retrieval.why_not import CHOICES, event_choices
from .schedules import store as schedules
from .schedules.api import ScheduleStore
from .schedules.weekdays import WEEKDAY_NUMBERINGS
from .store import backups, browse, events, importing, notes, sql_console, summary
from .store.migrations import (
    MigrationReport,
    apply_pending,
    check_required_tables,
    create_store,
    inspect_schema,
    plan_migrations,
    table_names,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from .remote import RemoteSnapshot

T = TypeVar("T")
log = logging.getLogger(__name__)

#: why the store deletes no single turn (its events' chunks, vectors and summary range are kept per session)
TURNS_REASON = "oxmem's store deletes whole sessions, not single turns (Delete session…)"


class MemoryStore(sql_console.SqlConsole):
    """An open memory store. Create it with ``await MemoryStore.open(path)``; close it with ``aclose``.

    A façade: each method checks that the edit is allowed, then hands the work to its group (:mod:`.store`,
    :mod:`.retrieval`, :mod:`.embeddings`, :mod:`.schedules` through ``self.schedules``) on the connection's
    thread. It is long only because it is the whole public API — some fifty methods, each a signature, its
    contract and a line or two."""

    def __init__(
        self,
        db: Database,
        choice: BackendChoice,
        report: MigrationReport,
        vector_cache_bytes: int = DEFAULT_MAX_BYTES,
        fmt: str = "oxmem",
    ) -> None:
        self._db = db
        #: where a copy of a remote database came from (:func:`..memory.open_remote`), else None
        self.remote: RemoteSnapshot | None = None
        self.backend = choice.backend
        self.backend_notice = choice.notice
        #: by model name; the agent's own model looked up on this machine when its vectors are searched
        self._available = ModelBackends(choice.available, db.path)
        self.migration_report = report
        self._caches = SearchCaches(vector_cache_bytes, self.backend.model_name)
        #: the caches kept on disk between processes (:mod:`.retrieval.persisted`); None: kept only in memory
        self._disk: DiskCache | None = None
        self._warmed = False
        #: ``oxmem``, ``oxydra`` or ``oxydra-libsql`` (:mod:`.formats.detect`), found when opening
        self.format = fmt
        #: an early Oxydra file has no schedules (oxmem does not add them to the agent's schema)
        self._has_schedules = True
        #: how numeric cron weekdays are read (``sunday-1``: as newer Oxydra counts them, see :mod:`.formats.oxydra`)
        self.weekday_numbering = "standard"
        self.schedules = ScheduleStore(db, lambda: self._writable("schedules"), self._weekday_numbering)
        #: the writes that reach libSQL's vector index go through the libSQL engine (:mod:`.libsql_writer`)
        self._libsql = LibsqlWriter(db.path, db.busy_timeout_ms) if fmt == "oxydra-libsql" else None

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        embedding: str | EmbeddingBackend = "auto",
        model_path: str | os.PathLike[str] | None = None,
        create: bool = True,
        vector_cache_bytes: int = DEFAULT_MAX_BYTES,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        database: Database | None = None,
        keep_caches: bool = True,
    ) -> MemoryStore:
        """Open the store at ``path`` (read-write: creating a new one, or migrating this project's own store at its
        first write — never another agent's file; see :mod:`.migrations`).

        ``embedding`` is ``"auto"`` (semantic when the model is present, else deterministic with a notice in
        ``backend_notice``), ``"semantic"``, ``"deterministic"``, or a backend object; ``model_path`` points
        at a model folder of one's own. Read-only opens never write: pending migrations are only reported.
        Without ``create``, a missing or empty file is an error rather than a new store.
        Versions the file records that this program does not know are reported in
        ``migration_report.unknown`` and tolerated. ``vector_cache_bytes`` bounds the in-memory vector matrices
        (least recently used sessions are dropped first; 2 GiB by default). ``busy_timeout_ms`` is how long a
        write waits for another program's write lock before :class:`StoreBusyError` (30 s by default).
        ``open_notice`` says when the file could only be opened as a snapshot. ``database``: a connection to
        ``path`` already open (read-only) to use instead of opening another. ``keep_caches``: the search caches
        are kept on disk between processes (:mod:`.retrieval.persisted`; a remote memory's snapshot keeps none).
        """
        if isinstance(embedding, str):
            choice = await asyncio.to_thread(choose_backend, embedding, model_path)
        else:
            choice = BackendChoice(embedding, {DETERMINISTIC_MODEL: DeterministicEmbedding()})
            choice.available[embedding.model_name] = embedding
        db = database or await Database.open(path, read_only=read_only, create=create, busy_timeout_ms=busy_timeout_ms)
        try:
            report, fmt = await db.run(_prepare_schema, read_only, db.path, create)
        except BaseException:
            db.close()
            raise
        store = cls(db, choice, report, vector_cache_bytes, fmt)
        store._has_schedules = await db.read(schedules.has_schedule_tables)
        if keep_caches and db.notice is None:  # (a snapshot of an unwritable folder's file: nothing kept)
            with contextlib.suppress(OSError):
                store._disk = DiskCache(db.path)
        return store

    @property
    def path(self) -> Path:
        return self._db.path

    @property
    def read_only(self) -> bool:
        return self._db.read_only

    @property
    def open_notice(self) -> str | None:
        """A line for the user about how the file is open (a snapshot of a file in an unwritable folder)."""
        return self._db.notice

    @property
    def capabilities(self) -> Capabilities:
        libsql = self.format == "oxydra-libsql"
        refusals = {"turns": TURNS_REASON}
        if libsql and not have_libsql():
            refusals |= {"events": LIBSQL_REASON, "sessions": LIBSQL_REASON, "notes": LIBSQL_REASON}
        if self.weekday_numbering != "standard":
            refusals["schedules"] = "schedules are shown in the agent's weekday numbering; switch back to edit them"
        if self._db.locked:
            refusals = dict.fromkeys(EDIT_KINDS, self._db.locked)
        label = LABELS[self.format]
        return Capabilities(
            self.format, label, has_schedules=self._has_schedules, refusals=refusals, weekday_choice=libsql
        )

    def _weekday_numbering(self) -> str | None:
        return self.weekday_numbering if self.capabilities.weekday_choice else None

    def set_weekday_numbering(self, numbering: str) -> None:
        """``standard`` or ``sunday-1`` (how newer Oxydra numbers cron weekdays); only for such files."""
        if numbering not in WEEKDAY_NUMBERINGS:
            raise InvalidInputError(f"weekday numbering must be one of {', '.join(WEEKDAY_NUMBERINGS)}")
        if numbering != "standard" and not self.capabilities.weekday_choice:
            raise InvalidInputError(f"{LABELS[self.format]} files number cron weekdays the standard way")
        self.weekday_numbering = numbering

    async def info(self) -> DatabaseInfo:
        refused = self.capabilities.refusals
        editing = "; ".join(sorted({why for kind, why in refused.items() if kind != "turns"}))  # (no store's news)
        return await self._db.read(native_info, self.path, self.format, editing)

    async def migrate(self) -> MigrationReport:
        """``oxmem init``: apply this store's pending versions now (a new store has them already). Another agent's
        file has none: its schema is the agent's, read and edited here as it is, and nothing is written."""
        if self.migration_report.pending:
            self._writable("schema")
            await self._db.run(_begin_and_commit)
        return self.migration_report

    async def tables(self) -> list[TableInfo]:
        return await self._db.read(list_tables, True)

    async def table_page(self, name: str, offset: int = 0, limit: int = TABLE_PAGE) -> TablePage:
        return await self._db.read(table_page, name, offset, limit)

    def retrievers(self) -> list[Retriever]:
        return list(NATIVE_RETRIEVERS)

    async def search(
        self, retriever: str, scope: Scope, query: str, top_k: int = 8, options: SearchOptions | None = None
    ) -> retrieval.QueryResult:
        """A ranking of :meth:`retrievers` over a session, or many (:class:`~.retrieval.scope.AllSessions`): ``oxmem``
        (contract §6 with ``options``), a profile of :mod:`.ranking` (``tuned``; it takes tags and a query
        embedding, not weights or a mode) or ``oxydra`` (the agent's own: phrase FTS, 0.7 vector / 0.3 FTS;
        tuning options do not apply)."""
        given = SearchOptions.of(options).given()
        vectors = self._query_vectors(given.pop("query_embedding", None), given.pop("query_embedding_model", None))
        return await self._searching(
            native_query, self._caches.vectors, self._available, retriever, scope, query, top_k,
            bm25=self._caches.bm25, query_embeddings=vectors, **given,
        )  # fmt: skip

    async def eviction_preview(self, now: datetime | None = None, **limits: Any) -> None:
        """The store deletes nothing on its own: no eviction to preview."""
        return None

    async def session_state(self, session_id: str) -> None:
        """This store's sessions are neither open nor closed."""
        return None

    async def set_session_open(self, session_id: str, open_: bool) -> str:
        """Sessions of this store are never closed: nothing to change."""
        raise InvalidInputError("this store's sessions are never closed: there is nothing to close or reopen")

    async def apply_eviction(self, confirmed: Sequence[str], now: datetime | str, **limits: Any) -> list[notes.Note]:
        """The store deletes nothing on its own: nothing to apply."""
        raise InvalidInputError("oxmem stores delete nothing on their own: there is no clean-up to apply")

    async def prepare_search(self, scope: Scope) -> int:
        """Build (or restore, :mod:`.retrieval.persisted`) ahead of the first query what a search of ``scope``
        reads — its vector matrices and the BM25 rows — so that query answers at once; how many vectors are held."""
        return await self._searching(self._caches.prepare, scope, self._available)

    async def _searching(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn`` in a read transaction, the search caches an earlier process kept for this file restored first
        (once: checked and brought up to date, :mod:`.retrieval.persisted`)."""
        if not self._warmed:
            self._warmed = True
            if self._disk is not None and self.remote is None:
                await self._db.read(self._caches.restore, self._disk)
        return await self._db.read(fn, *args, **kwargs)

    async def aclose(self) -> None:
        if self._disk is not None and self.remote is None and not self._db.is_closed:
            try:
                await self._db.read(self._caches.save, self._disk)
            except Exception:  # a cache not kept costs the next process a rebuild, never this close
                log.info("the search caches of %s were not kept", self.path, exc_info=True)
        if self._libsql is not None:
            await asyncio.to_thread(self._libsql.close)
        self._db.close()

    async def _write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """The write ``fn(conn, *args, **kwargs)`` on the store's connection — or, in a file with libSQL's vector
        index, on the libSQL writer's (:mod:`.libsql_writer`), once the store's own connection found no damage."""
        if self._libsql is not None:
            return await self._libsql_write(fn, *args, **kwargs)
        return await self._db.run(fn, *args, **kwargs)

    async def _libsql_write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A write in the libSQL writer, refused first, as APSW's writes are, when the file is damaged."""
        assert self._libsql is not None
        await self._db.run(refuse_damaged)
        return await self._libsql.run(fn, *args, **kwargs)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _writable(self, kind: str = "events") -> None:
        refusal = self.capabilities.refusal(kind)
        if refusal:
            raise ReadOnlyError(f"{self.path.name}: {refusal}; nothing was changed")
        if self.read_only:
            raise ReadOnlyError(f"{self.path} is open read-only; enable editing to change it")

    # -- events -------------------------------------------------------------------------------------

    async def store(self, session_id: str, sequence: int, payload: Any) -> events.StoreResult:
        """Store and index one event (contract §4). A payload that is not a message object is stored but not
        indexed; the result says why (``not_indexed_reason``)."""
        (result,) = await self.store_many([(session_id, sequence, payload)])
        return result

    async def store_many(
        self,
        records: Iterable[tuple[str, int, Any]],
        progress: events.Progress | None = None,
        stop: threading.Event | None = None,
    ) -> list[events.StoreResult]:
        """Store many events in one transaction (all or nothing), embedding in batches first.
        Setting ``stop`` (or cancelling the awaiting task) ends it with :class:`OperationCancelled` and
        nothing written."""
        self._writable()
        if self._libsql is None:
            return await self._stoppable(
                stop, events.store_records, list(records), self.backend, progress, committed=self._caches.committed
            )
        backend, listed = self.backend, list(records)

        def embedded(_conn: apsw.Connection) -> list[events.PreparedEvent]:
            prepared = [events.prepare_event(*r) for r in listed]
            events.embed_prepared(prepared, backend, progress, stop)
            return prepared

        prepared = await self._db.run(embedded)  # embedded here, before libSQL takes the write lock
        results = await self._libsql_write(events.write_events, prepared, backend.model_name)
        self._caches.committed(results)
        return results

    async def import_events(
        self,
        records: Iterable[Sequence[Any]],
        *,
        batch_events: int = importing.BATCH_EVENTS,
        progress: importing.ImportProgress | None = None,
        stop: threading.Event | None = None,
    ) -> importing.ImportResult:
        """Store many events beside a live agent: validated and checked first (a bad record or sequence writes
        nothing), then committed in batches of ``batch_events`` so the write lock is held briefly; running it
        again after a crash or a cancel resumes (events already stored are skipped). See :mod:`.importing`.
        Records are ``(session_id, sequence, payload[, line])``."""
        self._writable()
        if self._libsql is not None:  # one call in the writer: progress is not reported from there
            try:
                return await self._libsql_write(
                    importing.import_records, list(records), self.backend, batch_events=batch_events
                )
            finally:
                self._caches.clear()
        return await self._stoppable(
            stop,
            importing.import_records,
            list(records),
            self.backend,
            batch_events=batch_events,
            progress=progress,
            committed=self._caches.committed,
        )

    async def _stoppable(self, stop: threading.Event | None, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conn, *args, stop=stop, **kwargs)`` on the connection's thread; cancelling the awaiting task sets
        ``stop``, so long work ends at its next check."""
        stop = stop or threading.Event()
        try:
            return await self._db.run(fn, *args, stop=stop, **kwargs)
        except asyncio.CancelledError:
            stop.set()
            raise

    async def recall(self, session_id: str, limit: int | None = None) -> list[events.Event]:
        return await self._db.read(events.recall, session_id, limit)

    async def forget(self, session_id: str) -> None:
        self._writable("sessions")
        await self._write(events.forget, session_id)
        self._caches.touched(session_id)

    async def turn(self, session_id: str, sequence: int) -> list[events.Event]:
        """The one event ``sequence``: the store deletes no single turn (:data:`TURNS_REASON`)."""
        return events.only(await self.events_page(session_id, sequence - 1, 1), session_id, sequence)

    async def delete_turn(self, *args: Any, **kwargs: Any) -> list[int]:
        raise ReadOnlyError(f"{TURNS_REASON}; nothing was changed")

    async def list_sessions(self, with_counts: bool = True) -> list[events.SessionInfo]:
        return await self._db.read(events.list_sessions, with_counts)

    # -- retrieval ----------------------------------------------------------------------------------

    async def hybrid_query(
        self,
        session_id: Scope,
        query: str,
        top_k: int = 8,
        *,
        vector_weight: float = 0.7,
        fts_weight: float = 0.3,
        fts_mode: str = "terms",
        tags: Sequence[str] = (),
        tag_mode: str = "any",
        query_embedding: Sequence[float] | None = None,
        query_embedding_model: str | None = None,
        models: Sequence[str] | None = None,
    ) -> retrieval.QueryResult:
        """contract §6. ``query_embedding`` (for ``query_embedding_model``, default the store's backend model)
        is used instead of embedding the query for that model's vectors; ``models`` restricts the vector leg to
        those models' vectors."""
        return await self._searching(
            retrieval.hybrid_query,
            self._caches.vectors,
            self._available,
            session_id,
            query,
            top_k,
            vector_weight=vector_weight,
            fts_weight=fts_weight,
            fts_mode=fts_mode,
            tags=tags,
            tag_mode=tag_mode,
            query_embeddings=self._query_vectors(query_embedding, query_embedding_model),
            bm25=self._caches.bm25,
            models=models,
        )

    def _query_vectors(
        self, query_embedding: Sequence[float] | None, model: str | None
    ) -> Mapping[str, Sequence[float]]:
        """A precomputed query vector, keyed by its model (default: the store's backend model)."""
        return {} if query_embedding is None else {model or self.backend.model_name: query_embedding}

    async def profile_query(
        self,
        profile: RankingProfile,
        session_id: Scope,
        query: str,
        top_k: int = 8,
        *,
        tags: Sequence[str] = (),
        tag_mode: str = "any",
        query_embedding: Sequence[float] | None = None,
        query_embedding_model: str | None = None,
        models: Sequence[str] | None = None,
    ) -> retrieval.QueryResult:
        """``profile``'s ranking (:mod:`.ranking`); the options mean what they mean for :meth:`hybrid_query`."""
        return await self._searching(
            profile_query,
            self._caches.vectors,
            self._available,
            session_id,
            query,
            top_k,
            profile,
            tags=tags,
            tag_mode=tag_mode,
            query_embeddings=self._query_vectors(query_embedding, query_embedding_model),
            bm25=self._caches.bm25,
            models=models,
        )

    async def why_not(
        self,
        retriever: str,
        session_id: str,
        query: str,
        target: str,
        top_k: int = 8,
        options: SearchOptions | None = None,
        *,
        suggest: bool = True,
    ) -> why_not.WhyNot:
        """Why ``target`` (a chunk id, an event's sequence number, a note id) is not in ``retriever``'s top k for
        ``query`` in ``session_id`` (:mod:`.retrieval.why_not`), in one snapshot."""
        if isinstance(session_id, AllSessions):
            raise InvalidInputError("say which session the memory should have been recalled in")
        given = SearchOptions.of(options).given()
        vectors = self._query_vectors(given.pop("query_embedding", None), given.pop("query_embedding_model", None))
        return await self._searching(
            why_not.why_not,
            self._caches.vectors,
            self._available,
            retriever,
            session_id,
            query,
            target,
            top_k,
            bm25=self._caches.bm25,
            suggest=suggest,
            query_embeddings=vectors,
            **given,
        )

    async def why_not_choices(self, session_id: str, limit: int = CHOICES) -> list[tuple[str, str]]:
        """What *Why not…?* offers to pick: the session's events with text, ``("#12 user: …", "12")``."""
        return event_choices(await self.events_page(session_id, None, limit))

    async def session_models(self, session_id: str) -> list[str]:
        """The embedding models of the session's stored vectors."""
        return await self._searching(self._caches.vectors.models, session_id)

    # -- notes --------------------------------------------------------------------------------------

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> notes.Note:
        self._writable("notes")
        note = await self._write(notes.save_note, self.backend, user, content, tags)
        self._caches.touched(notes.notes_session(user))
        return note

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: notes.Note | None = None
    ) -> notes.Note:
        """Replace a note's content and tags (one transaction). ``expected``: the note as loaded; if another
        program changed it since, :class:`ConflictError` (with the current note) and nothing is written."""
        self._writable("notes")
        try:
            return await self._write(notes.update_note, self.backend, user, note_id, content, tags, expected)
        finally:
            self._caches.touched(notes.notes_session(user))

    async def delete_note(self, user: str, note_id: str, *, expected: notes.Note | None = None) -> None:
        """Delete one note; ``expected`` (the note as loaded): if another program changed it since,
        :class:`ConflictError` and nothing is deleted (as :meth:`delete_notes`)."""
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def get_note(self, user: str, note_id: str) -> notes.Note:
        return await self._db.read(notes.get_note, user, note_id)

    async def list_notes(
        self, user: str, tags: Sequence[str] = (), tag_mode: str = "any", contains: str | None = None
    ) -> list[notes.Note]:
        return await self._db.read(notes.list_notes, user, tags, tag_mode, contains)

    async def notes_page(
        self,
        user: str,
        after: tuple[str, int] | None = None,
        limit: int = browse.PAGE,
        tags: Sequence[str] = (),
        tag_mode: str = "any",
        contains: str | None = None,
    ) -> list[notes.Note]:
        """A page of :meth:`list_notes`: the ``limit`` notes after ``after``, the last shown note's
        :func:`.store.notes.note_cursor`, read in SQL (:func:`.store.notes.notes_page`)."""
        return await self._db.read(notes.notes_page, user, after, limit, tags, tag_mode, contains)

    async def search_notes(
        self, user: str, query: str, top_k: int = 8, options: SearchOptions | None = None
    ) -> note_hits.NoteHits:
        """Hybrid query over the user's notes; one hit per note with the full breakdown in ``hit``."""
        result = await self.hybrid_query(notes.notes_session(user), query, top_k, **SearchOptions.of(options).given())
        return note_hits.note_hits(result)

    async def example(self, item_id: str) -> Example:
        """The stored vector of a chunk (by its id) or a note (by its note id), to search by example
        (:mod:`.embeddings.example`)."""
        return await self._db.read(browse.example_vector, item_id)

    async def reindex(
        self,
        session_id: str | None = None,
        model: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> ReindexResult:
        """Re-embed chunks (of a session, or all) with ``model`` — a backend name (``semantic``,
        ``deterministic``) or a model name — defaulting to the store's backend. Resumable; see
        :mod:`.reindex`. Setting ``stop`` (or cancelling the awaiting task) stops after the current batch."""
        self._writable()
        backend = backend_for(self._available, self.backend, model)
        if session_id is not None:
            await self._db.read(events.require_session, session_id)
        try:
            if self._libsql is not None:
                return await self._libsql_write(reindex_chunks, backend, session_id)
            return await self._stoppable(stop, reindex_chunks, backend, session_id, progress)
        finally:
            self._caches.clear()

    async def repair_vector_index(self) -> tuple[int, list[int], bool]:
        """Re-insert the rows libSQL's vector index no longer returns for their own vector, rebuilding the index
        if that is not enough (:func:`.vector_index.repair`), in one transaction: how many vectors there are, the
        rowids re-inserted, whether the index was rebuilt. Only a file with that index has anything to repair."""
        self._writable()
        if self._libsql is None:
            raise InvalidInputError(f"{self.path.name} has no libSQL vector index; there is nothing to repair")
        return await self._libsql_write(vector_index.repair)

    async def set_note_tags(
        self,
        user: str,
        note_ids: Sequence[str],
        add: Sequence[str] = (),
        remove: Sequence[str] = (),
        *,
        expected: Sequence[notes.Note] | None = None,
    ) -> list[notes.Note]:
        self._writable("notes")
        return await self._write(notes.set_note_tags, user, list(note_ids), add, remove, expected)

    async def delete_notes(
        self, user: str, note_ids: Sequence[str], *, expected: Sequence[notes.Note] | None = None
    ) -> int:
        self._writable("notes")
        try:
            return await self._write(notes.delete_notes, user, list(note_ids), expected)
        finally:
            self._caches.touched(notes.notes_session(user))

    def edit_effects(self, note: notes.Note | None, /) -> list[str]:
        """oxmem's own notes: an edit changes nothing but the note (it is re-embedded as it is saved)."""
        return []

    async def restore_notes(
        self, items: Sequence[notes.Note], *, expected: Mapping[str, notes.Note | None] | None = None
    ) -> list[notes.Note]:
        """Write notes back exactly as given (id, content, tags, dates), in one transaction: undo, and import.
        ``expected`` maps ids to what they must hold now (None: absent), else :class:`ConflictError`."""
        self._writable("notes")
        try:
            return await self._write(
                notes.restore_notes, self.backend, list(items), dict(expected) if expected is not None else None
            )
        finally:
            for user in {n.user for n in items}:
                self._caches.touched(notes.notes_session(user))

    async def note_users(self) -> list[str]:
        return await self._db.read(browse.note_users)

    async def note_tags(self, user: str) -> list[tuple[str, int]]:
        return await self._db.read(browse.note_tags, user)

    # -- browsing -----------------------------------------------------------------------------------

    async def sessions_page(
        self, after: tuple[str, str] | None = None, limit: int = browse.PAGE, contains: str | None = None
    ) -> list[browse.SessionRow]:
        return await self._db.read(browse.sessions_page, after, limit, contains)

    async def session_stats(self, session_ids: Sequence[str]) -> dict[str, browse.SessionStats]:
        return await self._db.read(browse.session_stats, list(session_ids))

    async def events_page(
        self, session_id: str, after_sequence: int | None = None, limit: int = browse.PAGE
    ) -> list[events.Event]:
        return await self._db.read(browse.events_page, session_id, after_sequence, limit)

    async def chunks_page(
        self, session_id: str, after_rowid: int | None = None, limit: int = browse.PAGE
    ) -> list[browse.ChunkRow]:
        return await self._db.read(browse.chunks_page, session_id, after_rowid, limit)

    async def data_version(self) -> int:
        """Changes when another connection commits to the file (poll it to refresh views)."""
        return await self._db.run(data_version)

    async def backup_to(self, target: str | os.PathLike[str], overwrite: bool = False) -> Path:
        """A consistent copy of the whole store (WAL included) through SQLite's backup API, written safely
        (:func:`.store.backups.backup_to`: an existing database is replaced only when ``overwrite``)."""
        return await self._db.run(backups.backup_to, target, overwrite)

    # -- summary state ------------------------------------------------------------------------------

    async def read_summary_state(self, session_id: str) -> dict[str, Any] | None:
        return await self._db.read(summary.read_summary_state, session_id)

    async def write_summary_state(
        self,
        session_id: str,
        summary_text: str,
        upper_sequence: int,
        expected_epoch: int,
        metadata: Mapping[str, Any] | None = None,
    ) -> summary.CasResult:
        self._writable("summary")
        return await self._db.run(
            summary.write_summary_state, session_id, summary_text, upper_sequence, expected_epoch, metadata
        )

    async def summarize(
        self, session_id: str, budget_tokens: int, config: summary.SummaryConfig | None = None
    ) -> summary.SummaryOutcome:
        self._writable("summary")
        return await self._db.run(summary.summarize, session_id, budget_tokens, config)

    async def context_preview(self, session_id: str, budget_tokens: int) -> summary.ContextPreview:
        return await self._db.read(summary.context_preview, session_id, budget_tokens)


NATIVE_RETRIEVERS = (
    Retriever(
        TUNED.name,
        TUNED.label,
        "session",
        False,
        "the hybrid with measured extra steps: stopwords dropped and words matched as prefixes in the FTS leg, "
        f"{TUNED.vector_weight:g} vector / {TUNED.fts_weight:g} FTS, plus {TUNED.neighbour_weight:g} × the best "
        "neighbouring turn's score, and the newer statement of a fact level with the older it restates; takes tags",
        tag_filter=True,
        every=True,
    ),
    Retriever(
        "oxmem",
        "oxmem hybrid",
        "session",
        True,
        "vector cosine and FTS5 BM25, each min–max normalized, weighted (contract §6); weights, FTS mode and tags "
        "can be changed",
        every=True,
    ),
    Retriever(
        "oxydra",
        "Oxydra agent's own",
        "session",
        False,
        "what the Oxydra agent runs: the whole query as one FTS phrase, 0.7 vector + 0.3 FTS, min–max normalized",
        every=True,
    ),
)


def _begin_and_commit(conn: apsw.Connection) -> None:
    with write_transaction(conn):  # the pending versions deferred to the first write run inside it
        pass


def _prepare_schema(conn: apsw.Connection, read_only: bool, path: Path, create: bool) -> tuple[MigrationReport, str]:
    """The file's format and what opening it did to its schema: read-only opens and other agents' files only
    report; a new file becomes a store now; a store's pending versions wait for its first write (see
    :mod:`.migrations`)."""
    if read_only:
        check_required_tables(conn, path)
        return inspect_schema(conn), detect_schema(conn)
    fmt = detect_schema(conn) if table_names(conn) else "oxmem"
    report = plan_migrations(conn, path, create, own=fmt == "oxmem")
    if report.created:
        create_store(conn, report, path)
    elif report.pending:
        defer_to_first_write(conn, functools.partial(apply_pending, report=report, path=path))
    return report, fmt
