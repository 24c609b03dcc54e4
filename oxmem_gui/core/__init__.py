"""The memory system, usable without any GUI. Nothing under ``oxmem_gui.core`` imports Qt; the public API is
async and in one import, :mod:`.api` (the contract every memory keeps, :mod:`.contract`; :func:`~.memory.open_memory`;
the result types and :class:`~.retrieval.options.SearchOptions`), and the SQLite work runs on one worker thread
per connection.

Where things are, and which way imports go (an arrow: "may import"; nothing imports upward, and there are
no cycles between groups — ``tests/core/test_layout.py`` holds the code to this picture)::

    api.py  contract.py                               the one import of front ends; the typed contract (protocols)
    memory_store.py  memory.py  check.py  demo.py     the front doors: MemoryStore, open any file, check, demo;
    libsql_writer.py  vector_index.py                  libSQL's engine in a child process, its vector index kept whole
          │
          ▼
    formats/          other agents' files: detection, info, the table browser, each agent's reader
          │
          ▼
    retrieval/        schedules/      remote/          searching and ranking  |  schedules, cadences, calendar
          │               │               │            |  a libSQL server's memory pulled into a local copy
          ▼               ▼               ▼
    store/            the store's tables: migrations, events and indexing writes, notes, tags, summary,
          │           browsing, importing, backups, the checks on what a user types (inputs)
          ▼
    embeddings/       embedding backends, the semantic model and its files, the agents' own models where their
          │           libraries keep them, an embeddings endpoint, a stored vector as a query, the indexing
          │           pipeline's pure parts (text extraction, chunks), re-embedding
          ▼
    database.py  text_repair.py  errors.py              opening a SQLite file safely, transactions; text that
    http_post.py  folders.py  redaction.py              is not UTF-8 read through a repaired copy; the errors;
                                                        one HTTP POST bounded in size and time; the user's folders;
                                                        secrets kept out of errors and logs

``database.py`` sits under every group rather than in ``store/`` because every group runs SQL through it
(re-embedding and the vector and BM25 caches too).
"""

from typing import TYPE_CHECKING, Any

from .errors import (
    ConflictError,
    DamagedError,
    EmbeddingError,
    InvalidInputError,
    KeyRequiredError,
    NotFoundError,
    OperationCancelled,
    OxmemError,
    ReadOnlyError,
    SequenceError,
    StoreBusyError,
    StoreOpenError,
)

if TYPE_CHECKING:
    from .memory_store import MemoryStore


def __getattr__(name: str) -> Any:
    """``MemoryStore``, imported when first asked for: importing one module of the core (a reader, the database)
    does not import the store, its search and numpy (a command's process starts sooner)."""
    if name == "MemoryStore":
        from .memory_store import MemoryStore

        return MemoryStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ConflictError",
    "DamagedError",
    "EmbeddingError",
    "InvalidInputError",
    "KeyRequiredError",
    "MemoryStore",
    "NotFoundError",
    "OperationCancelled",
    "OxmemError",
    "ReadOnlyError",
    "SequenceError",
    "StoreBusyError",
    "StoreOpenError",
]
