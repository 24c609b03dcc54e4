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
from .compare import FileDiff, NoteChange, ScheduleChange, SessionChange, SummaryChange, diff_files, word_diff
from .contract import EventsEditor, Memory, MemoryReader, NotesEditor, ScheduleReader, SessionsEditor, TimelineReader
from .database import BUSY_TIMEOUT_MS
from .demo import fill_demo
from .embeddings import endpoint
from .embeddings.backends import BACKEND_NAMES
from .embeddings.example import Example
from .embeddings.indexing import PayloadNotIndexable, extract_text, normalize
from .embeddings.local_models import set_model_paths
from .embeddings.model_files import (
    MODEL_DIMS,
    MODEL_LICENSE,
    MODEL_NAME,
    SOURCE_DISTRIBUTION,
    install_model,
    locate_model,
    verify_prepared,
)
from .errors import (
    ConflictError,
    EmbeddingError,
    InvalidInputError,
    KeyRequiredError,
    NotFoundError,
    OperationCancelled,
    OxmemError,
    ReadOnlyError,
    StoreOpenError,
)
from .folders import backups_dir, default_db_path, log_dir
from .formats.base import Capabilities, EvictionPreview, Retriever
from .formats.detect import article
from .formats.encrypted import KEY_ENV
from .formats.info import DatabaseInfo, info_lines
from .formats.langgraph_checkpoints import CheckpointInfo
from .formats.table_browser import MAX_PAGE as TABLE_MAX_PAGE
from .formats.table_browser import TableInfo, TablePage, shown_value
from .known_places import Found, find_known, human_size
from .memory import (
    NATIVE_FORMATS,
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
from .memory_store import MemoryStore
from .redaction import RedactingFormatter, excepthook, redact, remember, stderr_redacted
from .remote import REMOTE_REASON, TOKEN_ENV, PullReport, server_url, token_from
from .retrieval.evaluation import (
    Evaluation,
    evaluate_settings,
    metrics_json,
    metrics_rows,
    result_rows,
    results_json,
    to_csv,
)
from .retrieval.explain import Move, describe_settings, explain, hit_flags, moves, setting_text
from .retrieval.hybrid import (
    FTS_MODES,
    KEYWORDS_MODE,
    MAX_TOP_K,
    Hit,
    LegStats,
    QueryResult,
    fts_terms,
    rerank,
)
from .retrieval.judgments import JudgmentStore
from .retrieval.notes import NoteHit, NoteHits
from .retrieval.options import DEFAULTS as SEARCH_DEFAULTS
from .retrieval.options import SearchOptions
from .retrieval.persisted import cache_root, cached_bytes, clear_all, max_bytes
from .retrieval.ranking import PROFILES
from .retrieval.scope import ALL_SESSIONS, AllSessions, Scope
from .retrieval.why_not import WhyNot
from .schedules.cadence import (
    CADENCE_TYPES,
    MAX_NEXT_RUNS,
    CronCadence,
    IntervalCadence,
    OnceCadence,
    cadence_dict,
    cadence_warnings,
    describe,
    format_in_timezone,
    next_runs,
    parse_cadence,
    parse_time,
    to_rfc3339,
    utc_now,
    validate_cadence,
    zone,
)
from .schedules.calendar import CalendarItem, CellLine, by_day, by_hour, calendar_items, cell_lines
from .schedules.store import POLICIES, STATUSES, Schedule, ScheduleRun, time_or_none
from .schedules.weekdays import WEEKDAY_NUMBERINGS
from .store.backups import Backup, TargetExistsError, backup_target, list_backups, prune, restore
from .store.browse import PAGE as BROWSE_PAGE
from .store.browse import ChunkRow, SessionRow, SessionStats
from .store.events import Event, SessionInfo
from .store.importing import BATCH_EVENTS, ImportResult
from .store.inputs import INT64_MAX, parse_stored
from .store.jsonl import read_jsonl
from .store.migrations import discard_new_store
from .store.note_files import notes_json, notes_markdown, parse_notes_json
from .store.notes import NOTES_PREFIX, Note, note_cursor, utc_now_text
from .store.sql_console import DEFAULT_LIMIT as SQL_LIMIT
from .store.sql_console import DEFAULT_SECONDS as SQL_SECONDS
from .store.sql_console import SqlResult
from .store.summary import ContextPreview, message_text
from .store.tags import MAX_TAG_CHARS, MAX_TAGS, TAG_MODES, normalize_tags

__all__ = [
    "ALL_SESSIONS",
    "AllSessions",
    "article",
    "BACKEND_NAMES",
    "Backup",
    "backup_target",
    "backups_dir",
    "BATCH_EVENTS",
    "BROWSE_PAGE",
    "cache_root",
    "cached_bytes",
    "BUSY_TIMEOUT_MS",
    "by_day",
    "by_hour",
    "cadence_dict",
    "CADENCE_TYPES",
    "cadence_warnings",
    "calendar_items",
    "CalendarItem",
    "Capabilities",
    "CheckpointInfo",
    "cell_lines",
    "CellLine",
    "check_store",
    "clear_all",
    "CheckReport",
    "choose_ranking",
    "ChunkRow",
    "ConflictError",
    "ContextPreview",
    "CronCadence",
    "DatabaseInfo",
    "default_db_path",
    "default_ranking",
    "default_search",
    "describe",
    "describe_memory",
    "describe_settings",
    "detect",
    "diff_files",
    "discard_new_store",
    "EmbeddingError",
    "endpoint",
    "evaluate_settings",
    "Evaluation",
    "Event",
    "EventsEditor",
    "EvictionPreview",
    "Example",
    "excepthook",
    "explain",
    "extract_text",
    "FileDiff",
    "fill_demo",
    "find_known",
    "Found",
    "human_size",
    "format_in_timezone",
    "FTS_MODES",
    "fts_terms",
    "Hit",
    "hit_flags",
    "ImportResult",
    "info_lines",
    "inspect_database",
    "install_model",
    "INT64_MAX",
    "IntervalCadence",
    "InvalidInputError",
    "JudgmentStore",
    "KEY_ENV",
    "KeyRequiredError",
    "KEYWORDS_MODE",
    "LegStats",
    "list_backups",
    "locate_model",
    "log_dir",
    "MAX_NEXT_RUNS",
    "MAX_TAG_CHARS",
    "MAX_TAGS",
    "max_bytes",
    "MAX_TOP_K",
    "Memory",
    "MemoryReader",
    "MemoryStore",
    "message_text",
    "metrics_json",
    "metrics_rows",
    "MODEL_DIMS",
    "MODEL_LICENSE",
    "MODEL_NAME",
    "Move",
    "moves",
    "NATIVE_FORMATS",
    "next_runs",
    "normalize",
    "normalize_tags",
    "Note",
    "note_cursor",
    "NoteChange",
    "NoteHit",
    "NoteHits",
    "notes_json",
    "notes_markdown",
    "NOTES_PREFIX",
    "NotesEditor",
    "NotFoundError",
    "OnceCadence",
    "open_memory",
    "open_remote",
    "OperationCancelled",
    "OxmemError",
    "parse_cadence",
    "parse_notes_json",
    "parse_stored",
    "parse_time",
    "PayloadNotIndexable",
    "POLICIES",
    "PROFILES",
    "prune",
    "PullReport",
    "QueryResult",
    "read_jsonl",
    "ReadOnlyError",
    "redact",
    "RedactingFormatter",
    "refresh_remote",
    "remember",
    "REMOTE_REASON",
    "rerank",
    "restore",
    "result_rows",
    "results_json",
    "Retriever",
    "Schedule",
    "ScheduleChange",
    "ScheduleReader",
    "ScheduleRun",
    "Scope",
    "SEARCH_DEFAULTS",
    "SearchOptions",
    "server_url",
    "SessionChange",
    "SessionInfo",
    "SessionRow",
    "SessionsEditor",
    "stderr_redacted",
    "TimelineReader",
    "SessionStats",
    "set_model_paths",
    "setting_text",
    "shown_value",
    "SOURCE_DISTRIBUTION",
    "SQL_LIMIT",
    "SQL_SECONDS",
    "SqlResult",
    "STATUSES",
    "StoreOpenError",
    "SummaryChange",
    "TABLE_MAX_PAGE",
    "TableInfo",
    "TablePage",
    "TAG_MODES",
    "TargetExistsError",
    "time_or_none",
    "to_csv",
    "to_rfc3339",
    "TOKEN_ENV",
    "token_from",
    "utc_now",
    "utc_now_text",
    "validate_cadence",
    "verify_prepared",
    "WEEKDAY_NUMBERINGS",
    "WhyNot",
    "word_diff",
    "zone",
]
