"""The contract every memory keeps, as typed protocols: what front ends may call on what :func:`~.memory.open_memory`
returns.

A memory is the store (:class:`~.memory_store.MemoryStore`: oxmem's, Oxydra's files) or another agent's reader
(:class:`~.formats.base.ForeignReader` and its subclasses). Each is a :class:`MemoryReader`; what a format lets a
user change is said twice, once for people (:attr:`MemoryReader.capabilities`: which edits are refused and why)
and once for the type checker (:class:`NotesEditor`, :class:`SessionsEditor`, :class:`ScheduleReader`'s changes,
which every memory answers: a refused edit raises :class:`~.errors.ReadOnlyError` with the agent's reason).
``mypy`` holds every implementation to these protocols (:func:`.memory.implementations`) in ``./run test``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .embeddings.backends import EmbeddingBackend
from .embeddings.example import Example
from .embeddings.reindex import ReindexResult
from .formats.base import Capabilities, EvictionPreview, Retriever
from .formats.info import DatabaseInfo
from .formats.langgraph_checkpoints import CheckpointInfo
from .formats.table_browser import TableInfo, TablePage
from .retrieval.hybrid import QueryResult
from .retrieval.notes import NoteHits
from .retrieval.options import SearchOptions
from .retrieval.scope import Scope
from .retrieval.why_not import WhyNot
from .schedules.store import Schedule, ScheduleRun
from .store.browse import ChunkRow, SessionRow, SessionStats
from .store.events import Event, SessionInfo, StoreResult
from .store.importing import ImportResult
from .store.migrations import MigrationReport
from .store.notes import Note
from .store.sql_console import SqlResult
from .store.summary import ContextPreview

if TYPE_CHECKING:
    from typing_extensions import Self

    from .remote import RemoteSnapshot


@runtime_checkable
class ScheduleReader(Protocol):
    """``memory.schedules``: a memory's schedules as its agent reads them, and the changes it makes to them."""

    async def search(
        self,
        *,
        user_id: str | None = None,
        status: str | None = None,
        cadence_type: str | None = None,
        name_contains: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Schedule]: ...

    async def count(self, **filters: Any) -> int: ...

    async def get(self, schedule_id: str, /) -> Schedule: ...

    async def due(self, now: datetime | None = None, limit: int = 100) -> list[Schedule]: ...

    async def runs(self, schedule_id: str, limit: int = 50, offset: int = 0) -> list[ScheduleRun]: ...

    async def run_count(self, schedule_id: str, /) -> int: ...

    async def run(self, run_id: str, /) -> ScheduleRun: ...

    async def runs_between(self, start: datetime, end: datetime, /) -> list[ScheduleRun]: ...

    async def create(self, user_id: str, goal: str, cadence: Any, **options: Any) -> Schedule: ...

    async def update(
        self,
        schedule_id: str,
        patch: Mapping[str, Any],
        now: datetime | None = None,
        *,
        expected: Schedule | None = None,
    ) -> Schedule: ...

    async def pause(self, schedule_id: str, /, *, expected: Schedule | None = None) -> Schedule: ...

    async def resume(self, schedule_id: str, /, *, expected: Schedule | None = None) -> Schedule: ...

    async def delete(self, schedule_id: str, /, *, expected: Schedule | None = None) -> int: ...


@runtime_checkable
class MemoryReader(Protocol):
    """Reading one memory: its sessions and events, notes, summaries, schedules, tables, search with its
    explanation and Why not…?, and what the file is. Every call is async and reads one snapshot of the file;
    nothing here writes to it."""

    format: str
    remote: RemoteSnapshot | None
    #: the embedding backend the file's queries (and its writes) are embedded with, and what choosing it said
    #: (the semantic model missing, …), for the commands that embed
    backend: EmbeddingBackend
    backend_notice: str | None

    @property
    def schedules(self) -> ScheduleReader: ...

    @property
    def path(self) -> Path: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def open_notice(self) -> str | None: ...

    @property
    def capabilities(self) -> Capabilities: ...

    async def info(self) -> DatabaseInfo: ...

    async def migrate(self) -> MigrationReport:
        """oxmem's own store: apply its pending migrations; another agent's file: its recorded versions, unchanged."""
        ...

    def set_weekday_numbering(self, numbering: str, /) -> None:
        """How the file's agent numbers cron weekdays (newer Oxydra: Sunday = 1), as the user chose."""
        ...

    async def data_version(self) -> int: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    # -- sessions and events
    async def sessions_page(
        self, after: tuple[str, str] | None = None, limit: int = ..., contains: str | None = None
    ) -> list[SessionRow]: ...

    async def list_sessions(self, with_counts: bool = True) -> list[SessionInfo]: ...

    async def session_stats(self, session_ids: Sequence[str], /) -> dict[str, SessionStats]: ...

    async def events_page(
        self, session_id: str, after_sequence: int | None = None, limit: int = ...
    ) -> list[Event]: ...

    async def recall(self, session_id: str, limit: int | None = None) -> list[Event]: ...

    async def chunks_page(
        self, session_id: str, after_rowid: int | None = None, limit: int = ...
    ) -> list[ChunkRow]: ...

    async def session_models(self, session_id: str, /) -> list[str]: ...

    async def session_state(self, session_id: str, /) -> str | None: ...

    async def read_summary_state(self, session_id: str, /) -> dict[str, Any] | None: ...

    async def context_preview(self, session_id: str, budget_tokens: int, /) -> ContextPreview: ...

    # -- notes
    async def note_users(self) -> list[str]: ...

    async def note_tags(self, user: str, /) -> list[tuple[str, int]]: ...

    async def list_notes(
        self, user: str, tags: Sequence[str] = (), tag_mode: str = "any", contains: str | None = None
    ) -> list[Note]: ...

    async def notes_page(
        self,
        user: str,
        after: tuple[str, int] | None = None,
        limit: int = ...,
        tags: Sequence[str] = (),
        tag_mode: str = "any",
        contains: str | None = None,
    ) -> list[Note]: ...

    async def get_note(self, user: str, note_id: str, /) -> Note: ...

    # -- search
    def retrievers(self) -> list[Retriever]: ...

    async def search(
        self, retriever: str, scope: Scope, query: str, /, top_k: int = 8, options: SearchOptions | None = None
    ) -> QueryResult: ...

    async def prepare_search(self, scope: Scope, /) -> int:
        """Build ahead of the first query what a search of ``scope`` reads (or restore it: kept on disk between
        processes); how many vectors it holds (0: nothing to prepare)."""
        ...

    async def search_notes(
        self, user: str, query: str, /, top_k: int = 8, options: SearchOptions | None = None
    ) -> NoteHits: ...

    async def why_not(
        self,
        retriever: str,
        scope: str,
        query: str,
        target: str,
        /,
        top_k: int = 8,
        options: SearchOptions | None = None,
        *,
        suggest: bool = True,
    ) -> WhyNot: ...

    async def why_not_choices(self, scope: str, limit: int = ..., /) -> list[tuple[str, str]]: ...

    async def example(self, item_id: str, /) -> Example: ...

    async def eviction_preview(self, now: datetime | None = None, **limits: Any) -> EvictionPreview | None: ...

    # -- the file as tables
    async def tables(self) -> list[TableInfo]: ...

    async def table_page(self, name: str, offset: int = 0, limit: int = ...) -> TablePage: ...

    async def sql(self, text: str, limit: int = ..., skip: int = 0, seconds: float = ...) -> SqlResult: ...

    def interrupt(self) -> None: ...

    async def backup_to(self, target: str | os.PathLike[str], overwrite: bool = False) -> Path: ...


@runtime_checkable
class NotesEditor(Protocol):
    """Changing notes the way the file's agent does. ``expected`` is the note as it was loaded: a change by another
    program since then is :class:`ConflictError` carrying the current row, and nothing is written."""

    def edit_effects(self, note: Note | None, /) -> list[str]:
        """What saving ``note`` (None: a new one) changes that the agent will see beyond its text and tags, each a
        clause in words (``"saving clears its last use, …"``), said before saving; reads nothing."""
        ...

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note: ...

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: Note | None = None
    ) -> Note: ...

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None: ...

    async def set_note_tags(
        self,
        user: str,
        note_ids: Sequence[str],
        add: Sequence[str] = (),
        remove: Sequence[str] = (),
        *,
        expected: Sequence[Note] | None = None,
    ) -> list[Note]: ...

    async def delete_notes(
        self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None
    ) -> int: ...

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]: ...


@runtime_checkable
class SessionsEditor(Protocol):
    """Changing sessions the way the agent does: forgetting one with everything in it, closing or reopening it
    where the agent does, and the agent's own clean-up as previewed."""

    async def forget(self, session_id: str, /) -> None: ...

    async def turn(self, session_id: str, sequence: int, /) -> list[Event]:
        """The events that go with ``sequence`` when it is deleted: its turn (the user's message and what answered
        it) with every tool call and output paired with them; :class:`~.errors.NotFoundError` when it is gone."""
        ...

    async def delete_turn(
        self, session_id: str, sequence: int, /, *, expected: Sequence[Event] | None = None
    ) -> list[int]:
        """Delete :meth:`turn` the way the agent deletes items, in one transaction; ``expected`` is the turn as
        loaded (changed since: :class:`~.errors.ConflictError`, nothing written). Returns the deleted sequences.
        Formats whose agent deletes no single turn refuse it (capability ``turns``)."""
        ...

    async def set_session_open(self, session_id: str, open_: bool, /) -> str: ...

    async def apply_eviction(self, confirmed: Sequence[str], now: datetime | str, **limits: Any) -> list[Note]: ...


@runtime_checkable
class EventsEditor(Protocol):
    """Adding events and keeping their index whole: oxmem's own store and Oxydra's files; every other format
    refuses each with its agent's reason (:class:`~.errors.ReadOnlyError`), writing nothing."""

    async def store(self, session_id: str, sequence: int, payload: Any, /) -> StoreResult: ...

    async def import_events(
        self,
        records: Iterable[Sequence[Any]],
        *,
        batch_events: int = ...,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> ImportResult: ...

    async def reindex(
        self,
        session_id: str | None = None,
        model: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> ReindexResult: ...

    async def repair_vector_index(self) -> tuple[int, list[int], bool]:
        """``check --repair``: ``(vectors, rowids re-inserted, rebuilt)`` for a libSQL vector index."""
        ...


@runtime_checkable
class TimelineReader(Protocol):
    """A memory whose sessions keep versions to step through (LangGraph's checkpoints): a front end asks
    ``isinstance(memory, TimelineReader)`` and then shows each session's versions, newest first, and its events as
    of any of them."""

    async def checkpoints(self, session_id: str, /) -> list[CheckpointInfo]: ...

    async def events_at(self, session_id: str, checkpoint_id: str, /) -> list[Event]: ...


class Memory(MemoryReader, NotesEditor, SessionsEditor, EventsEditor, Protocol):
    """What :func:`open_memory` returns: a :class:`MemoryReader` that also answers the edit protocols (schedules'
    edits are on :attr:`MemoryReader.schedules`). An edit the format does not make is refused as it is said in
    :attr:`MemoryReader.capabilities`."""
