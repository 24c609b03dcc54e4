"""FTS5's BM25, computed in numpy from cached postings — the same numbers, without scoring row by row in SQL.

For a query whose every term is one token, FTS5 scores each matching row with ``bm25()``:
``score = Σ_phrases idf · f·(k1+1) / (f + k1·(1 − b + b·D/avgdl))`` with ``idf = log((N − n + 0.5)/(n + 0.5))``
(clamped to 1e-6), k1 = 1.2, b = 0.75, ``f`` the phrase's frequency in the row, ``D`` the row's length in tokens,
``N`` the table's rows and ``n`` the rows containing the phrase. For a word in most chunks of a large store that
is hundreds of thousands of rows per query. This index keeps, per token, the dense row positions and
frequencies (read once through ``fts5vocab``; for a prefix term ``"word"*``, every instance of a token starting
with it), plus every row's length and the table's totals, and evaluates the same expression with the same
operations in the same order in float64 — so the scores are identical to FTS5's, bit for bit (a test compares
them). Anything it cannot reproduce exactly (another tokenizer, a phrase of several tokens, a tag filter) is
left to FTS5 by returning None.

The cache is dropped when this process writes the FTS table. Another connection's commit (``PRAGMA data_version``)
is *followed* instead (:meth:`Bm25Index._follow`), in the reader's snapshot: the newest row seen must still be
there, holding the same chunk (else SQLite may have reused rowids: everything is dropped); rows past it are read
from ``chunks_fts_docsize`` (their lengths) and ``chunks`` (their text, tokenized here by the same tokenizer) and
appended to the row list, the cached postings and the cached sessions; when the table's row count (FTS5's own totals
record) says rows went, the row list is compared with ``chunks_fts_docsize`` and the rows gone are marked dead —
left out of every score, of every ``n`` and of every session. ``N`` and ``avgdl`` are always FTS5's own, from that
record. When a quarter of the rows are dead, or the counts still disagree, everything is dropped and built again.
Callers read in one snapshot (the store runs searches in a read transaction), so the row list and the postings
agree; if they ever do not (a caller outside a snapshot), the postings are refused and FTS5 answers instead of a
wrong score.

**Rows rewritten in place.** Following cannot see a row whose text another program rewrote under the same rowid
(``UPDATE chunks SET chunk_text = …``, which the triggers of ``chunks`` carry into ``chunks_fts``; a copy of the
file with a few rows edited written over it): SQLite says only *that* something was committed, and the newest row,
the counts and the restore's sample of rows (:mod:`.persisted`) may all be as before. oxmem's own writers never do
it (a changed text is a new chunk; a deduplicated turn rewrites an FTS row with the same text), other programs may.
So each posting a query uses is *proved* the file's, in the query's snapshot, before it is used (:meth:`_prove`):
FTS5 is asked for that token alone — ``SELECT rowid, -bm25(t) FROM t WHERE t MATCH '"token"' ORDER BY rowid``
(``"start"*`` for a prefix), quoted so nothing in it is FTS5 syntax — and must find exactly the posting's live rows,
each with the very score the cache computes for it (bit for bit). The same rows mean the same ``n``, the same scores
that each row's frequency and length, whatever its text now is, give FTS5's one-term score; a query's score is a sum
of such one-term scores, so it is FTS5's too. Every rewrite that changes a number of a query is so found, among all
the rows of the posting and not only those the query returns: the token gone from a row or come to it, counted
otherwise, a row made longer or shorter, the token moved from one row to another. On any difference the whole cache
is dropped and built again from FTS5's own tables, in the query's snapshot, and the query is answered from it —
never from what was found wrong (the copy kept on disk is replaced when the caches are next saved). A token proved
needs no proof again while the file stays in that state (``data_version``, and this connection's own
``total_changes``); nor do the postings read together with the row list in the file's present state, nor anything of
:class:`TableBm25`, which is dropped at every change of the file. The cost is one FTS5 query per token, once per
state of the file: nothing while the file does not change; after another program's commit (or in a new process, on a
cache restored from disk) the first query with a token pays two to three times what FTS5 takes to rank that token's
rows — at 100,000 rows, a fraction of a millisecond for a word in a few dozen rows, a few milliseconds for one in a
few percent of them, about 0.1 s for one in nearly every row. What rows FTS5 holds and what they score is always the
truth: rows appended while following are tokenized from ``chunks``, so if ``chunks_fts`` holds another text for them
(a store without its triggers), the proof finds it too. Still assumed, as by the vector cache: a chunk's *session*
is never changed under its rowid (the cached sessions).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import apsw
import numpy as np

from ..database import data_version
from .scope import Scope, admits, scope_json, scope_of, scope_sql

K1 = 1.2
B = 0.75
#: Below this many rows FTS5 itself is fast enough, and nothing is cached.
MIN_ROWS = 20_000
DEFAULT_MAX_BYTES = 512 << 20


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian 7-bit varints, as FTS5 stores sizes."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _chunk_at(conn: apsw.Connection, rowid: int) -> str | None:
    found = conn.execute("SELECT chunk_id FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
    return found[0] if found else None


def _row_lengths(sizes: list[bytes]) -> np.ndarray:
    """Tokens per row from ``chunks_fts_docsize.sz`` (one varint per column, summed), as float64. When every
    varint is one byte (every column under 128 tokens: nearly always) the sums are taken in numpy at once."""
    counts = np.fromiter((len(b) for b in sizes), dtype=np.int64, count=len(sizes))
    data = np.frombuffer(b"".join(sizes), dtype=np.uint8)
    if len(sizes) and counts.min() > 0 and not (data & 0x80).any():
        return np.add.reduceat(data.astype(np.float64), np.cumsum(counts) - counts)
    return np.fromiter((sum(_varints(b)) for b in sizes), dtype=np.float64, count=len(sizes))


def _plain_unicode61(sql: str) -> bool:
    """Whether an FTS5 table's ``CREATE`` text leaves scores to be computed here: the unicode61 tokenizer (named
    or FTS5's default) without options, and no ``detail``/``columnsize`` option (both change what is stored)."""
    match = re.search(r"tokenize\s*=\s*'([^']*)'", sql)
    tokenizer = match.group(1).strip() if match else "unicode61"
    if not match and re.search(r"\btokenize\b", sql, re.IGNORECASE):
        return False
    return tokenizer == "unicode61" and not re.search(r"\b(detail|columnsize)\b", sql, re.IGNORECASE)


class Bm25Index:
    """Postings of an FTS5 table (oxmem's ``chunks_fts`` unless named); used from one connection's thread.

    A table of several columns is scored as FTS5 scores it with no column weights: a term's instances are summed
    over the columns, and a row's length is the sum of its columns' lengths."""

    #: whether another connection's commits are followed (:meth:`_follow`, which knows oxmem's ``chunks``)
    FOLLOWS = True

    def __init__(self, min_rows: int = MIN_ROWS, max_bytes: int = DEFAULT_MAX_BYTES, table: str = "chunks_fts") -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
            raise ValueError(f"not a plain table name: {table!r}")
        self.table = table
        self._vocab = f"temp.oxmem_{table}_instances"
        self.min_rows = min_rows
        self.max_bytes = max_bytes
        self._lock = threading.RLock()
        self._version: int | None = None
        self._usable: bool | None = None
        self._rowids: np.ndarray | None = None  # sorted FTS rowids; a row's dense position is its index here
        self._lengths: np.ndarray | None = None  # tokens per row, float64
        self._rows = 0
        self._avgdl = 0.0
        self._alive: np.ndarray | None = None  # False for a row deleted since the row list was read
        self._newest_chunk: str | None = None  # the chunk id of the newest row, as last seen
        self._postings: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        #: rows appended to a cached posting since, joined to it when the token is next used (following a few
        #: appended rows does not copy every cached posting: a common word's holds most of a million rows)
        self._tails: dict[str, list[tuple[int, float]]] = {}
        self._sessions: OrderedDict[Scope, np.ndarray] = OrderedDict()
        self._tokenizer = None
        #: the state of the file (:func:`_state`) the row list was read in, with every posting read since: all of
        #: it is the file's as long as the file stays in that state (nothing to prove)
        self._read_in: tuple[int, int] | None = None
        #: the tokens whose postings were proved the file's in the state ``_proved_in`` (:meth:`_proven`)
        self._proved: set[str] = set()
        self._proved_in: tuple[int, int] | None = None
        #: what following another program's commits did, for tests and benchmarks: "kept", "cleared"
        self.follows: dict[str, int] = {"kept": 0, "cleared": 0}
        #: what proving the postings a query uses found, for tests and benchmarks: tokens "proved" the file's;
        #: "differed", times they were not (everything was then built again)
        self.proofs: dict[str, int] = {"proved": 0, "differed": 0}

    def clear(self) -> None:
        with self._lock:
            self._usable = None
            self._rowids = self._lengths = self._alive = None
            self._postings.clear()
            self._tails.clear()
            self._sessions.clear()
            self._read_in = self._proved_in = None
            self._proved.clear()

    # -- building ------------------------------------------------------------------------------------

    def _sync(self, conn: apsw.Connection) -> None:
        version = data_version(conn)
        if version != self._version:
            if not (self._usable and self.FOLLOWS and self._follow(conn)):
                self.clear()
            self._version = version

    def _follow(self, conn: apsw.Connection) -> bool:
        """Bring the row list, postings and sessions up to date with another connection's commits (see the
        module's note); False when they must be built again."""
        newest = int(self._rowids[-1])
        if self._newest_chunk is None or _chunk_at(conn, newest) != self._newest_chunk:
            self.follows["cleared"] += 1
            return False
        totals = _varints(conn.execute(f"SELECT block FROM {self.table}_data WHERE id = 1").fetchone()[0])
        added = conn.execute(f"SELECT id, sz FROM {self.table}_docsize WHERE id > ? ORDER BY id", (newest,)).fetchall()
        if int(self._alive.sum()) + len(added) != totals[0]:  # rows went: find which
            rows = conn.execute(f"SELECT id FROM {self.table}_docsize WHERE id <= ?", (newest,)).fetchall()
            present = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            self._alive &= np.isin(self._rowids, present, assume_unique=True)
        if int(self._alive.sum()) + len(added) != totals[0] or not self._alive.sum() * 4 > len(self._alive) * 3:
            self.follows["cleared"] += 1
            return False
        if added:
            self._append_rows(conn, newest, added)
        self._rows = totals[0]
        self._avgdl = float(sum(totals[1:])) / float(totals[0])
        self._newest_chunk = _chunk_at(conn, int(self._rowids[-1]))
        self.follows["kept"] += 1
        return True

    def _append_rows(self, conn: apsw.Connection, after: int, added: list[tuple[int, bytes]]) -> None:
        """Rows past ``after``: their lengths, their tokens into each cached posting, their sessions."""
        first = len(self._rowids)
        rowids = np.array([r[0] for r in added], dtype=np.int64)
        self._rowids = np.concatenate([self._rowids, rowids])
        self._lengths = np.concatenate([self._lengths, _row_lengths([r[1] for r in added])])
        self._alive = np.concatenate([self._alive, np.ones(len(added), dtype=bool)])
        position = {int(rowid): first + i for i, rowid in enumerate(rowids)}
        found: dict[str, list[tuple[int, int]]] = {}  # token → (dense position, frequency) of the rows appended
        sessions: dict[str, list[int]] = {}
        for rowid, session_id, text in conn.execute(
            "SELECT rowid, session_id, chunk_text FROM chunks WHERE rowid > ? ORDER BY rowid", (after,)
        ):
            if rowid not in position:
                continue
            at = position[rowid]
            tokens: dict[str, int] = {}
            for token in self._tokenizer(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None):
                tokens[token[2]] = tokens.get(token[2], 0) + 1
            for token, n in tokens.items():
                found.setdefault(token, []).append((at, n))
            sessions.setdefault(session_id, []).append(at)
        for token in self._postings:
            if token.endswith("*"):  # every token starting with it, summed per row
                summed: dict[int, int] = {}
                for t in (t for t in found if t.startswith(token[:-1])):
                    for at, n in found[t]:
                        summed[at] = summed.get(at, 0) + n
                more = [(at, float(n)) for at, n in sorted(summed.items())]
            else:
                more = [(at, float(n)) for at, n in found.get(token, ())]
            if more:
                self._tails.setdefault(token, []).extend(more)
        for scope, cached in list(self._sessions.items()):
            at = sorted(p for session_id, ps in sessions.items() if admits(scope, session_id) for p in ps)
            if at:
                self._sessions[scope] = np.concatenate([cached, np.array(at, dtype=cached.dtype)])

    def _scorable(self, conn: apsw.Connection) -> list[int] | None:
        """FTS5's totals record when the table is one this index scores (unicode61 with no options, at least
        ``min_rows`` rows), with the vocabulary table and tokenizer made ready; else None."""
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (self.table,)).fetchall()
        if not sql or not _plain_unicode61(sql[0][0] or ""):
            return None
        try:
            averages = conn.execute(f"SELECT block FROM {self.table}_data WHERE id = 1").fetchall()
            totals = _varints(averages[0][0]) if averages else []
            if not totals or totals[0] < max(self.min_rows, 1):
                return None
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._vocab} USING fts5vocab(main, '{self.table}', 'instance')"
            )
            self._tokenizer = conn.fts5_tokenizer("unicode61", [])
        except apsw.Error:
            return None
        return totals

    def prepare(self, conn: apsw.Connection) -> bool:
        """Read the row list now (in the caller's snapshot), ahead of the first query; whether it is used."""
        with self._lock:
            self._sync(conn)
            return self._prepare(conn)

    def _prepare(self, conn: apsw.Connection) -> bool:
        if self._usable is not None:
            return self._usable
        self._usable = False
        state = _state(conn)  # (first: outside a snapshot, a commit while this reads makes the next query prove)
        totals = self._scorable(conn)
        if totals is None:
            return False
        try:
            rows = conn.execute(f"SELECT id, sz FROM {self.table}_docsize ORDER BY id").fetchall()
        except apsw.Error:
            return False
        if len(rows) != totals[0]:
            return False
        self._rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self._lengths = _row_lengths([r[1] for r in rows])
        self._alive = np.ones(len(rows), dtype=bool)
        self._newest_chunk = _chunk_at(conn, int(self._rowids[-1])) if len(rows) and self.FOLLOWS else None
        self._rows = totals[0]
        self._avgdl = float(sum(totals[1:])) / float(totals[0])
        self._usable = True
        self._read_in = state
        return True

    def _token(self, term: str) -> str | None:
        """The one token ``term`` makes (``word*``: that token as a prefix), else None."""
        prefix = term.endswith("*")
        tokens = self._tokenizer(term.rstrip("*").encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
        if len(tokens) != 1 or len(tokens[0]) != 3:
            return None
        return tokens[0][2] + ("*" if prefix else "")

    def _posting(self, conn: apsw.Connection, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The token's rows (dense positions) and frequencies; None if they name rows the cached row list lacks
        (the table changed under a reader that is not in one snapshot: the caller falls back to FTS5).

        ``token*`` is a prefix: FTS5 counts an instance of any token starting with it, so the frequencies are
        those instances per row."""
        found = self._postings.get(token)
        if found is not None:
            self._postings.move_to_end(token)
            return self._joined(token, found)
        if token.endswith("*"):
            start = token[:-1]
            end = start[:-1] + chr(ord(start[-1]) + 1)
            rows = conn.execute(
                f"SELECT doc, count(*) FROM {self._vocab} WHERE term >= ? AND term < ? GROUP BY doc",
                (start, end),
            ).fetchall()
        else:
            rows = conn.execute(
                f"SELECT doc, count(*) FROM {self._vocab} WHERE term = ? GROUP BY doc", (token,)
            ).fetchall()
        docs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        freqs = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        positions = np.searchsorted(self._rowids, docs)
        if len(docs) > self._rows or (
            len(docs)
            and (bool((positions >= len(self._rowids)).any()) or not np.array_equal(self._rowids[positions], docs))
        ):
            return None
        found = (positions, freqs)
        self._postings[token] = found
        self._proved.discard(token)  # (read now, but the lengths of its rows may be older)
        size = sum(p.nbytes + f.nbytes for p, f in self._postings.values())
        while size > self.max_bytes and len(self._postings) > 1:
            evicted, (p, f) = self._postings.popitem(last=False)
            self._tails.pop(evicted, None)
            self._proved.discard(evicted)
            size -= p.nbytes + f.nbytes
        return found

    def _joined(self, token: str, posting: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The cached posting of ``token`` with the rows appended since joined to it (kept so)."""
        tail = self._tails.pop(token, None)
        if not tail:
            return posting
        positions, freqs = posting
        joined = (
            np.concatenate([positions, np.array([at for at, _ in tail], dtype=np.int64)]),
            np.concatenate([freqs, np.array([f for _, f in tail], dtype=np.float64)]),
        )
        self._postings[token] = joined
        return joined

    def _session_rows(self, conn: apsw.Connection, session_id: Scope) -> np.ndarray:
        """The dense positions of the scope's rows, kept for a few scopes (followed as rows are appended)."""

        def read() -> np.ndarray:
            where, args = scope_sql(session_id)
            return self._positions([r[0] for r in conn.execute(f"SELECT c.rowid FROM chunks c WHERE {where}", args)])

        return _kept(self._sessions, session_id, read, 8)

    def _positions(self, rowids: list[int]) -> np.ndarray:
        """The dense positions of those of ``rowids`` the row list holds, in the order given."""
        wanted = np.asarray(rowids, dtype=np.int64)
        positions = np.searchsorted(self._rowids, wanted)
        known = positions < len(self._rowids)
        known[known] = self._rowids[positions[known]] == wanted[known]
        return positions[known]

    # -- kept on disk (:mod:`.persisted`) ----------------------------------------------------------------

    def export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """The row list, row lengths, postings and sessions, to keep on disk; None when nothing is built (or the
        index does not follow other programs' commits, so could not be brought up to date)."""
        with self._lock:
            if not self._usable or not self.FOLLOWS or self._rowids is None or self._newest_chunk is None:
                return None
            for token, posting in list(self._postings.items()):
                self._joined(token, posting)
            tokens, scopes = list(self._postings), list(self._sessions)
            described = {
                "newest_chunk": self._newest_chunk,
                "tokens": tokens,
                "scopes": [scope_json(s) for s in scopes],
            }
            arrays = {"rowids": self._rowids, "lengths": self._lengths, "alive": self._alive}
            for i, token in enumerate(tokens):
                arrays[f"positions{i}"], arrays[f"freqs{i}"] = self._postings[token]
            for i, scope in enumerate(scopes):
                arrays[f"session{i}"] = self._sessions[scope]
            return described, arrays

    def restore(self, conn: apsw.Connection, described: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
        """Take what :meth:`export` kept, then follow the file to its state now (:meth:`_follow`: the newest row
        must still hold the same chunk, rows added since are appended, rows gone marked dead). False, with
        nothing kept, when that cannot be done. Raises ValueError when the arrays do not fit together."""
        rowids, lengths, alive = arrays["rowids"], arrays["lengths"], arrays["alive"]
        if not (len(rowids) == len(lengths) == len(alive)) or not len(rowids):
            raise ValueError("the row arrays differ in length")
        postings = OrderedDict()
        for i, token in enumerate(described["tokens"]):
            positions, freqs = arrays[f"positions{i}"], arrays[f"freqs{i}"]
            if len(positions) != len(freqs) or (len(positions) and int(positions.max()) >= len(rowids)):
                raise ValueError(f"the posting of {token!r} does not fit the rows")
            postings[str(token)] = (positions, freqs)
        sessions = OrderedDict()
        for i, kept in enumerate(described["scopes"]):
            sessions[scope_of(kept)] = arrays[f"session{i}"]
        with self._lock:
            self.clear()
            totals = self._scorable(conn)
            if totals is None:
                self._usable = False
                return False
            self._rowids, self._lengths, self._alive = rowids, lengths, alive.copy()
            self._postings, self._sessions = postings, sessions
            self._newest_chunk = str(described["newest_chunk"])
            self._rows = totals[0]
            self._avgdl = float(sum(totals[1:])) / float(totals[0])
            self._usable = True
            if not self._follow(conn):
                self.clear()
                return False
            self._version = data_version(conn)
            return True

    # -- scoring -------------------------------------------------------------------------------------

    def _scored(self, conn: apsw.Connection, terms: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """``-bm25`` of every row (0 where no term matched) and which rows matched, by dense position; None when
        FTS5 must answer. Called under the lock, after the cache was brought to the snapshot's state. Each posting
        used is proved the file's first (:meth:`_proven`); when one is not, everything is built again, in this
        snapshot, and the scores are the rebuilt cache's."""
        if not terms or not self._prepare(conn):
            return None
        tokens = [token for token in map(self._token, terms) if token is not None]
        if len(tokens) != len(terms):
            return None
        postings = self._read(conn, tokens)
        if postings is not None and not self._proven(conn, postings):
            self.proofs["differed"] += 1
            self.clear()  # (the kept copy on disk is replaced at the next save: :meth:`.SearchCaches.fingerprint`)
            postings = self._read(conn, tokens) if self._prepare(conn) else None
        if postings is None:
            return None
        score = np.zeros(len(self._rowids), dtype=np.float64)
        matched = np.zeros(len(self._rowids), dtype=bool)
        for token in tokens:  # phrase order, duplicates included, as FTS5 sums them
            positions, freqs = postings[token]
            score[positions] = score[positions] + self._term_scores(positions, freqs)
            matched[positions] = True
        return score, matched

    def _read(self, conn: apsw.Connection, tokens: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
        """The posting of each token; None (and nothing kept) when one names rows the row list lacks."""
        postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for token in tokens:
            posting = postings.get(token) or self._posting(conn, token)
            if posting is None:
                self.clear()
                self._version = None
                return None
            postings[token] = posting
        return postings

    def _term_scores(self, positions: np.ndarray, freqs: np.ndarray) -> np.ndarray:
        """One term's BM25 at each of its rows (``positions``, its whole posting: its live rows are its ``n``),
        as FTS5 computes a phrase's part of ``bm25()``, operation for operation."""
        hits = int(self._alive[positions].sum())
        idf = math.log((self._rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        lengths = self._lengths[positions]
        scores: np.ndarray = idf * ((freqs * (K1 + 1.0)) / (freqs + K1 * (1 - B + B * lengths / self._avgdl)))
        return scores

    def _proven(self, conn: apsw.Connection, postings: dict[str, tuple[np.ndarray, np.ndarray]]) -> bool:
        """Whether each posting (and the lengths of its rows) is the file's, in the caller's snapshot: true at once
        when the row list and the postings were all read in the file's present state (:func:`_state`); else each
        token not yet proved in this state is (:meth:`_prove`), once — until the file changes again."""
        state = _state(conn)
        if state == self._read_in:
            return True
        if state != self._proved_in:
            self._proved.clear()
            self._proved_in = state
        for token, posting in postings.items():
            if token not in self._proved:
                if not self._prove(conn, token, posting):
                    return False
                self._proved.add(token)
                self.proofs["proved"] += 1
        return True

    def _prove(self, conn: apsw.Connection, token: str, posting: tuple[np.ndarray, np.ndarray]) -> bool:
        """Whether FTS5 itself, asked for the token alone (``"token"``, or ``"start"*`` for a prefix: quoted, so
        nothing in it is FTS5 syntax), finds the same rows as the posting's live ones, each with the very score the
        cache gives it (the module's note): every row whose text was rewritten in a way that matters to a query of
        this token (the token gone, or come, or counted otherwise; the row longer or shorter) is found, not only
        the rows a query returns."""
        assert self._alive is not None and self._rowids is not None  # (a posting is of a row list read)
        live = self._alive[posting[0]]
        rowids = self._rowids[posting[0][live]]
        order = np.argsort(rowids, kind="stable")
        prefix = token.endswith("*")
        quoted = '"' + (token[:-1] if prefix else token).replace('"', '""') + '"' + ("*" if prefix else "")
        found = conn.execute(
            f"SELECT rowid, -bm25({self.table}) FROM {self.table} WHERE {self.table} MATCH ? ORDER BY rowid",
            (quoted,),
        ).fetchall()
        if len(found) != len(rowids):
            return False
        if not np.array_equal(np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found)), rowids[order]):
            return False
        scores = np.fromiter((r[1] for r in found), dtype=np.float64, count=len(found))
        return bool(np.array_equal(scores, self._term_scores(posting[0], posting[1])[live][order]))

    def scores(
        self, conn: apsw.Connection, session_id: Scope, terms: list[str], limit: int
    ) -> list[tuple[int, float]] | None:
        """``(rowid, -bm25)`` of the session's best ``limit`` matches and every row tied with the last, best
        first — or None when FTS5 must answer (small table, another tokenizer, a term of several tokens).
        A term ending in ``*`` is a prefix, as in FTS5's ``"word"*``."""
        with self._lock:
            self._sync(conn)
            scored = self._scored(conn, terms)
            if scored is None:
                return None
            score, matched = scored
            in_session = np.zeros(len(self._rowids), dtype=bool)
            in_session[self._session_rows(conn, session_id)] = True
            chosen = np.flatnonzero(matched & in_session & self._alive)
            if len(chosen) > limit:
                values = score[chosen]
                cut = np.partition(values, len(values) - limit)[len(values) - limit]
                chosen = chosen[values >= cut]
            chosen = chosen[np.argsort(-score[chosen], kind="stable")]
            return [(int(self._rowids[i]), float(score[i])) for i in chosen]


class TableBm25(Bm25Index):
    """BM25 of another agent's FTS5 table, for that agent's own ``… ORDER BY bm25 LIMIT n`` queries.

    Not followed: the cache holds one state of the file (what the caller passes, e.g. a reader's
    ``_file_state``) and is built only when a query finds the file in the state the previous query saw. So beside
    an agent that commits between queries FTS5 answers each query, as it would without this cache, instead of the
    cache being built again after every commit; on a quiet file the second query builds it. Everything it holds
    was read in the file's present state, so nothing is proved (the module's note): the table may index only some
    of the agent's rows (Omega's, users' messages), and the cache covers exactly the rows the table holds."""

    FOLLOWS = False

    def __init__(self, table: str, min_rows: int = MIN_ROWS, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        super().__init__(min_rows, max_bytes, table)
        self._state: object = None
        self._admitted: OrderedDict[Hashable, np.ndarray] = OrderedDict()

    def _prepare(self, conn: apsw.Connection) -> bool:
        """Also refused: a table whose default rank is not plain ``bm25()`` (an agent's ``ORDER BY rank`` then
        means another function)."""
        if self._usable is None:
            try:
                ranked = conn.execute(f"SELECT 1 FROM {self.table}_config WHERE k = 'rank'").fetchall()
            except apsw.Error:
                ranked = [(1,)]
            if ranked:
                self._usable = False
        return super()._prepare(conn)

    def best(
        self,
        conn: apsw.Connection,
        state: object,
        terms: list[str],
        limit: int,
        admitted: tuple[Hashable, Callable[[], list[int]]],
    ) -> list[tuple[int, float]] | None:
        """The first ``limit`` matches of ``terms`` (the phrases of an OR query, each one token) in SQLite's order
        for ``ORDER BY bm25(…)`` — bm25 ascending, rows that tie in rowid order: the order FTS5 yields them in,
        which SQLite's sorter keeps for rows that compare equal — among the rows the query's joins and filters
        admit: ``admitted`` is a key naming that filter and a function returning the rowids it admits (read once
        per state of the file and key). ``(rowid, bm25)`` each, bm25 exactly FTS5's. None when FTS5 must answer
        (the file just changed, a small table, a term of several tokens, another tokenizer)."""
        if limit <= 0:
            return []
        with self._lock:
            if state != self._state:
                self.clear()
                self._admitted.clear()
                self._state = state
                return None
            scored = self._scored(conn, terms)
            if scored is None:
                return None
            score, matched = scored
            positions = np.flatnonzero(matched & self._alive & self._admitted_rows(*admitted))
            values = -score[positions]  # FTS5 returns -1.0 × the sum: the same bits
            if len(values) > limit:
                cut = np.partition(values, limit - 1)[limit - 1]
                positions, values = positions[values <= cut], values[values <= cut]
            order = np.lexsort((positions, values))[:limit]  # positions ascend as rowids do
            return [(int(self._rowids[positions[i]]), float(values[i])) for i in order]

    def _admitted_rows(self, key: Hashable, read: Callable[[], list[int]]) -> np.ndarray:
        """Which dense rows a filter admits (a mask), kept for this state of the file (a few filters)."""

        def mask() -> np.ndarray:
            found = np.zeros(len(self._rowids), dtype=bool)
            found[self._positions(read())] = True
            return found

        return _kept(self._admitted, key, mask, 4)


def _state(conn: apsw.Connection) -> tuple[int, int]:
    """The state of the file as this connection sees it: another connection's commits (``data_version``) and this
    one's own writes (``total_changes``). Read in a read transaction, it is the state of that snapshot."""
    return data_version(conn), conn.total_changes()


def _kept(cache: OrderedDict, key: Hashable, make: Callable[[], np.ndarray], most: int) -> np.ndarray:
    """``cache[key]``, made by ``make()`` the first time; the ``most`` used last are kept."""
    found = cache.get(key)
    if found is None:
        found = cache[key] = make()
        while len(cache) > most:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return found
