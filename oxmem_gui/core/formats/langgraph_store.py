"""LangGraph's ``SqliteStore`` (``langgraph-checkpoint-sqlite`` 3.1.2, ``langgraph/store/sqlite/base.py``): read-only.

What LangGraph writes
=====================
``setup()`` (``SqliteStore.setup``, lines 1062–1129) creates ``store_migrations`` and runs ``MIGRATIONS`` (lines
42–73): ``store(prefix, key, value, created_at, updated_at, PRIMARY KEY (prefix, key))``, an index on ``prefix``,
then the columns ``expires_at`` and ``ttl_minutes`` and a partial index on ``expires_at``. With an index
configuration it also creates ``vector_migrations`` and ``store_vectors(prefix, key, field_name, embedding BLOB,
created_at, updated_at, PRIMARY KEY (prefix, key, field_name), FOREIGN KEY (prefix, key) REFERENCES store …
ON DELETE CASCADE)`` (``VECTOR_MIGRATIONS``, lines 75–88). The table names are fixed in its SQL; the file is found
by the columns of ``store`` (:func:`.detect.langgraph_store_tables`), never by the file's name.

* ``prefix`` is the item's namespace, its labels joined with ``.`` (``_namespace_to_text``, line 163; a label may
  not hold a ``.``). ``value`` is ``orjson.dumps`` of the item's dict, bound as bytes (line 392) — a BLOB holding
  JSON text, although the column says ``text``.
* ``put`` is ``INSERT OR REPLACE`` (lines 421–425) with ``CURRENT_TIMESTAMP`` for **both** ``created_at`` and
  ``updated_at`` (line 387): every put makes a new row, so ``created_at`` is the time of the latest put, not of the
  first. Times are SQLite's ``YYYY-MM-DD HH:MM:SS`` (UTC, whole seconds); ``expires_at`` is ``now + ttl`` from
  Python (``2026-01-02 03:04:05.678901+00:00``), or SQLite's form after a TTL refresh (lines 318–336).
* Vectors (lines 397–433, 1335–1366): for each text path of the index configuration (``index["text_fields"]``,
  default ``["$"]``: the whole value as ``json.dumps(…, sort_keys=True)``; or the ``index=[…]`` given to that put)
  each text found there is embedded (``embeddings.embed_documents``, line 1352) and written with ``INSERT OR
  REPLACE INTO store_vectors`` as ``sqlite_vec.serialize_float32`` (line 1360); ``field_name`` is the path, or
  ``path.i`` when the path gives several texts (line 415). ``put(…, index=False)`` writes no vector row.
* ``delete`` is ``DELETE FROM store`` alone (lines 361–371): foreign keys are off (nothing turns them on), so the
  ``ON DELETE CASCADE`` does nothing and the item's vector rows stay (``oxmem check`` counts them under *foreign
  keys*). Nor does a later put remove the vector rows of fields its new value no longer has (a shorter list, a
  missing field, ``index=False``): they keep their older ``updated_at`` and are still searched.
* **``index={"fields": …}`` is ignored**: ``SqliteStore`` reads ``text_fields`` (``_ensure_index_config``, line
  1495), while its own docstring (line 830) and ``IndexConfig`` name the key ``fields``. A store configured as
  documented embeds the whole value. The configuration is not in the file: oxmem shows the field names found in
  ``store_vectors``.

What oxmem shows
================
Items are notes (*Items*, one *item*; a notes group is a *Namespace*, as LangGraph writes it, with dots); the note
id is the key, its text the value as JSON on one line (key order as stored — a value is a dict of any shape, so no
field is singled out as "the" text; one line, so a list row or a search hit shows it, not its opening brace).
``created_at`` / ``updated_at`` are shown in RFC 3339 UTC,
the list newest first: ``updated_at`` as SQLite reads a time (:func:`.times.sql_place`: any of its forms, with a
zone or not, to the millisecond; a value that is no time last), then the newer row — LangGraph's own times, all
``YYYY-MM-DD HH:MM:SS``, order as its search without a query orders them. A page reads only its own items: the
namespace's order (each item's place and rowid, computed once per distinct ``updated_at``) is kept per state of the
file, a page after the last item shown starts at that item's place — or, deleted or put again since (a put replaces
the row), at its shown time — and only that page's rows and vector rows (by ``store_vectors``' primary key) are
read; the hazards' facts about the whole file (the dimensions most vectors have, whether there is any) are counted
once per state of the file. ``details``:
``namespace`` (its labels), ``expires_at``, ``ttl_minutes``, ``expired`` (at the reader's clock; LangGraph's reads
do not look at ``expires_at``: an expired item is returned until its sweeper deletes it), ``vectors`` (each field's
name, dimensions, time and whether it is stale) and ``problems``, the hazards:

* a value that is not JSON: LangGraph's ``get`` of it, and every ``search`` that returns it, raise (orjson);
* vector rows older than the item's value (``store_vectors.updated_at`` < ``store.updated_at``: the put that left
  them came a second or more later — one within the same second cannot be told apart): still searched, so the item
  can be found by text it no longer holds;
* no vector row while the file has vectors: LangGraph's vector search never returns it;
* a vector sqlite-vec cannot read, or of other dimensions than most: any search over its namespace raises.

``info`` adds the migrations applied, the items without a vector row and the vector rows of deleted items. No
sessions, schedules or tags. Edits (:mod:`.langgraph_store_edits`) write an item as ``put`` does, without its vector
rows: which fields LangGraph embeds, and with which model, live in the program's index configuration, not in the
file, so oxmem cannot rebuild them as LangGraph would. The rows are deleted, said before saving, so the item drops
out of the vector search until the program puts it again, rather than being found by text it no longer holds.

Search (retrievers ``langgraph``, ``langgraph-l2``, ``langgraph-inner-product``)
===========================================================================
``store.search(namespace_prefix, query=…, limit=k)`` with an index configuration (``_prepare_batch_search_queries``,
lines 438–606): every vector row joined with its item, of the namespace or below it (``s.prefix = ? OR s.prefix GLOB
'….*'``, lines 121–139, 524–538), LangGraph's filters (lines 459–503 and ``_get_filter_condition``, 940–1000,
ported as they are, a list compared with ``$eq`` bound as bytes and so matching nothing included), scored per vector
row by the configured ``distance_type`` (lines 508–520), ``ORDER BY score DESC LIMIT 2k`` — **rows, before one row
per item is kept** (``ROW_NUMBER() OVER (PARTITION BY prefix, key …) = 1``) —, then ``ORDER BY score DESC LIMIT k
OFFSET 0`` (lines 541–570): an item with several fields can take several of the 2k places, so fewer than k items
may come back. The distance type is in the program, not the file: one retriever each.

* ``cosine`` (the default, and any unknown name): ``1 − vec_distance_cosine``;
* ``l2``: ``vec_distance_L2`` itself — a distance, yet ordered DESC, so the **farthest** vectors come first.
  LangGraph 3.1.2 does this; oxmem reproduces it as it is and says so in every result;
* ``inner_product``: ``−vec_distance_L1`` — the negated Manhattan distance, not an inner product (as it is).

oxmem runs LangGraph's SQL on the file with one change: sqlite-vec's distance, which oxmem does not load, is a
function looking up distances computed beforehand with numpy in sqlite-vec's own arithmetic — its portable C loops:
float32 products summed one after another in float32 (cosine, L2) or float64 (L1), the square roots in float64, the
cosine and L2 distances rounded to float32. That is bit-exact with sqlite-vec 0.1.9 on x86-64; its NEON code on ARM
sums in another order (the last float32 bit may differ). The SQL runs on the rows LangGraph's query takes, chosen as
SQLite chooses them, ties included (below). A zero vector's cosine is NaN, which SQLite makes NULL: LangGraph's
score is then None (the hit's ``score`` 0.0, its metadata's ``score`` None). A vector sqlite-vec cannot read, or of
other dimensions than the query, makes LangGraph's search raise (at the first such row its query scores): reproduced
as a result with no hits that says why; so does an item among the results whose value is not JSON. The query is
embedded as typed (``embed_documents([query])``, line 1381, not ``embed_query``) by the model guessed from the
vectors' dimensions (64: oxmem's deterministic test model, 384: all-MiniLM-L6-v2, 1536/3072: OpenAI's
``text-embedding-3-small`` / ``-large``, through an embeddings endpoint) or named with the query's own vector. A hit
is the item's key (its namespace as the hit's session); *why not* a key finds it in the scope's first namespace
holding it. Called directly, a ranking also takes ``filter`` (LangGraph's filter dict) and ``offset`` (the search
options have no place for them). A file without ``store_vectors`` (a store set up without an index) gets LangGraph's
search without one: the query ignored, the newest items, no score (lines 571–592). oxmem's search never refreshes
TTLs (LangGraph's does, with ``refresh_ttl`` and ``ttl={"refresh_on_read": True}``).

How a query stays fast, ties included
-------------------------------------
LangGraph's query scores every vector row of the scope; oxmem keeps what does not depend on the query once per state
of the file and scope (:class:`_Scope`: the vectors as a float32 matrix, one row per dimension, with their norms; the
fields, the items left out and the stale rows the steps name), so a query is numpy's distances over that matrix and
LangGraph's SQL over the 2k rows it takes. Which rows those are, for equal scores too, is SQLite's: a query with
``ORDER BY … LIMIT`` sorts in a temporary index whose key ends with a sequence number (``pushOntoSorter``, select.c:
``bSeq`` when no ``SORTFLAG_UseSorter``, which a LIMIT rules out; a row that compares equal to the last one kept is
skipped), so rows of equal score stay in the order they were scored in — the order the query's join reads them. That
order is read once per scope, metric and state of the file, by running LangGraph's very query with a distance
function that notes the rows it is asked for (:meth:`LangGraphStoreReader._scan`). numpy then takes the best 2k rows
by (score, that order), NULL scores last, and LangGraph's query runs on them alone (``sv.rowid IN …``) with equal
scores ordered by that order (``search_sql(…, tie_order=True)``): its ``ROW_NUMBER()`` and final ``ORDER BY`` see
the same rows in the same order as over the whole scope, so the items, their order, their best field and the rows
taken are LangGraph's. The tests check this against LangGraph's own SQL run by sqlite-vec on its connection, on files
full of equal vectors and of zero vectors, for each metric. What it rests on, as the search did before: that SQLite
plans the query here (through apsw) as it does on LangGraph's connection — the same SQL on the same file; another
SQLite version, or statistics from ``ANALYZE``, could read the join in another order, and LangGraph itself would then
order ties otherwise. If the rows noted are not the scope's rows, LangGraph's query runs over every row as it is (its
rows taken then read by a query of their own, which SQLite may read in another order: for equal scores, the notes
naming an item's other rows taken could then differ from LangGraph's; its items and scores do not).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypeVar

import apsw
import numpy as np

from ..embeddings.backends import DETERMINISTIC_MODEL
from ..embeddings.model_files import MODEL_NAME
from ..errors import InvalidInputError, NotFoundError
from ..retrieval.hybrid import LegStats, QueryResult
from ..retrieval.scope import AllSessions, Scope, shown_scope
from ..store.notes import Note
from . import langgraph_store_edits
from .aidaemon_rows import json_or_reason
from .base import Capabilities, ForeignReader, Retriever, hit, ranking
from .detect import column_set
from .info import EmbeddingInfo
from .times import parse_when, shown_time, sql_place

T = TypeVar("T")

#: the metrics of ``index["distance_type"]`` (base.py 508–520), by retriever
METRICS = {"langgraph": "cosine", "langgraph-l2": "l2", "langgraph-inner-product": "inner_product"}
#: the SQL LangGraph scores a vector row with (:data:`LANGGRAPH_SCORE`), its distance looked up in what oxmem computed
SCORE_SQL = {
    "cosine": "1.0 - _oxmem_langgraph_distance(sv.rowid)",
    "l2": "_oxmem_langgraph_distance(sv.rowid)",
    "inner_product": "-1 * _oxmem_langgraph_distance(sv.rowid)",
}
#: LangGraph's own score expressions (base.py 510–520)
LANGGRAPH_SCORE = {
    "cosine": "1.0 - vec_distance_cosine(sv.embedding, ?)",
    "l2": "vec_distance_L2(sv.embedding, ?)",
    "inner_product": "-1 * vec_distance_L1(sv.embedding, ?)",
}
#: the models that make vectors of these dimensions where LangGraph is used
MODELS_BY_DIMS = {
    64: DETERMINISTIC_MODEL,
    384: MODEL_NAME,
    1536: "text-embedding-3-small",
    3072: "text-embedding-3-large",
}
_FILTER_KEY = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"


def guess_model(dims: int) -> str:
    return MODELS_BY_DIMS.get(dims, f"unknown model ({dims} dimensions)")


# -- reading sqlite-vec's vectors and distances -------------------------------------------------------------------


def read_vector(value: Any) -> tuple[np.ndarray | None, str | None]:
    """A stored embedding as sqlite-vec reads it (a float32 BLOB, or JSON text), or None and sqlite-vec's error."""
    if isinstance(value, bytes):
        if not value:
            return None, "zero-length vectors are not supported."
        if len(value) % 4:
            return None, f"invalid float32 vector BLOB length. Must be divisible by 4, found {len(value)}"
        return np.frombuffer(value, dtype="<f4"), None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
            vector = np.asarray(parsed, dtype=np.float32)
        except (ValueError, TypeError):
            return None, "the TEXT is not a JSON array of numbers"
        if vector.ndim != 1 or not vector.size:
            return None, "zero-length vectors are not supported."
        return vector, None
    kind = {type(None): "NULL", int: "INTEGER", float: "FLOAT"}.get(type(value), type(value).__name__)
    return None, f"Input must have type BLOB (compact format) or TEXT (JSON), found {kind}"


def columns_of(matrix: np.ndarray) -> np.ndarray:
    """Vectors (one a row) as :func:`distance_array` takes them: one row per dimension, each contiguous."""
    m = np.asarray(matrix, dtype=np.float32)
    return np.ascontiguousarray(m.reshape(len(m), -1).T)


def magnitudes(columns: np.ndarray) -> np.ndarray:
    """sqlite-vec's squared norm of each vector of ``columns`` (:func:`columns_of`): float32 squares summed one
    after another in float32, as float64 — what ``vec_distance_cosine`` divides by, the same for every query."""
    with np.errstate(all="ignore"):
        acc = np.zeros(columns.shape[1], dtype=np.float32)
        for i, column in enumerate(columns):
            acc = column * column if i == 0 else acc + column * column
    return acc.astype(np.float64)


def distance_array(metric: str, columns: np.ndarray, query: np.ndarray, mags: np.ndarray | None = None) -> np.ndarray:
    """sqlite-vec's ``vec_distance_cosine`` / ``_L2`` / ``_L1`` of each vector of ``columns`` (:func:`columns_of`)
    with ``query``, in its arithmetic (the module's docstring), as float64; NaN where SQLite gets NULL (a zero
    vector's cosine). The sums run over the dimensions one after another, as sqlite-vec's loops do, on a column of
    every vector at a time; ``mags`` (:func:`magnitudes`) spares a cosine computing the norms again."""
    q = np.asarray(query, dtype=np.float32).ravel()
    count = columns.shape[1]
    with np.errstate(all="ignore"):
        if metric == "l2":
            acc = np.zeros(count, dtype=np.float32)
            for i, column in enumerate(columns):
                t = column - q[i]
                acc = t * t if i == 0 else acc + t * t
            out = np.sqrt(acc.astype(np.float64)).astype(np.float32)
        elif metric == "inner_product":
            out = np.zeros(count, dtype=np.float64)
            for i, column in enumerate(columns):
                out = out + np.abs(column.astype(np.float64) - np.float64(q[i]))
        else:
            dot = np.zeros(count, dtype=np.float32)
            for i, column in enumerate(columns):
                dot = column * q[i] if i == 0 else dot + column * q[i]
            squares = magnitudes(columns) if mags is None else mags
            qmag = float(np.cumsum(q * q, dtype=np.float32)[-1])
            out = (1.0 - dot.astype(np.float64) / (np.sqrt(squares) * math.sqrt(qmag))).astype(np.float32)
    return out.astype(np.float64)


def distances(metric: str, matrix: np.ndarray, query: np.ndarray) -> list[float | None]:
    """sqlite-vec's ``vec_distance_cosine`` / ``_L2`` / ``_L1`` of each row of ``matrix`` with ``query``, in its
    arithmetic (the module's docstring); None where SQLite gets NaN (a zero vector's cosine) and so NULL."""
    out = distance_array(metric, columns_of(matrix), query)
    return [None if math.isnan(v) else v for v in out.tolist()]


# -- LangGraph's search SQL ---------------------------------------------------------------------------------------


def namespace_condition(prefix: str, column: str = "s.prefix") -> tuple[str, tuple[str, ...]]:
    """``_namespace_prefix_condition`` (base.py 121–139): the namespace itself or any below it (GLOB, so case
    matters and ``foo`` does not take ``foobar``); an empty prefix takes every namespace."""
    if not prefix:
        return "TRUE", ()
    escaped = prefix.replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")
    return f"({column} = ? OR {column} GLOB ?)", (prefix, f"{escaped}.*")


def _dumps(value: Any) -> str:
    """``orjson.dumps`` as text: compact, unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _check_filter_key(key: str) -> None:
    """``_validate_filter_key`` (base.py 173–190)."""
    if not key or any(c not in _FILTER_KEY for c in key):
        raise InvalidInputError(
            f"Invalid filter key: '{key}'. Filter keys must contain only alphanumeric characters, underscores, "
            "dots, and hyphens."
        )


def _operator_condition(key: str, op: str, value: Any) -> tuple[str, list[Any]]:
    """``SqliteStore._get_filter_condition`` (base.py 940–1000; the base class's, 716–780, is the same) as it is —
    a list or dict compared with ``$eq`` and the others is bound as bytes (``orjson.dumps``), a BLOB no JSON text
    equals: such a filter matches nothing."""
    _check_filter_key(key)
    path = f"json_extract(value, '$.{key}')"
    comparisons = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
    if op in ("$eq", "$ne"):
        sign = "=" if op == "$eq" else "!="
        if isinstance(value, str):
            return f"{path} {sign} ?", [value]
        if value is None:
            return f"{path} IS {'NULL' if op == '$eq' else 'NOT NULL'}", []
        if isinstance(value, bool):
            return f"{path} {sign} {1 if value else 0}", []
        if isinstance(value, (int, float)):
            return f"{path} {sign} ?", [float(value)]
        return f"{path} {sign} ?", [_dumps(value).encode()]
    if op in comparisons:
        sign = comparisons[op]
        if isinstance(value, (int, float)):
            return f"CAST({path} AS REAL) {sign} ?", [float(value)]
        if isinstance(value, str):
            return f"{path} {sign} ?", [value]
        return f"{path} {sign} ?", [_dumps(value).encode()]
    raise InvalidInputError(f"Unsupported operator: {op}")


def filter_conditions(filter_: Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
    """The conditions of LangGraph's ``filter`` and their arguments (base.py 459–503)."""
    conditions: list[str] = []
    args: list[Any] = []
    for key, value in (filter_ or {}).items():
        _check_filter_key(key)
        path = f"json_extract(value, '$.{key}')"
        if isinstance(value, dict):
            for op, val in value.items():
                condition, more = _operator_condition(key, op, val)
                conditions.append(condition)
                args.extend(more)
        elif isinstance(value, str):
            conditions.append(f"{path} = ?")
            args.append(value)
        elif value is None:
            conditions.append(f"{path} IS NULL")
        elif isinstance(value, bool):
            conditions.append(f"{path} = {'1' if value else '0'}")
        elif isinstance(value, (int, float)):
            conditions.append(f"{path} = ?")
            args.append(float(value))
        else:
            conditions.append(f"{path} = ?")
            args.append(_dumps(value))
    return conditions, args


def search_where(prefix: str, filter_: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """The ``WHERE`` of LangGraph's vector search (base.py 524–538) and its arguments."""
    conditions, args = filter_conditions(filter_)
    filter_str = "" if not conditions else " AND " + " AND ".join(conditions)
    if prefix:
        ns, ns_args = namespace_condition(prefix)
        return f"WHERE {ns} {filter_str} ", [*ns_args, *args]
    return (f"WHERE {filter_str[5:]} " if filter_str else ""), args


def search_sql(metric: str, where: str, optional: Mapping[str, str], tie_order: bool = False) -> tuple[str, str]:
    """LangGraph's vector search query (base.py 541–570) with the distance a lookup — its rows then carry the field
    name each came from and that vector row's time — and the query of its ``scored`` rows alone (every vector row
    taken, before one per item is kept). ``optional`` gives the SQL of ``expires_at`` / ``ttl_minutes`` (NULL in a
    file from before them). The search's arguments: the ``where`` arguments, ``2k``, ``k``, the offset. With
    ``tie_order``, rows of equal score are ordered by ``_oxmem_langgraph_place(sv.rowid)`` (the order LangGraph's
    query over the whole scope scores them in, which is how SQLite orders them there: see the module's docstring)."""
    score = SCORE_SQL.get(metric, SCORE_SQL["cosine"])
    expires, ttl = optional["expires_at"], optional["ttl_minutes"]
    ties = ", _oxmem_langgraph_place(sv.rowid)" if tie_order else ""
    scored = f"""
        WITH scored AS (
            SELECT s.prefix, s.key, s.value, s.created_at, s.updated_at, {expires} AS expires_at,
                {ttl} AS ttl_minutes, {score} AS score, sv.field_name, sv.updated_at AS vector_updated_at
            FROM store s
            JOIN store_vectors sv ON s.prefix = sv.prefix AND s.key = sv.key
            {where}
                ORDER BY score DESC{ties}
            LIMIT ?
        )"""
    search = f"""{scored},
        ranked AS (
            SELECT prefix, key, value, created_at, updated_at, expires_at, ttl_minutes, score, field_name,
                vector_updated_at, ROW_NUMBER() OVER (PARTITION BY prefix, key ORDER BY score DESC) as rn
            FROM scored
        )
        SELECT prefix, key, value, created_at, updated_at, expires_at, ttl_minutes, score, field_name,
            vector_updated_at
        FROM ranked
        WHERE rn = 1
            ORDER BY score DESC
        LIMIT ?
        OFFSET ?
    """
    return search, f"{scored} SELECT prefix, key, field_name, score FROM scored"


# -- items ----------------------------------------------------------------------------------------------------


#: an item's place in the list, newest first: its ``updated_at`` as SQLite reads a time (its Julian day, to the
#: millisecond); a value that is no time comes last. The newer row (rowid) first among equal places.
_PLACE = sql_place("updated_at")
#: how many items are read in one query when a list is read on (their values, then their vector rows)
_CHUNK = 500
#: a vector row sqlite-vec reads as float32 values (the hazards' dimensions)
_READABLE = "typeof(embedding) = 'blob' AND length(embedding) > 0 AND length(embedding) % 4 = 0"


@dataclass
class _Order:
    """A namespace's items in the list's order, newest first, kept per state of the file: their rowids and each
    one's place (:data:`_PLACE`), (place, rowid) descending — the keys alone, so a page reads only its own rows."""

    places: np.ndarray
    rowids: np.ndarray

    def start_after(self, place: float, rowid: int) -> int:
        """Where the items after the cursor ``(place, rowid)`` begin: the first whose (place, rowid) is less, as
        SQL's row values compare."""
        places, rowids = self.places[::-1], self.rowids[::-1]  # ascending
        low = int(np.searchsorted(places, place, "left"))
        high = int(np.searchsorted(places, place, "right"))
        below = low + int(np.searchsorted(rowids[low:high], rowid, "left"))
        return len(self.rowids) - below


def _read_order(conn: apsw.Connection, group: str) -> _Order:
    """:class:`_Order` of ``group``: each distinct ``updated_at`` placed once, its rows' rowids gathered with it."""
    by_place: dict[float, list[np.ndarray]] = {}
    for place, gathered in conn.execute(
        f"SELECT {_PLACE}, json_group_array(rowid) FROM store WHERE prefix = ? GROUP BY updated_at", (group,)
    ):
        by_place.setdefault(_real(place), []).append(np.array(json.loads(gathered), dtype=np.int64))
    places: list[np.ndarray] = []
    rowids: list[np.ndarray] = []
    for place in sorted(by_place, reverse=True):
        found = np.sort(np.concatenate(by_place[place]))[::-1]
        rowids.append(found)
        places.append(np.full(found.size, place))
    if not rowids:
        return _Order(np.zeros(0), np.zeros(0, dtype=np.int64))
    return _Order(np.concatenate(places), np.concatenate(rowids))


@dataclass
class _Scope:
    """What a vector search over one scope (its ``WHERE`` and arguments) reads, kept per state of the file: the
    fields embedded there; the items it leaves out (no vector row) and the vector rows older than their item's
    value, as the steps name them; and its vector rows in the order read — rowids, dimensions (-1: sqlite-vec cannot
    read it, ``unreadable`` says why, by position) and, when all have the same dimensions, the vectors
    (:func:`columns_of`) with their squared norms. ``scan``: by metric, each row's place in the order LangGraph's
    query scores them (None when that order could not be read)."""

    fields: list[str]
    bare: list[str]
    stale: list[str]
    rowids: np.ndarray
    sizes: np.ndarray
    unreadable: dict[int, str]
    columns: np.ndarray | None
    mags: np.ndarray | None
    scan: dict[str, np.ndarray | None] = field(default_factory=dict)

    def errors(self, dims: int) -> dict[int, str]:
        """sqlite-vec's error for each row a query of ``dims`` dimensions cannot be scored with, by position."""
        out = {}
        for pos in np.flatnonzero(self.sizes != dims).tolist():
            size = int(self.sizes[pos])
            out[pos] = self.unreadable[pos] if size < 0 else (
                f"Vector dimension mistmatch. First vector has {size} dimensions, while the second has {dims} "
                "dimensions."
            )  # fmt: skip
        return out


def _and(where: str, condition: str) -> str:
    """The clause ``where`` (``WHERE …`` or nothing) with ``condition`` added."""
    if not where.strip():
        return f"WHERE {condition} "
    return f"WHERE ({where.strip().removeprefix('WHERE')}) AND {condition} "


def _read_scope(conn: apsw.Connection, where: str, args: Sequence[Any]) -> _Scope:
    """:class:`_Scope` of ``where``: the vector rows read as the search's own join reads them."""
    join = "FROM store s JOIN store_vectors sv ON s.prefix = sv.prefix AND s.key = sv.key"
    # the vector rows, as the search's join reads them (their fields with them: a column of store_vectors, which
    # the join reads anyway, changes nothing in how SQLite runs it)
    rows = conn.execute(f"SELECT sv.rowid, sv.embedding, sv.field_name {join} {where}", tuple(args)).fetchall()
    fields = sorted({str(r[2]) for r in rows}, key=lambda name: name.encode("utf-8", "surrogatepass"))
    # stale vector rows: a row's time differs from its item's only after a later put, and is older only where
    # SQLite does not read it as the later one (the rest parsed as the notes parse them, each distinct time once)
    parsed: dict[Any, datetime | None] = {}

    def when(text: Any) -> datetime | None:
        if text not in parsed:
            parsed[text] = parse_when(text)
        return parsed[text]

    older: dict[tuple[str, str], list[str]] = {}
    maybe = "sv.updated_at IS NOT s.updated_at AND NOT coalesce(julianday(sv.updated_at) > julianday(s.updated_at), 0)"
    for prefix, key, updated, name, at in conn.execute(
        f"SELECT s.prefix, s.key, s.updated_at, sv.field_name, sv.updated_at {join} {_and(where, maybe)} "
        "ORDER BY sv.prefix, sv.key, sv.field_name",
        tuple(args),
    ):
        item, vector = when(updated), when(at)
        if item is not None and vector is not None and vector < item:
            older.setdefault((str(prefix), str(key)), []).append(str(name))
    items = "SELECT s.prefix, s.key, s.updated_at FROM store s"
    unindexed = "NOT EXISTS (SELECT 1 FROM store_vectors sv WHERE sv.prefix = s.prefix AND sv.key = s.key)"
    bare = [f"{p}/{k}" for p, k, _u in conn.execute(f"{items} {_and(where, unindexed)}", tuple(args))]
    stale = (
        [
            f"{p}/{k}: {name}"
            for p, k, _u in conn.execute(f"{items} {where}", tuple(args))
            for name in older.get((str(p), str(k)), ())
        ]
        if older
        else []
    )
    rowids = [r[0] for r in rows]
    blobs: list[Any] = [r[1] for r in rows]
    lengths = {len(b) for b in blobs} if all(type(b) is bytes for b in blobs) else set()
    unreadable: dict[int, str] = {}
    columns = mags = matrix = None
    if len(lengths) == 1 and min(lengths) and not min(lengths) % 4:  # the usual file: float32 BLOBs, all alike
        sizes = [min(lengths) // 4] * len(blobs)
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), sizes[0])
    else:
        sizes, vectors = [], []
        for pos, blob in enumerate(blobs):
            vec, why = read_vector(blob)
            sizes.append(-1 if vec is None else int(vec.size))
            if vec is None:
                unreadable[pos] = f"Error reading 1st vector: {why}"
            else:
                vectors.append(vec)
        if vectors and not unreadable and len(set(sizes)) == 1:
            matrix = np.stack(vectors)
    if matrix is not None:
        columns = columns_of(matrix)
        mags = magnitudes(columns)
    return _Scope(
        fields, bare, stale, np.array(rowids, dtype=np.int64), np.array(sizes, dtype=np.int64), unreadable, columns,
        mags,
    )  # fmt: skip


def _number(value: Any) -> int:
    """A count or length SQLite returned (an integer)."""
    return int(value)


def _real(value: Any) -> float:
    """A place SQLite computed (:data:`_PLACE`: a number)."""
    return float(value)


def _scores(metric: str, dist: np.ndarray) -> np.ndarray:
    """LangGraph's score of each distance (:data:`SCORE_SQL`), in SQLite's float64 arithmetic; NaN for NULL."""
    if metric == "l2":
        return dist
    if metric == "inner_product":
        return -dist
    return 1.0 - dist


def _best(score: np.ndarray, place: np.ndarray, limit: int) -> np.ndarray:
    """The positions of the first ``limit`` rows of ``ORDER BY score DESC`` where SQLite orders equal scores by
    ``place`` (NULL, NaN here, last), in that order."""
    if limit <= 0:
        return np.zeros(0, dtype=np.int64)
    null = np.isnan(score)
    valid = np.flatnonzero(~null)
    if valid.size > limit:
        kth = np.partition(score[valid], valid.size - limit)[valid.size - limit]
        pool = valid[score[valid] >= kth]
    else:
        nulls = np.flatnonzero(null)
        nulls = nulls[np.argsort(place[nulls], kind="stable")[: limit - valid.size]]
        pool = np.concatenate([valid, nulls])
    keyed = np.where(null[pool], 0.0, -score[pool])
    best: np.ndarray = pool[np.lexsort((place[pool], keyed, null[pool]))][:limit]
    return best


def _stale(item_updated: Any, vector_updated: Any) -> bool:
    item, vector = parse_when(item_updated), parse_when(vector_updated)
    return item is not None and vector is not None and vector < item


def _loads(value: Any) -> tuple[Any, str | None]:
    return json_or_reason(value)


def _shown_value(value: Any) -> tuple[str, str | None]:
    """The value as shown (JSON on one line, as a list row and a search hit show it whole) and, when LangGraph
    cannot load it, why."""
    parsed, problem = _loads(value)
    if problem is not None:
        raw = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        return (
            f"⚠ unreadable row: {raw}",
            f"the value {problem}: LangGraph's get of it, and any search returning it, raise",
        )
    return json.dumps(parsed, ensure_ascii=False), None


class LangGraphStoreReader(ForeignReader):
    """A LangGraph ``SqliteStore`` file (see the module's docstring)."""

    FORMAT = "langgraph-store"
    LABEL = "LangGraph store"
    REASON = (
        "oxmem edits LangGraph's items as its put and delete write them, without their vectors (the fields "
        "LangGraph embeds and its model are in the program), and changes nothing else"
    )
    EDITS = frozenset({"notes"})

    def _now(self) -> datetime:
        """The current UTC time (``expired`` in an item's details; replaceable in tests)."""
        return datetime.now(timezone.utc)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_sessions=False,
            has_notes=True,
            has_schedules=False,
            has_search=True,
            notes_label="Items",
            note_noun="item",
            group_label="Namespace",
            note_tags=False,
            note_rules="an item's value is one JSON object, e.g. {\"text\": \"…\"}",
            refusals=self.refusals(),
        )

    def query_text(self, query: str) -> str:
        """LangGraph embeds the query as typed (``embed_documents([op.query])``, base.py 1381)."""
        return query

    # -- the file -------------------------------------------------------------------------------------------------

    def _optional(self, conn: apsw.Connection) -> dict[str, str]:
        """SQL for ``expires_at`` and ``ttl_minutes`` of ``store s`` (NULL where an older file lacks them)."""
        columns = column_set(conn, "store")
        return {c: (f"s.{c}" if c in columns else "NULL") for c in ("expires_at", "ttl_minutes")}

    def _vector_facts(self, conn: apsw.Connection) -> tuple[int | None, bool]:
        """What the hazards compare each item's vector rows with, once per state of the file: the dimensions most
        vector rows have (the larger on a tie; None when sqlite-vec can read none) and whether there is any."""

        def read() -> tuple[int | None, bool]:
            if not column_set(conn, "store_vectors"):
                return None, False
            if not conn.execute("SELECT 1 FROM store_vectors LIMIT 1").fetchall():
                return None, False
            first = conn.execute(f"SELECT length(embedding) FROM store_vectors WHERE {_READABLE} LIMIT 1").fetchall()
            if not first:
                return None, True
            size = _number(first[0][0])
            rows = _number(conn.execute("SELECT count(*) FROM store_vectors").fetchall()[0][0])
            same = conn.execute(
                "SELECT count(*) FROM store_vectors WHERE typeof(embedding) = 'blob' AND length(embedding) = ?",
                (size,),
            ).fetchall()[0][0]
            if 2 * _number(same) > rows:  # more than half of them: the most common, found without counting each size
                return size // 4, True
            sizes = {
                _number(n): _number(c)
                for n, c in conn.execute(
                    f"SELECT length(embedding), count(*) FROM store_vectors WHERE {_READABLE} GROUP BY 1"
                )
            }
            return max(sizes, key=lambda n: (sizes[n], n)) // 4, True

        return self._per_state(conn, "langgraph vector facts", None, read)

    def _markers(self, conn: apsw.Connection) -> list[str]:
        out = []
        for table in ("store_migrations", "vector_migrations"):
            if column_set(conn, table):
                done = [r[0] for r in conn.execute(f"SELECT v FROM {table} ORDER BY v")]
                out.append(f"{table}: {len(done)} applied" + (f", latest {done[-1]}" if done else ""))
        if not column_set(conn, "store_vectors"):
            out.append("no store_vectors: the store was set up without an index (no vector search)")
            return out
        (items,) = conn.execute("SELECT count(*) FROM store").fetchall()[0]
        rows = _number(conn.execute("SELECT count(*) FROM store_vectors").fetchall()[0][0])
        orphans = _number(
            conn.execute(
                "SELECT count(*) FROM store_vectors sv WHERE NOT EXISTS "
                "(SELECT 1 FROM store s WHERE s.prefix = sv.prefix AND s.key = sv.key)"
            ).fetchall()[0][0]
        )
        bare = sum(
            1
            for _ in conn.execute(
                "SELECT 1 FROM store s WHERE NOT EXISTS "
                "(SELECT 1 FROM store_vectors sv WHERE sv.prefix = s.prefix AND sv.key = s.key)"
            )
        )
        out.append(f"{items:,} items, {_count(rows, 'vector row')}")
        if bare:
            out.append(f"{_count(bare, 'item')} without a vector row: LangGraph's vector search never returns them")
        if orphans:
            out.append(
                f"{_count(orphans, 'vector row')} of deleted items (LangGraph's delete leaves them: foreign "
                "keys are off); the search's join leaves them out"
            )
        return out

    def _embeddings(self, conn: apsw.Connection) -> list[EmbeddingInfo]:
        if not column_set(conn, "store_vectors"):
            return []
        out = []
        for kind, size, n in conn.execute(
            "SELECT typeof(embedding), length(embedding), count(*) FROM store_vectors GROUP BY 1, 2 ORDER BY 3 DESC, 2"
        ):
            if kind == "blob" and size and size % 4 == 0:
                out.append(EmbeddingInfo("store_vectors", guess_model(size // 4), size // 4, size // 4, n))
            else:
                out.append(EmbeddingInfo("store_vectors", "unreadable by sqlite-vec", 0, 0, n, f"{kind}, {size} bytes"))
        return out

    # -- items as notes -------------------------------------------------------------------------------------------

    def _groups(self, conn: apsw.Connection) -> list[str]:
        return [str(r[0]) for r in conn.execute("SELECT DISTINCT prefix FROM store ORDER BY prefix")]

    def _order(self, conn: apsw.Connection, group: str) -> _Order:
        """The list's order of ``group`` (:class:`_Order`), read again only after the file changed."""
        return self._per_state(conn, "langgraph order", group, lambda: _read_order(conn, group))

    def _cursor_place(self, conn: apsw.Connection, group: str, after: tuple[str, int]) -> float:
        """Where the list stands at the cursor ``after`` (the last shown item's time and rowid): that row's place
        while it is still the item shown there, else — deleted, or put again since (a put replaces the row) — the
        shown time's (:func:`.times.cursor_place`, the row also checked to be the one shown)."""
        found = conn.execute(
            f"SELECT updated_at, {_PLACE} FROM store WHERE rowid = ? AND prefix = ?", (after[1], group)
        ).fetchall()
        if found and ((shown_time(found[0][0]) if found[0][0] else "") == after[0]):
            return _real(found[0][1])
        return _real(conn.execute(f"SELECT {sql_place('?1')}", (after[0],)).fetchall()[0][0])

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterator[Note]:
        """The ``limit`` items after the cursor ``after`` (a negative ``limit``: all of them), newest first: the
        rowids taken from :meth:`_order`, only those items then read."""
        order = self._order(conn, group)
        start = 0 if after is None else order.start_after(self._cursor_place(conn, group, after), after[1])
        chosen = order.rowids[start:] if limit < 0 else order.rowids[start : start + limit]
        return self._items(conn, chosen.tolist())

    def _items(self, conn: apsw.Connection, rowids: list[int]) -> Iterator[Note]:
        """The items of these rowids of ``store``, as notes in that order, read :data:`_CHUNK` at a time with their
        vector rows."""
        optional = self._optional(conn)
        common, indexed = self._vector_facts(conn)
        now = self._now()
        for start in range(0, len(rowids), _CHUNK):
            chunk = rowids[start : start + _CHUNK]
            given = json.dumps(chunk)
            rows: dict[Any, tuple[Any, ...]] = {
                r[0]: tuple(r[1:])
                for r in conn.execute(
                    f"SELECT s.rowid, s.prefix, s.key, s.value, s.created_at, s.updated_at, {optional['expires_at']}, "
                    f"{optional['ttl_minutes']} FROM store s WHERE s.rowid IN (SELECT value FROM json_each(?))",
                    (given,),
                )
            }
            vectors: dict[Any, list[tuple[str, int | None, str, Any]]] = {}
            if indexed:
                for rowid, name, kind, size, at in conn.execute(
                    "SELECT s.rowid, sv.field_name, typeof(sv.embedding), length(sv.embedding), sv.updated_at "
                    "FROM store s JOIN store_vectors sv ON sv.prefix = s.prefix AND sv.key = s.key "
                    "WHERE s.rowid IN (SELECT value FROM json_each(?)) ORDER BY s.rowid, sv.field_name",
                    (given,),
                ):
                    dims = size // 4 if kind == "blob" and size and size % 4 == 0 else None
                    vectors.setdefault(rowid, []).append((name, dims, kind, at))
            for rowid in chunk:
                if rowid in rows:
                    prefix, key, value, created, updated, expires, ttl = rows[rowid]
                    yield self._item_note(
                        rowid, prefix, key, value, created, updated, expires, ttl, vectors.get(rowid, []), common,
                        indexed, now,
                    )  # fmt: skip

    def _item_note(
        self,
        rowid: int,
        prefix: str,
        key: str,
        value: Any,
        created: Any,
        updated: Any,
        expires: Any,
        ttl: Any,
        rows: list[tuple[str, int | None, str, Any]],
        common: int | None,
        indexed: bool,
        now: datetime,
    ) -> Note:
        """One item as a note: ``rows`` are its vector rows (field, dimensions or None, type, time), ``common`` the
        dimensions most vector rows of the file have, ``indexed`` whether the file has any."""
        content, problem = _shown_value(value)
        problems = [problem] if problem else []
        when = parse_when(expires)
        details: dict[str, Any] = {
            "key": str(key),
            "namespace": str(prefix).split("."),
            "expires_at": shown_time(expires) if expires is not None else None,
            "ttl_minutes": ttl,
            "expired": bool(when and when < now),
            "vectors": [
                {"field": name, "dimensions": dims, "updated_at": shown_time(at), "stale": _stale(updated, at)}
                for name, dims, _kind, at in rows
            ],
        }
        if details["expired"]:
            details["expired_note"] = (
                "past its expires_at: LangGraph's get and search still return it until its TTL sweeper deletes it"
            )
        stale = [name for name, _d, _k, at in rows if _stale(updated, at)]
        if stale:
            problems.append(
                f"vector rows older than the value (written before its last put): {', '.join(stale)} — LangGraph "
                "still searches them, so the item can be found by text it no longer holds"
            )
        if not rows and indexed:
            problems.append(
                "no vector row (put with index=False, or written without an index): LangGraph's vector search "
                "never returns this item"
            )
        broken = [name for name, dims, kind, _at in rows if dims is None]
        if broken:
            problems.append(
                f"vectors sqlite-vec cannot read: {', '.join(broken)} — a LangGraph search over its namespace raises"
            )
        odd = [f"{name} ({dims})" for name, dims, _k, _at in rows if dims is not None and dims != common]
        if odd:
            problems.append(
                f"vectors of other dimensions than most ({common}): {', '.join(odd)} — a LangGraph search "
                "over its namespace raises (dimension mismatch)"
            )
        if problems:
            details["problems"] = problems
        shown = (shown_time(created) if created is not None else None, shown_time(updated) if updated else None)
        return Note(str(key), str(prefix), content, [], *shown, int(rowid), details)

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        return list(self._notes_after(conn, group, None, -1))

    def _note_of(self, conn: apsw.Connection, group: str, note_id: str) -> Note | None:
        found = conn.execute("SELECT rowid FROM store WHERE prefix = ? AND key = ?", (group, note_id)).fetchall()
        return next(self._items(conn, [_number(found[0][0])]), None) if found else None

    def _tag_lists(self, conn: apsw.Connection, group: str) -> list[tuple[list[str], int]]:
        return []

    # -- edits (:mod:`.langgraph_store_edits`) --------------------------------------------------------------------

    async def vector_notice(self) -> str | None:
        """What saving an item leaves LangGraph's vector search without, said before saving."""
        return await self._db.read(langgraph_store_edits.vector_notice)

    async def _edit(self, fn: Callable[..., T], *args: Any) -> T:
        self._writable("notes")
        return await self._write(fn, self._note_of, *args)

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note:
        return await self._edit(langgraph_store_edits.save_item, user, content, list(tags), self._now())

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: Note | None = None
    ) -> Note:
        return await self._edit(
            langgraph_store_edits.update_item, user, note_id, content, list(tags), expected, self._now()
        )

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None:
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def delete_notes(self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None) -> int:
        return await self._edit(langgraph_store_edits.delete_items, user, list(note_ids), expected)

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]:
        return await self._edit(langgraph_store_edits.restore_items, list(items), expected)

    # -- LangGraph's vector search --------------------------------------------------------------------------------

    def retrievers(self) -> list[Retriever]:
        said = (
            "LangGraph's SqliteStore.search(namespace_prefix, query=…, limit=k) with index distance_type {}: "
            "each vector row of the namespace and below scored {}, the best 2k rows, one per item, best k"
        )
        return [
            Retriever(
                "langgraph", "LangGraph store search (cosine)", "notes", False,
                said.format("cosine (the default)", "1 − cosine distance"), every=True,
            ),
            Retriever(
                "langgraph-l2", "LangGraph store search (l2)", "notes", False,
                said.format("l2", "by the L2 distance itself, largest first (the farthest first, as LangGraph does)"),
                every=True,
            ),
            Retriever(
                "langgraph-inner-product", "LangGraph store search (inner_product)", "notes", False,
                said.format("inner_product", "−(L1 distance), as LangGraph does"), every=True,
            ),
        ]  # fmt: skip

    @ranking("langgraph")
    def _rank_cosine(self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any) -> QueryResult:
        return self._rank(conn, "langgraph", scope, query, top_k, options)

    @ranking("langgraph-l2")
    def _rank_l2(self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any) -> QueryResult:
        return self._rank(conn, "langgraph-l2", scope, query, top_k, options)

    @ranking("langgraph-inner-product")
    def _rank_inner_product(
        self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any
    ) -> QueryResult:
        return self._rank(conn, "langgraph-inner-product", scope, query, top_k, options)

    def _rank(
        self, conn: apsw.Connection, name: str, scope: Scope, query: str, top_k: int, options: Mapping[str, Any]
    ) -> QueryResult:
        """``store.search(tuple(prefix.split(".")), query=query, limit=top_k, offset=options["offset"],
        filter=options["filter"])`` with ``index["distance_type"]`` of the retriever ``name``."""
        metric = METRICS[name]
        prefix = scope.prefix if isinstance(scope, AllSessions) else scope
        filter_ = options.get("filter")
        offset = int(options.get("offset") or 0)
        result = QueryResult(
            query, shown_scope(scope), top_k, 1.0, 0.0, "none", [], "any", None, {}, [], retriever=name
        )
        steps = result.steps
        where, args = search_where(prefix, filter_)
        shown_prefix = tuple(prefix.split(".")) if prefix else ()
        steps.append(
            f"LangGraph's store.search({shown_prefix!r}, query={query!r}, limit={top_k}"
            + (f", offset={offset}" if offset else "")
            + (f", filter={dict(filter_)!r}" if filter_ else "")
            + "): the vector rows (store_vectors) of the items "
            + (f"of namespace {prefix!r} or below it ({where.strip()})" if prefix else "of every namespace")
        )
        if not column_set(conn, "store_vectors"):
            self._listing(conn, result, prefix, filter_, offset)
            return result
        common, _indexed = self._vector_facts(conn)
        scope_rows = self._scope(conn, where, args)
        fields = scope_rows.fields
        steps.append(
            "fields embedded here (store_vectors.field_name): "
            + (", ".join(fields) if fields else "none")
            + " — SqliteStore embeds index['text_fields'] (default ['$']: the whole value as JSON) and ignores "
            "index['fields'], the key its own docs name (base.py 1495 / 830); 'path.i' is the i-th text of a path"
        )
        given = options.get("query_embedding")
        dims = int(np.asarray(given).size) if given is not None else common
        if dims is None:
            steps.append("no vector row can be read: there is nothing to rank")
            result.legs["vector"] = LegStats()
            return result
        model = str(options.get("query_embedding_model") or guess_model(dims))
        vector, why = self.query_vector(model, query, options, dims)
        if vector is None:
            result.skipped_models[model] = why or "the query could not be embedded"
            steps.append(f"the query cannot be embedded by {model} here ({why}): LangGraph's search, which embeds "
                         "it with its own model, cannot be reproduced")  # fmt: skip
            result.legs["vector"] = LegStats()
            return result
        q = np.asarray(vector, dtype=np.float32).ravel()
        result.models.append(model)
        steps.append(
            f"the query embedded as typed by {model} ({q.size} dimensions), as LangGraph does "
            "(embeddings.embed_documents([query]), base.py 1381)"
        )
        steps.append(_metric_step(metric))
        steps.append(
            f"LangGraph's SQL run on the vector rows it takes, its {LANGGRAPH_SCORE[metric]} taken from sqlite-vec's "
            "arithmetic (float32 sums in order) done beforehand with numpy — sqlite-vec is not loaded here —, those "
            "rows chosen by the same scores, equal ones in the order LangGraph's query over the whole scope scores "
            "them (SQLite's order for ties there)"
        )
        limit = top_k * 2
        steps.append(
            f"ORDER BY score DESC LIMIT 2×k = {limit} vector rows — before one row per item is kept (ROW_NUMBER() "
            "OVER (PARTITION BY prefix, key)): an item with several fields can take several places, so fewer than "
            f"k items may come back; then ORDER BY score DESC LIMIT {top_k} OFFSET {offset}"
        )
        errors = scope_rows.errors(q.size)
        try:
            kept, taken = self._search_rows(conn, metric, where, args, scope_rows, q, limit, errors)
        except apsw.SQLError as exc:
            steps.append(f"LangGraph's search raises here (sqlite-vec: {exc}): it returns nothing")
            result.vector_errors.extend(
                (f"store_vectors rowid {scope_rows.rowids[pos]}", why) for pos, why in errors.items()
            )
            result.legs["vector"] = LegStats()
            return result
        self._hits(conn, result, metric, model, kept, taken, offset, where, args)
        return result

    def _listing(
        self, conn: apsw.Connection, result: QueryResult, prefix: str, filter_: Mapping[str, Any] | None, offset: int
    ) -> None:
        """A store set up without an index: LangGraph's search ignores the query and lists the newest items, with no
        score (base.py 571–592)."""
        result.steps.append(
            "the file has no store_vectors table (the store was set up without an index): LangGraph's search then "
            "ignores the query and returns the newest items (ORDER BY updated_at DESC LIMIT k OFFSET o), score None"
        )
        ns, ns_args = namespace_condition(prefix, "prefix")
        conditions, args = filter_conditions(filter_)
        where = " AND ".join([ns, *conditions])
        optional = self._optional(conn)
        rows = conn.execute(
            f"SELECT prefix, key, value, created_at, updated_at, {optional['expires_at'].removeprefix('s.')}, "
            f"{optional['ttl_minutes'].removeprefix('s.')} FROM store WHERE {where} ORDER BY updated_at DESC "
            "LIMIT ? OFFSET ?",
            (*ns_args, *args, result.top_k, offset),
        ).fetchall()
        for place, (ns_text, key, value, created, updated, expires, ttl) in enumerate(rows, 1):
            content, problem = _shown_value(value)
            notes = [f"place {place} by updated_at, newest first: no score (the store has no index)"]
            if problem:
                notes.append(f"⚠ {problem}")
            metadata: dict[str, Any] = {
                "namespace": ns_text,
                "key": key,
                "field": None,
                "score": None,
                "distance": None,
                "tags": [],
                "created_at": shown_time(created),
                "updated_at": shown_time(updated),
                "expires_at": shown_time(expires) if expires is not None else None,
                "ttl_minutes": ttl,
            }
            result.pool.append(hit(place, str(key), str(ns_text), content, 0.0, metadata=metadata, notes=notes))
        result.hits = list(result.pool)
        result.legs["vector"] = LegStats()

    def _scope(self, conn: apsw.Connection, where: str, args: Sequence[Any]) -> _Scope:
        """:class:`_Scope` of a search's ``where``, read again only after the file changed (one scope kept)."""
        return self._per_state(conn, "langgraph scope", (where, tuple(args)), lambda: _read_scope(conn, where, args))

    def _scan(
        self, conn: apsw.Connection, metric: str, where: str, args: Sequence[Any], scope: _Scope
    ) -> np.ndarray | None:
        """Each vector row's place (by position in ``scope``) in the order LangGraph's search query over the whole
        scope scores them — the order its ``ORDER BY score DESC LIMIT`` keeps for equal scores —, read once per
        scope and metric by running that query with a distance that notes the rows it is asked for; None when those
        are not the scope's rows (the search then runs over every row)."""
        if metric not in scope.scan:
            asked: list[int] = []

            def note(*row: Any) -> float:
                asked.append(row[0])
                return 0.0

            conn.create_scalar_function("_oxmem_langgraph_distance", note, 1, deterministic=True)
            search, _scored = search_sql(metric, where, self._optional(conn))
            conn.execute(search, (*args, 2, -1, 0)).fetchall()
            order = {rowid: place for place, rowid in enumerate(dict.fromkeys(asked))}
            rowids = scope.rowids.tolist()
            if len(order) == len(rowids) and all(r in order for r in rowids):
                scope.scan[metric] = np.array([order[r] for r in rowids], dtype=np.int64)
            else:
                scope.scan[metric] = None
        return scope.scan[metric]

    def _search_rows(
        self,
        conn: apsw.Connection,
        metric: str,
        where: str,
        args: Sequence[Any],
        scope: _Scope,
        q: np.ndarray,
        limit: int,
        errors: Mapping[int, str],
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """LangGraph's search rows (its query with no limit on items) and the vector rows it takes (``limit`` = 2k).

        Its query scores every vector row of the scope, so any row sqlite-vec cannot score with the query makes it
        raise (:class:`apsw.SQLError`), at the first such row it scores. Otherwise the rows it takes are the first
        ``limit`` by score, equal scores in the order it scores them (:meth:`_scan`): those are chosen here with
        numpy, and LangGraph's query is run on them alone, equal scores ordered by that place — its
        ``ROW_NUMBER()`` and final ``ORDER BY`` then see the same rows in the same order as over the whole scope."""
        place = self._scan(conn, metric, where, args, scope)
        if errors and place is not None:
            first = min(errors, key=lambda pos: place[pos])
            raise apsw.SQLError(errors[first])
        by_rowid = {int(scope.rowids[pos]): why for pos, why in errors.items()}
        if errors or scope.columns is None:  # the query raises, or the scope has no vector row
            dist = np.zeros(len(scope.rowids))
        else:
            dist = distance_array(metric, scope.columns, q, scope.mags)
        chosen = np.arange(len(scope.rowids)) if place is None else _best(_scores(metric, dist), place, limit)
        ids = scope.rowids[chosen].tolist()
        looked_up = {r: (None if math.isnan(d) else d) for r, d in zip(ids, dist[chosen].tolist(), strict=True)}

        def distance(*row: Any) -> float | None:
            (rowid,) = row
            if rowid in by_rowid:
                raise apsw.SQLError(by_rowid[rowid])
            return looked_up.get(rowid)

        conn.create_scalar_function("_oxmem_langgraph_distance", distance, 1, deterministic=True)
        optional = self._optional(conn)
        if place is None:  # LangGraph's query over the whole scope, as it is
            search, scored = search_sql(metric, where, optional)
            return conn.execute(search, (*args, limit, -1, 0)).fetchall(), conn.execute(
                scored, (*args, limit)
            ).fetchall()
        places = dict(zip(ids, place[chosen].tolist(), strict=True))
        conn.create_scalar_function("_oxmem_langgraph_place", lambda *row: places.get(row[0]), 1, deterministic=True)
        search, scored = search_sql(metric, "WHERE sv.rowid IN (SELECT value FROM json_each(?))", optional, True)
        given = json.dumps(ids)
        return conn.execute(search, (given, limit, -1, 0)).fetchall(), conn.execute(scored, (given, limit)).fetchall()

    def _hits(
        self,
        conn: apsw.Connection,
        result: QueryResult,
        metric: str,
        model: str,
        kept: list[tuple[Any, ...]],
        taken: list[tuple[Any, ...]],
        offset: int,
        where: str,
        args: Sequence[Any],
    ) -> None:
        """The items LangGraph returns (``kept``: its query with no limit on items; the hits are ``top_k`` of them
        from ``offset``), each with its score and its fields among the vector rows ``taken``."""
        steps, top_k = result.steps, result.top_k
        returned = kept[offset : offset + top_k]
        broken = next((r for r in returned if _loads(r[2])[1] is not None), None)
        if broken is not None:
            steps.append(
                f"item {broken[1]!r} of {broken[0]!r} is among the results and its value is not JSON: LangGraph's "
                "search raises on it (orjson) and returns nothing"
            )
            result.legs["vector"] = LegStats()
            return
        self._left_out(conn, result, where, args)
        short = len(kept) < top_k + offset and len(taken) == 2 * top_k
        steps.append(
            f"{_count(len(taken), 'vector row')} taken, of {_count(len(kept), 'item')}; {len(returned)} returned"
            + (
                f" — fewer than k = {top_k}: the {_count(len(taken), 'vector row')} held only "
                f"{_count(len(kept), 'item')}"
                if short
                else ""
            )
        )
        per_item: dict[tuple[str, str], list[tuple[str, float | None]]] = {}
        for prefix, key, name, score in taken:
            per_item.setdefault((prefix, key), []).append((name, score))
        scores = [r[7] for r in kept if r[7] is not None]
        result.legs["vector"] = LegStats(len(kept), min(scores), max(scores)) if scores else LegStats(len(kept))
        for place, (ns, key, value, created, updated, expires, ttl, score, name, vector_at) in enumerate(kept, 1):
            distance = None if score is None else _distance_of(metric, score)
            notes = [_score_note(metric, name, distance, score), f"place {place} of the {len(kept)} items taken"]
            others = [(f, s) for f, s in per_item.get((ns, key), []) if f != name]
            if others:
                notes.append(
                    f"{len(others) + 1} of the {len(taken)} vector rows taken are this item's (LIMIT before "
                    "de-duplication); the others: " + ", ".join(f"{f} {_num(s)}" for f, s in others)
                )
            if _stale(updated, vector_at):
                notes.append(
                    f"⚠ its best field {name!r} was embedded at {shown_time(vector_at)}, before the value was last "
                    f"written ({shown_time(updated)}): it may match text the item no longer holds"
                )
            content, problem = _shown_value(value)
            if problem:
                notes.append(f"⚠ {problem}")
            metadata = {
                "namespace": ns,
                "key": key,
                "field": name,
                "score": score,
                "distance": distance,
                "tags": [],
                "created_at": shown_time(created),
                "updated_at": shown_time(updated),
                "expires_at": shown_time(expires) if expires is not None else None,
                "ttl_minutes": ttl,
            }
            shown = 0.0 if score is None else float(score)
            result.pool.append(
                hit(place, str(key), str(ns), content, shown, vector=(shown, distance, place), metadata=metadata,
                    model=model, notes=notes)
            )  # fmt: skip
        result.hits = result.pool[offset : offset + top_k]

    def _left_out(self, conn: apsw.Connection, result: QueryResult, where: str, args: Sequence[Any]) -> None:
        """Say which items of the scope LangGraph's vector search cannot return, and which vector rows are stale."""
        scope = self._scope(conn, where, args)
        bare, stale = scope.bare, scope.stale
        if bare:
            shown = ", ".join(bare[:5]) + (f" … {len(bare) - 5} more" if len(bare) > 5 else "")
            result.steps.append(
                f"left out: {_count(len(bare), 'item')} of the scope with no vector row ({shown}): LangGraph's "
                "vector search never returns them"
            )
        if stale:
            shown = ", ".join(stale[:5]) + (f" … {len(stale) - 5} more" if len(stale) > 5 else "")
            result.steps.append(
                f"⚠ {_count(len(stale), 'vector row')} older than their item's value ({shown}): LangGraph still "
                "scores them"
            )

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        """Why LangGraph's search does not return the item of key ``target``: another namespace, no vector row, or
        none of its rows among the best 2×k."""
        found = [str(r[0]) for r in conn.execute("SELECT prefix FROM store WHERE key = ?", (target,))]
        if not found:
            raise NotFoundError(f"no item with key {target!r} in this file")
        inside = [p for p in found if not scope or p == scope or p.startswith(scope + ".")]
        if not inside:
            return f"it is in namespace {found[0]!r}, which is not {scope!r} nor below it"
        indexed = column_set(conn, "store_vectors") and any(
            conn.execute("SELECT 1 FROM store_vectors WHERE prefix = ? AND key = ? LIMIT 1", (p, target)).fetchall()
            for p in inside
        )
        if not indexed:
            return (
                "it has no vector row (put with index=False, or written without an index): LangGraph's vector search "
                "never returns it"
            )
        return "none of its vector rows is among the best 2×k rows LangGraph takes" + (
            f" ({every.steps[-1]})" if every.steps else ""
        )


def _distance_of(metric: str, score: float) -> float:
    """The distance back from LangGraph's score."""
    if metric == "l2":
        return score
    if metric == "inner_product":
        return -score
    return 1.0 - score


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _num(value: float | None) -> str:
    return "NULL" if value is None else f"{value:.6g}"


def _score_note(metric: str, name: str, distance: float | None, score: float | None) -> str:
    if score is None:
        return (
            f"best field {name!r}: vec_distance_cosine is NaN (a zero vector) → NULL: LangGraph's score is None, "
            "placed after every scored row"
        )
    if metric == "l2":
        return (
            f"best field {name!r}: vec_distance_L2 = {_num(distance)} = score (ordered largest first: LangGraph "
            "puts the farthest first)"
        )
    if metric == "inner_product":
        return f"best field {name!r}: vec_distance_L1 = {_num(distance)} → score −L1 = {_num(score)}"
    return f"best field {name!r}: vec_distance_cosine = {_num(distance)} → score 1 − d = {_num(score)}"


def _metric_step(metric: str) -> str:
    if metric == "l2":
        return (
            "distance_type 'l2': score = vec_distance_L2(embedding, query) (base.py 512–513), ORDER BY score DESC — "
            "a distance ordered like a similarity, so the FARTHEST vectors come first: LangGraph 3.1.2 does this, "
            "reproduced as it is"
        )
    if metric == "inner_product":
        return (
            "distance_type 'inner_product': score = -1 * vec_distance_L1(embedding, query) (base.py 514–517) — the "
            "negated Manhattan distance, not an inner product: reproduced as it is"
        )
    return "distance_type 'cosine' (the default): score = 1.0 - vec_distance_cosine(embedding, query) (base.py 510–511)"


__all__ = [
    "LANGGRAPH_SCORE",
    "LangGraphStoreReader",
    "distances",
    "filter_conditions",
    "namespace_condition",
    "read_vector",
    "search_where",
]
