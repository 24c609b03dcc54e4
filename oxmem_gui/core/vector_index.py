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
* a vector deleted and now inserted again (re-saving unchanged text in the same transaction; an undo, a restore,
  an edit back in a later one — in this process or a later one, below) is inserted under the deleted row's rowid
  in the first place, if that rowid is free (a free rowid of another deleted vector, it never takes: a new vector
  goes past them all, where SQLite would otherwise reuse the highest rowid just deleted);
* before the transaction commits, a row still present that is a twin of a row deleted in this transaction, or a
  row inserted in it that is a twin of any deleted one, moves to the deleted twin's rowid (the same row otherwise:
  ``vector_top_k`` answers rowids, which the agent joins back; the rowid it leaves is noted as deleted, its edges
  carrying its vector alike), and any other near row that ``vector_top_k`` no longer finds is re-inserted; a row
  still not found after that — edges left by a deletion oxmem never saw, the agent's — is logged (a warning naming
  rowids, no content), not rebuilt: rebuilding locks the file for the agent (``oxmem check --repair`` does it);
* the deletions are kept across processes, since the zombies stay in the file: an edit in one ``oxmem`` process
  and the edit back (or the note added again) in the next would otherwise strand the new row. After each commit
  that changed them, the rowids deleted and not taken since are written, each with the BLAKE3 hash of the deleted
  vector's blob — never the vector, never any text: nothing of the memory leaves the file — to
  ``vector-deletions/<BLAKE3 of the file's resolved path>`` in oxmem's cache folder
  (:func:`.folders.vector_deletions_dir`); a writer reads them when it starts, and again before a write
  transaction if that file changed (the inspector open while a command edits the same file). A vector is matched
  by its hash, and a rowid is reused only if it is free in ``chunks_vec`` at the insert (inside the write
  transaction): an entry gone stale — the rowid taken since by the agent, the file replaced — only goes unused,
  and is dropped at the next commit if taken. The newest :data:`MAX_DELETIONS` are kept; a rebuilt index
  (``check --repair``) has no zombies left, and drops them all.

  That file is untrusted when read back, and written atomically (:mod:`.vector_deletions`).

  Why there: the agent's file gets nothing of oxmem's (no table of its own); rebuilding the index after each
  deletion would lock the file for the agent (:data:`REBUILD_SECONDS_PER_ROW` a vector); and finding the zombies
  in libSQL's shadow tables would read an undocumented format of its nodes;
* ``oxmem check`` asks ``vector_top_k`` for each row's own vector (every row up to :data:`CHECK_ROWS`, an even
  spread beyond); ``oxmem check --repair`` re-inserts the rows it cannot find, and rebuilds the index
  (``REINDEX``, about :data:`REBUILD_SECONDS_PER_ROW` s a vector, the file locked meanwhile) if that was not
  enough — in one transaction, after a backup.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import blake3

from .database import write_transaction
from .vector_deletions import MAX_DELETIONS

log = logging.getLogger(__name__)

#: the table and the index name newer Oxydra's migration 0024 gives its vector index
TABLE = "chunks_vec"
#: rows ``oxmem check`` queries one by one; a bigger table is checked on an even spread of this many
CHECK_ROWS = 5_000
#: the nearest rows noted for each deleted one (its twins rank first, at distance 0)
NEIGHBOURS = 8

#: what a rebuild of the index costs, measured with libSQL 0.1.11 (512 dims: 15 s for 1,000 rows, 87 s for 5,000)
REBUILD_SECONDS_PER_ROW = 0.017

_ROWID_MAX = (1 << 63) - 1

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
    """On a writable libSQL connection: note every vector deleted from now on (its rowid and blob, the hash filled
    in when first needed, flagged as deleted in this transaction) and its nearest rows, and every row inserted
    (TEMP objects, gone when the connection closes)."""
    quoted = index.replace("'", "''")
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_NEAR} (id INTEGER, inserted INTEGER)")
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_GONE} (id INTEGER, blob BLOB, hash TEXT, now INTEGER)")
    conn.execute(
        f"CREATE TEMP TRIGGER IF NOT EXISTS {_DELETED} BEFORE DELETE ON main.{TABLE} BEGIN "
        f"INSERT INTO {_GONE} VALUES (OLD.rowid, OLD.embedding_blob, NULL, 1); "
        f"INSERT INTO {_NEAR} SELECT id, 0 FROM vector_top_k('{quoted}', OLD.embedding_blob, {NEIGHBOURS}); END"
    )
    conn.execute(
        f"CREATE TEMP TRIGGER IF NOT EXISTS {_INSERTED} AFTER INSERT ON main.{TABLE} BEGIN "
        f"INSERT INTO {_NEAR} VALUES (NEW.rowid, 1); END"
    )


def digest(blob: bytes) -> str:
    """What is kept of a deleted vector: the BLAKE3 hash of its blob as stored (64 hex digits)."""
    return blake3.blake3(bytes(blob)).hexdigest()


def _hash_noted(conn: Any) -> None:
    """The hash of each deleted vector noted since the last call, filled in."""
    for rowid, blob in conn.execute(f"SELECT rowid, blob FROM {_GONE} WHERE hash IS NULL").fetchall():
        conn.execute(f"UPDATE {_GONE} SET hash = ? WHERE rowid = ?", (digest(blob), rowid))


def note_deleted(conn: Any, entries: Iterable[tuple[int, str]]) -> None:
    """Deletions made earlier — by another process (:func:`read_deletions`) — noted as this writer's own, those
    not noted already (on the connection :func:`watch_deletions` was called on)."""
    _hash_noted(conn)
    conn.execute(
        f"INSERT INTO {_GONE} (id, blob, hash, now) SELECT e.id, NULL, e.hash, 0 FROM "
        "(SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS hash FROM json_each(?)) e "
        f"WHERE NOT EXISTS (SELECT 1 FROM {_GONE} g WHERE g.id = e.id AND g.hash = e.hash)",
        (json.dumps([[int(rowid), str(h)] for rowid, h in entries]),),
    )


def deleted(conn: Any) -> list[tuple[int, str]]:
    """The deletions this writer knows of (its own and those read back), each rowid with its vector's hash, the
    newest last, at most :data:`MAX_DELETIONS`."""
    _hash_noted(conn)
    rows = conn.execute(f"SELECT id, hash FROM {_GONE} GROUP BY id, hash ORDER BY max(rowid)").fetchall()
    return [(int(rowid), str(h)) for rowid, h in rows[-MAX_DELETIONS:]]


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
    """An insert of the core (``INSERT INTO chunks_vec (chunk_id, embedding_blob, …) VALUES (?, ?, …)``), rewritten
    to take a rowid of its own: that of a deleted vector of the same hash, if one is free (deleted in this
    transaction or an earlier one, by this process or an earlier one: re-saving unchanged text, an undo, a restore,
    an edit back) — libSQL then overwrites the edges still naming it instead of refusing the new node; else, when
    SQLite would reuse the rowid of another deleted vector (the highest rowids were deleted), one past them all."""
    found = re.match(r"\s*INSERT INTO chunks_vec \(([^)]*)\) VALUES \(([^)]*)\)\s*$", sql, re.IGNORECASE)
    if found is None:
        return sql, args
    _hash_noted(conn)
    free = conn.execute(
        f"SELECT id FROM {_GONE} g WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM main.{TABLE} v WHERE v.rowid = g.id) "
        "ORDER BY now DESC, id LIMIT 1",
        (digest(args[1]),),
    ).fetchall()
    if free:
        rowid = free[0][0]
    else:
        top = conn.execute(f"SELECT max(id) FROM {_GONE}").fetchall()[0][0]
        last = conn.execute(f"SELECT max(rowid) FROM main.{TABLE}").fetchall()[0][0]
        if top is None or top <= (last or 0) or top >= _ROWID_MAX:
            return sql, args
        rowid = top + 1
    return f"INSERT INTO chunks_vec (rowid, {found.group(1)}) VALUES (?, {found.group(2)})", [rowid, *args]


def keep_reachable(conn: Any, index: str) -> dict[int, int]:
    """Before a commit: the rows near a vector this transaction deleted, and the rows it inserted, made reachable
    again — a twin of a vector this transaction deleted, or an inserted twin of any deleted one (re-saving unchanged
    text, an undo), moved to that vector's rowid, another near row ``vector_top_k`` no longer finds re-inserted
    under its own; a row still not found then is logged. The moves made (rowid → rowid)."""
    _hash_noted(conn)
    near = conn.execute(
        f"SELECT v.rowid, v.embedding_blob, max(n.inserted) FROM {_NEAR} n JOIN main.{TABLE} v ON v.rowid = n.id "
        "GROUP BY v.rowid ORDER BY v.rowid"
    ).fetchall()
    free: dict[str, list[tuple[int, int]]] = {}
    for rowid, h, now in conn.execute(
        f"SELECT id, hash, max(now) FROM {_GONE} g WHERE NOT EXISTS "
        f"(SELECT 1 FROM main.{TABLE} v WHERE v.rowid = g.id) GROUP BY id, hash ORDER BY max(now) DESC, id"
    ).fetchall():
        free.setdefault(str(h), []).append((int(rowid), int(now)))
    conn.execute(f"DELETE FROM {_NEAR}")
    conn.execute(f"UPDATE {_GONE} SET now = 0 WHERE now != 0")
    moves: dict[int, int] = {}
    blobs: dict[int, bytes] = {}
    tries = _tries(_count(conn, at_most=1000)) if near else 0  # (a bigger index needs no more: counted no further)
    for rowid, blob, inserted in near:
        twins = free.get(digest(blob), [])
        # a survivor moves only to a twin deleted now (one deleted earlier stranded nothing: it was seen to then)
        twin = next((t for t in twins if inserted or t[1]), None)
        if twin is not None:
            twins.remove(twin)
            moves[rowid] = twin[0]
        elif not _found(conn, index, rowid, blob, tries):
            moves[rowid] = rowid
        if rowid in moves:
            blobs[rowid] = bytes(blob)
    if moves:
        reinsert(conn, index, moves)
        left = [r for r in moves if r not in moves.values()]  # their edges still carry their vectors: noted
        for rowid in left:
            conn.execute(f"INSERT INTO {_GONE} VALUES (?, NULL, ?, 0)", (rowid, digest(blobs[rowid])))
        lost = [t for r, t in moves.items() if not _found(conn, index, t, blobs[r], tries)]
        if lost:
            log.warning(
                "%d of %d rows of %s that oxmem re-inserted are still not found by vector_top_k (rowids %s): edges "
                "left by deletions oxmem did not see; `oxmem check --repair` rebuilds the index",
                len(lost), len(moves), TABLE, ", ".join(map(str, lost[:20])),
            )  # fmt: skip
    # the deletions are kept (an undo, a restore comes in a later transaction, or a later process), less the rowids
    # taken again
    conn.execute(f"DELETE FROM {_GONE} WHERE EXISTS (SELECT 1 FROM main.{TABLE} v WHERE v.rowid = {_GONE}.id)")
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
            if conn.raw.execute("SELECT 1 FROM sqlite_temp_master WHERE name = ?", (_GONE,)).fetchall():
                conn.raw.execute(f"DELETE FROM {_GONE}")  # a rebuilt index has no edges left to a deleted row
    return total, present, rebuilt


def _count(conn: Any, at_most: int | None = None) -> int:
    """How many vectors there are (counted no further than ``at_most``)."""
    if at_most is None:
        return int(conn.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0])
    return int(conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} LIMIT ?)", (at_most,)).fetchall()[0][0])
