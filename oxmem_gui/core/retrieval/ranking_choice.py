"""Which ranking a file's searches use by default, per file and per session.

The choice is the user's, not the agent's: it lives in oxmem's own configuration
(``rankings.json`` in the user config folder, or ``$OXMEM_CONFIG_DIR``), keyed by the file's resolved path, so
choosing never writes to a memory file (another agent's file may be read-only, or in use). Per file it maps
``"*"`` (every session) and session ids to a retriever name; a session's own choice wins over the file's.
A name the file's rankings do not offer (a foreign file, an older profile) is ignored, not an error.
The file is rewritten whole through a temporary file and ``os.replace`` (a folder that cannot be written is an
:class:`OxmemError` saying where); a damaged file reads as empty.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

import platformdirs

from ..errors import OxmemError

ALL_SESSIONS = "*"
_lock = threading.Lock()


def config_file() -> Path:
    folder = os.environ.get("OXMEM_CONFIG_DIR") or platformdirs.user_config_dir("oxmem")
    return Path(folder) / "rankings.json"


def _key(db: Path) -> str:
    return str(Path(db).resolve())


def _load() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: {s: n for s, n in v.items() if isinstance(s, str) and isinstance(n, str)}
        for k, v in data.items()
        if isinstance(k, str) and isinstance(v, dict)
    }


def chosen(db: Path, session_id: str | None = None) -> tuple[str, str] | None:
    """``(name, where)`` — the ranking chosen for ``session_id`` of ``db`` (``where`` is ``"session"``) or for the
    whole file (``"file"``); None when nothing was chosen."""
    entry = _load().get(_key(db), {})
    if session_id is not None and session_id in entry:
        return entry[session_id], "session"
    if ALL_SESSIONS in entry:
        return entry[ALL_SESSIONS], "file"
    return None


def choose(db: Path, name: str | None, session_id: str | None = None) -> None:
    """Make ``name`` the default ranking for ``session_id`` of ``db`` (None: for every session); ``name`` None
    forgets the choice."""
    path = config_file()
    with _lock:
        data = _load()
        entry = data.setdefault(_key(db), {})
        scope = ALL_SESSIONS if session_id is None else session_id
        if name is None:
            entry.pop(scope, None)
        else:
            entry[scope] = name
        if not entry:
            data.pop(_key(db))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".rankings-", dir=path.parent)
        except OSError as exc:
            raise OxmemError(f"cannot save the default ranking in {path}: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise OxmemError(f"cannot save the default ranking in {path}: {exc.strerror or exc}") from exc
