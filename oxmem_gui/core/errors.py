"""The core's error types. Every message is one line a user can act on; front ends print it as is."""


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


class ReadOnlyError(OxmemError):
    """A write was asked of a store opened read-only, or of a file that cannot be written."""


class EmbeddingError(OxmemError):
    """The embedding backend cannot be used (model missing) or a stored vector cannot be read."""


class OperationCancelled(OxmemError):
    """Long work stopped on request; whatever it was writing was rolled back."""
