"""The API of oxmem's core, in one import: what the command line, the inspector and other programs use.

The contract (:mod:`.contract`: :class:`Memory`, :class:`MemoryReader` and the edit protocols), the values its
calls return, :class:`SearchOptions`, the errors, and the functions that open, describe, check and compare
memories.

Adding a format is one reader module and its registration: subclass :class:`~.formats.base.ForeignReader`
(its rankings marked with :func:`~.formats.base.ranking`), teach :mod:`.formats.detect` its tables, and add it to
:data:`.memory.READERS` and :func:`.memory.implementations` (the README's layout section has the steps).
"""

from __future__ import annotations

from .check import CheckReport, check_store
from .compare import FileDiff, diff_files
from .contract import Memory, MemoryReader, NotesEditor, ScheduleReader, SessionsEditor
from .embeddings.example import Example
from .errors import (
    ConflictError,
    InvalidInputError,
    KeyRequiredError,
    NotFoundError,
    OxmemError,
    ReadOnlyError,
    StoreOpenError,
)
from .formats.base import Capabilities, EvictionPreview, Retriever
from .formats.info import DatabaseInfo
from .formats.table_browser import TableInfo, TablePage
from .memory import (
    choose_ranking,
    default_ranking,
    default_search,
    describe_memory,
    detect,
    inspect_database,
    open_memory,
    open_remote,
    refresh_remote,
)
from .retrieval.hybrid import Hit, QueryResult
from .retrieval.notes import NoteHit, NoteHits
from .retrieval.options import DEFAULTS as SEARCH_DEFAULTS
from .retrieval.options import SearchOptions
from .retrieval.scope import ALL_SESSIONS, AllSessions, Scope
from .retrieval.why_not import WhyNot
from .schedules.store import Schedule, ScheduleRun
from .store.browse import ChunkRow, SessionRow, SessionStats
from .store.events import Event, SessionInfo
from .store.notes import Note
from .store.sql_console import SqlResult
from .store.summary import ContextPreview

__all__ = [
    "ALL_SESSIONS",
    "SEARCH_DEFAULTS",
    "AllSessions",
    "Capabilities",
    "CheckReport",
    "ChunkRow",
    "ConflictError",
    "ContextPreview",
    "DatabaseInfo",
    "Event",
    "EvictionPreview",
    "Example",
    "FileDiff",
    "Hit",
    "InvalidInputError",
    "KeyRequiredError",
    "Memory",
    "MemoryReader",
    "Note",
    "NoteHit",
    "NoteHits",
    "NotFoundError",
    "NotesEditor",
    "OxmemError",
    "QueryResult",
    "ReadOnlyError",
    "Retriever",
    "Schedule",
    "ScheduleReader",
    "ScheduleRun",
    "Scope",
    "SearchOptions",
    "SessionInfo",
    "SessionRow",
    "SessionStats",
    "SessionsEditor",
    "SqlResult",
    "StoreOpenError",
    "TableInfo",
    "TablePage",
    "WhyNot",
    "check_store",
    "choose_ranking",
    "default_ranking",
    "default_search",
    "describe_memory",
    "detect",
    "diff_files",
    "inspect_database",
    "open_memory",
    "open_remote",
    "refresh_remote",
]
