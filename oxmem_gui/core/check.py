"""``oxmem check``: is this memory file healthy? Integrity, schema, index sync and counts — read-only.

Each finding is ``ok``, a ``warning`` (odd but usable: a payload that is not a message, a schedule row another
program wrote badly) or a ``problem`` (damage: SQLite's integrity check fails, a table of a recorded migration
is missing, chunks without their FTS row or vector). Only the store's own format (the tables of contract §3) gets
SQLite's full ``PRAGMA integrity_check``, which includes FTS5's own check; on other files that check is wrong or
impossible (a partial FTS index reads as corrupt; libSQL's vector index is unknown to plain SQLite), so their
tables are checked one by one and the FTS index is left alone — and the report says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from . import vector_index
from .database import BUSY_TIMEOUT_MS, Database, database_path, release_wal_files, table_damage
from .errors import DamagedError, KeyRequiredError, OxmemError
from .formats.detect import LABELS, agno_tables, detect_schema, quoted, session_tables, sniff_file
from .formats.encrypted import decrypt_to_memory, need_key_message
from .formats.langgraph_checkpoints import problems as checkpoint_problems
from .libsql_writer import LibsqlWriter, have_libsql
from .schedules.store import has_schedule_tables, search_schedules
from .store.migrations import REQUIRED_TABLES, available_migrations, missing_schema, recorded_versions
from .text_repair import invalid_text

OK, WARNING, PROBLEM = "ok", "warning", "problem"


@dataclass
class Finding:
    check: str
    level: str
    detail: str


@dataclass
class CheckReport:
    path: str
    #: what the file is, for a person (``oxmem store``, ``Omega memory``…)
    format: str
    #: the format's name (:mod:`.formats.detect`: ``oxmem``, ``oxydra-libsql``, ``omega``…; ``empty``, ``unreadable``)
    kind: str = "unreadable"
    journal_mode: str | None = None
    pages: int | None = None
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No problem found (warnings allowed)."""
        return all(f.level != PROBLEM for f in self.findings)

    @property
    def verdict(self) -> str:
        """One line for a person."""
        if not self.ok:
            return (
                "problems found: open a backup (the inspector keeps one per editing session in "
                "~/.local/share/oxmem/backups) or export what still reads"
            )
        if self.format in ("not a memory store", "empty database"):
            return f"readable SQLite, but {'empty' if self.format == 'empty database' else 'not a memory store'}"
        return "healthy"


def _objects(conn: apsw.Connection) -> dict[str, tuple[str, str]]:
    return {name: (kind, sql or "") for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")}


def _one(conn: apsw.Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchall()[0][0])


def _label(fmt: str, objects: dict) -> str:
    if not objects:
        return "empty database"
    return {"oxmem": "oxmem store", "sqlite-unknown": "not a memory store"}.get(fmt, LABELS[fmt])


def run_checks(conn: apsw.Connection, path: str, quick: bool = False) -> CheckReport:
    """Every check, in one read snapshot; a check that cannot read what it needs is itself a problem. Each format
    is checked as what it is (:mod:`.formats.detect`): the store's tables for oxmem's and Oxydra's files, the
    FTS index against its content for Omega and ZEKE, and every file's unique keys."""
    objects = _objects(conn)
    fmt = detect_schema(conn)
    ours = fmt in ("oxmem", "oxydra", "oxydra-libsql") and all(t in objects for t in REQUIRED_TABLES)
    libsql = fmt == "oxydra-libsql"
    tracked = fmt == "oxmem" and "memory_migrations" in objects
    report = CheckReport(path, _label(fmt, objects), kind=fmt if objects else "empty")
    report.journal_mode = conn.execute("PRAGMA journal_mode").fetchall()[0][0]
    report.pages = _one(conn, "PRAGMA page_count")

    def step(name: str, fn: Callable[[], Finding | list[Finding] | None]) -> None:
        try:
            found = fn()
        except (apsw.Error, OxmemError) as exc:
            found = Finding(name, PROBLEM, f"could not be read: {exc}")
        except UnicodeDecodeError:  # named by the text check
            found = Finding(name, WARNING, "could not be read whole: it meets text that is not valid UTF-8")
        if found is not None:
            report.findings.extend(found if isinstance(found, list) else [found])

    step("integrity", lambda: _integrity(conn, full=ours and not libsql, quick=quick))
    step("text", lambda: _text(conn))
    if tracked:
        step("schema", lambda: _schema(conn, path))
    elif fmt in ("oxydra", "oxydra-libsql"):
        step("schema", lambda: _agent_schema(conn))
    elif fmt in ("sqlite-unknown", "empty"):
        missing = [t for t in REQUIRED_TABLES if t not in objects]
        report.findings.append(Finding("schema", WARNING, f"no memory tables: {', '.join(missing)} missing"))
    step("foreign keys", lambda: _foreign_keys(conn, fmt))
    step("unique keys", lambda: _unique_keys(conn, objects, fmt))
    if ours:
        step("index sync", lambda: _index_sync(conn, report))
        step("payloads", lambda: _payloads(conn))
        step("vectors", lambda: _vectors(conn))
        step("sequences", lambda: _sequences(conn))
    if libsql:
        step("vector index", lambda: _libsql_index(Path(path), report))
    if fmt == "omega" and "messages_fts_docsize" in objects:
        step("index sync", lambda: _omega_fts(conn, report))
    if fmt == "zeke" and "memories_fts_docsize" in objects:
        step("index sync", lambda: _zeke_fts(conn, report))
    if ours and has_schedule_tables(conn):
        step("schedules", lambda: _schedules(conn, report))
    if fmt == "openai-agents":
        step("items", lambda: _agent_items(conn, report))
    if fmt == "agno":
        step("rows", lambda: _agno_rows(conn, report))
    if fmt == "langgraph-checkpoints":
        step("checkpoints", lambda: _checkpoints(conn))
    return report


def _integrity(conn: apsw.Connection, full: bool, quick: bool) -> Finding:
    pragma = "quick_check" if quick else "integrity_check"
    try:
        return _run_integrity(conn, full, pragma)
    except (apsw.CorruptError, apsw.NotADBError) as exc:  # damage bad enough to stop the check itself
        return Finding("integrity", PROBLEM, f"SQLite {pragma} could not finish: {exc}")


def _run_integrity(conn: apsw.Connection, full: bool, pragma: str) -> Finding:
    if full:
        rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}(100)")]
        what = "tables, indexes and the FTS5 index"
    else:
        rows, libsql = table_damage(conn, pragma)
        rows = rows or ["ok"]
        what = "each table and its indexes (the FTS index of another program's file is not checked"
        what += f"; nor {', '.join(libsql)}, whose index needs the libSQL engine)" if libsql else ")"
    if rows == ["ok"]:
        return Finding("integrity", OK, f"SQLite {pragma}: ok — {what}")
    shown = "; ".join(rows[:3]) + (f"; … {len(rows) - 3} more" if len(rows) > 3 else "")
    return Finding("integrity", PROBLEM, f"SQLite {pragma} found {len(rows)} errors: {shown}")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _schema(conn: apsw.Connection, path: str) -> Finding:
    versions = recorded_versions(conn)
    missing = missing_schema(conn)
    if missing:
        return Finding("schema", PROBLEM, missing)
    known = {v for v, _ in available_migrations()}
    newer = [v for v in versions if v not in known]
    detail = f"every table, index and trigger of {', '.join(v for v in versions if v in known) or 'no migration'}"
    return Finding(
        "schema", OK, detail + " is there" + (f"; newer versions left as they are: {', '.join(newer)}" if newer else "")
    )


#: format → the tables whose rows the program itself leaves without a parent, and why that is how it leaves them
LEFT_BY_DESIGN = {
    "langgraph-store": (
        ("store_vectors",),
        "vector {rows} of deleted items, as LangGraph's delete leaves them (foreign keys are off); its search's "
        "join leaves them out",
    ),
}


def _foreign_keys(conn: apsw.Connection, fmt: str) -> Finding:
    rows = conn.execute("PRAGMA foreign_key_check").fetchall()
    tables, why = LEFT_BY_DESIGN.get(fmt, ((), ""))
    expected = [r for r in rows if r[0] in tables]
    rows = [r for r in rows if r[0] not in tables]
    left = f"; {len(expected):,} {why.format(rows='row' if len(expected) == 1 else 'rows')}" if expected else ""
    if not rows:
        return Finding("foreign keys", OK, f"no {'other ' if expected else ''}row points at a missing parent{left}")
    tables = sorted({r[0] for r in rows})
    said = "1 row points at a missing parent" if len(rows) == 1 else f"{len(rows):,} rows point at missing parents"
    return Finding("foreign keys", PROBLEM, f"{said} (in {', '.join(tables)}){left}")


def _index_sync(conn: apsw.Connection, report: CheckReport) -> list[Finding]:
    counts = report.counts
    for name, sql in (
        ("sessions", "SELECT count(*) FROM sessions"),
        ("events", "SELECT count(*) FROM conversation_events"),
        ("chunks", "SELECT count(*) FROM chunks"),
        ("fts rows", "SELECT count(*) FROM chunks_fts"),
        ("vectors", "SELECT count(*) FROM chunks_vec NOT INDEXED"),
        (
            "notes",
            "SELECT count(*) FROM chunks WHERE json_valid(metadata_json) AND "
            "json_extract(metadata_json, '$.note_id') IS NOT NULL AND json_extract(metadata_json, '$.chunk_index') = 0",
        ),
    ):
        counts[name] = _one(conn, sql)
    gaps = {
        "chunks without an FTS row": "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks_fts f WHERE f.rowid = c.rowid)",
        "FTS rows without a chunk": "SELECT count(*) FROM chunks_fts f WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.rowid = f.rowid)",
        "FTS rows whose text differs from their chunk": "SELECT count(*) FROM chunks c JOIN chunks_fts f "
        "ON f.rowid = c.rowid WHERE f.chunk_text IS NOT c.chunk_text OR f.chunk_id IS NOT c.chunk_id",
        "chunks without a vector": "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.chunk_id)",
        "vectors without a chunk": "SELECT count(*) FROM chunks_vec v WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.chunk_id = v.chunk_id)",
    }
    wrong = {what: n for what, sql in gaps.items() if (n := _one(conn, sql))}
    if not wrong:
        return [
            Finding(
                "index sync",
                OK,
                f"chunks {counts['chunks']:,} = FTS rows {counts['fts rows']:,} = vectors {counts['vectors']:,}",
            )
        ]
    return [Finding("index sync", PROBLEM, "; ".join(f"{n:,} {what}" for what, n in wrong.items()))]


def _text(conn: apsw.Connection) -> Finding:
    """TEXT cells that are not valid UTF-8 (any SQLite client can write them): named, up to ten."""
    found, total = invalid_text(conn, limit=10)
    if not total:
        return Finding("text", OK, "every text value is valid UTF-8")
    named = ", ".join(f"{b.table}.{b.column}" + (f" rowid {b.rowid}" if b.rowid is not None else "") for b in found)
    more = f" and {total - len(found):,} more" if total > len(found) else ""
    return Finding(
        "text",
        WARNING,
        f"{total:,} text value{'s' if total != 1 else ''} not valid UTF-8 (shown with \ufffd): {named}{more}",
    )


def _payloads(conn: apsw.Connection) -> Finding:
    bad = _one(conn, "SELECT count(*) FROM conversation_events WHERE NOT json_valid(payload_json)")
    if bad:
        return Finding("payloads", WARNING, f"{bad:,} events hold text that is not JSON (shown flagged, not indexed)")
    return Finding("payloads", OK, "every event holds JSON")


def _agent_items(conn: apsw.Connection, report: CheckReport) -> Finding:
    """The OpenAI Agents SDK's ``get_items`` skips a message row whose JSON does not parse, without a word (the
    history the model is given lacks it), and hands on one that is JSON but no object as an item: both are named."""
    tables = session_tables(conn)
    assert tables is not None  # (the format was detected by them)
    messages = quoted(tables[1])
    report.counts["messages"] = _one(conn, f"SELECT count(*) FROM {messages}")
    bad = conn.execute(
        f"SELECT session_id, id, json_valid(message_data) FROM {messages} WHERE CASE WHEN json_valid(message_data) "
        "THEN json_type(message_data) != 'object' ELSE 1 END ORDER BY session_id, id"
    ).fetchall()
    if not bad:
        return Finding("items", OK, "every message row holds a JSON object the SDK reads")

    def rows(valid: int) -> str:
        found = [f"{sid} #{mid}" for sid, mid, v in bad if v == valid]
        return ", ".join(found[:5]) + (" …" if len(found) > 5 else "")

    skipped, odd = sum(1 for *_, v in bad if not v), sum(1 for *_, v in bad if v)
    said = ([f"{skipped:,} not JSON, which the SDK skips without a word: {rows(0)}"] if skipped else []) + (
        [f"{odd:,} JSON but not an object, which it hands on as they are: {rows(1)}"] if odd else []
    )
    return Finding("items", WARNING, "message rows " + "; ".join(said))


def _agno_rows(conn: apsw.Connection, report: CheckReport) -> Finding:
    """Agno's JSON columns it cannot load: a memory that is not JSON makes ``get_user_memories`` raise (the listing
    of every user's memories fails), a run whose ``run_data`` is not JSON its session's."""
    tables = agno_tables(conn)
    assert tables is not None  # (the format was detected by them)
    said = []
    for kind, one, table, key, column, harm in (
        ("memories", "memory", tables.memories, "memory_id", "memory", "Agno's listing of every user's memories fails"),
        ("runs", "run", tables.runs, "run_id", "run_data", "Agno cannot load its session"),
    ):
        if table is None:
            continue
        report.counts[kind] = _one(conn, f"SELECT count(*) FROM {quoted(table)}")
        bad = [str(r[0]) for r in conn.execute(f"SELECT {key} FROM {quoted(table)} WHERE NOT json_valid({column})")]
        if bad:
            shown = ", ".join(bad[:5]) + (" …" if len(bad) > 5 else "")
            said.append(f"{len(bad):,} {one if len(bad) == 1 else kind} whose {column} is not JSON ({harm}): {shown}")
    if not said:
        return Finding("rows", OK, "every memory and run holds JSON Agno loads")
    return Finding("rows", WARNING, "; ".join(said))


def _checkpoints(conn: apsw.Connection) -> Finding:
    """LangGraph's checkpoints it cannot load, or that point at what is gone (:func:`.langgraph_checkpoints.problems`:
    every blob is decoded, so this reads the whole file)."""
    found = checkpoint_problems(conn)
    if not found:
        return Finding("checkpoints", OK, "every checkpoint decodes and its parent and writes are in place")
    return Finding("checkpoints", WARNING, "; ".join(found))


def _vectors(conn: apsw.Connection) -> Finding:
    """Every stored vector must be readable: bytes (not text), whole float32 values, and as long as the other
    vectors of its model. Those that are not are left out of search, so they are a problem here. One pass groups
    the vectors by model and length; only the groups off their model's usual length are read row by row."""
    models = conn.execute(
        "SELECT embedding_model, length(embedding_blob), count(*) FROM chunks_vec WHERE typeof(embedding_blob) = "
        "'blob' GROUP BY 1, 2 ORDER BY 3 DESC"
    ).fetchall()
    kinds = ", ".join(f"{m} × {size // 4} dims: {n:,}" for m, size, n in models[:4]) or "none"
    usual: dict[str, int] = {}
    for model, size, _ in models:  # the most common length of each model
        usual.setdefault(model, size)
    bad = [
        f"{chunk} (stored as {kind})"
        for chunk, kind in conn.execute(
            "SELECT chunk_id, typeof(embedding_blob) FROM chunks_vec WHERE typeof(embedding_blob) != 'blob'"
        )
    ]
    for model, size, _ in models:
        if size != usual[model] or size % 4 or not size:
            bad += [
                f"{chunk} ({size} bytes where {model} vectors have {usual[model]})"
                for (chunk,) in conn.execute(
                    "SELECT chunk_id FROM chunks_vec WHERE embedding_model = ? AND typeof(embedding_blob) = 'blob' "
                    "AND length(embedding_blob) = ?",
                    (model, size),
                )
            ]
    if bad:
        return Finding(
            "vectors",
            PROBLEM,
            f"{len(bad):,} vectors cannot be read (left out of search): {'; '.join(bad[:3])}"
            + (f"; … {len(bad) - 3:,} more" if len(bad) > 3 else "")
            + f"; {kinds}",
        )
    return Finding("vectors", OK, kinds)


def _sequences(conn: apsw.Connection) -> Finding:
    behind = conn.execute(
        "SELECT s.session_id FROM session_state s JOIN (SELECT session_id, max(sequence) AS top FROM "
        "conversation_events GROUP BY session_id) e ON e.session_id = s.session_id WHERE json_valid(s.state_json) "
        "AND json_type(s.state_json, '$.last_sequence') = 'integer' "
        "AND json_extract(s.state_json, '$.last_sequence') < e.top"
    ).fetchall()
    if behind:
        return Finding(
            "sequences",
            WARNING,
            f"{len(behind):,} sessions record a last_sequence below their newest event (first: {behind[0][0]!r})",
        )
    return Finding("sequences", OK, "every session's state agrees with its events")


def _schedules(conn: apsw.Connection, report: CheckReport) -> Finding:
    rows = search_schedules(conn, limit=-1)  # SQLite: no limit
    report.counts["schedules"] = len(rows)
    report.counts["runs"] = _one(conn, "SELECT count(*) FROM schedule_runs")
    flagged = [s for s in rows if s.problem]
    if flagged:
        first = flagged[0]
        return Finding(
            "schedules",
            WARNING,
            f"{len(flagged):,} rows cannot be used as they are (first: {first.schedule_id}: {first.problem})",
        )
    return Finding("schedules", OK, f"{len(rows):,} schedules readable")


def _agent_schema(conn: apsw.Connection) -> Finding:
    """An Oxydra file's schema is the agent's: its recorded versions, and what oxmem's features miss there."""
    versions = recorded_versions(conn)
    latest = f", latest {versions[-1]}" if versions else ""
    detail = f"the agent's schema, {len(versions)} versions recorded{latest} (oxmem never migrates it)"
    if not has_schedule_tables(conn):
        return Finding(
            "schema",
            WARNING,
            detail + "; its schedules and schedule_runs tables are missing or lack columns the agent adds later "
            "(its migrations 0017–0023): schedules are not shown",
        )
    return Finding("schema", OK, detail)


def _unique_keys(conn: apsw.Connection, objects: dict, fmt: str) -> Finding:
    """Every unique key (primary keys, UNIQUE constraints, unique and partial unique indexes) checked against the
    table's rows themselves (``NOT INDEXED``), so a key an index no longer enforces is found."""
    keys = 0
    duplicated = []
    for table, (kind, sql) in objects.items():
        if kind != "table" or sql.upper().startswith("CREATE VIRTUAL") or table.startswith("sqlite_"):
            continue
        for _, index, unique, _origin, partial in conn.execute(f"PRAGMA index_list({_quoted(table)})").fetchall():
            if not unique:
                continue
            columns = [r[2] for r in conn.execute(f"PRAGMA index_info({_quoted(index)})").fetchall()]
            if not columns or None in columns:  # an expression index (libSQL's vector index): nothing to group by
                continue
            where = [f"{_quoted(c)} IS NOT NULL" for c in columns]  # UNIQUE lets NULLs repeat
            if partial:
                where.append(f"({_partial_where(objects.get(index, ('', ''))[1])})")
            cols = ", ".join(_quoted(c) for c in columns)
            dups = _one(
                conn,
                f"SELECT count(*) FROM (SELECT 1 FROM {_quoted(table)} NOT INDEXED WHERE {' AND '.join(where)} "
                f"GROUP BY {cols} HAVING count(*) > 1)",
            )
            keys += 1
            if dups:
                duplicated.append(f"{table} ({', '.join(columns)}): {dups:,} values held by more than one row")
    gone = []
    for table, columns, where, index, what in RELIED_ON.get(fmt, ()):
        present = {r[1] for r in conn.execute(f"PRAGMA table_info({_quoted(table)})")}
        if not set(columns) | _where_columns(where) <= present or index in objects:
            continue  # another layout (aidaemon's legacy facts have a table-level key), or checked above
        cols = ", ".join(_quoted(c) for c in columns)
        dups = _one(
            conn,
            f"SELECT count(*) FROM (SELECT 1 FROM {_quoted(table)} WHERE {where} GROUP BY {cols} HAVING count(*) > 1)",
        )
        keys += 1
        gone.append(f"{index} is missing: nothing enforces {what}")
        if dups:
            duplicated.append(
                f"{table} ({', '.join(columns)}) where {where}: {dups:,} values held by more than one row"
            )
    if duplicated:
        return Finding("unique keys", PROBLEM, "; ".join(duplicated + gone))
    if gone:
        return Finding("unique keys", WARNING, f"{keys:,} unique keys hold, but " + "; ".join(gone))
    return Finding("unique keys", OK, f"{keys:,} unique keys hold, each read from its table's rows")


#: format → unique keys the program relies on, checked even when their index is gone: (table, columns, the rows
#: they hold for, the index that enforces it, the rule in words)
RELIED_ON: dict[str, tuple[tuple[str, tuple[str, ...], str, str, str], ...]] = {
    "aidaemon": (
        (
            "facts",
            ("category", "key"),
            "superseded_at IS NULL",
            "idx_facts_active_unique",
            "one active fact per category and key",
        ),
    ),
}


def _where_columns(where: str) -> set[str]:
    return {where.split()[0]}


def _partial_where(sql: str) -> str:
    """The WHERE clause of a ``CREATE UNIQUE INDEX … WHERE …`` statement (``1`` when there is none)."""
    upper = sql.upper()
    at = upper.rfind(" WHERE ")
    return sql[at + 7 :] if at >= 0 else "1"


def _fts_ids(conn: apsw.Connection, fts: str) -> set[int]:
    """The rowids an FTS5 table has indexed: one ``_docsize`` row per document, even one without tokens."""
    return {r[0] for r in conn.execute(f"SELECT id FROM {_quoted(fts + '_docsize')}")}


def _compare_ids(what: str, indexed: set[int], expected: set[int], extra: str = "") -> Finding:
    missing, stray = len(expected - indexed), len(indexed - expected)
    if not missing and not stray:
        return Finding("index sync", OK, f"{what}: {len(indexed):,} indexed = {len(expected):,} expected{extra}")
    parts = [f"{missing:,} rows not in the FTS index" if missing else "", f"{stray:,} FTS rows without their row"]
    return Finding("index sync", PROBLEM, f"{what}: " + "; ".join(p for p in parts if p and not p.startswith("0 ")))


def _omega_fts(conn: apsw.Connection, report: CheckReport) -> Finding:
    """Omega indexes only its users' messages: the FTS rowids are compared with those rows. FTS5's own
    ``integrity-check`` calls that partial index corrupt, and ``rebuild`` would index every message — neither is
    run."""
    expected = {r[0] for r in conn.execute("SELECT rowid FROM messages NOT INDEXED WHERE role = 'user'")}
    report.counts["messages"] = _one(conn, "SELECT count(*) FROM messages NOT INDEXED")
    report.counts["fts rows"] = len(indexed := _fts_ids(conn, "messages_fts"))
    return _compare_ids("messages_fts against the user messages", indexed, expected)


def _zeke_fts(conn: apsw.Connection, report: CheckReport) -> Finding:
    """ZEKE indexes every memory through an external-content table: rowids are compared, then FTS5's
    ``'integrity-check'`` with rank 1 compares the index with the content. That command is an INSERT, which a
    read-only connection refuses, so it runs on an in-memory copy taken with SQLite's backup API."""
    expected = {r[0] for r in conn.execute("SELECT rowid FROM memories NOT INDEXED")}
    report.counts["memories"] = len(expected)
    report.counts["fts rows"] = len(indexed := _fts_ids(conn, "memories_fts"))
    found = _compare_ids("memories_fts against the memories", indexed, expected, ", and their text agrees")
    if found.level != OK:
        return found
    copy = apsw.Connection(":memory:")
    try:
        with copy.backup("main", conn, "main") as backup:
            backup.step()
        copy.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    except apsw.CorruptError as exc:
        return Finding("index sync", PROBLEM, f"memories_fts does not match the memories' text: {exc}")
    finally:
        copy.close()
    return found


def _libsql_index(path: Path, report: CheckReport) -> Finding:
    """libSQL's vector index, through the libSQL engine (SQLite cannot read it, and libSQL's own
    ``integrity_check`` does not see a broken one): every vector must be found for its own vector
    (:func:`.vector_index.unfound`). The engine runs in a child process (:mod:`.libsql_writer`, read-only): a
    second SQLite library in this one would drop this process's locks on the file when it closed it."""
    if not have_libsql():
        return Finding("vector index", WARNING, "not checked: the libSQL engine is not installed (pip install libsql)")
    wal_existed = any(Path(f"{path}{s}").exists() for s in ("-wal", "-shm"))
    reader = LibsqlWriter(path, BUSY_TIMEOUT_MS, read_only=True)
    try:
        rows, asked, lost = reader.call(_unfound_vectors)
    except OxmemError as exc:
        return Finding("vector index", PROBLEM, f"libSQL could not search idx_chunks_vec_embedding_ann: {exc}")
    finally:
        reader.close()
        if not wal_existed:
            release_wal_files(path)
    which = f"the {rows:,} vectors" if asked == rows else f"{asked:,} vectors spread over the {rows:,}"
    if lost:
        return Finding(
            "vector index",
            PROBLEM,
            f"{len(lost):,} of {which} are not found by idx_chunks_vec_embedding_ann (first chunks_vec rowid "
            f"{lost[0]}): the agent's vector search misses them (stranded when a twin was deleted, or an index out of "
            "date); `oxmem check --repair` re-inserts them (rebuilding the index if need be), after a backup",
        )
    return Finding("vector index", OK, f"idx_chunks_vec_embedding_ann finds each of {which} (libSQL)")


def _unfound_vectors(conn: Any) -> tuple[int, int, list[int]]:
    """In the libSQL child: :func:`.vector_index.unfound` on its connection."""
    return vector_index.unfound(conn, conn.index)


async def check_store(path: str | os.PathLike[str], quick: bool = False, key: str | None = None) -> CheckReport:
    """Open ``path`` read-only (never written, never migrated) and run every check on one snapshot. A file SQLite
    cannot even open as a database (a damaged first page, cut short) is a report with that problem; a file that is
    missing or not SQLite at all is :class:`StoreOpenError`. An encrypted file needs ``key`` and is checked on its
    decrypted copy in memory (:mod:`.formats.encrypted`)."""
    p = database_path(path)
    encrypted = sniff_file(p) == "encrypted"
    try:
        if encrypted:
            if not key:
                raise KeyRequiredError(need_key_message(p))
            db = await Database.adopt(lambda: decrypt_to_memory(p, key), p)
        else:
            db = await Database.open(p, read_only=True)
    except DamagedError as exc:
        report = CheckReport(str(p), "unreadable", "unreadable")
        detail = str(exc.__cause__ or exc)
        report.findings.append(Finding("open", PROBLEM, f"SQLite cannot read the file: {detail}"))
        return report
    try:
        report = await db.read(run_checks, str(db.path), quick)
    finally:
        db.close()
    if encrypted:
        report.format += " (SQLCipher-encrypted: checked on its decrypted copy in memory)"
        report.journal_mode = None
    return report
