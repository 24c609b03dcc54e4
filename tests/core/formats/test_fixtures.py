"""The foreign-format fixtures are what they claim, checked with plain APSW (not through oxmem)."""

from __future__ import annotations

import json
import re
import shutil
import stat
from datetime import datetime, timedelta
from pathlib import Path

import apsw
import numpy as np
import pytest

from oxmem_gui.core.embeddings.backends import deterministic_vector
from tests.core.formats import fixtures as fx

SQLITE_HEADER = b"SQLite format 3\x00"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return fx.write_all(tmp_path_factory.mktemp("formats"))


def connect(path: Path) -> apsw.Connection:
    return apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)


def tables(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def count(conn: apsw.Connection, table: str, where: str = "1", args: tuple = ()) -> int:
    return conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", args).fetchall()[0][0]


def columns(conn: apsw.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def dump(path: Path) -> dict[str, list[tuple]]:
    """Every row of every ordinary table, in a stable order."""
    conn = connect(path)
    try:
        names = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        ).fetchall()
        return {n: sorted(map(repr, conn.execute(f"SELECT * FROM {n} NOT INDEXED"))) for (n,) in names}
    finally:
        conn.close()


def test_write_all_names_and_headers(tmp_path: Path) -> None:
    """What ``write_all`` leaves (written afresh: the module's files are read by other tests, in any order, and a
    read of a WAL file makes its ``-wal``)."""
    built = fx.write_all(tmp_path)
    expected = {"omega", "omega-old", "zeke", "zeke-384", "aidaemon", "aidaemon-legacy", "oxydra", "unknown",
                "not-sqlite", "empty"}  # fmt: skip
    assert expected <= set(built)
    for name, path in built.items():
        assert path.name == f"{name}.db"
        assert not Path(f"{path}-wal").exists()
        head = path.read_bytes()[:16]
        if name in ("not-sqlite", "empty", "aidaemon-encrypted"):
            assert head != SQLITE_HEADER
        else:
            assert head == SQLITE_HEADER, name


@pytest.mark.parametrize("make", [fx.make_omega, fx.make_zeke, fx.make_aidaemon, fx.make_oxydra])
def test_deterministic(make, tmp_path: Path) -> None:
    assert dump(make(tmp_path / "a.db")) == dump(make(tmp_path / "b.db"))


# -- Omega ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["omega", "omega-old"])
def test_omega_tables_and_counts(built: dict[str, Path], name: str) -> None:
    conn = connect(built[name])
    current = name == "omega"
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    common = {"conversations", "messages", "facts", "scheduled_tasks", "audit_log", "limitations", "_migrations",
              "messages_fts"}  # fmt: skip
    newer = {"user_aliases", "outcomes", "lessons", "project_sessions"}  # the agent's migrations 008 and 010–012
    assert common <= tables(conn)
    assert (newer <= tables(conn)) if current else not (newer & tables(conn))
    migrations = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert migrations == (fx.OMEGA_MIGRATION_NAMES if current else fx.OMEGA_MIGRATION_NAMES[:6])
    assert migrations[0] == "001_init" and (not current or migrations[-1] == "013_multi_lessons")
    assert ("project" in columns(conn, "conversations")) == current
    assert {"task_type", "retry_count", "last_error", "project"} & set(columns(conn, "scheduled_tasks")) == (
        {"task_type", "retry_count", "last_error", "project"} if current else set()
    )
    assert count(conn, "conversations") == 5
    assert count(conn, "conversations", "status = 'active'") == 2
    assert count(conn, "messages") == 22
    assert count(conn, "messages", "role = 'user'") == 11
    assert count(conn, "facts") == 12
    assert count(conn, "facts", "sender_id = '4242'") == 6
    assert count(conn, "scheduled_tasks") == 8
    repeats = {r[0] for r in conn.execute("SELECT DISTINCT repeat FROM scheduled_tasks")}
    assert repeats == {None, "once", "daily", "weekly", "monthly", "weekdays"}
    statuses = {r[0] for r in conn.execute("SELECT DISTINCT status FROM scheduled_tasks")}
    assert statuses == {"pending", "delivered", "cancelled"}
    assert count(conn, "scheduled_tasks", "due_at LIKE '%T%Z'") == 3
    assert count(conn, "scheduled_tasks", "due_at LIKE '%T%' AND due_at NOT LIKE '%Z'") == 1
    assert conn.execute("SELECT rowid, id FROM messages WHERE rowid = 8").fetchall() == [(8, fx.OMEGA_MESSAGES[8])]
    if current:
        assert count(conn, "lessons") == 2 and count(conn, "outcomes") == 2
        retried = conn.execute("SELECT retry_count, last_error FROM scheduled_tasks WHERE id = ?",
                               (fx.OMEGA_TASKS["standup"],)).fetchall()  # fmt: skip
        assert retried == [(2, "telegram: 502 Bad Gateway")]


@pytest.mark.parametrize("name", ["omega", "omega-old"])
def test_omega_fts_indexes_only_user_messages(built: dict[str, Path], name: str) -> None:
    conn = connect(built[name])
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab('main', 'messages_fts', 'instance')")
    indexed = {r[0] for r in conn.execute("SELECT DISTINCT doc FROM temp.vocab")}
    users = {r[0] for r in conn.execute("SELECT rowid FROM messages WHERE role = 'user'")}
    assert indexed == users == set(range(1, 22, 2))
    assert conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'Sintra'").fetchall() == []
    assert count(conn, "messages", "role = 'assistant' AND content LIKE '%Sintra%'") == 1


RECALL = (
    "SELECT m.id, m.conversation_id FROM messages_fts f JOIN messages m ON m.rowid = f.rowid "
    "JOIN conversations c ON c.id = m.conversation_id "
    "WHERE messages_fts MATCH ? AND c.sender_id = ? AND c.id <> ? ORDER BY f.rank LIMIT 5"
)


@pytest.mark.parametrize(
    ("phrase", "sender", "current", "hits"),
    [
        ("dentist appointment", "4242", "current", [(1, "dentist")]),
        ("book a flight to Lisbon", "4242", "current", [(5, "lisbon")]),
        ("dentist appointment", "77", "jonas-current", [(15, "jonas-dentist")]),
        ("book a flight to Lisbon", "77", "jonas-dentist", [(19, "jonas-current")]),
    ],
)
def test_omega_phrase_recall(built: dict[str, Path], phrase: str, sender: str, current: str, hits: list) -> None:
    conn = connect(built["omega"])
    found = conn.execute(RECALL, (f'"{phrase}"', sender, fx.OMEGA_CONVERSATIONS[current])).fetchall()
    assert found == [(fx.OMEGA_MESSAGES[n], fx.OMEGA_CONVERSATIONS[c]) for n, c in hits]
    everywhere = conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (f'"{phrase}"',))
    assert everywhere.fetchall() == [(3,)]


def test_omega_role_check(built: dict[str, Path], tmp_path: Path) -> None:
    copy = shutil.copy(built["omega"], tmp_path / "omega.db")
    conn = apsw.Connection(str(copy))
    with pytest.raises(apsw.ConstraintError):
        conn.execute("INSERT INTO messages (id, conversation_id, role, content) VALUES ('x', ?, 'system', 'hi')",
                     (fx.OMEGA_CONVERSATIONS["current"],))  # fmt: skip


# -- ZEKE -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "dims"), [("zeke", 1536), ("zeke-384", 384)])
def test_zeke(built: dict[str, Path], name: str, dims: int) -> None:
    conn = connect(built[name])
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("delete",)]
    assert {"memories", "memories_fts"} <= tables(conn)
    assert not any("migration" in t for t in tables(conn))
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE sql LIKE '%REFERENCES%'").fetchall() == [(0,)]
    assert count(conn, "memories") == 26
    per_scope = dict(conn.execute("SELECT scope, count(*) FROM memories GROUP BY scope"))
    assert per_scope == {"persona:zeke": 6, "task:inbox": 5, "ops:deploy": 5, "calendar:work": 5, "notes": 5}
    lengths = dict(conn.execute("SELECT id, length(embedding) FROM memories"))
    missing = {fx.ZEKE_IDS[n] for n in ("p-allergy", "t-passport", "n-bike")}
    assert {i for i, n in lengths.items() if n is None} == missing
    assert {n for n in lengths.values() if n is not None} == {dims * 4}
    for (blob,) in conn.execute("SELECT embedding FROM memories WHERE embedding IS NOT NULL"):
        assert abs(np.linalg.norm(np.frombuffer(blob, dtype="<f4")) - 1) < 1e-5
    for (tags,) in conn.execute("SELECT tags FROM memories WHERE tags IS NOT NULL"):
        assert isinstance(json.loads(tags), list)
    assert count(conn, "memories", "ttl_seconds IS NOT NULL AND scope IN ('persona:zeke', 'notes')") == 0
    assert count(conn, "memories", "last_accessed_at IS NULL") == 5
    assert count(conn, "memories_fts", "memories_fts MATCH 'accountant'") == 2


def zeke_expired(conn: apsw.Connection) -> set[str]:
    out = set()
    for mid, created, ttl in conn.execute("SELECT id, created_at, ttl_seconds FROM memories"):
        if ttl is not None and datetime.fromisoformat(created) + timedelta(seconds=ttl) < fx.ZEKE_NOW:
            out.add(mid)
    return out


def test_zeke_expiry(built: dict[str, Path]) -> None:
    conn = connect(built["zeke"])
    assert zeke_expired(conn) == {fx.ZEKE_IDS[n] for n in fx.ZEKE_EXPIRED}
    created = dict(conn.execute("SELECT id, created_at FROM memories"))
    assert created[fx.ZEKE_IDS["t-newsletter"]] == "2026-03-01T09:00:00"
    assert all(len(v) == 26 for k, v in created.items() if k != fx.ZEKE_IDS["t-newsletter"])


def test_zeke_extra_per_scope(tmp_path: Path) -> None:
    path = fx.make_zeke(tmp_path / "zeke.db", "384", extra_per_scope={"task:inbox": 4, "archive:old": 2})
    conn = connect(path)
    assert count(conn, "memories") == 32
    assert count(conn, "memories", "scope = 'task:inbox'") == 9
    rows = conn.execute(
        "SELECT id, created_at, last_accessed_at, ttl_seconds, length(embedding) FROM memories "
        "WHERE text LIKE 'filler memory % for task:inbox' ORDER BY created_at"
    ).fetchall()
    assert [r[0] for r in rows] == [fx.zeke_filler_id("task:inbox", i) for i in range(4)]
    assert len({r[1] for r in rows}) == len({r[2] for r in rows}) == 4
    assert [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)  # the last made was used least lately
    assert {r[3] for r in rows} == {fx.ZEKE_TTL_90_DAYS} and {r[4] for r in rows} == {1536}
    assert zeke_expired(conn) == {fx.ZEKE_IDS[n] for n in fx.ZEKE_EXPIRED}
    assert count(conn, "memories", "scope = 'archive:old' AND ttl_seconds IS NULL") == 2


# -- aidaemon ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["aidaemon", "aidaemon-legacy"])
def test_aidaemon_file(built: dict[str, Path], name: str) -> None:
    assert stat.S_IMODE(built[name].stat().st_mode) == 0o600
    conn = connect(built[name])
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]


def test_aidaemon_current(built: dict[str, Path]) -> None:
    conn = connect(built["aidaemon"])
    names = tables(conn)
    empty = ["macros", "terminal_allowed_prefixes", "conversation_summaries", "goals", "goal_schedules", "procedures",
             "people", "person_facts"]  # fmt: skip
    assert {"events", "facts", "episodes", *empty} <= names
    assert not {"messages", "scheduled_tasks"} & names
    assert all(count(conn, t) == 0 for t in empty)
    assert count(conn, "events") == 24 and count(conn, "facts") == 7 and count(conn, "episodes") == 2
    assert {r[0] for r in conn.execute("SELECT DISTINCT event_type FROM events")} == set(fx.AIDAEMON_EVENT_TYPES)
    for kind, data, tool in conn.execute("SELECT event_type, data, tool_name FROM events"):
        payload = json.loads(data)
        if kind == "user_message":
            assert set(payload) == {"text"}
        if kind == "tool_call":
            assert payload["name"] == tool and isinstance(payload["arguments"], dict)
        if kind == "tool_result":
            assert "result" in payload
    stamps = [r[0] for r in conn.execute("SELECT created_at FROM events")]
    assert any(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}\+00:00", s) for s in stamps)
    assert any(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", s) for s in stamps)
    history = conn.execute("SELECT id, value, superseded_at IS NOT NULL FROM facts WHERE key = 'timezone' ORDER BY id")
    assert history.fetchall() == [(1, "Europe/London", 1), (2, "America/New_York", 1), (3, "Europe/Berlin", 0)]
    assert count(conn, "facts", "superseded_at IS NULL") == 5
    index = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'idx_facts_active_unique'").fetchall()[0][0]
    assert "UNIQUE" in index and "superseded_at IS NULL" in index


def test_aidaemon_one_active_fact_per_key(built: dict[str, Path], tmp_path: Path) -> None:
    copy = shutil.copy(built["aidaemon"], tmp_path / "aidaemon.db")
    conn = apsw.Connection(str(copy))
    with pytest.raises(apsw.ConstraintError):
        conn.execute(
            "INSERT INTO facts (category, key, value, created_at, updated_at) "
            "VALUES ('user', 'timezone', 'Asia/Tokyo', 'now', 'now')"
        )
    conn.execute(
        "INSERT INTO facts (category, key, value, created_at, updated_at, superseded_at) "
        "VALUES ('user', 'timezone', 'x', 'now', 'now', 'now')"
    )


def test_aidaemon_legacy(built: dict[str, Path]) -> None:
    conn = connect(built["aidaemon-legacy"])
    assert {"messages", "scheduled_tasks", "facts"} <= tables(conn) and "events" not in tables(conn)
    assert count(conn, "messages") == 12 and count(conn, "scheduled_tasks") == 4
    salient = [r[0] for r in conn.execute("SELECT id FROM messages WHERE importance >= 0.8 ORDER BY id")]
    assert salient == fx.AIDAEMON_SALIENT
    kinds = dict(conn.execute("SELECT id, typeof(embedding) || ':' || coalesce(length(embedding), '') FROM messages"))
    assert sum(k == "blob:1536" for k in kinds.values()) == 9
    assert kinds["msg-10"] == "null:"
    raw = dict(conn.execute("SELECT id, embedding FROM messages WHERE id IN ('msg-07', 'msg-08')"))
    assert isinstance(raw["msg-07"], str) and raw["msg-07"].startswith("[")
    assert isinstance(raw["msg-08"], bytes) and raw["msg-08"][:1] == b"["
    assert len(json.loads(raw["msg-07"])) == len(json.loads(raw["msg-08"])) == 384
    assert conn.execute("SELECT embedding_error FROM messages WHERE id = 'msg-10'").fetchall()[0][0]
    flags = conn.execute("SELECT id, is_oneshot, is_paused FROM scheduled_tasks WHERE is_oneshot OR is_paused")
    assert sorted(flags) == [("remind-passport", 1, 0), ("weekly-report", 0, 1)]


def test_aidaemon_encrypted(built: dict[str, Path]) -> None:
    sqlcipher3 = pytest.importorskip("sqlcipher3")
    path = built["aidaemon-encrypted"]
    assert path.read_bytes()[:16] != SQLITE_HEADER
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(apsw.NotADBError):
        connect(path).execute("SELECT count(*) FROM sqlite_master").fetchall()
    conn = sqlcipher3.connect(str(path))
    try:
        conn.execute(f"PRAGMA key = '{fx.AIDAEMON_KEY}'")
        assert conn.execute("PRAGMA cipher_version").fetchall()[0][0].startswith("4.")
        assert conn.execute("SELECT count(*) FROM events").fetchall() == [(24,)]
        assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
        plain = connect(built["aidaemon"])
        for table in ("events", "facts", "episodes"):
            assert (
                conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
                == plain.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
            )
    finally:
        conn.close()
    wrong = sqlcipher3.connect(str(path))
    wrong.execute("PRAGMA key = '" + "0" * 64 + "'")
    with pytest.raises(sqlcipher3.DatabaseError):
        wrong.execute("SELECT count(*) FROM sqlite_master").fetchall()
    wrong.close()


# -- Oxydra -----------------------------------------------------------------------------------------------------

NATIVE = {"sessions", "conversation_events", "session_state", "files", "chunks", "chunks_vec", "chunks_fts",
          "schedules", "schedule_runs", "memory_migrations"}  # fmt: skip


def test_oxydra(built: dict[str, Path]) -> None:
    conn = connect(built["oxydra"])
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    assert NATIVE | {"gateway_sessions", "channel_session_mappings"} <= tables(conn)
    versions = [r[0] for r in conn.execute("SELECT version FROM memory_migrations ORDER BY version")]
    assert "0001_initial" in versions and set(fx.OXYDRA_UNKNOWN_MIGRATIONS) <= set(versions)
    assert count(conn, "gateway_sessions") == 3 and count(conn, "channel_session_mappings") == 3
    sessions = {r[0] for r in conn.execute("SELECT session_id FROM sessions")}
    assert sessions == set(fx.OXYDRA_SESSIONS) | {"memory:alice", "memory:carol"}
    assert count(conn, "chunks_vec", "length(embedding_blob) = 256 AND embedding_model = 'deterministic-hash-v1'") == (
        count(conn, "chunks")
    )
    assert count(conn, "chunks", "json_extract(metadata_json, '$.note_id') IS NOT NULL") == 4
    cadences = {r[0]: json.loads(r[1]) for r in conn.execute("SELECT name, cadence_json FROM schedules")}
    assert cadences["Monday plan"]["expression"] == "0 8 * * 1"
    assert cadences["Friday wrap-up"]["expression"] == "0 17 * * FRI"
    assert count(conn, "schedule_runs") == 2
    assert count(conn, "sessions", "created_at LIKE '2026-02-%'") == 5


@pytest.fixture(scope="module")
def libsql_file(built: dict[str, Path]) -> Path:
    pytest.importorskip("libsql")
    return built["oxydra-libsql"]


def test_oxydra_libsql_reads_with_apsw(libsql_file: Path, built: dict[str, Path]) -> None:
    conn = connect(libsql_file)
    names = tables(conn)
    assert NATIVE | {"gateway_sessions", "channel_session_mappings"} <= names
    assert {"libsql_vector_meta_shadow", "idx_chunks_vec_embedding_ann_shadow"} <= names
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    declared = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").fetchall()[0][0]
    assert "embedding_blob FLOAT32(512)" in declared
    index = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'idx_chunks_vec_embedding_ann'").fetchall()
    assert "libsql_vector_idx(embedding_blob)" in index[0][0]
    versions = {r[0] for r in conn.execute("SELECT version FROM memory_migrations")}
    assert versions == set(fx.OXYDRA_AGENT_MIGRATIONS) and fx.OXYDRA_ANN_MIGRATION in versions
    for name in names:  # every table reads
        conn.execute(f'SELECT * FROM "{name}"').fetchall()
    hits = conn.execute("SELECT chunk_id, session_id FROM chunks_fts WHERE chunks_fts MATCH '\"sourdough starter\"'")
    assert [r[1] for r in hits] == [fx.POTION_SESSION]
    native = connect(built["oxydra"])
    for table in ("chunks", "conversation_events", "schedules", "gateway_sessions"):
        assert dump_table(conn, table) == dump_table(native, table)
    chunks = dict(conn.execute("SELECT chunk_id, session_id FROM chunks"))
    texts = dict(conn.execute("SELECT chunk_id, chunk_text FROM chunks"))
    rows = conn.execute("SELECT chunk_id, embedding_blob, embedding_model FROM chunks_vec").fetchall()
    assert len(rows) == len(chunks) == 21
    for chunk_id, blob, model in rows:
        assert len(blob) == 2048
        vector = np.frombuffer(blob, dtype="<f4")
        if chunks[chunk_id] == fx.POTION_SESSION:
            assert model == fx.POTION_MODEL and not vector[256:].any() and abs(np.linalg.norm(vector) - 1) < 1e-5
        else:
            assert model == "deterministic-hash-v1" and not vector[64:].any()
            assert np.array_equal(vector[:64], deterministic_vector(texts[chunk_id]))


def dump_table(conn: apsw.Connection, table: str) -> list[tuple]:
    return sorted(conn.execute(f"SELECT * FROM {table} NOT INDEXED").fetchall(), key=repr)


def test_oxydra_libsql_count_star_trap(libsql_file: Path) -> None:
    """Plain SQLite answers ``count(*)`` from the ANN index's b-tree, which libSQL leaves empty."""
    conn = connect(libsql_file)
    assert conn.execute("SELECT count(*) FROM chunks_vec").fetchall() == [(0,)]
    assert conn.execute("SELECT count(*) FROM chunks_vec NOT INDEXED").fetchall() == [(21,)]
    assert conn.execute("SELECT count(chunk_id) FROM chunks_vec").fetchall() == [(21,)]


def test_oxydra_libsql_writes_fail_in_apsw(libsql_file: Path, tmp_path: Path) -> None:
    copy = shutil.copy(libsql_file, tmp_path / "oxydra-libsql.db")
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA foreign_keys = ON")  # as every connection of the project sets it
    chunk_id = conn.execute("SELECT chunk_id FROM chunks_vec LIMIT 1").fetchall()[0][0]
    for sql, args in [
        ("DELETE FROM chunks_vec WHERE chunk_id = ?", (chunk_id,)),
        ("DELETE FROM chunks_vec", ()),
        ("DELETE FROM chunks WHERE chunk_id = ?", (chunk_id,)),
        ("DELETE FROM sessions WHERE session_id = ?", (fx.POTION_SESSION,)),
        ("INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) VALUES ('x', zeroblob(2048), 'm')", ()),
        ("UPDATE chunks_vec SET embedding_blob = zeroblob(2048) WHERE chunk_id = ?", (chunk_id,)),
        ("PRAGMA integrity_check", ()),
    ]:
        with pytest.raises(apsw.SQLError, match="libsql_vector_idx"):
            conn.execute(sql, args).fetchall()
    assert conn.execute("SELECT count(*) FROM chunks_vec NOT INDEXED").fetchall() == [(21,)]


def test_oxydra_libsql_bare_delete_without_foreign_keys(libsql_file: Path, tmp_path: Path) -> None:
    """With foreign keys off, a bare DELETE takes SQLite's truncate shortcut, which never evaluates the index
    expression: it "works" and leaves the ANN shadow table stale."""
    copy = shutil.copy(libsql_file, tmp_path / "oxydra-libsql.db")
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM chunks_vec")
    assert conn.execute("SELECT count(*) FROM chunks_vec NOT INDEXED").fetchall() == [(0,)]
    assert conn.execute("SELECT count(*) FROM idx_chunks_vec_embedding_ann_shadow").fetchall() == [(21,)]


def test_oxydra_libsql_engine_uses_the_index(libsql_file: Path) -> None:
    libsql = pytest.importorskip("libsql")
    conn = libsql.connect(str(libsql_file))
    try:
        chunk_id, blob = conn.execute(
            "SELECT chunk_id, embedding_blob FROM chunks_vec WHERE embedding_model = ? LIMIT 1", (fx.POTION_MODEL,)
        ).fetchall()[0]
        top = conn.execute(
            "SELECT v.chunk_id FROM vector_top_k('idx_chunks_vec_embedding_ann', ?, 1) AS k "
            "JOIN chunks_vec AS v ON v.rowid = k.id",
            (blob,),
        ).fetchall()
        assert top == [(chunk_id,)]
        assert conn.execute("SELECT count(*) FROM chunks_vec").fetchall() == [(21,)]
    finally:
        conn.close()


# -- others -----------------------------------------------------------------------------------------------------


def test_unknown_sqlite(built: dict[str, Path]) -> None:
    conn = connect(built["unknown"])
    assert tables(conn) == {"recipes", "ingredients", "recipe_ingredients"}
    assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall() == [("quick_recipes",)]
    assert count(conn, "recipes") == fx.RECIPE_COUNT
    assert count(conn, "recipes", "photo IS NOT NULL AND typeof(photo) = 'blob'") == 25
    assert count(conn, "recipes", "notes IS NULL") > 200
    assert count(conn, "recipes", "rating IS NULL") > 0
    assert count(conn, "recipe_ingredients") == 750
    assert conn.execute("SELECT count(*) FROM quick_recipes").fetchall()[0][0] > 0


def test_not_sqlite_and_empty(built: dict[str, Path]) -> None:
    assert built["empty"].stat().st_size == 0
    assert built["not-sqlite"].read_text(encoding="utf-8").startswith("# agent memory")
    with pytest.raises(apsw.NotADBError):
        connect(built["not-sqlite"]).execute("SELECT * FROM sqlite_master").fetchall()
    assert connect(built["empty"]).execute("SELECT * FROM sqlite_master").fetchall() == []
