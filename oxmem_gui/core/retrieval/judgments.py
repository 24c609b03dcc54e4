"""Relevance judgments, kept in the inspector's own file — never in the agent's database (contract §11).

Judgments are grades 0–3 of chunks for a query on a session, grouped into named query sets, and keyed by the
resolved path of the agent database they were made on. The file is ``inspector.db`` in the user data folder.
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from .. import folders
from ..errors import InvalidInputError
from .scope import Scope, scope_from_key, scope_key

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_sets (
    set_id INTEGER PRIMARY KEY,
    db_path TEXT NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (db_path, name)
);
CREATE TABLE IF NOT EXISTS queries (
    query_id INTEGER PRIMARY KEY,
    set_id INTEGER NOT NULL REFERENCES query_sets (set_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    query TEXT NOT NULL,
    UNIQUE (set_id, session_id, query)
);
CREATE TABLE IF NOT EXISTS judgments (
    query_id INTEGER NOT NULL REFERENCES queries (query_id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL,
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 3),
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (query_id, chunk_id)
);
"""


def default_path() -> Path:
    return folders.data_dir() / "inspector.db"


def _locked(method):
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return run


@dataclass
class JudgedQuery:
    session_id: Scope  # the session searched, or many (a search of all sessions is graded too)
    query: str
    grades: dict[str, int] = field(default_factory=dict)


class JudgmentStore:
    """Synchronous and thread-safe (one lock around the connection); call it from worker threads in a GUI."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = apsw.Connection(str(self.path))
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.set_busy_timeout(5000)
        self._lock = threading.RLock()
        with self.conn:
            self.conn.execute(SCHEMA)

    @_locked
    def close(self) -> None:
        self.conn.close()

    @staticmethod
    def key(db_path: str | os.PathLike[str]) -> str:
        return str(Path(db_path).expanduser().resolve())

    @_locked
    def sets(self, db_path: str | os.PathLike[str]) -> list[str]:
        rows = self.conn.execute("SELECT name FROM query_sets WHERE db_path = ? ORDER BY name", (self.key(db_path),))
        return [r[0] for r in rows]

    def _set_id(self, db_path: str | os.PathLike[str], name: str, create: bool) -> int | None:
        if not name.strip():
            raise InvalidInputError("a query set needs a name")
        key = self.key(db_path)
        if create:
            self.conn.execute("INSERT OR IGNORE INTO query_sets (db_path, name) VALUES (?, ?)", (key, name))
        rows = self.conn.execute("SELECT set_id FROM query_sets WHERE db_path = ? AND name = ?", (key, name)).fetchall()
        return rows[0][0] if rows else None

    @_locked
    def create_set(self, db_path: str | os.PathLike[str], name: str) -> None:
        with self.conn:
            self._set_id(db_path, name, create=True)

    @_locked
    def judge(
        self,
        db_path: str | os.PathLike[str],
        set_name: str,
        session_id: Scope,
        query: str,
        chunk_id: str,
        grade: int | None,
    ) -> None:
        """Grade a chunk 0–3 for a query of a session or of many (None removes the judgment); the set and query
        are created as needed."""
        if grade is not None and (isinstance(grade, bool) or grade not in (0, 1, 2, 3)):
            raise InvalidInputError(f"a grade is 0, 1, 2 or 3, got {grade!r}")
        with self.conn:
            set_id = self._set_id(db_path, set_name, create=True)
            key = scope_key(session_id)
            self.conn.execute(
                "INSERT OR IGNORE INTO queries (set_id, session_id, query) VALUES (?, ?, ?)", (set_id, key, query)
            )
            (query_id,) = self.conn.execute(
                "SELECT query_id FROM queries WHERE set_id = ? AND session_id = ? AND query = ?", (set_id, key, query)
            ).fetchall()[0]
            if grade is None:
                self.conn.execute("DELETE FROM judgments WHERE query_id = ? AND chunk_id = ?", (query_id, chunk_id))
            else:
                self.conn.execute(
                    "INSERT INTO judgments (query_id, chunk_id, grade) VALUES (?, ?, ?) "
                    "ON CONFLICT (query_id, chunk_id) DO UPDATE SET grade = excluded.grade, "
                    "updated_at = CURRENT_TIMESTAMP",
                    (query_id, chunk_id, grade),
                )

    @_locked
    def queries(self, db_path: str | os.PathLike[str], set_name: str) -> list[JudgedQuery]:
        """The set's queries with their grades, in the order they were first judged."""
        set_id = self._set_id(db_path, set_name, create=False)
        if set_id is None:
            return []
        out: dict[int, JudgedQuery] = {}
        for query_id, session_id, query, chunk_id, grade in self.conn.execute(
            "SELECT q.query_id, q.session_id, q.query, j.chunk_id, j.grade FROM queries q "
            "LEFT JOIN judgments j ON j.query_id = q.query_id WHERE q.set_id = ? ORDER BY q.query_id, j.chunk_id",
            (set_id,),
        ):
            item = out.setdefault(query_id, JudgedQuery(scope_from_key(session_id), query))
            if chunk_id is not None:
                item.grades[chunk_id] = grade
        return list(out.values())
