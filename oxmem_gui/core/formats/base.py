"""The one interface every panel and command reads a memory database through, and the read-only base of the
readers of other agents' formats.

A *reader* answers the same calls as :class:`~oxmem_gui.core.store.MemoryStore` (sessions and their events,
notes, search with a score breakdown, schedules, summary state, context preview) with the same result types,
plus what every database has: :meth:`info`, :meth:`tables`, :meth:`table_page`. The native store is one
implementation; :class:`ForeignReader` is the base of the others. A front end never asks which format it has:
it asks :attr:`capabilities` what there is (``has_sessions``…), how the agent names it (``Conversations``,
``Facts``, ``Scope``), and which edits are refused and why, and :meth:`retrievers` which rankings can be run.

A reader makes only the edits its agent's own code makes (``EDITS``: Omega's, ZEKE's and aidaemon's): any other write
method raises :class:`ReadOnlyError` with the format's reason, before touching the file. Each read runs in one
read transaction (:meth:`Database.read`), so an agent committing meanwhile is never seen half-way.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import apsw
import numpy as np

from ..database import Database, data_version
from ..embeddings import endpoint, local_models
from ..embeddings.backends import DETERMINISTIC_MODEL, DeterministicEmbedding, EmbeddingBackend, choose_backend
from ..embeddings.example import Example
from ..embeddings.indexing import normalize
from ..embeddings.model_files import MODEL_NAME
from ..errors import EmbeddingError, InvalidInputError, NotFoundError, ReadOnlyError
from ..retrieval.bm25 import TableBm25
from ..retrieval.hybrid import MAX_TOP_K, Hit, QueryResult
from ..retrieval.notes import NoteHit, NoteHits
from ..retrieval.options import SearchOptions
from ..retrieval.scope import AllSessions, Scope
from ..retrieval.why_not import CHOICES, WhyNot, event_choices
from ..retrieval.why_not import Change as WhyChange
from ..schedules.store import Schedule, ScheduleRun
from ..store import backups, browse, sql_console, summary
from ..store.events import Event, SessionInfo, only
from ..store.inputs import check_positive, check_text
from ..store.migrations import MigrationReport
from ..store.notes import Note, page_after
from . import table_browser
from .detect import article
from .encrypted import encrypted_backup, write_through
from .info import DatabaseInfo, EmbeddingInfo, gather_info

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..remote import RemoteSnapshot

T = TypeVar("T")
RankMethod = TypeVar("RankMethod", bound=Callable[..., "QueryResult"])

#: kinds of edits a capability may refuse (``sessions``: deleting one, with everything in it; ``turns``: deleting
#: one turn of a session, :meth:`ForeignReader.delete_turn`)
EDIT_KINDS = ("events", "sessions", "turns", "notes", "schedules", "summary")


def ranking(name: str) -> Callable[[RankMethod], RankMethod]:
    """Mark a reader's method as the ranking of the retriever ``name`` (see :attr:`ForeignReader.RANKINGS`): it is
    called ``method(conn, scope, query, top_k, **options)`` in a read of the file and returns the agent's ranking."""

    def mark(method: RankMethod) -> RankMethod:
        method.__ranking__ = name  # type: ignore[attr-defined]
        return method

    return mark


@dataclass(frozen=True)
class Retriever:
    """A ranking a reader can run: the store's own hybrid, or another agent's recall reproduced exactly.

    ``scope`` names what the search runs over — ``"session"`` (a session id) or ``"notes"`` (a notes group);
    ``tunable`` says whether it takes the hybrid's weights, FTS mode and tags (the agents' own rankings
    are fixed); ``tag_filter`` that a fixed ranking still takes tags (a profile of :mod:`..ranking`); ``every``
    that it can also run over every session at once (scope :class:`~..retrieval.scope.AllSessions`)."""

    name: str
    label: str
    scope: str
    tunable: bool
    description: str
    tag_filter: bool = False
    every: bool = False


@dataclass(frozen=True)
class Capabilities:
    """What a database holds and what may be done with it, for front ends that must not branch on the format."""

    format: str
    label: str
    has_sessions: bool = True
    has_notes: bool = True
    has_schedules: bool = True
    has_search: bool = True
    sessions_label: str = "Sessions"
    #: one of them, as the panel's words say it (``session``, ``conversation``)
    session_noun: str = "session"
    notes_label: str = "Notes"
    #: one of them, as the panel's words say it (``note``, ``fact``, ``memory``)
    note_noun: str = "note"
    #: what a notes group is called (the store's notes belong to a user; Omega's facts to a sender…)
    group_label: str = "User"
    #: edit kind (:data:`EDIT_KINDS`) → why it is refused; a kind not here may be edited once editing is enabled
    refusals: Mapping[str, str] = field(default_factory=dict)
    #: cron expressions whose numeric weekdays the agent counts from Sunday = 1 (Oxydra's newer versions)
    weekday_choice: bool = False
    #: the agent deletes rows on its own (TTL, caps): :meth:`ForeignReader.eviction_preview` lists what it would
    has_eviction: bool = False
    #: notes carry tags (an agent's facts may not: their editor then offers none)
    note_tags: bool = True
    #: tags are compared as written (Agno's topics): the editor keeps their case
    tags_keep_case: bool = False
    #: how one of the format's notes must be written, said where it is typed (Omega's ``key: value``), None: as
    #: the user likes
    note_rules: str | None = None
    #: what else an edit of one of the format's notes may change: ``"scope"`` (move it to another group),
    #: ``"ttl"`` (its time to live in seconds) — ``update_note(…, scope=…, ttl_seconds=…)``
    note_fields: tuple[str, ...] = ()
    #: sessions are open or closed (Omega's conversations): ``session_state`` says which, ``set_session_open``
    #: changes it
    session_lifecycle: bool = False
    #: notes groups shown but never edited (aidaemon's episodes), each with why
    fixed_groups: Mapping[str, str] = field(default_factory=dict)
    #: schedule actions (``new``, ``edit``, ``resume``, ``delete``) the agent never takes though its schedules are
    #: editable, each with why; and what pausing one is called there (Omega cancels a task)
    schedule_refusals: Mapping[str, str] = field(default_factory=dict)
    pause_label: str = "Pause"

    def refusal(self, kind: str) -> str | None:
        return self.refusals.get(kind)

    @property
    def editable(self) -> bool:
        """Whether enabling editing makes any kind of edit possible."""
        return any(k not in self.refusals for k in EDIT_KINDS)


@dataclass
class Eviction:
    """One row an agent's own clean-up would delete now, and the rule that would delete it."""

    id: str
    group: str
    rule: str
    text: str
    created_at: str | None
    last_used_at: str | None


@dataclass
class EvictionPreview:
    """What the agent's clean-up would delete if it ran at ``now`` — computed, never done."""

    now: str
    rules: list[str]
    items: list[Eviction]

    COLUMNS = ("Id", "Group", "Rule", "Last used", "Text")

    def heading(self) -> list[str]:
        """What it is, as lines: the count and the time, then the rules."""
        count = f"{len(self.items):,} rows"
        out = [f"As of {self.now}, the agent's clean-up would delete {count} (this preview deletes nothing)."]
        return out + [f"rule: {r}" for r in self.rules]

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """Each row it would delete, under :attr:`COLUMNS` (the text on one line)."""
        return [
            (e.id, e.group, e.rule, e.last_used_at or e.created_at or "—", " ".join(e.text.split())) for e in self.items
        ]


class ForeignReader(sql_console.SqlConsole):
    """The read-only reader of another agent's file: subclasses fill in what their format has.

    Every method of the shared interface is here with the answer for a format that lacks that part (no
    sessions, no notes…), so a subclass overrides only what its agent keeps. ``FORMAT`` / ``LABEL`` name the
    format; ``REASON`` says why it is read-only (shown where an edit would be).
    """

    FORMAT = "sqlite-unknown"
    LABEL = "SQLite database"
    REASON = "oxmem opens other programs' databases read-only"
    #: the kinds of edit (:data:`EDIT_KINDS`) this reader makes, the way its agent does; the others are refused
    #: with ``REASON``. A reader with any opens read-write once editing is enabled (:func:`..memory.open_memory`).
    EDITS: frozenset[str] = frozenset()
    #: the rankings the format reproduces, by retriever name: the methods marked with :func:`ranking` (a subclass
    #: inherits its parent's and adds its own)
    RANKINGS: ClassVar[dict[str, Callable[..., QueryResult]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {m.__ranking__: m for m in vars(cls).values() if callable(m) and hasattr(m, "__ranking__")}
        cls.RANKINGS = {**cls.RANKINGS, **own}

    def __init__(self, db: Database, fmt: str | None = None, *, key: str | None = None, writable: bool = False) -> None:
        self._db = db
        #: where a copy of a remote database came from (:func:`..memory.open_remote`), else None
        self.remote: RemoteSnapshot | None = None
        self.format = fmt or self.FORMAT
        #: an encrypted file's key (its snapshot is ``db``): edits and backups go to the encrypted file with it
        self.cipher_key = key
        self._writable_snapshot = writable and key is not None
        self.backend: EmbeddingBackend = DeterministicEmbedding()
        self.backend_notice: str | None = None
        self.migration_report = MigrationReport()
        self.schedules = ForeignSchedules(self)
        self._semantic: EmbeddingBackend | None = None
        #: the agents' own models found on this machine (:mod:`..embeddings.local_models`), by name
        self._local_models: dict[str, EmbeddingBackend] = {}
        #: what :meth:`_per_state` keeps: by name, (the file's state and the key it was made for, the value)
        self._kept: dict[str, tuple[tuple[Any, Any], Any]] = {}
        #: how many times an encrypted file's snapshot was read again after an edit
        self._reloads = 0
        self._bm25: dict[str, TableBm25] = {}

    # -- the file -----------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._db.path

    @property
    def read_only(self) -> bool:
        return self._db.read_only and not self._writable_snapshot

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the edit ``fn(conn, *args)`` (it makes its own transaction) on the file — through SQLCipher into the
        encrypted file itself when this is a snapshot of one (:func:`.encrypted.write_through`)."""
        if self.cipher_key is None:
            return await self._db.run(fn, *args)
        try:
            return await self._db.run(write_through, self.path, self.cipher_key, fn, *args)
        finally:
            self._reloads += 1  # the snapshot was read again: nothing cached from it holds

    def refusals(self) -> dict[str, str]:
        """Each kind of edit this reader does not make, with why."""
        if self._db.locked:
            return dict.fromkeys(EDIT_KINDS, self._db.locked)
        return {k: self.REASON for k in EDIT_KINDS if k not in self.EDITS}

    def _writable(self, kind: str) -> None:
        """Raise :class:`ReadOnlyError` unless ``kind`` of edit may be made now (before anything is touched)."""
        if kind not in self.EDITS or self._db.locked:
            raise self.refuse(kind)
        if self.read_only:
            raise ReadOnlyError(f"{self.path} is open read-only; enable editing to change it")

    async def migrate(self) -> MigrationReport:
        """``oxmem init``: another agent's schema is left as it is; nothing is written."""
        return self.migration_report

    async def prepare_search(self, scope: Scope, /) -> int:
        """Another agent's file: its searches read what they need at the query (nothing prepared ahead)."""
        return 0

    def edit_effects(self, note: Note | None, /) -> list[str]:
        """What saving ``note`` (None: a new one) changes that the agent will see, beyond its text and tags — said
        before saving; reads nothing. None here: the format's edits change nothing else."""
        return []

    @property
    def open_notice(self) -> str | None:
        """A line about how the file is open (a decrypted snapshot); none once an encrypted file is being edited:
        each edit goes into the file and takes the snapshot again."""
        return None if self._writable_snapshot else self._db.notice

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_sessions=False,
            has_notes=False,
            has_schedules=False,
            has_search=False,
            refusals=self.refusals(),
        )

    def set_weekday_numbering(self, numbering: str) -> None:
        if numbering != "standard":
            raise InvalidInputError(f"{self.LABEL} files have no cron weekdays to renumber")

    async def aclose(self) -> None:
        self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def refuse(self, kind: str = "events") -> ReadOnlyError:
        return ReadOnlyError(
            f"{self.path.name} is {article(self.LABEL)} {self.LABEL} file: "
            f"{self.capabilities.refusal(kind) or self.REASON}; nothing was changed"
        )

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self._db.read(fn, *args, **kwargs)

    async def info(self) -> DatabaseInfo:
        return await self._db.read(self._info)

    def _info(self, conn: apsw.Connection) -> DatabaseInfo:
        return gather_info(conn, self.path, self.format, self._markers(conn), self._embeddings(conn), self.REASON)

    def _markers(self, conn: apsw.Connection) -> list[str]:
        """Version markers of the format (migration names, which tables of which version exist)."""
        return []

    def _embeddings(self, conn: apsw.Connection) -> list[EmbeddingInfo]:
        return []

    def query_text(self, query: str) -> str:
        """The words the agent embeds for ``query`` (whitespace collapsed, as oxmem and Oxydra index; a format
        whose agent embeds the query as typed overrides this)."""
        return normalize(query)

    def query_vector(
        self, model: str, query: str, options: Mapping[str, Any], dimensions: int = 0
    ) -> tuple[np.ndarray | None, str | None]:
        """The query embedded by ``model`` (the model that made the vectors it is compared with), or None and
        the reason. ``options["query_embedding"]`` (a precomputed vector) wins; the deterministic model is
        always here; the semantic model when installed; any other — or the semantic model when oxmem's own copy
        is not installed — where the agent's library keeps it (:mod:`..embeddings.local_models`), else at the
        embeddings endpoint, whose answer must have ``dimensions`` values (the stored vectors'; 0: any)."""
        given = options.get("query_embedding")
        if given is not None:
            return np.asarray(given, dtype=np.float32), None
        if model == DETERMINISTIC_MODEL:
            return self.backend.embed([self.query_text(query)])[0], None
        own = ""
        if model == MODEL_NAME and self._semantic is None:
            try:
                self._semantic = choose_backend("semantic", None).backend
            except EmbeddingError as exc:  # not installed: looked up as any other model
                own = f"{exc}; "
        local = (self._semantic if model == MODEL_NAME else None) or self._local_models.get(model)
        if local is None:
            try:
                local = self._local_models[model] = local_models.backend(model, self.path)
            except EmbeddingError as exc:
                return None, f"{own}{exc}; the vector part is left out"
        try:
            return endpoint.embed_sized(local, self.query_text(query), dimensions), None
        except endpoint.UnusableAnswer as exc:
            return None, f"{exc}; the vector part is left out"

    async def example(self, item_id: str) -> Example:
        """The stored vector of one of the format's memories, to search by example (formats with vectors
        override this)."""
        raise InvalidInputError(f"{self.LABEL} files keep no vectors to search by example")

    async def tables(self) -> list[table_browser.TableInfo]:
        return await self._db.read(table_browser.list_tables, True)

    async def table_page(self, name: str, offset: int = 0, limit: int = table_browser.PAGE) -> table_browser.TablePage:
        return await self._db.read(table_browser.table_page, name, offset, limit)

    async def data_version(self) -> int:
        return await self._db.run(data_version)

    async def backup_to(self, target: str | os.PathLike[str], overwrite: bool = False) -> Path:
        """A consistent copy of the file at ``target``, written safely (:func:`.store.backups.backup_to`: an
        existing database is replaced only when ``overwrite``); an encrypted file's stays encrypted with its key."""
        if self._db.adopted is not None:
            key = self.cipher_key
            if key is None:
                raise ReadOnlyError(f"{self.path.name} is encrypted: without its key no backup can be made here")
            real = backups.checked_target(self.path, target, overwrite)
            return await self._db.run(
                lambda _conn: backups.write_complete(real, lambda part: encrypted_backup(self.path, key, part))
            )
        return await self._db.run(backups.backup_to, target, overwrite)

    # -- sessions -----------------------------------------------------------------------------------

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[browse.SessionRow]:
        """Every session, newest first (``updated_at`` desc, id asc); a subclass with sessions overrides this."""
        return []

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        raise NotFoundError(f"no session {session_id!r}")

    def _events_after(
        self, conn: apsw.Connection, session_id: str, after_sequence: int | None, limit: int
    ) -> list[Event]:
        """A page of the session's events past ``after_sequence``; a format whose events a query can page
        overrides this (and :meth:`_event_stats`) so a page never reads the whole session."""
        evs = self._events(conn, session_id)
        return [e for e in evs if after_sequence is None or e.sequence > after_sequence][:limit]

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        """How many events the session has, and its last sequence."""
        evs = self._events(conn, session_id)
        return len(evs), evs[-1].sequence if evs else None

    def _summary(self, conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
        return None

    def _file_state(self, conn: apsw.Connection) -> tuple[int, int, int]:
        """What changes when the file does: another connection's commits (``data_version``), this one's own
        writes (``total_changes``) and an encrypted file's snapshot read again after an edit. Read first in a read
        transaction, it is the state of that snapshot."""
        return data_version(conn), conn.total_changes(), self._reloads

    def _per_state(self, conn: apsw.Connection, name: str, key: Any, make: Callable[[], T]) -> T:
        """``make()``, kept under ``name`` until the file changes (:meth:`_file_state`) or another ``key`` is
        asked for (one value per name)."""
        wanted = (self._file_state(conn), key)
        kept = self._kept.get(name)
        if kept is None or kept[0] != wanted:
            kept = self._kept[name] = (wanted, make())
        return kept[1]

    def _bm25_best(
        self,
        conn: apsw.Connection,
        table: str,
        terms: list[str],
        limit: int,
        admitted: tuple[str, tuple],
        fetch: str,
    ) -> list[tuple] | None:
        """The rows of the agent's ``… ORDER BY bm25 LIMIT`` over FTS5 table ``table`` from cached postings
        (:meth:`.TableBm25.best`), each row with its bm25 last; or None: run the agent's SQL. ``admitted`` is the
        SQL of the rowids the query's joins and filters let through and its arguments; ``fetch`` reads the
        chosen rows (``rowid`` first) given ``rowids`` as a JSON array bound to ``:rowids``."""
        index = self._bm25.get(table)
        if index is None:
            index = self._bm25[table] = TableBm25(table)
        sql, args = admitted
        best = index.best(
            conn,
            self._file_state(conn),
            terms,
            limit,
            (admitted, lambda: [r[0] for r in conn.execute(sql, args)]),
        )
        if best is None:
            return None
        rows = {r[0]: r for r in conn.execute(fetch, {"rowids": json.dumps([rowid for rowid, _ in best])})}
        return [(*rows[rowid], bm25) for rowid, bm25 in best]

    def _session_page(
        self, conn: apsw.Connection, after: tuple[str, str] | None, limit: int, contains: str | None
    ) -> list[browse.SessionRow]:
        """A page of :meth:`_sessions` (computed once per state of the file and filter: a format's sessions are
        aggregates over all its events, and their order is known only once all are read)."""
        rows = self._per_state(conn, "sessions", contains, lambda: self._sessions(conn, contains))
        if after is not None:
            rows = [
                r for r in rows if (r.updated_at < after[0]) or (r.updated_at == after[0] and r.session_id > after[1])
            ]
        return rows[:limit]

    async def sessions_page(
        self, after: tuple[str, str] | None = None, limit: int = browse.PAGE, contains: str | None = None
    ) -> list[browse.SessionRow]:
        return await self._db.read(self._session_page, after, limit, contains)

    async def list_sessions(self, with_counts: bool = True) -> list[SessionInfo]:
        def listing(conn: apsw.Connection) -> list[SessionInfo]:
            out = []
            for row in self._sessions(conn, None):
                count, last = self._event_stats(conn, row.session_id) if with_counts else (None, None)
                out.append(SessionInfo(row.session_id, row.agent_identity, row.created_at, row.updated_at, last, count))
            return out

        return await self._db.read(listing)

    async def session_stats(self, session_ids: Sequence[str]) -> dict[str, browse.SessionStats]:
        def stats(conn: apsw.Connection) -> dict[str, browse.SessionStats]:
            out = {}
            for sid in session_ids:
                count, last = self._event_stats(conn, sid)
                out[sid] = browse.SessionStats(count, last, 0)
            return out

        return await self._db.read(stats)

    async def events_page(
        self, session_id: str, after_sequence: int | None = None, limit: int = browse.PAGE
    ) -> list[Event]:
        return await self._db.read(self._events_after, session_id, after_sequence, limit)

    async def recall(self, session_id: str, limit: int | None = None) -> list[Event]:
        evs = await self._db.read(self._events, session_id)
        return evs[-limit:] if limit else evs

    async def chunks_page(
        self, session_id: str, after_rowid: int | None = None, limit: int = browse.PAGE
    ) -> list[browse.ChunkRow]:
        return []

    async def session_models(self, session_id: str) -> list[str]:
        return []

    async def read_summary_state(self, session_id: str) -> dict[str, Any] | None:
        def read(conn: apsw.Connection) -> dict[str, Any] | None:
            self._event_stats(conn, session_id)  # an unknown session is not-found, as in the store
            return self._summary(conn, session_id)

        return await self._db.read(read)

    async def context_preview(self, session_id: str, budget_tokens: int) -> summary.ContextPreview:
        def preview(conn: apsw.Connection) -> summary.ContextPreview:
            return summary.preview_events(
                self._events(conn, session_id), self._summary(conn, session_id), budget_tokens
            )

        return await self._db.read(preview)

    # -- notes --------------------------------------------------------------------------------------

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        """A group's notes, newest first; a subclass with notes overrides this and :meth:`_groups`."""
        return []

    def _groups(self, conn: apsw.Connection) -> list[str]:
        return []

    async def note_users(self) -> list[str]:
        return await self._db.read(self._groups)

    def _tag_lists(self, conn: apsw.Connection, group: str) -> list[tuple[list[str], int]]:
        """Each distinct list of tags among the group's notes, and on how many; a format that can count them
        without reading its notes overrides this."""
        return [(n.tags, 1) for n in self._notes(conn, group)]

    async def note_tags(self, user: str) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for tags, times in await self._db.read(self._tag_lists, user):
            for t in tags:
                counts[t] = counts.get(t, 0) + times
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    async def list_notes(
        self, user: str, tags: Sequence[str] = (), tag_mode: str = "any", contains: str | None = None
    ) -> list[Note]:
        notes = await self._db.read(self._notes, user)
        wanted = [t.lower() for t in tags]
        if wanted:
            test = all if tag_mode == "all" else any
            notes = [n for n in notes if test(t in _lower(n.tags) for t in wanted)]
        if contains:
            needle = contains.casefold()
            notes = [n for n in notes if needle in n.content.casefold()]
        return notes

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        """The ``limit`` notes of :meth:`_notes` after the cursor ``after`` (a negative ``limit``: all of them); a
        format whose notes a query can page overrides this, yielding them as its cursor reads them."""
        return page_after(self._notes(conn, group), after, limit)

    async def notes_page(
        self,
        user: str,
        after: tuple[str, int] | None = None,
        limit: int = browse.PAGE,
        tags: Sequence[str] = (),
        tag_mode: str = "any",
        contains: str | None = None,
    ) -> list[Note]:
        """A page of :meth:`list_notes` (as :meth:`MemoryStore.notes_page`), read a page at a time through
        :meth:`_notes_after`; filtered, read on in the list's order until the page is full."""
        return await self._db.read(self._page, user, after, limit, tags, tag_mode, contains)

    def _page(
        self,
        conn: apsw.Connection,
        group: str,
        after: tuple[str, int] | None,
        limit: int,
        tags: Sequence[str],
        tag_mode: str,
        contains: str | None,
    ) -> list[Note]:
        if not tags and not contains:
            return list(self._notes_after(conn, group, after, limit))
        wanted = [t.lower() for t in tags]
        test = all if tag_mode == "all" else any
        needle = contains.casefold() if contains else None

        def kept(n: Note) -> bool:
            return (not wanted or test(t in _lower(n.tags) for t in wanted)) and (
                needle is None or needle in n.content.casefold()
            )

        found = (n for n in self._notes_after(conn, group, after, -1) if kept(n))
        return list(itertools.islice(found, None if limit < 0 else limit))

    def _note_of(self, conn: apsw.Connection, group: str, note_id: str) -> Note | None:
        """One note of the group, None when there is none; a format that can read one note alone overrides this."""
        return next((n for n in self._notes(conn, group) if n.note_id == note_id), None)

    async def get_note(self, user: str, note_id: str) -> Note:
        note = await self._db.read(self._note_of, user, note_id)
        if note is not None:
            return note
        raise NotFoundError(f"no entry {note_id!r} among the {self.capabilities.notes_label.lower()} of {user!r}")

    async def search_notes(
        self, user: str, query: str, top_k: int = 8, options: SearchOptions | None = None
    ) -> NoteHits:
        """The agent's own ranking over a notes group, one hit per note."""
        for r in self.retrievers():
            if r.scope == "notes":
                result = await self.search(r.name, user, query, top_k, _fixed(options))
                hits = [
                    NoteHit(
                        h.chunk_id,
                        h.text,
                        h.score,
                        list((h.metadata or {}).get("tags") or []),
                        (h.metadata or {}).get("created_at"),
                        (h.metadata or {}).get("updated_at"),
                        h,
                    )
                    for h in result.hits
                ]
                return NoteHits(hits, result.skipped_models)
        raise InvalidInputError(f"{self.LABEL} files have no ranking over {self.capabilities.notes_label.lower()}")

    # -- search -------------------------------------------------------------------------------------

    def retrievers(self) -> list[Retriever]:
        return []

    async def search(
        self, retriever: str, scope: Scope, query: str, top_k: int = 8, options: SearchOptions | None = None
    ) -> QueryResult:
        """Run the ranking ``retriever`` over ``scope`` (a session id or notes group, per its ``scope``; or every
        session, :class:`~..retrieval.scope.AllSessions`, where the ranking says it can)."""
        method = self._retriever_method(retriever)
        if isinstance(scope, AllSessions):
            found = next(r for r in self.retrievers() if r.name == retriever)
            if not found.every:
                noun = self.capabilities.session_noun
                raise InvalidInputError(
                    f"{found.label} ranks within one {noun} (what it draws on has no meaning across "
                    f"{noun}s): pick a {noun} to search"
                )
        check_text(query, "query")
        if not query.strip():
            raise InvalidInputError("query is empty")
        check_positive(top_k, "top_k", MAX_TOP_K)
        return await self._db.read(method, scope, query, top_k, **SearchOptions.of(options).given())

    async def why_not(
        self,
        retriever: str,
        scope: str,
        query: str,
        target: str,
        top_k: int = 8,
        options: SearchOptions | None = None,
        *,
        suggest: bool = True,
    ) -> WhyNot:
        """Why ``target`` (an id the agent's ranking returns its hits by) is not in ``retriever``'s top k: its place
        in the agent's own ranking asked for every hit it gives (the agent's limits kept), in one snapshot. The
        agent's ranking is fixed: ``options`` and ``suggest`` (settings that would bring it in) do not apply."""
        method = self._retriever_method(retriever)
        check_text(query, "query")
        check_positive(top_k, "top_k", MAX_TOP_K)
        if not isinstance(target, str) or not target.strip():
            raise InvalidInputError("say which memory: the id of a message, fact or memory")

        def story(conn: apsw.Connection) -> WhyNot:
            result = method(conn, scope, query, top_k)
            every = method(conn, scope, query, MAX_TOP_K)
            label = next(r.label for r in self.retrievers() if r.name == retriever)
            wanted = target.strip()
            number = wanted.removeprefix("#")
            if number.isdigit():  # an event of the session, as the session browser numbers it
                wanted = self._event_target(conn, scope, int(number), every)
            hit = next((h for h in every.hits if h.chunk_id == wanted), None)
            # the agent's own candidates at this k, when its ranking gives them ranked (its hits their head: ZEKE's
            # k×2 per leg, Omega's FTS rows); else every hit it gives
            pool = (
                result.pool
                if [h.chunk_id for h in result.pool[: len(result.hits)]] == [h.chunk_id for h in result.hits]
                and result.pool
                else None
            )
            of = len(every.hits) if pool is None else len(pool)
            out = WhyNot(retriever, query, top_k, target, scope, None, wanted, "", None, of, None, False, "", "",
                         result=result)  # fmt: skip
            if hit is None:
                pooled = next((h for h in every.pool if h.chunk_id == wanted), None)
                out.reason = "not-ranked"
                if pooled is None:
                    out.cut = self._why_unranked(conn, scope, query, wanted, label, every)
                else:  # a candidate the agent's lists left out: its notes say why, list by list
                    out.sequence, out.text, out.notes = pooled.sequence_start, pooled.text, list(pooled.notes)
                    out.cut = f"{label} did not take it: " + "; ".join(pooled.notes)
                return out
            out.session_id, out.sequence, out.text = hit.session_id, hit.sequence_start, hit.text
            out.rank, out.score = hit.rank, hit.score
            if pool is not None:  # its place among the agent's candidates (None: not one of them at this k)
                out.rank = next((i for i, h in enumerate(pool, 1) if h.chunk_id == wanted), None)
            if any(h.chunk_id == hit.chunk_id for h in result.hits):
                out.recalled, out.reason = True, "recalled"
                return out
            out.above = [(h.rank, h.chunk_id, h.score) for h in result.hits]
            limit = len(result.hits)
            out.reason = "agent-limit" if hit.rank > limit and limit < top_k else "outranked"
            taken = any(h.chunk_id == hit.chunk_id for h in result.pool)
            if out.reason == "agent-limit":
                out.cut = f"{label} returns {limit} hits at most here; this is its #{hit.rank}"
            elif not taken:
                out.cut = (f"not among the {len(result.pool)} candidates {label} takes at top {top_k}; asked for "
                           f"every hit, it is #{hit.rank}")  # fmt: skip
            elif out.rank is not None and out.rank != hit.rank:
                out.cut = (f"outranked within the top {top_k}: #{out.rank} of the {of} candidates {label} takes at "
                           f"top {top_k} (#{hit.rank} when every hit is asked for)")  # fmt: skip
            else:
                out.cut = f"outranked within the top {top_k}: {label}'s #{hit.rank}"
            if out.reason == "outranked":  # checked: the agent's ranking asked for that many
                deeper = next((h.rank for h in method(conn, scope, query, hit.rank).hits if h.chunk_id == wanted), None)
                if deeper is not None:
                    out.changes = [WhyChange("top_k", hit.rank, f"top {hit.rank} (now {top_k})", deeper)]
            out.notes = list(hit.notes)
            return out

        return await self._db.read(story)

    async def why_not_choices(self, scope: str, limit: int = CHOICES) -> list[tuple[str, str]]:
        """What *Why not…?* offers to pick for ``scope``: ``(label, target)``, the session's events (formats
        whose ranking draws on other rows say which)."""
        return event_choices(await self.events_page(scope, None, limit))

    def _event_target(self, conn: apsw.Connection, scope: str, sequence: int, every: QueryResult) -> str:
        """The id the agent's ranking gives the session's event at ``sequence`` (formats whose hits are not
        numbered by the session's sequence override this); raises :class:`NotFoundError` when there is none."""
        found = next((h.chunk_id for h in [*every.hits, *every.pool] if h.sequence_start == sequence), None)
        if found is None:
            raise NotFoundError(f"no event at sequence {sequence} that {self.LABEL}'s ranking returns for this query")
        return found

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        """Why the agent's ranking (``every``: asked for every hit) does not return ``target`` at all; formats
        that know more say more, and raise :class:`NotFoundError` for an id that is in no table it ranks."""
        return f"{label} does not return it for this query, at any depth" + skipped_legs(every)

    def _retriever_method(self, name: str) -> Callable[..., QueryResult]:
        known = [r.name for r in self.retrievers()]
        if name not in known:
            raise InvalidInputError(
                f"{self.LABEL} files have no ranking {name!r}" + (f" (known: {', '.join(known)})" if known else "")
            )
        return functools.partial(self.RANKINGS[name], self)

    async def hybrid_query(self, session_id: str, query: str, top_k: int = 8, **options: Any) -> QueryResult:
        """The agent's own ranking of a session (its first session retriever); the hybrid's tuning options do
        not apply to it and are ignored."""
        for r in self.retrievers():
            if r.scope == "session":
                return await self.search(r.name, session_id, query, top_k, _fixed(SearchOptions.of(options)))
        raise InvalidInputError(f"{self.LABEL} files have no search over sessions")

    async def eviction_preview(self, now: datetime | None = None, **limits: Any) -> EvictionPreview | None:
        """What the agent's own clean-up would delete now (None: it has none). Nothing is deleted."""
        return None

    async def session_state(self, session_id: str) -> str | None:
        """``"active"`` or ``"closed"`` as the agent records it; None where sessions are neither."""
        return None

    async def set_session_open(self, session_id: str, open_: bool) -> str:
        """Close or reopen a session, as the agent does (its new status); formats without one refuse."""
        raise InvalidInputError(f"{self.LABEL} files' sessions are not opened or closed")

    async def apply_eviction(self, confirmed: Sequence[str], now: datetime | str, **limits: Any) -> list[Note]:
        """Do the agent's own clean-up as previewed at ``now``, if it still deletes exactly ``confirmed``."""
        raise InvalidInputError(f"{self.LABEL} files have no clean-up of their own to apply")

    # -- writes: refused ----------------------------------------------------------------------------

    async def store(self, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse("events")

    store_many = import_events = reindex = store

    async def repair_vector_index(self) -> tuple[int, list[int], bool]:
        """Only a libSQL vector index is repaired (newer Oxydra's files): refused, nothing written."""
        raise ReadOnlyError(
            f"{self.path.name} is {article(self.LABEL)} {self.LABEL} file: it has no libSQL vector index to repair "
            "(`oxmem check` reads it as it is); nothing was changed"
        )

    async def forget(self, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse("sessions")

    async def turn(self, session_id: str, sequence: int) -> list[Event]:
        """The one event ``sequence`` (a format that deletes turns overrides this and :meth:`delete_turn`)."""
        return only(await self.events_page(session_id, sequence - 1, 1), session_id, sequence)

    async def delete_turn(self, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse("turns")

    async def save_note(self, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse("notes")

    update_note = delete_note = delete_notes = restore_notes = save_note

    async def set_note_tags(
        self,
        user: str,
        note_ids: Sequence[str],
        add: Sequence[str] = (),
        remove: Sequence[str] = (),
        *,
        expected: Sequence[Note] | None = None,
    ) -> list[Note]:
        """Tags added to or removed from several notes, each an :meth:`update_note` of its text with its tags less
        ``remove`` plus ``add`` (each as loaded in ``expected``, where given): a format whose notes are edited
        has it as it is; refused like every note edit where notes are not."""
        self._writable("notes")
        loaded = {n.note_id: n for n in expected} if expected is not None else {}
        out = []
        for note_id in note_ids:
            note = loaded.get(note_id) or await self.get_note(user, note_id)
            tags = [t for t in note.tags if t not in remove] + [t for t in add if t not in note.tags]
            out.append(await self.update_note(user, note_id, note.content, tags, expected=loaded.get(note_id)))
        return out

    async def write_summary_state(self, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse("summary")

    summarize = write_summary_state

    # -- schedules ----------------------------------------------------------------------------------

    def _schedule_rows(self, conn: apsw.Connection) -> list[Schedule]:
        return []

    def _schedule_of(self, conn: apsw.Connection, schedule_id: str) -> Schedule | None:
        return next((s for s in self._schedule_rows(conn) if s.schedule_id == schedule_id), None)

    async def update_schedule(
        self, schedule_id: str, patch: Mapping[str, Any], now: datetime, expected: Schedule | None
    ) -> Schedule:
        """Change a schedule as the agent does (formats whose agent does override this)."""
        raise self.refuse("schedules")

    async def delete_schedule(self, schedule_id: str, expected: Schedule | None) -> int:
        """Delete a schedule as the agent does (formats whose agent does override this)."""
        raise self.refuse_schedule("delete")

    def refuse_schedule(self, action: str) -> Exception:
        """Why ``action`` (``new``, ``delete``) cannot be done to this format's schedules."""
        reason = self.capabilities.schedule_refusals.get(action)
        if reason is None:
            return self.refuse("schedules")
        return ReadOnlyError(
            f"{self.path.name} is {article(self.LABEL)} {self.LABEL} file: {reason}; nothing was changed"
        )

    def _runs(self, conn: apsw.Connection, schedule_id: str) -> list[ScheduleRun]:
        return []


def _lower(tags: Sequence[str]) -> set[str]:
    """A note's tags as the tag filter compares them (an agent's topics may be written in capitals: Agno's)."""
    return {t.lower() for t in tags}


def skipped_legs(result: QueryResult) -> str:
    """``"; the vector leg did not run: MODEL: why"`` when a ranking could not embed the query, else ``""``."""
    if not result.skipped_models:
        return ""
    return "; the vector leg did not run: " + "; ".join(f"{m}: {why}" for m, why in result.skipped_models.items())


class ForeignSchedules:
    """``reader.schedules``: the schedule calls of :class:`~oxmem_gui.core.store.ScheduleStore`, read-only."""

    def __init__(self, reader: ForeignReader) -> None:
        self._reader = reader

    async def _rows(self) -> list[Schedule]:
        return await self._reader.read(self._reader._schedule_rows)

    async def search(
        self,
        user_id: str | None = None,
        status: str | None = None,
        cadence_type: str | None = None,
        name_contains: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Schedule]:
        rows = [
            s
            for s in await self._rows()
            if (user_id is None or s.user_id == user_id)
            and (status is None or s.status == status)
            and (cadence_type is None or _cadence_type(s) == cadence_type)
            and (not name_contains or name_contains.casefold() in (s.name or "").casefold())
        ]
        rows.sort(key=lambda s: (s.created_at, s.schedule_id), reverse=True)
        return rows[offset : offset + limit]

    async def count(self, **filters: Any) -> int:
        return len(await self.search(limit=1 << 62, **filters))

    async def get(self, schedule_id: str) -> Schedule:
        for s in await self._rows():
            if s.schedule_id == schedule_id:
                return s
        raise NotFoundError(f"no schedule {schedule_id!r}")

    async def due(self, now: datetime | None = None, limit: int = 100) -> list[Schedule]:
        return []

    async def runs(self, schedule_id: str, limit: int = 50, offset: int = 0) -> list[ScheduleRun]:
        await self.get(schedule_id)
        runs = await self._reader.read(self._reader._runs, schedule_id)
        return runs[offset : offset + limit]

    async def run_count(self, schedule_id: str) -> int:
        return len(await self._reader.read(self._reader._runs, schedule_id))

    async def run(self, run_id: str) -> ScheduleRun:
        for s in await self._rows():
            for r in await self._reader.read(self._reader._runs, s.schedule_id):
                if r.run_id == run_id:
                    return r
        raise NotFoundError(f"no run {run_id!r}")

    async def runs_between(self, start: datetime, end: datetime) -> list[ScheduleRun]:
        return []

    async def update(
        self,
        schedule_id: str,
        patch: Mapping[str, Any],
        now: datetime | None = None,
        *,
        expected: Schedule | None = None,
    ) -> Schedule:
        """The edits of a schedule the agent itself makes (:meth:`ForeignReader.update_schedule`)."""
        return await self._reader.update_schedule(schedule_id, patch, now or datetime.now(timezone.utc), expected)

    async def pause(self, schedule_id: str, *, expected: Schedule | None = None) -> Schedule:
        return await self.update(schedule_id, {"status": "paused"}, expected=expected)

    async def resume(self, schedule_id: str, *, expected: Schedule | None = None) -> Schedule:
        return await self.update(schedule_id, {"status": "active"}, expected=expected)

    async def _refused(self, *args: Any, **kwargs: Any) -> Any:
        raise self._reader.refuse("schedules")

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        raise self._reader.refuse_schedule("new")

    async def delete(self, schedule_id: str, *, expected: Schedule | None = None) -> int:
        """Delete a schedule as the agent does (:meth:`ForeignReader.delete_schedule`); the runs deleted with it."""
        return await self._reader.delete_schedule(schedule_id, expected)

    record_run = prune_run_history = _refused


def _cadence_type(schedule: Schedule) -> str | None:
    try:
        return schedule.cadence.type
    except InvalidInputError:
        return None


def _fixed(options: SearchOptions | None) -> SearchOptions:
    """The options an agent's own ranking takes (a precomputed query vector); the hybrid's tuning is dropped."""
    given = SearchOptions.of(options)
    return SearchOptions(query_embedding=given.query_embedding, query_embedding_model=given.query_embedding_model)


def hit(
    rank: int,
    hit_id: str,
    session_id: str,
    text: str,
    score: float,
    *,
    vector: tuple[float, float | None, int | None] = (0.0, None, None),
    fts: tuple[float, float | None, int | None] = (0.0, None, None),
    sequence: int | None = None,
    metadata: Any = None,
    model: str | None = None,
    notes: Sequence[str] = (),
) -> Hit:
    """A :class:`Hit` of another agent's ranking: each leg as ``(score, raw, rank)``."""
    return Hit(
        rank,
        hit_id,
        session_id,
        text,
        score,
        vector[0],
        fts[0],
        vector[1],
        fts[1],
        vector[2],
        fts[2],
        sequence,
        sequence,
        metadata,
        model,
        list(notes),
    )


__all__ = [
    "DETERMINISTIC_MODEL",
    "Capabilities",
    "Eviction",
    "EvictionPreview",
    "ForeignReader",
    "ForeignSchedules",
    "Retriever",
    "hit",
]
