"""Where oxmem keeps things on this machine."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def default_db_path() -> Path:
    """``$OXMEM_DB`` if set, else ``memory.db`` in the platform's user data folder
    (``~/.local/share/oxmem/memory.db`` on Linux)."""
    env = os.environ.get("OXMEM_DB")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("oxmem", appauthor=False)) / "memory.db"


def backups_dir() -> Path:
    """Where backups go before a file is edited (the inspector's *Enable Editing*, the command line's first write):
    ``$OXMEM_BACKUP_DIR`` if set, else ``backups/`` in the user data folder (``~/.local/share/oxmem/backups``)."""
    env = os.environ.get("OXMEM_BACKUP_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("oxmem", appauthor=False)) / "backups"
