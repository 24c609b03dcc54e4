"""Which ranking a file's searches use by default, per file and per session.

The choice is the user's, not the agent's: it lives in oxmem's own configuration
(``rankings.json`` in the user config folder, or ``$OXMEM_CONFIG_DIR``), keyed by the file's resolved path, so
choosing never writes to a memory file (another agent's file may be read-only, or in use). Per file it maps
``"*"`` (every session) and session ids to a retriever name — or, for a tunable ranking chosen with its tuning,
to ``{"ranking": name, "vector_weight": w, "fts_mode": mode}``; a session's own choice wins over the file's.
A name the file's rankings do not offer (a foreign file, an older profile) is ignored, not an error; so is
tuning that is not a weight in [0, 1] and a known FTS mode.
The file is rewritten whole through a temporary file and ``os.replace`` (a folder that cannot be written is an
:class:`OxmemError` saying where); a damaged file reads as empty.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, NamedTuple

from .. import folders
from ..errors import OxmemError
from .hybrid import FTS_MODES

ALL_SESSIONS = "*"
_lock = threading.Lock()


class Choice(NamedTuple):
    name: str
    where: str  # "session" or "file"
    #: the tunable ranking's ``vector_weight`` and ``fts_mode`` chosen with it (empty: its own defaults)
    tuning: dict[str, Any]


def tuning_of(value: Any) -> dict[str, Any]:
    """The valid tuning kept in an entry (``{}`` when it holds none, or none that can be used)."""
    if not isinstance(value, dict):
        return {}
    weight, mode = value.get("vector_weight"), value.get("fts_mode")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        return {}
    if mode not in FTS_MODES:
        return {}
    return {"vector_weight": float(weight), "fts_mode": mode}


def _name(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("ranking"), str):
        return value["ranking"]
    return None


def config_file() -> Path:
    return folders.config_dir() / "rankings.json"


def _key(db: Path) -> str:
    return str(Path(db).resolve())


def _load() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: {s: n for s, n in v.items() if isinstance(s, str) and _name(n) is not None}
        for k, v in data.items()
        if isinstance(k, str) and isinstance(v, dict)
    }


def chosen(db: Path, session_id: str | None = None) -> Choice | None:
    """The ranking chosen for ``session_id`` of ``db`` (``where`` is ``"session"``) or for the whole file
    (``"file"``), with the tuning chosen with it; None when nothing was chosen."""
    entry = _load().get(_key(db), {})
    for scope, where in ((session_id, "session"), (ALL_SESSIONS, "file")):
        if scope is not None and scope in entry:
            return Choice(_name(entry[scope]) or "", where, tuning_of(entry[scope]))
    return None


def choose(db: Path, name: str | None, session_id: str | None = None, tuning: dict[str, Any] | None = None) -> None:
    """Make ``name`` the default ranking for ``session_id`` of ``db`` (None: for every session), with ``tuning``
    (a tunable ranking's ``vector_weight`` and ``fts_mode``) when given; ``name`` None forgets the choice."""
    path = config_file()
    with _lock:
        data = _load()
        entry = data.setdefault(_key(db), {})
        scope = ALL_SESSIONS if session_id is None else session_id
        if name is None:
            entry.pop(scope, None)
        else:
            entry[scope] = {"ranking": name, **tuning} if tuning else name
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
