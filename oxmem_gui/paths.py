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
