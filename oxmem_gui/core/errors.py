"""The core's error types. Every message is one line a user can act on; front ends print it as is."""

from __future__ import annotations

from typing import Any


class OxmemError(Exception):
    """Base of every error the memory core raises on purpose."""


class InvalidInputError(OxmemError, ValueError):
    """An argument or a record is malformed (empty query, bad weights, bad sequence, ...)."""


class SequenceError(InvalidInputError):
    """A sequence that is not greater than the session's current maximum."""


class NotFoundError(OxmemError, LookupError):
    """A session, note or file that does not exist."""


class StoreOpenError(OxmemError):
    """The file cannot be opened as a memory store (not SQLite, corrupt, unknown schema, missing)."""


class KeyRequiredError(StoreOpenError):
    """The file is encrypted and no key was given (or the key was wrong): ask for one."""


class DamagedError(StoreOpenError):
    """SQLite found the file corrupt (a bad page, a missing table of a store that records its schema)."""


class ReadOnlyError(OxmemError):
    """A write was asked of a store opened read-only, or of a file that cannot be written."""


class StoreBusyError(OxmemError):
    """Another program held the store's write lock for longer than the busy timeout; nothing was written."""


class ConflictError(OxmemError):
    """A row changed (or went away) since the caller loaded it; nothing was written.

    ``current`` is the row as it is now (None when it was deleted), so a front end can show theirs vs mine.
    """

    def __init__(self, message: str, current: Any = None) -> None:
        super().__init__(message)
        self.current = current


class EmbeddingError(OxmemError):
    """The embedding backend cannot be used (model missing) or a stored vector cannot be read."""


class OperationCancelled(OxmemError):
    """Long work stopped on request; whatever it was writing was rolled back."""
