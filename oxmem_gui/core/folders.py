"""The user's folders: every place oxmem keeps something on this machine, in one module.

Each folder is the platform's (``platformdirs``: ``~/.local/share/oxmem``, ``~/.cache/oxmem``, ``~/.config/oxmem``,
``~/.local/state/oxmem/log`` on Linux) unless its environment variable names another. Nothing here creates a
folder: the code that writes into one makes it, with the permissions its contents need.

==================  ============================  ===============================================================
folder / file       environment variable          what is in it
==================  ============================  ===============================================================
:func:`data_dir`    —                             the store (:func:`default_db_path`), ``inspector.db`` (search
                                                  judgments), ``backups/``, ``models/``
:func:`default_db_path` ``OXMEM_DB``              the store opened when no file is named
:func:`backups_dir` ``OXMEM_BACKUP_DIR``          the copies taken before a file is edited
:func:`model_dir`   ``OXMEM_MODEL_DIR``           oxmem's own embedding model (``oxmem model install``)
:func:`cache_dir`   —                             ``remote/`` (snapshots of remote memories), ``reads/`` (marks of
                                                  reads in progress), ``embeddings.db`` (query vectors),
                                                  ``vector-deletions/`` (:func:`vector_deletions_dir`)
:func:`config_dir`  ``OXMEM_CONFIG_DIR``          ``rankings.json`` (the ranking chosen per file)
:func:`log_dir`     ``OXMEM_LOG_DIR``             the program's logs
==================  ============================  ===============================================================
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs

APP = "oxmem"
LOG_ENV = "OXMEM_LOG_DIR"


def _from_env(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The user's data folder (``~/.local/share/oxmem`` on Linux)."""
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def cache_dir() -> Path:
    """The user's cache folder (``~/.cache/oxmem`` on Linux): what can be rebuilt or removed at any time."""
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def config_dir() -> Path:
    """``$OXMEM_CONFIG_DIR`` if set, else the user's configuration folder (``~/.config/oxmem`` on Linux)."""
    return _from_env("OXMEM_CONFIG_DIR") or Path(platformdirs.user_config_dir(APP))


def log_dir() -> Path:
    """``$OXMEM_LOG_DIR`` if set, else the user's log folder (``~/.local/state/oxmem/log`` on Linux)."""
    return _from_env(LOG_ENV) or Path(platformdirs.user_log_dir(APP, appauthor=False))


def default_db_path() -> Path:
    """``$OXMEM_DB`` if set, else ``memory.db`` in the data folder (``~/.local/share/oxmem/memory.db``)."""
    return _from_env("OXMEM_DB") or data_dir() / "memory.db"


def backups_dir() -> Path:
    """Where backups go before a file is edited (the inspector's *Enable Editing*, the command line's first write):
    ``$OXMEM_BACKUP_DIR`` if set, else ``backups/`` in the data folder (``~/.local/share/oxmem/backups``)."""
    return _from_env("OXMEM_BACKUP_DIR") or data_dir() / "backups"


def model_dir() -> Path:
    """``$OXMEM_MODEL_DIR`` if set, else ``models/all-MiniLM-L6-v2`` in the data folder: oxmem's own model."""
    return _from_env("OXMEM_MODEL_DIR") or data_dir() / "models" / "all-MiniLM-L6-v2"


def vector_deletions_dir() -> Path:
    """``vector-deletions/`` in the cache folder (``~/.cache/oxmem/vector-deletions``): for each file with libSQL's
    vector index that oxmem edited, the rowids its writer deleted from the index and a hash of each deleted vector —
    never a vector, never any text (:mod:`.vector_index`)."""
    return cache_dir() / "vector-deletions"


# -- what oxmem kept, read back as data it did not write ---------------------------------------------------------

#: opening a kept file: never through a link, never blocking on a FIFO; a kept folder; a new file, never over another
OPEN_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
OPEN_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_kept(name: str, folder_fd: int) -> int:
    """A descriptor of the regular file ``name`` in the folder open as ``folder_fd``: never opened through a link,
    never blocking on a FIFO (ValueError: not a regular file)."""
    if not stat.S_ISREG(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode):
        raise ValueError(f"{name} is not a regular file")
    fd = os.open(name, OPEN_FILE, dir_fd=folder_fd)
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    raise ValueError(f"{name} is not a regular file")


def read_kept(name: str, folder_fd: int, limit: int) -> bytes:
    """The regular file ``name`` (:func:`open_kept`), at most ``limit`` bytes (ValueError: larger)."""
    fd = open_kept(name, folder_fd)
    with os.fdopen(fd, "rb") as f:
        if os.fstat(fd).st_size > limit:
            raise ValueError(f"{name} is larger than {limit} bytes")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{name} is larger than {limit} bytes")
    return data
