"""ZEKE memory files (FORMATS.md §C): read-only reader.

ZEKE (a Python assistant) keeps one table, ``memories(id, text, scope, tags, created_at, last_accessed_at,
ttl_seconds, embedding)``, with ``memories_fts`` (FTS5 over ``id, text, scope, tags``, external content, kept by
triggers). There are no conversations and no schedules.

Mapping
=======
* Memories are *notes* (``notes_label`` "Memories"); a notes group is a *scope* (``group_label`` "Scope"): the
  groups are the distinct scopes, sorted. ``Note.note_id`` is the memory id, ``user`` its scope, ``content`` its
  text, ``tags`` the JSON list (NULL → ``[]``; unreadable JSON → ``[]`` and ``details["tags_error"]``),
  ``sequence`` its rowid. ``created_at`` is shown in RFC 3339 UTC (ZEKE writes naive UTC); ``updated_at`` is
  ``last_accessed_at`` or, when never accessed, ``created_at`` — ZEKE has no modification time, and an upsert
  resets ``last_accessed_at``, so the last access is the closest thing to "last touched". Notes are listed
  newest first by that ``updated_at`` (then rowid), as the store lists its own notes.
* ``details``: ``ttl_seconds``, ``expires_at`` (``created_at + ttl_seconds`` in RFC 3339, None without a TTL),
  ``expired`` (at the current UTC time), ``last_accessed_at`` (None: never), ``embedding_dims`` (blob length / 4,
  or ``"none"``).

Search (retriever ``zeke``, over a scope *prefix*)
=================================================
ZEKE's ``MemoryStore.search`` reproduced: the FTS leg matches each whitespace-separated word reduced to
letters, digits, ``-`` and ``_``, double-quoted, joined with `` OR `` (ZEKE's own words — so a word also
matches the ``id``, ``scope`` and ``tags`` columns), ``scope LIKE prefix || '%'``, ``ORDER BY bm25 LIMIT k*2``,
fts score ``1/(1+|bm25|)``. FTS5's bm25 is negative and *more* negative for a better match, so this makes a
better keyword match score **lower** — ZEKE's behaviour, kept and explained in every hit. The vector leg is
cosine between the query vector and every memory **of the scope prefix** that has an embedding (FORMATS says
"cosine over all rows with embeddings" within the search's "scope prefix filter"; ZEKE's ``_search_vector``
filters by the same ``scope LIKE``), best ``k*2``. Per memory ``0.4 × fts + 0.6 × cosine`` summed (a leg that
did not return it adds 0), ``match_type`` fts | vector | hybrid, sorted by score (stable: FTS order, then
vector order, for ties), top ``k``.

Exactness notes: the LIKE prefix is escaped (``%``, ``_`` and ``\\`` are literal here; ZEKE would treat ``%``
and ``_`` as wildcards — identical for every normal scope), and LIKE stays ASCII case-insensitive as in ZEKE.
A memory whose vector has other dimensions than the query gets cosine 0.0 (ZEKE's ``cosine_similarity``
returns 0.0 for different lengths) and is listed in ``vector_errors``. A row ZEKE cannot load (tags that are
not a JSON list of strings, an unparsable time, a blob whose length is no multiple of 4) makes ZEKE's whole
leg fail (the FTS leg returns nothing, the vector leg is dropped); that is reproduced and said in ``steps``.
ZEKE's search then sets ``last_accessed_at`` of what it returned; oxmem never does.

The model of the vectors is guessed from their dimensions: 1536 → OpenAI ``text-embedding-3-small`` (ZEKE's
default, which cannot be run here: the result is the FTS part only, as ZEKE does when embedding fails), 384 →
all-MiniLM-L6-v2 (oxmem's own semantic model, run when installed).

Eviction
========

ZEKE's ``evict_stale_and_lru``: previewed (nothing deleted) and, once editing is enabled and the user confirms the
list, done as ZEKE does it: :mod:`.zeke_eviction`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import apsw
import numpy as np

from ..embeddings import endpoint
from ..embeddings.example import Example
from ..embeddings.model_files import MODEL_NAME
from ..errors import InvalidInputError, NotFoundError
from ..retrieval.hybrid import Hit, LegStats, QueryResult
from ..retrieval.scope import AllSessions, Scope, shown_scope
from ..schedules.cadence import parse_time
from ..store.notes import Note
from . import zeke_edits
from .base import Capabilities, EvictionPreview, ForeignReader, Retriever, hit, ranking, skipped_legs
from .info import EmbeddingInfo
from .times import rfc3339, shown_time
from .zeke_eviction import (
    _COLUMNS,
    DEFAULT_CAPS,
    GLOBAL_CAP,
    _check_cap,
    _expires,
    _utc,
    apply_evictions,
    cap_prefix,
    evictions,
    like_prefix,
    prefix_matches,
)

#: ZEKE's default embedding model (1536 dimensions); it runs only behind OpenAI's API
OPENAI_MODEL = "text-embedding-3-small"
FTS_WEIGHT = 0.4
VECTOR_WEIGHT = 0.6


def guess_model(dims: int) -> str:
    """The model that makes vectors of ``dims`` dimensions in ZEKE."""
    if dims == 1536:
        return OPENAI_MODEL
    if dims == 384:
        return MODEL_NAME
    return f"unknown model ({dims} dimensions)"


def fts_words(query: str) -> list[str]:
    """The words ZEKE quotes: each whitespace-separated word reduced to alphanumerics, ``-`` and ``_``, empty ones
    dropped."""
    words = ["".join(c for c in word if c.isalnum() or c in "-_") for word in query.split()]
    return [w for w in words if w]


def fts_query(query: str) -> str | None:
    """ZEKE's MATCH string: :func:`fts_words`, each double-quoted, joined with `` OR `` (None: no words, the FTS
    leg returns nothing)."""
    quoted = [f'"{w}"' for w in fts_words(query)]
    return " OR ".join(quoted) if quoted else None


_KEYWORD_ROW = "SELECT m.rowid, m.id, m.text, m.scope, m.tags, m.created_at, m.last_accessed_at, m.embedding"
#: ZEKE's keyword query (the memories of a scope prefix matching any word, best ``k × 2`` by bm25)
_KEYWORD_SQL = (
    _KEYWORD_ROW + ", bm25(memories_fts) AS rank FROM memories m JOIN memories_fts ON m.id = memories_fts.id "
    "WHERE memories_fts MATCH ? AND m.scope LIKE ? ESCAPE '\\' ORDER BY rank LIMIT ?"
)
#: the memories its join and filter admit (the index's rowid is the memory's: ZEKE's triggers), and their rows
_KEYWORD_ADMITTED = "SELECT rowid FROM memories WHERE scope LIKE ? ESCAPE '\\'"
_KEYWORD_ROWS = _KEYWORD_ROW + " FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(:rowids))"


def parse_tags(raw: object) -> tuple[list[str], str | None]:
    """The tags of a row and, when its JSON cannot be read, why (the tags are then ``[]``)."""
    if raw is None or raw == "":
        return [], None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return [], f"unreadable tags JSON ({exc}): {str(raw)[:80]}"
    if not isinstance(value, list):
        return [], f"tags are not a JSON list: {str(raw)[:80]}"
    return [str(t) for t in value], None


def _unloadable(tags: object, created_at: object, accessed: object, embedding: object) -> str | None:
    """Why ZEKE's ``_row_to_item`` raises on this row (None: it loads). Such a row makes its whole leg fail."""
    if tags:
        try:
            value = json.loads(tags)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return "its tags are not JSON"
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            return "its tags are not a JSON list of strings"
    for label, text in (("created_at", created_at), ("last_accessed_at", accessed)):
        if label == "last_accessed_at" and not text:
            continue
        try:
            datetime.fromisoformat(text)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return f"its {label} {text!r} is not an ISO time"
    if embedding is not None:
        if not isinstance(embedding, bytes):
            return "its embedding is not a BLOB"
        if len(embedding) % 4:
            return f"its embedding has {len(embedding)} bytes, not a whole number of float32 values"
    return None


@dataclass
class _ScopeVectors:
    """The embeddings of the memories of one scope prefix, read once per state of the file (``PRAGMA data_version``):
    ``rows`` (rowid, id, text, scope, tags, created, accessed) in rowid order, for memories with a non-empty
    embedding; their vectors as stored (float32) in matrices by length (``by_size``: positions in ``rows``, matrix,
    norms); the ids with an empty one; and the first memory ZEKE could not load, which fails its whole vector
    search. (float32 halves the memory a float64 copy would take: 1.2 GB for 200,000 memories of 1,536 values; the
    best are then scored again in float64 as ZEKE scores them, see :data:`_REFINE_MARGIN`.)"""

    rows: list[tuple] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    by_size: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    unloadable: tuple[str, str] | None = None


#: the order of memories listed: newest by last access, else creation, as stored (ZEKE writes naive UTC ISO text,
#: which orders as its time); the rowid breaks ties. In SQL, so a page reads no more than it shows.
_NEWEST = "coalesce(last_accessed_at, created_at)"
#: how much of a ZEKE file is read through a memory map: listing a scope or matching its keywords reads a page per
#: memory (each row holds a 6 KB embedding), and through SQLite's page cache that costs 0.25 s at 200,000
#: memories against 35 ms mapped
_MMAP_BYTES = 1 << 32

#: how far below the k-th best float32 cosine a memory is still scored again in float64: far more than float32's
#: error on a cosine of vectors of a few thousand values (at most about 1e-4, in practice 1e-6), so the best k×2
#: and their order are exactly those of ZEKE's float64 scores
_REFINE_MARGIN = 1e-3


def _read_scope_vectors(conn: apsw.Connection, pattern: str) -> _ScopeVectors:
    found = _ScopeVectors()
    blobs: dict[int, list[tuple[int, bytes]]] = {}
    for rowid, mid, text, mscope, tags, created, accessed, _ttl, blob in conn.execute(
        f"SELECT {_COLUMNS}, embedding FROM memories WHERE scope LIKE ? ESCAPE '\\' AND embedding IS NOT NULL "
        "ORDER BY rowid",
        (pattern,),
    ):
        why = _unloadable(tags, created, accessed, blob)
        if why is not None and found.unloadable is None:
            found.unloadable = (mid, why)
        if not blob:  # ZEKE: an empty vector is skipped
            found.empty.append(mid)
            continue
        blobs.setdefault(len(blob) // 4, []).append((len(found.rows), bytes(blob)))
        found.rows.append((rowid, mid, text, mscope, tags, created, accessed))
    for size, items in blobs.items():
        matrix = np.frombuffer(b"".join(b for _, b in items), dtype="<f4").reshape(len(items), size)
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
        found.by_size[size] = (np.array([i for i, _ in items], dtype=np.int64), matrix, norms)
    return found


class ZekeReader(ForeignReader):
    FORMAT = "zeke"
    LABEL = "ZEKE memory"
    REASON = "oxmem edits only ZEKE's memories (text and tags): ZEKE keeps no sessions, schedules or summaries"
    EDITS = frozenset({"notes"})

    def _now(self) -> datetime:
        """The current UTC time (``expired`` in a memory's details; replaceable in tests)."""
        return datetime.now(timezone.utc)

    _mapped = False

    def _scope_vectors(self, conn: apsw.Connection, pattern: str) -> _ScopeVectors:
        """:class:`_ScopeVectors` of ``pattern``, read again only after the file changed (one scope kept: the one
        being searched)."""
        return self._per_state(conn, "scope vectors", pattern, lambda: _read_scope_vectors(conn, pattern))

    def _common_size(self, conn: apsw.Connection) -> int | None:
        """The length in values of most stored embeddings (the longer on a tie), None when none has one."""

        def read() -> int | None:
            sizes = conn.execute(
                "SELECT length(embedding) AS n, count(*) FROM memories WHERE embedding IS NOT NULL "
                "AND length(embedding) % 4 = 0 AND length(embedding) > 0 GROUP BY n ORDER BY 2 DESC, 1 DESC LIMIT 1"
            ).fetchall()
            return sizes[0][0] // 4 if sizes else None

        return self._per_state(conn, "common size", None, read)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_sessions=False,
            has_notes=True,
            has_schedules=False,
            has_search=True,
            has_eviction=True,
            notes_label="Memories",
            note_noun="memory",
            note_fields=("scope", "ttl"),
            group_label="Scope",
            refusals=self.refusals(),
        )

    # -- info -----------------------------------------------------------------------------------------

    def _markers(self, conn: apsw.Connection) -> list[str]:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master").fetchall()}
        mode = str(conn.execute("PRAGMA journal_mode").fetchall()[0][0])
        out = ["no migration table (ZEKE keeps none)", f"journal mode {mode}"]
        if "memories_fts" not in names:
            out.append("no memories_fts: ZEKE's keyword search finds nothing")
        elif not {"memories_ai", "memories_ad", "memories_au"} <= names:
            out.append("memories_fts without all three triggers: the index may lag the table")
        scopes = conn.execute("SELECT scope, count(*) FROM memories GROUP BY scope").fetchall()
        other = 0
        counts = dict.fromkeys(DEFAULT_CAPS, 0)
        for scope, n in scopes:
            prefix = next((p for p in DEFAULT_CAPS if prefix_matches(scope, p)), None)
            if prefix is None:
                other += n
            else:
                counts[prefix] += n
        out += [f"{p} {n:,} rows" for p, n in counts.items()]
        out.append(f"other scopes: {other:,} rows")
        return out

    def _embeddings(self, conn: apsw.Connection) -> list[EmbeddingInfo]:
        out = []
        rows = conn.execute(
            "SELECT length(embedding), count(*) FROM memories WHERE embedding IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1"
        ).fetchall()
        for size, n in rows:
            dims = size // 4
            model = guess_model(dims) if size % 4 == 0 else f"unreadable ({size} bytes: not float32 values)"
            out.append(EmbeddingInfo("memories", model, dims, dims, n))
        (missing,) = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchall()[0]
        if missing:
            out.append(EmbeddingInfo("memories", "none (NULL: embedding failed when stored)", 0, 0, missing, "NULL"))
        return out

    # -- notes ----------------------------------------------------------------------------------------

    def _groups(self, conn: apsw.Connection) -> list[str]:
        return [r[0] for r in conn.execute("SELECT DISTINCT scope FROM memories WHERE scope IS NOT NULL ORDER BY 1")]

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        return self._note_rows(conn, "scope = ?", (group,))

    def _tag_lists(self, conn: apsw.Connection, group: str) -> list[tuple[list[str], int]]:
        found = conn.execute("SELECT tags, count(*) FROM memories WHERE scope = ? GROUP BY tags", (group,))
        return [(parse_tags(tags)[0], times) for tags, times in found]

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterator[Note]:
        """A page of the scope's memories in SQL (see :data:`_NEWEST`): past the memory of rowid ``after[1]``
        where it still is (its time as stored), else past ``after``'s time."""
        if after is None:
            return self._iter_note_rows(conn, "scope = ?", (group,), limit)
        found = conn.execute(f"SELECT {_NEWEST} FROM memories WHERE rowid = ?", (after[1],)).fetchone()
        key = found[0] if found else after[0].removesuffix("+00:00")
        where = f"scope = ? AND ({_NEWEST} < ? OR ({_NEWEST} = ? AND rowid < ?))"
        return self._iter_note_rows(conn, where, (group, key, key, after[1]), limit)

    def _map(self, conn: apsw.Connection) -> None:
        """Read the file through a memory map (:data:`_MMAP_BYTES`) from now on."""
        if not self._mapped:
            conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
            self._mapped = True

    def _note_rows(self, conn: apsw.Connection, where: str, args: tuple, limit: int = -1) -> list[Note]:
        """The memories ``where`` selects as notes, newest first (:data:`_NEWEST`)."""
        return list(self._iter_note_rows(conn, where, args, limit))

    def _iter_note_rows(self, conn: apsw.Connection, where: str, args: tuple, limit: int = -1) -> Iterator[Note]:
        """:meth:`_note_rows`, each made as the cursor reads it."""
        self._map(conn)
        now = _utc(self._now())
        for rowid, mid, text, scope, tags, created, accessed, ttl, size in conn.execute(
            f"SELECT {_COLUMNS}, CASE WHEN typeof(embedding) = 'blob' THEN length(embedding) END FROM memories "
            f"WHERE {where} ORDER BY {_NEWEST} DESC, rowid DESC LIMIT ?",
            (*args, limit),
        ):
            tag_list, tag_error = parse_tags(tags)
            expires = _expires(created, ttl)
            details: dict[str, Any] = {
                "ttl_seconds": ttl,
                "expires_at": rfc3339(expires) if expires else None,
                "expired": bool(expires and now > expires),
                "last_accessed_at": shown_time(accessed) if accessed else None,
                "embedding_dims": size // 4 if size is not None else "none",
            }
            if tag_error:
                details["tags_error"] = tag_error
            shown = (shown_time(created), shown_time(accessed or created))
            yield Note(str(mid), scope, "" if text is None else str(text), tag_list, *shown, rowid, details)

    # -- editing memories (:mod:`.zeke_edits`) --------------------------------------------------------

    def _note_of(self, conn: apsw.Connection, scope: str, memory_id: str) -> Note | None:
        return next(iter(self._note_rows(conn, "scope = ? AND id = ?", (scope, memory_id))), None)

    def query_text(self, query: str) -> str:
        """ZEKE embeds the query as typed (``provider.embed(query)``, ``memory_store.py`` line 234)."""
        return query

    def _embedder(self, conn: apsw.Connection) -> zeke_edits.Embed:
        """How a memory's text becomes its vector in this file, as ZEKE's provider makes it (the text as typed):
        all-MiniLM-L6-v2 for a file of 384-dimension vectors; OpenAI's model through the embeddings endpoint the
        user named (the text is sent, never kept); otherwise nothing (NULL, as ZEKE stores when its provider
        cannot embed — said beforehand by :meth:`vector_notice`)."""
        model = self._file_model(conn)
        if model == MODEL_NAME:
            return lambda text: self.query_vector(MODEL_NAME, text, {})[0]
        configured = endpoint.configured()
        if model == OPENAI_MODEL and configured is not None:
            remote = endpoint.ApiEmbedding(configured, model, dimensions=self._common_size(conn) or 0)
            return lambda text: remote.embed([text])[0]
        return lambda text: None

    def _file_model(self, conn: apsw.Connection) -> str | None:
        """The model of most of the file's vectors (by their size), None when there are none."""
        sizes = [r[0] for r in conn.execute(
            "SELECT length(embedding) FROM memories WHERE embedding IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC"
        )]  # fmt: skip
        return guess_model(sizes[0] // 4) if sizes else None

    def edit_effects(self, note: Note | None, /) -> list[str]:
        """Saving a memory clears its last use (ZEKE's upsert sets ``last_accessed_at`` to None): its LRU age is
        then counted from its creation, so the clean-up reaches it sooner — said when it had one."""
        accessed = note.details.get("last_accessed_at") if note is not None and note.details else None
        if not accessed:
            return []
        return ["saving clears its last use, as ZEKE's upsert does: its clean-up then counts its age from its creation"]

    async def vector_notice(self) -> str | None:
        """What an edit will leave the agent's vector search without, said before saving: None when an edit
        re-embeds the memory as ZEKE would (or the file keeps no vectors)."""
        model = await self._db.read(self._file_model)
        if model is None or model == MODEL_NAME or (model == OPENAI_MODEL and endpoint.configured() is not None):
            return None
        how = (
            " (an embeddings endpoint can: Edit ▸ Embeddings Endpoint…, --embeddings-url)"
            if model == OPENAI_MODEL
            else ""
        )
        return (
            f"the memory is saved without a vector — oxmem cannot make {model} vectors here{how}: ZEKE's vector "
            "search will not find it, its keyword search will"
        )

    def _edit(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(conn, note_of, embed, …)`` on the connection's thread."""
        return self._db.run(lambda conn: fn(conn, self._note_of, self._embedder(conn), *args))

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note:
        self._writable("notes")
        return await self._edit(zeke_edits.save_memory, user, content, list(tags))

    async def update_note(
        self,
        user: str,
        note_id: str,
        content: str,
        tags: Sequence[str] = (),
        *,
        expected: Note | None = None,
        scope: str | None = None,
        ttl_seconds: Any = zeke_edits.KEEP_TTL,
    ) -> Note:
        """A memory's text and tags replaced; ``scope`` moves it to another scope, ``ttl_seconds`` (seconds, None
        for none) replaces its TTL — ZEKE's ``remember`` with those (:func:`.zeke_edits.update_memory`)."""
        self._writable("notes")
        return await self._edit(
            zeke_edits.update_memory, user, note_id, content, list(tags), expected, scope, ttl_seconds
        )

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None:
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def delete_notes(self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None) -> int:
        self._writable("notes")
        return await self._db.run(zeke_edits.delete_memories, self._note_of, user, list(note_ids), expected)

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]:
        self._writable("notes")
        return await self._edit(zeke_edits.restore_memories, list(items), dict(expected) if expected else None)

    # -- search ---------------------------------------------------------------------------------------

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        """Why ZEKE's recall does not return memory ``target`` at any depth: another scope, or neither leg."""
        found = conn.execute("SELECT scope, embedding IS NULL FROM memories WHERE id = ?", (target,)).fetchall()
        if not found:
            raise NotFoundError(f"no memory {target!r} in this file")
        their_scope, no_vector = found[0]
        if not prefix_matches(their_scope, scope):
            return f"it is in scope {their_scope!r}, which does not start with {scope!r}"
        if no_vector:
            return "its FTS leg does not match the query, and it has no embedding for the vector leg"
        return f"its FTS leg does not match the query{skipped_legs(every)}"

    def retrievers(self) -> list[Retriever]:
        return [
            Retriever(
                "zeke",
                "ZEKE's hybrid recall",
                "notes",
                False,
                "ZEKE's MemoryStore.search over memories whose scope starts with the given prefix: "
                "0.4 × 1/(1+|bm25|) + 0.6 × cosine, summed per memory; best k",
                every=True,
            )
        ]

    @ranking("zeke")
    def _rank_zeke(self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any) -> QueryResult:
        """ZEKE's search over the memories whose scope starts with ``scope``; all of them for
        :class:`~..retrieval.scope.AllSessions` (its prefix, ``""`` for every scope: what ZEKE does for ``""``)."""
        shown = shown_scope(scope)
        scope = scope.prefix if isinstance(scope, AllSessions) else scope
        self._map(conn)
        pattern = like_prefix(scope)
        limit = top_k * 2
        expression = fts_query(query)
        result = QueryResult(
            query, shown, top_k, VECTOR_WEIGHT, FTS_WEIGHT, "terms", [], "any", expression, {}, [], retriever="zeke"
        )
        steps = result.steps
        steps.append(
            f"scope: memories whose scope starts with {scope!r} (scope LIKE {pattern!r} ESCAPE '\\': ASCII letters "
            "case-insensitive as in ZEKE; '%' and '_' of the prefix taken literally)"
        )
        rows: dict[str, tuple] = {}  # id -> (rowid, text, scope, tags, created, accessed)

        # -- FTS leg
        fts: list[tuple[str, float, float]] = []  # (id, bm25, 1/(1+|bm25|)) in ZEKE's order
        if expression is None:
            steps.append("FTS: no word of the query has a letter or digit left: the keyword part is empty")
        else:
            steps.append(
                f"FTS: each word reduced to letters, digits, '-' and '_', quoted, joined with OR: {expression} — "
                "matched against memories_fts's columns id, text, scope and tags; best "
                f"k×2 = {limit} by bm25 ascending"
            )
            try:
                found = self._keyword_rows(conn, query, expression, pattern, limit)
            except apsw.Error as exc:
                found = []
                steps.append(f"FTS failed ({exc}); ZEKE returns no keyword matches then")
            broken = next(
                ((r[1], why) for r in found if (why := _unloadable(r[4], r[5], r[6], r[7])) is not None), None
            )
            if broken is not None:
                steps.append(
                    f"FTS: memory {broken[0]} cannot be loaded by ZEKE ({broken[1]}): its whole keyword search fails "
                    "and returns nothing"
                )
                found = []
            for rowid, mid, text, mscope, tags, created, accessed, _blob, bm25 in found:
                rows[mid] = (rowid, text, mscope, tags, created, accessed)
                fts.append((mid, bm25, 1.0 / (1.0 + abs(bm25))))
            steps.append(
                "fts score = 1/(1+|bm25|): FTS5's bm25 is negative, more negative for a better match, so a better "
                "keyword match has a larger |bm25| and gets a LOWER fts score in ZEKE (reproduced as ZEKE does it)"
            )
        if fts:
            raws = [b for _, b, _ in fts]
            result.legs["fts"] = LegStats(len(fts), min(raws), max(raws))
        else:
            result.legs["fts"] = LegStats()

        # -- vector leg
        vec = self._vector_leg(conn, pattern, query, limit, options, result, rows)
        if vec:
            raws = [c for _, c in vec]
            result.legs["vector"] = LegStats(len(vec), min(raws), max(raws))
        else:
            result.legs["vector"] = LegStats()

        # -- combined, as ZEKE sums it
        scores: dict[str, float] = {}
        kinds: dict[str, str] = {}
        fts_of = {mid: (bm25, s, i) for i, (mid, bm25, s) in enumerate(fts, 1)}
        vec_of = {mid: (c, i) for i, (mid, c) in enumerate(vec, 1)}
        for mid, _bm25, s in fts:
            if mid not in scores:
                scores[mid], kinds[mid] = 0, "fts"
            scores[mid] += s * FTS_WEIGHT
        for mid, c in vec:
            if mid not in scores:
                scores[mid], kinds[mid] = 0, "vector"
            else:
                kinds[mid] = "hybrid"
            scores[mid] += c * VECTOR_WEIGHT
        ordered = sorted(scores, key=lambda m: scores[m], reverse=True)
        steps.append(
            "combined per memory: 0.4 × fts score + 0.6 × cosine, summed (a leg that did not return it adds 0); "
            f"match_type fts, vector or hybrid; sorted by the sum, highest first; the best k = {top_k} returned"
        )
        steps.append(
            "ZEKE's own search then sets last_accessed_at of the memories it returns to now (moving them back in its "
            "LRU eviction order); oxmem's searches never write: last_accessed_at is unchanged"
        )
        model = result.models[0] if result.models else None
        n_fts, n_vec = len(fts), len(vec)
        for rank, mid in enumerate(ordered, 1):
            rowid, text, mscope, tags, created, accessed = rows[mid]
            notes: list[str] = []
            fts_leg: tuple[float, float | None, int | None] = (0.0, None, None)
            vec_leg: tuple[float, float | None, int | None] = (0.0, None, None)
            if mid in fts_of:
                bm25, s, i = fts_of[mid]
                fts_leg = (s, bm25, i)
                notes.append(
                    f"FTS rank {i} of {n_fts}: bm25 {bm25:.6g} → 1/(1+|bm25|) = {s:.6g}, × 0.4 = {s * FTS_WEIGHT:.6g} "
                    "(a better keyword match has a more negative bm25, so a lower fts score in ZEKE)"
                )
            else:
                notes.append("FTS: not among the keyword matches (adds 0)")
            if mid in vec_of:
                c, i = vec_of[mid]
                vec_leg = (c, c, i)
                notes.append(f"vector rank {i} of {n_vec}: cosine {c:.6g}, × 0.6 = {c * VECTOR_WEIGHT:.6g}")
            elif result.models:
                notes.append("vector: not among the nearest (adds 0)")
            notes.append(f"match_type {kinds[mid]}: score {scores[mid]:.6g}")
            tag_list, _ = parse_tags(tags)
            metadata = {
                "scope": mscope,
                "tags": tag_list,
                "created_at": shown_time(created),
                "updated_at": shown_time(accessed or created),
                "match_type": kinds[mid],
            }
            entry: Hit = hit(
                rank,
                mid,
                mscope,
                "" if text is None else str(text),
                scores[mid],
                vector=vec_leg,
                fts=fts_leg,
                metadata=metadata,
                model=model if mid in vec_of else None,
                notes=notes,
            )
            result.pool.append(entry)
        result.hits = result.pool[:top_k]
        return result

    def _keyword_rows(self, conn: apsw.Connection, query: str, expression: str, pattern: str, limit: int) -> list:
        """ZEKE's keyword query's rows (``_KEYWORD_SQL``) — from cached postings when every word is one token (the
        same rows, bm25 values and order, ties included: :meth:`.TableBm25.best`), else by running it. FTS5
        computing bm25 for every memory holding a common word is most of that query's time."""
        best = self._bm25_best(
            conn, "memories_fts", fts_words(query), limit, (_KEYWORD_ADMITTED, (pattern,)), _KEYWORD_ROWS
        )
        if best is not None:
            return best
        return conn.execute(_KEYWORD_SQL, (expression, pattern, limit)).fetchall()

    def _vector_leg(
        self,
        conn: apsw.Connection,
        pattern: str,
        query: str,
        limit: int,
        options: Mapping[str, Any],
        result: QueryResult,
        rows: dict[str, tuple],
    ) -> list[tuple[str, float]]:
        """ZEKE's ``_search_vector``: cosine with every memory of the scope prefix that has an embedding, best
        ``limit`` (stable sort over rowid order). Empty when the query cannot be embedded."""
        steps = result.steps
        given = options.get("query_embedding")
        if given is not None:
            dims = int(np.asarray(given).size)
        else:
            common = self._common_size(conn)
            if common is None:
                steps.append("vector: no memory has an embedding: the vector part is empty")
                return []
            dims = common
        model = str(options.get("query_embedding_model") or guess_model(dims))
        vector, why = self.query_vector(model, query, options, dims)
        if vector is None:
            result.skipped_models[model] = why or "the query could not be embedded"
            steps.append(
                f"vector: {why or 'the query could not be embedded'} — as ZEKE does when embedding fails, the result "
                "is the keyword part only"
            )
            return []
        q = np.asarray(given if given is not None else vector, dtype=np.float64).ravel()
        result.models.append(model)
        scope = self._scope_vectors(conn, pattern)
        if scope.unloadable is not None:
            mid, why = scope.unloadable
            result.vector_errors.append((mid, f"ZEKE cannot load this memory: {why}"))
            steps.append(
                f"vector: memory {mid} cannot be loaded by ZEKE ({why}): its vector search fails and is left out "
                "(the result is the keyword part only)"
            )
            return []
        result.vector_errors.extend((mid, "empty embedding: ZEKE skips it") for mid in scope.empty)
        qnorm = float(np.sqrt(np.dot(q, q)))
        approx = np.zeros(len(scope.rows), dtype=np.float64)  # float32 products; a length other than q's: 0.0
        for size, (at, matrix, norms) in scope.by_size.items():
            if size != q.size:
                why = f"{size} dimensions, the query has {q.size}: ZEKE's cosine_similarity gives 0.0"
                result.vector_errors.extend((scope.rows[i][1], why) for i in at.tolist())
            elif qnorm != 0:
                dots = (matrix @ q.astype(np.float32)).astype(np.float64)
                approx[at] = np.divide(dots, norms * qnorm, out=np.zeros_like(dots), where=norms != 0)
        near = np.arange(len(approx))
        if len(approx) > limit:
            cutoff = np.partition(approx, len(approx) - limit)[len(approx) - limit]
            near = np.flatnonzero(approx >= cutoff - _REFINE_MARGIN)
        exact = {}  # position → ZEKE's cosine: float64, with the vector's own norm
        for size, (at, matrix, _) in scope.by_size.items():
            ks = np.searchsorted(at, near)
            mine = (ks < len(at)) & (at[np.minimum(ks, len(at) - 1)] == near)
            for i, k in zip(near[mine].tolist(), ks[mine].tolist(), strict=True):
                v = matrix[k].astype(np.float64)
                vnorm = float(np.sqrt(np.dot(v, v)))
                same = size == q.size and qnorm != 0 and vnorm != 0
                exact[i] = float(np.dot(q, v)) / (qnorm * vnorm) if same else 0.0
        order = sorted(exact, key=lambda i: (-exact[i], i))[:limit]  # ZEKE's stable sort over rowid order
        steps.append(
            f"vector: the query embedded by {model} ({q.size} dimensions); cosine with each of the {len(scope.rows)} "
            f"memories of the scope that have an embedding; best k×2 = {limit} by cosine"
        )
        top = []
        for i in order:
            row = scope.rows[i]
            top.append((row[1], exact[i]))
            rows.setdefault(row[1], (row[0], *row[2:]))
        return top

    # -- eviction -------------------------------------------------------------------------------------

    async def example(self, item_id: str) -> Example:
        """A memory's stored embedding (its model told by its size, as ZEKE's own are), to search by example:
        exact and offline even for OpenAI's vectors."""

        def read(conn: apsw.Connection) -> Example:
            rows = conn.execute("SELECT embedding, text FROM memories WHERE id = ?", (item_id,)).fetchall()
            if not rows:
                raise NotFoundError(f"no memory {item_id!r}")
            blob, text = rows[0]
            if not isinstance(blob, bytes) or not blob or len(blob) % 4:
                raise InvalidInputError(f"memory {item_id} has no embedding to search by (ZEKE stored none)")
            vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            return Example(item_id, guess_model(vector.size), vector, str(text or ""))

        return await self._db.read(read)

    async def eviction_preview(
        self,
        now: datetime | None = None,
        *,
        scope_caps: Mapping[str, int | None] | None = None,
        global_cap: int | None = GLOBAL_CAP,
        default_ttls: Mapping[str, int] | None = None,
        **limits: Any,
    ) -> EvictionPreview:
        """Exactly what ZEKE's ``evict_stale_and_lru`` would delete at ``now`` (default: the current UTC time; a
        naive time is UTC). Nothing is deleted.

        ``scope_caps`` changes caps by name (``{"task": 2}``; ``persona`` → ``persona:``, ``notes`` stays ``notes``
        as ZEKE spells it; None removes a cap); ``global_cap`` None removes the global cap. ``default_ttls``
        (``{"task": seconds}``) gives NULL-TTL rows of those prefixes a TTL — ZEKE itself does not (it applies
        defaults when storing), so this is a what-if, off by default."""
        if limits:
            raise InvalidInputError(f"unknown eviction options: {', '.join(sorted(limits))}")
        caps, global_cap = _limits(scope_caps, global_cap)
        ttls = {
            cap_prefix(name): _check_cap(ttl, f"default TTL of {name!r}") for name, ttl in (default_ttls or {}).items()
        }
        return await self._db.read(evictions, _utc(now), caps, global_cap, ttls)

    async def apply_eviction(
        self,
        confirmed: Sequence[str],
        now: datetime | str,
        *,
        scope_caps: Mapping[str, int | None] | None = None,
        global_cap: int | None = GLOBAL_CAP,
        **limits: Any,
    ) -> list[Note]:
        """Delete what :meth:`eviction_preview` listed at ``now`` (its ``now``, as shown, is accepted), provided
        that is still exactly the ``confirmed`` memory ids; returns the deleted memories (undo writes them back
        with :meth:`restore_notes`). ZEKE's own deletion, in one transaction (:func:`.zeke_eviction.apply_evictions`);
        a changed list is :class:`ConflictError` and deletes nothing. A time after the present is refused: that
        would delete what ZEKE itself would not delete yet."""
        if limits:
            raise InvalidInputError(f"unknown eviction options: {', '.join(sorted(limits))}")
        self._writable("notes")
        at = _utc(parse_time(now) if isinstance(now, str) else now)
        if at > datetime.now(timezone.utc) + timedelta(seconds=5):
            raise InvalidInputError(f"{rfc3339(at)} is in the future: only what ZEKE would delete now can be deleted")
        caps, global_cap = _limits(scope_caps, global_cap)
        return await self._db.run(apply_evictions, self._memories, at, caps, global_cap, list(confirmed))

    def _memories(self, conn: apsw.Connection, ids: Sequence[str]) -> list[Note]:
        """The memories of these ids as notes, in the order given."""
        rows = self._note_rows(conn, "id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))
        found = {n.note_id: n for n in rows}
        return [found[i] for i in ids if i in found]


def _limits(
    scope_caps: Mapping[str, int | None] | None, global_cap: int | None
) -> tuple[dict[str, int | None], int | None]:
    """ZEKE's caps with the given changes (checked), and the global cap (checked)."""
    caps: dict[str, int | None] = dict(DEFAULT_CAPS)
    for name, cap in (scope_caps or {}).items():
        caps[cap_prefix(name)] = _check_cap(cap, f"cap of {name!r}")
    return caps, _check_cap(global_cap, "global_cap")


__all__ = ["OPENAI_MODEL", "ZekeReader", "fts_query", "guess_model"]
