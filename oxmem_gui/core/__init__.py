"""The memory system, usable without any GUI: store, indexing, embeddings, retrieval, notes, summary.

Nothing under ``oxmem_gui.core`` imports Qt. The public API is async (:class:`MemoryStore`); the SQLite work
runs on one worker thread per connection.
"""

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
from .store import MemoryStore

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
