"""Per-(session, model) vector matrices kept in memory, so a query never re-reads every blob from SQLite.

A :class:`SessionMatrix` is built lazily on a session's first query, then kept up to date by the store's own
writes (:meth:`VectorIndex.add` appends new chunks; a deduplicated chunk's new ``sequence_end`` needs nothing, since
every query reads its candidates' sequence numbers afresh); a deletion drops the session's entries. Memory is
bounded: entries are evicted least recently used first once their total size passes ``max_bytes``.

**Following another program's commits** (the agent writing while the inspector reads). SQLite says only *that*
another connection committed (``PRAGMA data_version``), not what; so :meth:`VectorIndex._follow` finds out, in
the reader's snapshot, with reads that cost what changed rather than what is stored:

1. *Rowid reuse.* The newest row of ``chunks`` and of ``chunks_vec`` seen last time must still be there under the
   same rowid. If it was deleted, SQLite may have given its rowid (and those below it) to new rows, which the
   next step could not tell from old ones: everything is dropped (a forget of the newest session, then more
   writes — rare).
2. *New rows.* Vectors past the rowid seen last time (``rowid > ?``: a range as long as what was added). A vector
   of a new chunk is appended to its session's matrix; a vector of an older chunk (re-embedded, back-filled), or
   a second vector row for a chunk the matrix holds (forgotten and stored again), drops that session.
3. *At every query*, the vector leg's candidates are checked against the database in the query's snapshot: the
   chunk must still have the vector row the matrix holds (same rowid and model), and its ``sequence_start`` and
   ``sequence_end`` are read afresh (a deduplicated turn moves ``sequence_end`` without adding a row) before the
   tie-breaks order them. A mismatch — a chunk deleted (a forget, a note deleted or rewritten) — drops the
   session and the leg is computed again. A deleted chunk that is not among the candidates changes nothing: the
   leg's candidates, their order and their range are what a fresh read gives.

Each commit of another program so costs two index lookups and a read of the vectors it added; a query, one lookup
per candidate (``top_k × 4``, about 0.1 ms).

What this relies on, as every writer of these files does (oxmem, the Oxydra agent): a chunk's text and vector
are never rewritten under the same rowid — a changed text is a new chunk, a new vector a deleted and inserted
row. A vector rewritten in place is still caught by step 3 when it is among the candidates.

Cosine is exact (float32 matrix–vector product); candidates are every chunk scoring at least the ``limit``-th best
score, then ordered by contract §6's tie-breaks on fresh sequence numbers (:meth:`VectorIndex.confirm`).
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np

from ..database import data_version
from ..embeddings.backends import from_blob
from ..errors import EmbeddingError
from .scope import AllSessions, Scope, admits, scope_json, scope_of, scope_sql

DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB: a million 384-dimension vectors, and some
#: the arrays :meth:`SessionMatrix.export` gives of a matrix, to keep on disk
MATRIX_ARRAYS = ("matrix", "inv", "numbers", "ids", "ends", "hashes", "order")
#: a missing sequence number or vector rowid, in the arrays kept on disk
NONE = -(2**63)


@dataclass(frozen=True)
class Room:
    """An array to keep on disk followed by ``rows`` more rows of zeros (room to grow into once mapped again)."""

    array: np.ndarray
    rows: int


def id_hashes(chunk_ids: Iterable[str]) -> np.ndarray:
    """A 64-bit hash of each chunk id (CRC-32 and Adler-32 of its UTF-8), the same in every process: kept on disk
    with a matrix, so a restored matrix finds a chunk id among its rows without a dict of every id."""
    encoded = (c.encode("utf-8", "surrogatepass") for c in chunk_ids)
    return np.fromiter(((zlib.crc32(b) << 32) | zlib.adler32(b) for b in encoded), dtype=np.uint64)


class KeptColumn(Sequence[Any]):
    """One column of a matrix restored from disk (its chunk ids, or one of its numbers), each row read where it
    lies when asked for — a million rows are not made Python objects for the few candidates a query reads (that
    took a quarter of a second) — followed by the rows appended since, as a list. :meth:`values` is the whole
    column as a list (to keep it on disk again, or to go over every row)."""

    def __init__(self, n: int, item: Callable[[int], Any], values: Callable[[], list[Any]]) -> None:
        self._n, self._item, self._values = n, item, values
        self._tail: list[Any] = []
        self._changed: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._n + len(self._tail)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):  # row by row (the rows appended since, say, are read without the rest)
            return [self[at] for at in range(*i.indices(len(self)))]
        at = i + len(self) if i < 0 else i
        if not 0 <= at < len(self):
            raise IndexError(i)
        if at >= self._n:
            return self._tail[at - self._n]
        return self._changed[at] if at in self._changed else self._item(at)

    def __setitem__(self, i: int, value: Any) -> None:
        at = i + len(self) if i < 0 else i
        if at >= self._n:
            self._tail[at - self._n] = value
        elif at >= 0:
            self._changed[at] = value
        else:
            raise IndexError(i)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())

    def extend(self, values: Iterable[Any]) -> None:
        self._tail.extend(values)

    def values(self) -> list[Any]:
        """The whole column, made a list the first time (every later read of any row is the list's: a query
        that goes over every chunk id — a tag filter — pays the million strings once, not at each query)."""
        if self._n:
            listed = self._values()
            for at, value in self._changed.items():
                listed[at] = value
            self._tail = listed + self._tail
            self._n, self._changed = 0, {}
        return self._tail


def _kept_ids(raw: np.ndarray, ends: np.ndarray, n: int) -> KeptColumn:
    """The chunk ids kept NUL-separated in ``raw`` (UTF-8), each ending at its offset in ``ends``, as a column."""
    if ends.shape != (n,) or ends.dtype.kind != "i" or (int(ends[-1]) != len(raw) if n else len(raw)):
        raise ValueError("the chunk ids do not have the count their description gives")
    starts = np.concatenate([[0], ends[:-1] + 1])
    return KeptColumn(
        n,
        lambda i: bytes(raw[starts[i] : ends[i]]).decode("utf-8"),
        lambda: bytes(raw).decode("utf-8").split("\x00") if n else [],
    )


def _kept_numbers(column: np.ndarray) -> KeptColumn:
    """A column of sequence numbers or rowids as kept (:data:`NONE`: None), as a column."""

    def item(i: int) -> int | None:
        value = int(column[i])
        return None if value == NONE else value

    def values() -> list[Any]:
        listed: list[Any] = column.tolist()
        return listed if not (column == NONE).any() else [None if v == NONE else v for v in listed]

    return KeptColumn(len(column), item, values)


@dataclass
class Candidate:
    chunk_id: str
    raw: float
    sequence_start: int | None
    sequence_end: int | None
    model: str | None = None
    #: the ``chunks_vec`` row the score was computed from (vector leg only)
    vector_rowid: int | None = None


def candidate_key(c: Candidate) -> tuple:
    """A leg's order: raw desc, sequence_end desc, sequence_start desc (NULLs last, as SQLite), chunk_id asc."""
    return (
        -c.raw,
        c.sequence_end is None,
        -(c.sequence_end or 0),
        c.sequence_start is None,
        -(c.sequence_start or 0),
        c.chunk_id,
    )


@dataclass
class SessionMatrix:
    """One session's vectors of one model; rows are appended, never reordered."""

    model: str
    dims: int
    #: lists; a matrix restored from disk has :class:`KeptColumn` instead
    chunk_ids: list[str] | KeptColumn = field(default_factory=list)
    sequence_start: list[int | None] | KeptColumn = field(default_factory=list)
    sequence_end: list[int | None] | KeptColumn = field(default_factory=list)
    vector_rowids: list[int | None] | KeptColumn = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: chunk id → row of the rows ``_hashes`` does not cover, made at its first use (None: not yet; a million rows
    #: read or restored need it only to follow another program's commits, and a restored matrix not even then)
    _rows: dict[str, int] | None = None
    #: the id hashes, sorted, of the rows a matrix was restored with, and their rows (kept on disk with it)
    _hashes: tuple[np.ndarray, np.ndarray] | None = None
    _matrix: np.ndarray | None = None
    _inv: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def nbytes(self) -> int:
        return 0 if self._matrix is None else self._matrix.nbytes + self._inv.nbytes

    def append(
        self, chunk_ids: list[str], starts: list, ends: list, vectors: np.ndarray, rowids: list | None = None
    ) -> None:
        """Add rows at the end."""
        n, extra = len(self.chunk_ids), len(chunk_ids)
        if not extra:
            return
        if self._matrix is None or n + extra > len(self._matrix):
            # doubling; a matrix restored from disk (mapped, its room used up) grows by an eighth, as one read from
            # SQLite does (a million rows doubled would take 3 GB)
            restored = isinstance(self._matrix, np.memmap)
            capacity = max(n + extra, n + n // 8 + 64 if restored else 2 * n, 64)
            grown = np.empty((capacity, self.dims), dtype=np.float32)
            inv = np.empty(capacity, dtype=np.float32)
            if self._matrix is not None:
                grown[:n], inv[:n] = self._matrix[:n], self._inv[:n]
            self._matrix, self._inv = grown, inv
        self._matrix[n : n + extra] = np.asarray(vectors, dtype=np.float32).reshape(extra, self.dims)
        self._added(chunk_ids, starts, ends, rowids)

    def load(self, chunk_ids: list[str], starts: list, ends: list, blobs: list[bytes], rowids: list) -> None:
        """The first rows, from blobs of exactly ``dims`` little-endian float32 values, copied once into a matrix
        with an eighth of room to grow (no joined copy, no second copy into a grown matrix: at a million vectors
        of 384 values each copy of 1.5 GB costs seconds)."""
        size, count = self.dims * 4, len(chunk_ids)
        buffer = bytearray((count + count // 8 + 64) * size)
        view = memoryview(buffer)
        for i, blob in enumerate(blobs):
            view[i * size : (i + 1) * size] = blob
        self._matrix = np.frombuffer(buffer, dtype="<f4").reshape(-1, self.dims)
        self._inv = np.empty(len(self._matrix), dtype=np.float32)
        self._added(chunk_ids, starts, ends, rowids)

    def load_buffer(self, read: _Read) -> None:
        """The first rows: ``read``'s buffer, blobs of exactly ``dims`` values in rowid order, becomes the matrix,
        given an eighth of room to grow (in place, as a large buffer is resized)."""
        self._matrix = np.frombuffer(read.matrix_buffer(), dtype="<f4").reshape(-1, self.dims)
        self._inv = np.empty(len(self._matrix), dtype=np.float32)
        self._added(read.chunk_ids, read.starts, read.ends, read.rowids)

    def _added(self, chunk_ids: list[str], starts: list, ends: list, rowids: list | None) -> None:
        """The bookkeeping of rows just written at the end of the matrix, and their inverse norms (one function
        for every row, so a row's norm does not depend on how it arrived)."""
        n, extra = len(self.chunk_ids), len(chunk_ids)
        block = self._matrix[n : n + extra]
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        self._inv[n : n + extra] = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        if self._rows is not None:
            self._rows.update(zip(chunk_ids, range(n, n + extra), strict=True))
        self.chunk_ids.extend(chunk_ids)
        self.sequence_start.extend(starts)
        self.sequence_end.extend(ends)
        self.vector_rowids.extend(rowids if rowids is not None else [None] * extra)

    def export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """The matrix as arrays to keep on disk (:mod:`.persisted`) and what else describes it; None when a chunk id
        holds a NUL (the ids are kept NUL-separated)."""
        chunk_ids = list(self.chunk_ids)
        n = len(chunk_ids)
        if any("\x00" in c for c in chunk_ids):
            return None
        room = n // 8 + 64  # kept on disk too: rows appended after a restore go there, the rest stays mapped
        matrix = self._matrix[:n] if self._matrix is not None else np.zeros((0, self.dims), dtype=np.float32)
        inv = self._inv[:n] if self._inv is not None else np.zeros(0, dtype=np.float32)
        hashes = id_hashes(chunk_ids)
        order = np.argsort(hashes, kind="stable")
        numbers = np.array(
            [[NONE if v is None else v for v in column] for column in (self.sequence_start, self.sequence_end,
                                                                       self.vector_rowids)],
            dtype=np.int64,
        ).reshape(3, n)  # fmt: skip
        ids = np.frombuffer("\x00".join(chunk_ids).encode("utf-8"), dtype=np.uint8)
        ends = np.append(np.flatnonzero(ids == 0), len(ids)) if n else np.zeros(0, dtype=np.int64)
        return {"model": self.model, "dims": self.dims, "n": n, "errors": self.errors}, {
            "matrix": Room(matrix, room),
            "inv": Room(inv, room),
            "numbers": numbers,
            "ids": ids,
            "ends": ends,
            "hashes": hashes[order],
            "order": order,
        }

    @classmethod
    def restored(cls, described: dict[str, Any], arrays: dict[str, np.ndarray]) -> SessionMatrix:
        """The matrix :meth:`export` gave, its vectors and norms used where they lie (memory-mapped copy-on-write,
        with the room kept after them: rows appended since are written there, nothing is copied)."""
        n, dims = int(described["n"]), int(described["dims"])
        entry = cls(str(described["model"]), dims)
        numbers = arrays["numbers"]
        matrix, inv = arrays["matrix"], arrays["inv"]
        if matrix.ndim != 2 or matrix.shape[1] != dims or len(matrix) < n or inv.shape != (len(matrix),):
            raise ValueError("the arrays do not have the sizes their description gives")
        hashes, order = arrays["hashes"], arrays["order"]
        if numbers.shape != (3, n) or hashes.shape != (n,) or order.shape != (n,):
            raise ValueError("the arrays do not have the sizes their description gives")
        fits = hashes.dtype == np.uint64 and order.dtype.kind == "i"
        if n and (not fits or int(order.min()) < 0 or int(order.max()) >= n):
            raise ValueError("the chunk ids' hashes do not fit the rows")
        entry.chunk_ids = _kept_ids(arrays["ids"], arrays["ends"], n)
        starts, ends, rowids = (_kept_numbers(column) for column in numbers)
        entry.sequence_start, entry.sequence_end, entry.vector_rowids = starts, ends, rowids
        entry.errors = [(str(a), str(b)) for a, b in described.get("errors", [])]
        entry._hashes = (hashes, order)
        if n:
            entry._matrix, entry._inv = matrix, inv
        return entry

    def row_of(self, chunk_id: str) -> int | None:
        """The row of ``chunk_id``'s vector (None: not in this matrix)."""
        hashed = 0 if self._hashes is None else len(self._hashes[0])
        if self._rows is None:
            self._rows = dict(zip(self.chunk_ids[hashed:], range(hashed, len(self.chunk_ids)), strict=True))
        found = self._rows.get(chunk_id)
        if found is None and self._hashes is not None:
            hashes, rows = self._hashes
            (wanted,) = id_hashes([chunk_id])
            at = int(np.searchsorted(hashes, wanted))
            while at < hashed and hashes[at] == wanted:  # (another id of the same hash: rare)
                if self.chunk_ids[int(rows[at])] == chunk_id:
                    return int(rows[at])
                at += 1
        return found

    def cosines(self, query: np.ndarray) -> np.ndarray:
        n = len(self.chunk_ids)
        q = np.asarray(query, dtype=np.float32)
        qn = np.float32(np.linalg.norm(q))
        if qn == 0 or n == 0:
            return np.zeros(n, dtype=np.float32)
        return (self._matrix[:n] @ q) * self._inv[:n] / qn

    def top(self, query: np.ndarray, limit: int, mask: np.ndarray | None = None) -> list[Candidate]:
        """The ``limit`` best candidates by cosine and every one tied with the last, in leg order (see
        :func:`candidate_key`; the caller cuts at ``limit`` once the sequence numbers are confirmed)."""
        scores = self.cosines(query)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        allowed = len(scores) if mask is None else int(mask.sum())
        if allowed > limit:
            cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            idx = np.flatnonzero(scores >= cut)  # every score tied with the cut-off; tie-breaks decide below
        else:
            idx = np.arange(len(scores)) if mask is None else np.flatnonzero(mask)
        found = [
            Candidate(
                self.chunk_ids[i],
                float(scores[i]),
                self.sequence_start[i],
                self.sequence_end[i],
                self.model,
                self.vector_rowids[i],
            )
            for i in idx.tolist()
        ]
        found.sort(key=candidate_key)
        return found


class _Read:
    """One model's vectors of a session as read, in ``chunks_vec`` rowid order: while every blob has one length,
    each is appended as it arrives to one buffer (so the matrix is made without holding every blob, nor copying
    them twice); once lengths differ, the blobs are kept as read. The other columns are kept as lists, as the
    matrix keeps them."""

    def __init__(self) -> None:
        self.rowids: list[int] = []
        self.chunk_ids: list[str] = []
        self.starts: list = []
        self.ends: list = []
        self.size: int | None = None  # the length of every blob so far (None: none yet)
        self.buffer = bytearray()
        self.blobs: list | None = None  # every blob, once their lengths differ

    def add(self, row: tuple) -> None:
        """A row ``(vector rowid, chunk id, start, end, model, blob)``."""
        blob = row[5]
        n = len(self.rowids)
        self.rowids.append(row[0])
        self.chunk_ids.append(row[1])
        self.starts.append(row[2])
        self.ends.append(row[3])
        if self.blobs is None:
            if type(blob) is bytes and blob and len(blob) == (self.size or len(blob)):
                self.size = len(blob)
                self.buffer += blob
                return
            size = self.size or 0
            self.blobs = [bytes(self.buffer[j * size : (j + 1) * size]) for j in range(n)]
            self.buffer = bytearray()
        self.blobs.append(blob)

    def extend(self, rows: Iterator[tuple], model: str) -> tuple | None:
        """Add rows of ``model`` whose blobs have this read's one size, in one tight loop (a million rows: a
        second less than :meth:`add` row by row); returns the first row that is not such (None: no row left)."""
        if self.blobs is not None or not self.size:
            return next(rows, None)
        size, buffer = self.size, self.buffer
        rowids, chunk_ids, starts, ends = (self.rowids.append, self.chunk_ids.append, self.starts.append,
                                           self.ends.append)  # fmt: skip
        for row in rows:
            blob = row[5]
            if row[4] != model or type(blob) is not bytes or len(blob) != size:
                return row
            rowids(row[0])
            chunk_ids(row[1])
            starts(row[2])
            ends(row[3])
            buffer += blob
        return None

    def matrix_buffer(self) -> bytearray:
        """The buffer holding the rows, given room for an eighth more (in place, as a large buffer is resized)."""
        self.buffer += bytes((len(self.rowids) // 8 + 64) * (self.size or 0))
        return self.buffer

    def rows(self) -> list[tuple]:
        """``(vector rowid, chunk id, start, end, blob)`` of every row."""
        size = self.size or 0
        blobs = self.blobs or [bytes(self.buffer[j * size : (j + 1) * size]) for j in range(len(self.rowids))]
        return list(zip(self.rowids, self.chunk_ids, self.starts, self.ends, blobs, strict=True))


def read_session(conn: apsw.Connection, session_id: Scope, model: str | None = None) -> dict[str, _Read]:
    """The session's vectors (of ``model``, else of every model) by model, in ``chunks_vec`` rowid order, in one
    pass; ``session_id`` may name many sessions (:mod:`.scope`). When the session holds at least half the file's
    vectors, ``chunks_vec`` is scanned in rowid order and each chunk looked up (sequential reads, blobs copied as
    they come: a million vectors in 3 s and one copy in memory, against 8–15 s and two through the session's
    index); a smaller session is read through its index and sorted (SQLite's sorter would copy every blob)."""
    where, args = scope_sql(session_id)
    (count,) = conn.execute(f"SELECT count(*) FROM chunks c WHERE {where}", args).fetchone()
    (total,) = conn.execute("SELECT max(rowid) FROM chunks_vec").fetchone()
    columns = "v.rowid, c.chunk_id, c.sequence_start, c.sequence_end, v.embedding_model, v.embedding_blob"
    if model is not None:
        where, args = f"{where} AND v.embedding_model = ?", (*args, model)
    rows: Iterable[tuple] = ()
    if count and 2 * count >= (total or 0):
        rows = conn.execute(f"SELECT {columns} FROM chunks_vec v CROSS JOIN chunks c ON c.chunk_id = v.chunk_id "
                            f"WHERE {where}", args)  # fmt: skip
    elif count:
        found = conn.execute(f"SELECT {columns} FROM chunks c JOIN chunks_vec v ON v.chunk_id = c.chunk_id "
                             f"WHERE {where}", args).fetchall()  # fmt: skip
        rows = sorted(found, key=lambda r: r[0])
    return read_by_model(rows)


def read_by_model(rows: Iterable[tuple]) -> dict[str, _Read]:
    """Rows ``(vector rowid, chunk id, start, end, model, blob)`` read into one :class:`_Read` per model, each in
    the order given."""
    reads: dict[str, _Read] = {}
    pending = iter(rows)
    row = next(pending, None)
    while row is not None:
        read = reads.get(row[4])
        if read is None:
            read = reads[row[4]] = _Read()
        read.add(row)
        row = read.extend(pending, row[4])
    return reads


def load_session_matrix(
    conn: apsw.Connection, session_id: Scope, model: str, dims: int, read: _Read | None = None
) -> SessionMatrix:
    """One session's vectors of ``model`` (``read``, else read now: :func:`read_session`), in ``chunks_vec`` rowid
    order; a vector that cannot be read is listed in ``errors``. (The order matters for exactness: BLAS may round
    a row's dot product differently by where the row lies in the matrix, so a matrix kept up to date must hold its
    rows where a fresh read would put them.) When every blob has the model's exact size (nearly always) the buffer
    they were read into becomes the matrix."""
    entry = SessionMatrix(model, dims)
    if read is None:
        read = read_session(conn, session_id, model).get(model, _Read())
    if read.blobs is None and read.size == dims * 4:
        entry.load_buffer(read)
        return entry
    good = []
    for r in read.rows():  # padded, damaged or of another size: one at a time
        try:
            vector = from_blob(r[4], dims)
        except EmbeddingError as exc:
            entry.errors.append((r[1], str(exc)))
            continue
        good.append((*r[:4], vector.astype("<f4").tobytes()))
    if good:
        entry.load([r[1] for r in good], [r[2] for r in good], [r[3] for r in good], [r[4] for r in good],
                   [r[0] for r in good])  # fmt: skip
    return entry


def _newest(conn: apsw.Connection, table: str) -> tuple[int, str] | None:
    row = conn.execute(f"SELECT rowid, chunk_id FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    return (int(row[0]), row[1]) if row else None


class VectorIndex:
    """LRU cache of :class:`SessionMatrix` by ``(session, model, dims)`` with a byte budget; a "session" may be
    many sessions (:class:`~.scope.AllSessions`), whose matrix is followed like any other."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[Scope, str, int], SessionMatrix] = OrderedDict()
        self._models: dict[Scope, list[str]] = {}
        #: the rows :meth:`models` read of a session, by model, and the file's state then: the first :meth:`get`
        #: of the session takes its model's rows from here instead of reading them again (a second pass over a
        #: million vectors costs seconds)
        self._read_ahead: tuple[Scope, tuple[int | None, int], dict[str, _Read]] | None = None
        #: the newest ``chunks`` and ``chunks_vec`` rows as last seen (steps 1 and 2)
        self._newest: dict[str, tuple[int, str] | None] = {}
        self._data_version: int | None = None
        self._lock = threading.RLock()
        #: how often another program's commits were followed ("kept"), dropped a session, dropped everything
        self.follows: dict[str, int] = {"kept": 0, "dropped": 0, "cleared": 0}

    def models(self, conn: apsw.Connection, session_id: Scope) -> list[str]:
        """The embedding models of the session's vectors, sorted by name."""
        self._sync(conn)
        with self._lock:
            models = self._models.get(session_id)
        if models is None:  # the session's vectors of every model in one pass: the query that follows wants them
            by_model = read_session(conn, session_id)
            models = sorted(by_model)
            with self._lock:
                self._models[session_id] = models
                self._read_ahead = (session_id, self._state(conn), by_model)
                self._follow_from_here(conn)
        return models

    def stored_dims(self, session_id: Scope, model: str) -> int | None:
        """The dimensions of the session's vectors of ``model`` as :meth:`models` just read them (their blobs'
        size), None when not known."""
        with self._lock:
            ahead = self._read_ahead
            read = ahead[2].get(model) if ahead is not None and ahead[0] == session_id else None
            return read.size // 4 if read is not None and read.size else None

    def _state(self, conn: apsw.Connection) -> tuple[int | None, int]:
        return self._data_version, conn.total_changes()

    def get(self, conn: apsw.Connection, session_id: Scope, model: str, dims: int) -> SessionMatrix:
        self._sync(conn)
        key = (session_id, model, dims)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        read = None
        with self._lock:
            ahead = self._read_ahead
            if ahead is not None and ahead[:2] == (session_id, self._state(conn)):  # the file is as it was read
                read = ahead[2].pop(model, None)  # taken once: another size of the same model reads again
            else:
                self._read_ahead = None
        entry = load_session_matrix(conn, session_id, model, dims, read)
        with self._lock:
            self._entries[key] = entry
            self._follow_from_here(conn)
            self._evict(keep=key)
        return entry

    def confirm(self, conn: apsw.Connection, session_id: Scope, candidates: list[Candidate], limit: int) -> bool:
        """Step 3 of the module's note, in the query's snapshot: each candidate's vector row is still the one its
        score came from, and its sequence numbers are read afresh; then ``candidates`` is put in leg order and cut
        to ``limit``. False (and the session dropped) when the cache was stale: the caller computes the leg again."""
        rows: dict[str, tuple] = {}
        ids = [c.chunk_id for c in candidates]
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ", ".join("?" * len(batch))
            for cid, sid, *rest in conn.execute(  # by primary key (a session test in SQL would scan the session)
                "SELECT c.chunk_id, c.session_id, c.sequence_start, c.sequence_end, v.rowid, v.embedding_model "
                f"FROM chunks c JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.chunk_id IN ({marks})",
                batch,
            ):
                if admits(session_id, sid):
                    rows[cid] = tuple(rest)
        for c in candidates:
            fresh = rows.get(c.chunk_id)
            if fresh is None or (c.vector_rowid is not None and fresh[2] != c.vector_rowid) or fresh[3] != c.model:
                self.invalidate(session_id)
                with self._lock:
                    self.follows["dropped"] += 1
                return False
            c.sequence_start, c.sequence_end = fresh[0], fresh[1]
        candidates.sort(key=candidate_key)
        del candidates[limit:]
        return True

    def add(
        self, session_id: str, model: str, chunks: Iterable[tuple[str, int | None, int | None, np.ndarray]]
    ) -> None:
        """Append chunks this process just committed to the session's cached matrices of ``model``. A cached scope
        of many sessions that holds this one is dropped instead (a commit may add to several sessions, whose rows
        it must hold in rowid order)."""
        chunks = list(chunks)
        if not chunks:
            return
        with self._lock:
            self._drop_scopes_of(session_id)
            models = self._models.get(session_id)
            if models is not None and model not in models:
                self._models[session_id] = sorted([*models, model])
            for (sid, m, dims), entry in self._entries.items():
                if sid == session_id and m == model:
                    vectors = np.vstack([np.asarray(v, dtype=np.float32)[:dims] for *_, v in chunks])
                    entry.append([c[0] for c in chunks], [c[1] for c in chunks], [c[2] for c in chunks], vectors)
            self._evict()

    def export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """What is cached, to keep on disk (:mod:`.persisted`): each matrix (:meth:`SessionMatrix.export`), the
        models of each session, and the newest rows the matrices were followed to; None when nothing is."""
        with self._lock:
            if not self._entries or not self._newest:
                return None
            described: dict[str, Any] = {
                "newest": {t: list(v) if v else None for t, v in self._newest.items()},
                "models": [[scope_json(s), list(m)] for s, m in self._models.items()],
                "entries": [],
            }
            arrays: dict[str, np.ndarray] = {}
            for i, ((scope, _model, _dims), entry) in enumerate(self._entries.items()):
                exported = entry.export()
                if exported is None:
                    continue
                about, its = exported
                described["entries"].append({**about, "scope": scope_json(scope), "at": i})
                arrays.update({f"{name}{i}": a for name, a in its.items()})
            return described, arrays

    def restore(self, conn: apsw.Connection, described: dict[str, Any], arrays: dict[str, np.ndarray]) -> int:
        """Take what :meth:`export` kept (in an earlier process), then bring it up to date with the file as it is
        now, as another program's commits are followed (steps 1–2 of the module's note: the newest rows must
        still be there, vectors added since are appended, anything else drops what it touches). Returns how many
        matrices were kept. Raises ValueError (nothing taken) when the arrays do not fit their description."""
        entries: OrderedDict[tuple[Scope, str, int], SessionMatrix] = OrderedDict()
        for about in described["entries"]:
            i = about["at"]
            its = {name: arrays[f"{name}{i}"] for name in MATRIX_ARRAYS}
            entry = SessionMatrix.restored(about, its)
            entries[(scope_of(about["scope"]), entry.model, entry.dims)] = entry
        newest = {t: (int(v[0]), str(v[1])) if v else None for t, v in described["newest"].items()}
        models = {scope_of(s): [str(x) for x in m] for s, m in described["models"]}
        with self._lock:
            self.clear()
            self._entries, self._models, self._newest = entries, models, newest
            self._follow(conn)
            self._data_version = data_version(conn)
            self._evict()
            return len(self._entries)

    def invalidate(self, session_id: Scope) -> None:
        """Drop what is cached of the session, and of every scope of many sessions that holds it."""
        with self._lock:
            self._read_ahead = None
            for key in [k for k in self._entries if k[0] == session_id]:
                del self._entries[key]
            self._models.pop(session_id, None)
            if isinstance(session_id, str):
                self._drop_scopes_of(session_id)

    def _drop_scopes_of(self, session_id: str) -> None:
        for key in [k for k in self._entries if isinstance(k[0], AllSessions) and k[0].admits(session_id)]:
            del self._entries[key]
        for scope in [s for s in self._models if isinstance(s, AllSessions) and s.admits(session_id)]:
            del self._models[scope]
            if self._read_ahead is not None and self._read_ahead[0] == scope:
                self._read_ahead = None

    def clear(self) -> None:
        with self._lock:
            self._read_ahead = None
            self._entries.clear()
            self._models.clear()
            self._newest.clear()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def cached_sessions(self) -> list[Scope]:
        with self._lock:
            return [k[0] for k in self._entries]

    def _evict(self, keep: tuple[Scope, str, int] | None = None) -> None:
        total = sum(e.nbytes for e in self._entries.values())
        for key in list(self._entries):
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            total -= self._entries.pop(key).nbytes

    def _sync(self, conn: apsw.Connection) -> None:
        version = data_version(conn)
        with self._lock:
            if version == self._data_version:
                return
            if self._data_version is not None and self._newest:
                self._follow(conn)
            self._data_version = version

    def _followed(self) -> set[Scope]:
        return set(self._models) | {sid for sid, _, _ in self._entries}

    def _follow_from_here(self, conn: apsw.Connection) -> None:
        """What is cached was just read in this snapshot: later commits are followed from its newest rows."""
        if not self._newest:
            self._newest = {table: _newest(conn, table) for table in ("chunks", "chunks_vec")}

    def _follow(self, conn: apsw.Connection) -> None:
        """Bring what is cached up to date with another connection's commits (steps 1–2 of the module's note)."""
        if not self._followed():
            self._newest.clear()
            return
        seen = self._newest
        for table, newest in seen.items():  # step 1
            if newest is not None:
                still = conn.execute(f"SELECT chunk_id FROM {table} WHERE rowid = ?", (newest[0],)).fetchone()
                if still is None or still[0] != newest[1]:
                    self.clear()
                    self.follows["cleared"] += 1
                    return
        after_chunk = seen["chunks"][0] if seen["chunks"] else 0
        after_vector = seen["chunks_vec"][0] if seen["chunks_vec"] else 0
        followed = self._followed()
        for vrowid, cid, model, blob, crowid, sid, start, end in conn.execute(  # step 2
            "SELECT v.rowid, v.chunk_id, v.embedding_model, v.embedding_blob, c.rowid, c.session_id, "
            "c.sequence_start, c.sequence_end FROM chunks_vec v JOIN chunks c ON c.chunk_id = v.chunk_id "
            "WHERE v.rowid > ? ORDER BY v.rowid",
            (after_vector,),
        ):
            scopes = [s for s in followed if admits(s, sid)]
            if not scopes:
                continue
            if crowid <= after_chunk:  # a new vector of an older chunk: re-embedded or back-filled
                self._drop(sid)
                followed.difference_update(scopes)
                continue
            for scope in scopes:
                if model not in self._models.get(scope, [model]):
                    self._models[scope] = sorted([*self._models[scope], model])
            for (entry_sid, entry_model, _dims), entry in list(self._entries.items()):
                if entry_sid not in scopes or entry_model != model:
                    continue
                if not self._append(entry, vrowid, cid, blob, start, end):
                    self._drop(sid)
                    followed.difference_update(scopes)
                    break
        self.follows["kept"] += 1
        self._newest = {table: _newest(conn, table) for table in ("chunks", "chunks_vec")}
        self._evict()

    @staticmethod
    def _append(entry: SessionMatrix, vrowid: int, cid: str, blob: bytes, start: int | None, end: int | None) -> bool:
        """A vector another program added to ``entry``'s session and model; False when the matrix cannot take it
        where a fresh read would put it (the chunk is there already, from another vector row)."""
        row = entry.row_of(cid)
        if row is not None:
            if entry.vector_rowids[row] is not None:  # forgotten and stored again
                return False
            entry.vector_rowids[row] = vrowid  # appended already by this process's own write (``add``)
            return True
        try:
            vector = from_blob(blob, entry.dims)
        except EmbeddingError as exc:
            entry.errors.append((cid, str(exc)))
            return True
        entry.append([cid], [start], [end], vector.reshape(1, entry.dims), [vrowid])
        return True

    def _drop(self, session_id: str) -> None:
        self.invalidate(session_id)
        self.follows["dropped"] += 1
