"""libSQL's vector index kept whole: no row left that ``vector_top_k`` can no longer return.

Why a row can be lost (libSQL 0.1.x, ``vectordiskann.c``; reported upstream as tursodatabase/libsql#2197): when a
vector ``N`` is inserted, a node ``V`` of the graph gets no edge to it if one of ``V``'s edges already points to a
node ``D`` with ``d(V, N) > alpha · d(D, N)``. For a twin — ``D`` holding the same vector as ``N``, so
``d(D, N) = 0`` — that holds for every ``V`` that links ``D``: the newer twin is reachable only through the older
one. Deleting a row removes its node and its own edges, but the edges other nodes hold *to* it stay, as
"zombies" that still carry its vector, and nothing is repaired: deleting the older twin strands the newer, and the
same vector inserted again under a new rowid (re-saving unchanged text, an undo) is refused by them alike. It is
still in ``chunks_vec`` and in the index, but no search reaches it (unless the search happens to start on it:
libSQL starts from a random node). Re-inserting it under its own rowid does not help — the zombies still carry a
twin at distance 0 — but inserting it under the *deleted* twin's rowid does: libSQL then overwrites the zombie
edges, which name that rowid, with the new node. Twins are common (a note saved with the words of a message, the
same note saved twice, a session re-imported), and near-twins behave alike.

What oxmem does about it, on the libSQL connection of its writer (:mod:`.libsql_writer`):

* every row it deletes from ``chunks_vec`` (directly, or through the foreign key's cascade from ``chunks``) is
  noted with its nearest rows first, by a TEMP trigger (in the connection's own temp database: nothing is added
  to the agent's file);
* a vector the writer deleted and now inserts again (re-saving unchanged text in the same transaction; an undo
  or a restore in a later one, while the file stays open) is inserted under the deleted row's rowid in the first
  place;
* before the transaction commits, a row still present (or inserted since) that is a twin of a deleted one moves
  to the deleted twin's rowid (the same row otherwise: ``vector_top_k`` answers rowids, which the agent joins
  back), and any other near row that ``vector_top_k`` no longer finds is re-inserted;
* ``oxmem check`` asks ``vector_top_k`` for each row's own vector (every row up to :data:`CHECK_ROWS`, an even
  spread beyond); ``oxmem check --repair`` re-inserts the rows it cannot find, and rebuilds the index
  (``REINDEX``, about :data:`REBUILD_SECONDS_PER_ROW` s a vector, the file locked meanwhile) if that was not
  enough — in one transaction, after a backup.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from .database import write_transaction

#: the table and the index name newer Oxydra's migration 0024 gives its vector index
TABLE = "chunks_vec"
#: rows ``oxmem check`` queries one by one; a bigger table is checked on an even spread of this many
CHECK_ROWS = 5_000
#: the nearest rows noted for each deleted one (its twins rank first, at distance 0)
NEIGHBOURS = 8

#: what a rebuild of the index costs, measured with libSQL 0.1.11 (512 dims: 15 s for 1,000 rows, 87 s for 5,000)
REBUILD_SECONDS_PER_ROW = 0.017

_NEAR = "oxmem_vec_near"
_GONE = "oxmem_vec_gone"
_DELETED = "oxmem_vec_deleted"
_INSERTED = "oxmem_vec_inserted"


def index_name(conn: Any) -> str | None:
    """The name of the ``libsql_vector_idx`` index on ``chunks_vec``, if the file has one."""
    for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (TABLE,)
    ).fetchall():
        if sql and re.search(r"libsql_vector_idx\s*\(", sql, re.IGNORECASE):
            return str(name)
    return None


def watch_deletions(conn: Any, index: str) -> None:
    """On a writable libSQL connection: note every vector deleted from now on and its nearest rows, and every row
    inserted (TEMP objects, gone when the connection closes)."""
    quoted = index.replace("'", "''")
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_NEAR} (id INTEGER)")
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_GONE} (id INTEGER, blob BLOB)")
    conn.execute(
        f"CREATE TEMP TRIGGER IF NOT EXISTS {_DELETED} BEFORE DELETE ON main.{TABLE} BEGIN "
        f"INSERT INTO {_GONE} VALUES (OLD.rowid, OLD.embedding_blob); "
        f"INSERT INTO {_NEAR} SELECT id FROM vector_top_k('{quoted}', OLD.embedding_blob, {NEIGHBOURS}); END"
    )
    conn.execute(
        f"CREATE TEMP TRIGGER IF NOT EXISTS {_INSERTED} AFTER INSERT ON main.{TABLE} BEGIN "
        f"INSERT INTO {_NEAR} VALUES (NEW.rowid); END"
    )


def _tries(total: int) -> int:
    """How many searches make a stranded row's chance of being found every time under one in a million: libSQL
    starts each search on a random one of ``total`` nodes, and a stranded row is found when it starts on it (two
    in a big index, ten among four rows)."""
    return 2 if total >= 1000 else max(2, math.ceil(6 / math.log10(max(total, 2))))


def _found(conn: Any, index: str, rowid: int, blob: bytes, tries: int = 2) -> bool:
    """Whether ``vector_top_k`` returns the row for its own vector every one of ``tries`` times (see
    :func:`_tries`)."""
    sql = f"SELECT id FROM vector_top_k('{index.replace(chr(39), chr(39) * 2)}', ?, 3)"
    return all(rowid in {r[0] for r in conn.execute(sql, (blob,)).fetchall()} for _ in range(tries))


def reinsert(conn: Any, index: str, moves: dict[int, int]) -> None:
    """Inside a write transaction: delete the rows (``moves``' keys), then insert each again with every column
    as it was, under the rowid it maps to (its own, or a deleted twin's); libSQL builds the new nodes' edges."""
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({TABLE})").fetchall()]
    names = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" for _ in range(len(columns) + 1))
    rows = [
        (target, *conn.execute(f"SELECT {names} FROM {TABLE} WHERE rowid = ?", (rowid,)).fetchall()[0])
        for rowid, target in moves.items()
    ]
    for trigger in (_DELETED, _INSERTED):  # (these deletes and inserts are not the user's)
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{trigger}")
    try:
        for rowid in moves:
            conn.execute(f"DELETE FROM {TABLE} WHERE rowid = ?", (rowid,))
        for row in rows:
            conn.execute(f"INSERT INTO {TABLE} (rowid, {names}) VALUES ({marks})", row)
    finally:
        watch_deletions(conn, index)


def into_deleted_twin(conn: Any, sql: str, args: Sequence[Any]) -> tuple[str, Sequence[Any]]:
    """An insert of the core (``INSERT INTO chunks_vec (chunk_id, embedding_blob, …) VALUES (?, ?, …)``) of a
    vector this writer deleted (in this transaction or an earlier one: an undo comes later), rewritten to take the
    deleted row's rowid: libSQL then overwrites the edges still naming it instead of refusing the new node
    (re-saving unchanged text, an undo, a restore)."""
    free = conn.execute(
        f"SELECT id FROM {_GONE} WHERE blob = ? AND id NOT IN (SELECT rowid FROM main.{TABLE}) ORDER BY id LIMIT 1",
        (args[1],),
    ).fetchall()
    found = re.match(r"\s*INSERT INTO chunks_vec \(([^)]*)\) VALUES \(([^)]*)\)\s*$", sql, re.IGNORECASE)
    if not free or found is None:
        return sql, args
    return f"INSERT INTO chunks_vec (rowid, {found.group(1)}) VALUES (?, {found.group(2)})", [free[0][0], *args]


def keep_reachable(conn: Any, index: str) -> dict[int, int]:
    """Before a commit: the rows near a vector this transaction deleted, and the rows it inserted, made reachable
    again — a twin of a deleted vector (a survivor, or the same vector inserted again: re-saving unchanged text,
    an undo) moved to that vector's rowid, another near row ``vector_top_k`` no longer finds re-inserted under its
    own. The moves made (rowid → rowid)."""
    near = conn.execute(
        f"SELECT DISTINCT v.rowid, v.embedding_blob FROM {_NEAR} n JOIN main.{TABLE} v ON v.rowid = n.id "
        "ORDER BY v.rowid"
    ).fetchall()
    free: dict[bytes, list[int]] = {}
    for rowid, blob in conn.execute(
        f"SELECT id, blob FROM {_GONE} WHERE id NOT IN (SELECT rowid FROM main.{TABLE}) ORDER BY id"
    ).fetchall():
        free.setdefault(bytes(blob), []).append(rowid)
    conn.execute(f"DELETE FROM {_NEAR}")
    # the deleted vectors are kept while the writer lives (an undo, a restore comes in a later transaction), less
    # the rowids taken again
    conn.execute(f"DELETE FROM {_GONE} WHERE id IN (SELECT rowid FROM main.{TABLE})")
    moves = {}
    tries = _tries(_count(conn, at_most=1000)) if near else 0  # (a bigger index needs no more: counted no further)
    for rowid, blob in near:
        twins = free.get(bytes(blob))
        if twins:
            moves[rowid] = twins.pop(0)
        elif not _found(conn, index, rowid, blob, tries):
            moves[rowid] = rowid
    if moves:
        reinsert(conn, index, moves)
    return moves


def unfound(conn: Any, index: str, limit: int = CHECK_ROWS) -> tuple[int, int, list[int]]:
    """How many vectors there are, how many were asked for, and the rowids among those that ``vector_top_k`` does
    not return for their own vector (all rows up to ``limit``, an even spread of ``limit`` rows beyond)."""
    total = _count(conn)
    step = max(1, -(-total // limit))
    rows = conn.execute(
        f"SELECT rowid, embedding_blob FROM (SELECT rowid, embedding_blob, row_number() OVER (ORDER BY rowid) - 1 "
        f"AS n FROM {TABLE}) WHERE n % ? = 0",
        (step,),
    ).fetchall()
    tries = _tries(total)
    return total, len(rows), [rowid for rowid, blob in rows if not _found(conn, index, rowid, blob, tries)]


def repair(conn: Any) -> tuple[int, list[int], bool]:
    """On the libSQL writer's connection: find every row ``vector_top_k`` does not return for its own vector
    (outside any lock: the agent keeps writing meanwhile), then in one write transaction re-insert those still
    there, and rebuild the index if any is still not found. How many vectors there are, the rowids re-inserted,
    and whether the index was rebuilt."""
    total, _, lost = unfound(conn, conn.index, limit=max(1, _count(conn)))
    rebuilt = False
    with write_transaction(conn):
        present = [r for r in lost if conn.execute(f"SELECT 1 FROM {TABLE} WHERE rowid = ?", (r,)).fetchall()]
        reinsert(conn.raw, conn.index, {r: r for r in present})
        blobs = {r: conn.execute(f"SELECT embedding_blob FROM {TABLE} WHERE rowid = ?", (r,)).fetchall()[0][0]
                 for r in present}  # fmt: skip
        if any(not _found(conn.raw, conn.index, r, b, _tries(total)) for r, b in blobs.items()):
            conn.execute(f'REINDEX "{conn.index}"')
            rebuilt = True
    return total, present, rebuilt


def _count(conn: Any, at_most: int | None = None) -> int:
    """How many vectors there are (counted no further than ``at_most``)."""
    if at_most is None:
        return int(conn.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0])
    return int(conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} LIMIT ?)", (at_most,)).fetchall()[0][0])
