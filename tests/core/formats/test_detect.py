"""Format detection and the reader layer's command line, on the fixtures of ``tests/core/formats/fixtures.py``.

Everything runs ``oxmem_gui.cli.main`` in-process (the helpers of ``tests/cli/_support.py``). The fixture files are
built once per module; a test that runs anything that could write works on a copy in its own ``tmp_path``. The
test's own SQL goes through an ``immutable`` read-only APSW connection, which cannot leave ``-wal``/``-shm`` files
beside a fixture (a plain read-only connection to a WAL file creates them).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote
from zoneinfo import ZoneInfo

import apsw
import numpy as np
import pytest

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.embeddings.backends import DeterministicEmbedding
from oxmem_gui.core.formats.detect import LABELS
from oxmem_gui.core.memory import inspect_database
from tests.cli._support import assert_one_error_line, build_demo, run, run_json
from tests.core.formats import fixtures as fx

LIBSQL = "oxydra-libsql"
ENCRYPTED = "aidaemon-encrypted"
BERLIN = "telegram:alice:berlin-move"
MONDAY_PLAN = "00000000-0000-4000-8000-000000000001"  # cron `0 8 * * 1` Europe/Berlin
FRIDAY_WRAP = "00000000-0000-4000-8000-000000000002"  # cron `0 17 * * FRI` Europe/Berlin
INBOX_WATCH = "00000000-0000-4000-8000-000000000003"  # interval
PASSPORT = "00000000-0000-4000-8000-000000000006"  # once

#: every file of the module fixture and the format ``inspect_database`` must find in it
EXPECTED_FORMATS = {
    "oxmem": "oxmem",  # `oxmem demo`
    "oxmem-store": "oxmem",  # MemoryStore.open, nothing in it
    "oxydra": "oxydra",
    "oxydra-agent": "oxydra",
    LIBSQL: "oxydra-libsql",
    "omega": "omega",
    "omega-old": "omega",
    "zeke": "zeke",
    "zeke-384": "zeke",
    "aidaemon": "aidaemon",
    "aidaemon-legacy": "aidaemon-legacy",
    "unknown": "sqlite-unknown",
    "empty": "sqlite-unknown",
    ENCRYPTED: "encrypted",
    "not-sqlite": "not-sqlite",
}


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact numbers with the dependency-free backend; no key or store path from the caller's environment."""
    monkeypatch.setenv("OXMEM_EMBEDDING", "deterministic")
    monkeypatch.delenv("OXMEM_DB_KEY", raising=False)
    monkeypatch.delenv("OXMEM_DB", raising=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = fx.write_all(tmp_path_factory.mktemp("formats"))
    # libsql and sqlcipher3 are test dependencies (pyproject [test]): their fixtures must be there
    assert {LIBSQL, ENCRYPTED} <= set(files), sorted(files)
    files["oxmem"] = build_demo(tmp_path_factory.mktemp("demo"))
    store_path = tmp_path_factory.mktemp("store") / "oxmem-store.db"

    async def make_store() -> None:
        store = await MemoryStore.open(store_path, embedding="deterministic")
        await store.aclose()

    asyncio.run(make_store())
    files["oxmem-store"] = store_path
    return files


# -- helpers ----------------------------------------------------------------------------------------------------


def copy(built: dict[str, Path], name: str, tmp_path: Path, as_name: str | None = None) -> Path:
    """A copy of a fixture (mode and mtime kept) alone in a folder of its own, for a test that could write."""
    folder = tmp_path / "db"
    folder.mkdir(exist_ok=True)
    target = folder / (as_name or built[name].name)
    shutil.copy2(built[name], target)
    return target


def immutable(path: Path) -> apsw.Connection:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY)


def one(path: Path, sql: str, args: tuple = ()) -> object:
    conn = immutable(path)
    try:
        return conn.execute(sql, args).fetchall()[0][0]
    finally:
        conn.close()


def rows(path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    conn = immutable(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def table_counts(path: Path) -> dict[str, int]:
    """Exact rows of every ordinary table (``NOT INDEXED``: libSQL's vector index looks empty to SQLite)."""
    conn = immutable(path)
    try:
        names = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL%'"
        ).fetchall()
        return {n: conn.execute(f'SELECT count(*) FROM "{n}" NOT INDEXED').fetchall()[0][0] for (n,) in names}
    finally:
        conn.close()


def state(path: Path) -> dict[str, object]:
    """What a command that must not write could change: bytes, mtime, mode, and the files beside it."""
    st = path.stat()
    return {
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "mtime_ns": st.st_mtime_ns,
        "mode": st.st_mode,
        "beside": sorted(os.listdir(path.parent)),
    }


def schedules_by_id(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> dict[str, dict]:
    listed = run_json(capsys, "--db", str(path), *options, "schedules", "list")
    return {s["schedule_id"]: s for s in listed}


# -- 1. detection -----------------------------------------------------------------------------------------------


def test_every_fixture_has_an_expected_format(built: dict[str, Path]) -> None:
    assert set(built) == set(EXPECTED_FORMATS)


@pytest.mark.parametrize(("name", "fmt"), sorted(EXPECTED_FORMATS.items()))
def test_inspect_database_detects_the_format(built: dict[str, Path], tmp_path: Path, name: str, fmt: str) -> None:
    path = copy(built, name, tmp_path)
    info = asyncio.run(inspect_database(path))
    assert (info.format, info.label) == (fmt, LABELS[fmt])
    assert info.size_bytes == path.stat().st_size


def test_encrypted_file_with_its_key_is_aidaemon(built: dict[str, Path], tmp_path: Path) -> None:
    path = copy(built, ENCRYPTED, tmp_path)
    assert asyncio.run(inspect_database(path, fx.AIDAEMON_KEY)).format == "aidaemon"


@pytest.mark.parametrize(
    ("name", "as_name", "fmt"),
    [
        ("omega", "memory.sqlite", "omega"),
        ("omega", "zeke.db", "omega"),
        ("omega", "oxydra-libsql.db", "omega"),
        ("zeke", "omega.db", "zeke"),
        ("unknown", "memory.db", "sqlite-unknown"),
        (LIBSQL, "aidaemon.db", "oxydra-libsql"),
        ("aidaemon-legacy", "notes", "aidaemon-legacy"),
    ],
)
def test_detection_never_uses_the_file_name(
    built: dict[str, Path], tmp_path: Path, name: str, as_name: str, fmt: str
) -> None:
    path = copy(built, name, tmp_path, as_name)
    assert asyncio.run(inspect_database(path)).format == fmt


# -- 2. oxmem info -----------------------------------------------------------------------------------------------


def test_info_json_of_libsql_file(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built[LIBSQL]
    doc = run_json(capsys, "--db", str(path), "info")
    assert (doc["format"], doc["label"]) == ("oxydra-libsql", "Oxydra memory (libSQL vector index)")
    assert doc["journal_mode"] == "wal"
    markers = " | ".join(doc["markers"])
    assert "0024_create_chunks_vec_vector_index" in markers and "libsql" in markers.lower(), markers

    tables = {t["name"]: t for t in doc["tables"]}
    plain_count = one(path, "SELECT count(*) FROM chunks_vec NOT INDEXED")
    assert plain_count == 21
    assert one(path, "SELECT count(*) FROM chunks_vec") == 0  # the trap: SQLite counts the empty ANN b-tree
    assert (tables["chunks_vec"]["kind"], tables["chunks_vec"]["rows"]) == ("table", plain_count)
    # every other table's count is exact too
    for name, count in table_counts(path).items():
        assert tables[name]["rows"] == count, name
    assert tables["chunks_fts"]["kind"] == "virtual"
    assert tables["idx_chunks_vec_embedding_ann_shadow"]["kind"] == "shadow"

    embeddings = sorted(
        (e["table"], e["model"], e["dimensions"], e["stored_dimensions"], e["rows"]) for e in doc["embeddings"]
    )
    assert embeddings == [
        ("chunks_vec", "deterministic-hash-v1", 64, 512, 17),
        ("chunks_vec", fx.POTION_MODEL, 256, 512, 4),
    ]
    assert doc["editing"] == ""  # every edit is made, those reaching chunks_vec through the libSQL engine


def test_info_of_encrypted_file_without_key(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built[ENCRYPTED]
    code, out, err = run(capsys, "--db", str(path), "info")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"{path}: encrypted (encrypted database), {path.stat().st_size:,} bytes"
    assert "encrypted — provide the key" in out
    assert "OXMEM_DB_KEY" in out


def test_info_of_encrypted_file_with_key(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy(built, ENCRYPTED, tmp_path)
    plain = table_counts(built["aidaemon"])  # the same content, unencrypted
    assert (plain["events"], plain["facts"], plain["episodes"]) == (24, 7, 2)

    monkeypatch.setenv("OXMEM_DB_KEY", fx.AIDAEMON_KEY)
    code, out, err = run(capsys, "--db", str(path), "info")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{path}: aidaemon (aidaemon memory), {path.stat().st_size:,} bytes"
    shown = {}
    for line in lines:
        cells = line.split()
        if len(cells) == 4 and cells[1] == "table":
            shown[cells[0]] = int(cells[2].replace(",", ""))
    assert shown == plain

    doc = run_json(capsys, "--db", str(path), "info")
    assert doc["format"] == "aidaemon"
    assert {t["name"]: t["rows"] for t in doc["tables"]} == plain

    monkeypatch.delenv("OXMEM_DB_KEY")
    assert run_json(capsys, "--db", str(path), "--key", fx.AIDAEMON_KEY, "info") == doc


def test_wrong_key_is_one_error_line(capfd: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path) -> None:
    """On the process's real stderr (``capfd``): SQLCipher's own log lines must not reach the user."""
    path = copy(built, ENCRYPTED, tmp_path)
    before = state(path)
    code, out, err = run(capfd, "--db", str(path), "--key", "not-the-key", "info")
    assert_one_error_line(code, out, err, "wrong key")
    assert state(path) == before


# -- 3. libSQL safety ---------------------------------------------------------------------------------------------


def _jsonl(folder: Path) -> Path:
    f = folder / "events.jsonl"
    f.write_text(json.dumps({"session_id": BERLIN, "sequence": 9, "payload": {"role": "user", "content": "hi"}}) + "\n")
    return f


@pytest.mark.parametrize(
    "argv",
    [
        ("notes", "add", "alice", "Prefers window seats"),
        ("forget", fx.POTION_SESSION),
        ("forget", BERLIN),
        ("import-jsonl", "<jsonl>"),
    ],
    ids=["notes-add", "forget-potion", "forget-berlin", "import-jsonl"],
)
def test_libsql_vector_writes_from_the_command_line(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """Writes that reach ``chunks_vec`` go through the libSQL engine: done, and libSQL finds the file sound."""
    from tests.core.test_libsql_writer import healthy, through_libsql

    path = copy(built, LIBSQL, tmp_path)
    argv = tuple(str(_jsonl(tmp_path)) if a == "<jsonl>" else a for a in argv)
    before = through_libsql(path)
    code, out, err = run(capsys, "--db", str(path), *argv)
    assert (code, err) == (0, ""), err
    after = healthy(path, before)
    assert after["chunks"] != before["chunks"]


def test_libsql_schedule_pause_keeps_vectors_readable(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(built, LIBSQL, tmp_path)
    vec_sql = "SELECT chunk_id, embedding_model, embedding_blob FROM chunks_vec NOT INDEXED ORDER BY chunk_id"
    shadow_sql = "SELECT * FROM idx_chunks_vec_embedding_ann_shadow NOT INDEXED ORDER BY 1"
    vectors, shadow = rows(path, vec_sql), rows(path, shadow_sql)

    doc = run_json(capsys, "--db", str(path), "schedules", "pause", MONDAY_PLAN)
    assert (doc["schedule_id"], doc["status"], doc["next_run_at"]) == (MONDAY_PLAN, "paused", None)

    conn = apsw.Connection(str(path))  # plain SQLite, as any other tool would open it
    try:
        assert conn.execute("SELECT status FROM schedules WHERE schedule_id = ?", (MONDAY_PLAN,)).fetchall() == [
            ("paused",)
        ]
        assert conn.execute("SELECT count(*) FROM chunks_vec NOT INDEXED").fetchall() == [(21,)]
        assert conn.execute(vec_sql).fetchall() == vectors
        assert conn.execute(shadow_sql).fetchall() == shadow
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'x'").fetchall() == [(0,)]
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'Berlin'").fetchall()[0][0] > 0
    finally:
        conn.close()


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_libsql_search_reads_the_leading_dimensions(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built[LIBSQL]
    query = "register   my\taddress "
    doc = run_json(capsys, "--db", str(path), "search", BERLIN, query)
    session_chunks = one(path, "SELECT count(*) FROM chunks WHERE session_id = ?", (BERLIN,))
    assert session_chunks == 8
    assert doc["legs"]["vector"]["candidates"] == session_chunks
    assert doc["hits"] and all(h["embedding_model"] == "deterministic-hash-v1" for h in doc["hits"])

    q = DeterministicEmbedding().embed([" ".join(query.split())])[0]
    checked = 0
    for hit in doc["hits"]:
        if hit["vector_raw"] is None:
            continue
        blob = one(path, "SELECT embedding_blob FROM chunks_vec NOT INDEXED WHERE chunk_id = ?", (hit["chunk_id"],))
        stored = np.frombuffer(blob, dtype="<f4")
        assert len(stored) == 512 and not stored[64:].any()
        assert hit["vector_raw"] == pytest.approx(_cosine(q, stored[:64]), abs=1e-6), hit["chunk_id"]
        checked += 1
    assert checked == len(doc["hits"]) == 8


def test_libsql_search_with_the_agents_ranking(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = str(built[LIBSQL])
    doc = run_json(capsys, "--db", path, "search", BERLIN, "register my address", "--ranking", "oxydra")
    assert (doc["retriever"], doc["fts_mode"], doc["vector_weight"], doc["fts_weight"]) == (
        "oxydra",
        "phrase",
        0.7,
        0.3,
    )
    assert doc["fts_expression"] == '"register my address"'
    assert doc["hits"]
    for hit in doc["hits"]:
        assert hit["score"] == pytest.approx(0.7 * hit["vector_score"] + 0.3 * hit["fts_score"], abs=1e-12)

    code, out, err = run(
        capsys, "--db", path, "search", BERLIN, "address", "--ranking", "oxydra", "--vector-weight", "0.5"
    )
    assert_one_error_line(code, out, err, "--vector-weight", "oxydra")
    code, out, err = run(capsys, "--db", path, "search", BERLIN, "address", "--ranking", "nope")
    assert_one_error_line(code, out, err, "'nope'")


# -- 4. weekday numbering ---------------------------------------------------------------------------------------


def test_numeric_weekday_is_flagged_in_standard_numbering(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path]
) -> None:
    found = schedules_by_id(capsys, built[LIBSQL])
    assert set(found) == {MONDAY_PLAN, FRIDAY_WRAP, INBOX_WATCH, PASSPORT}
    monday = found[MONDAY_PLAN]
    assert "Sunday" in monday["note"]
    cadence = {"type": "cron", "expression": "0 8 * * 1", "timezone": "Europe/Berlin"}
    assert json.loads(monday["cadence_json"]) == cadence
    for other in (FRIDAY_WRAP, INBOX_WATCH, PASSPORT):
        assert found[other]["note"] is None, other


def test_sunday_one_numbering_shows_the_agents_days(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built[LIBSQL]
    found = schedules_by_id(capsys, path, "--cron-weekdays", "sunday-1")
    monday = found[MONDAY_PLAN]
    cadence = json.loads(monday["cadence_json"])
    assert (cadence["expression"], cadence["timezone"]) == ("0 8 * * 0", "Europe/Berlin")
    assert "0 8 * * 1" in monday["note"]
    friday = found[FRIDAY_WRAP]
    assert json.loads(friday["cadence_json"])["expression"] == "0 17 * * FRI" and friday["note"] is None
    assert found[INBOX_WATCH]["note"] is None and found[PASSPORT]["note"] is None
    # the file keeps the agent's expression
    stored = one(path, "SELECT cadence_json FROM schedules WHERE schedule_id = ?", (MONDAY_PLAN,))
    assert json.loads(stored)["expression"] == "0 8 * * 1"

    zone = ZoneInfo(cadence["timezone"])
    for options, weekday in ((("--cron-weekdays", "sunday-1"), 6), ((), 0)):  # Sunday as the agent; Monday standard
        fires = run_json(capsys, "--db", str(path), *options, "schedules", "next", MONDAY_PLAN, "--count", "2")["next"]
        local = [datetime.fromisoformat(f).astimezone(zone) for f in fires]
        assert len(local) == 2
        assert [(t.weekday(), t.hour, t.minute) for t in local] == [(weekday, 8, 0)] * 2, fires
        assert local[1] - local[0] == timedelta(days=7)
        assert local[0] > datetime.now(zone)


def test_sunday_one_numbering_on_an_oxmem_store_is_one_error_line(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path]
) -> None:
    code, out, err = run(capsys, "--db", str(built["oxmem"]), "--cron-weekdays", "sunday-1", "schedules", "list")
    assert_one_error_line(code, out, err, "standard")


def test_schedule_edit_refused_in_sunday_one_numbering(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(built, LIBSQL, tmp_path)
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), "--cron-weekdays", "sunday-1", "schedules", "pause", MONDAY_PLAN)
    assert_one_error_line(code, out, err, "weekday numbering")
    assert state(path) == before
    assert one(path, "SELECT status FROM schedules WHERE schedule_id = ?", (MONDAY_PLAN,)) == "active"


# -- 5. table browser --------------------------------------------------------------------------------------------


def test_tables_of_an_unknown_file(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built["unknown"]
    quick = one(path, "SELECT count(*) FROM quick_recipes")
    assert quick == one(path, "SELECT count(*) FROM recipes WHERE minutes <= 20") and quick > 0
    expected = [
        ("ingredients", "table", 12),
        ("quick_recipes", "view", quick),
        ("recipe_ingredients", "table", 750),
        ("recipes", "table", fx.RECIPE_COUNT),
    ]
    listed = run_json(capsys, "--db", str(path), "tables")
    assert [(t["name"], t["kind"], t["rows"]) for t in listed] == expected
    assert next(t for t in listed if t["name"] == "recipes")["columns"] == [
        "id", "title", "cuisine", "minutes", "rating", "photo", "notes", "created_at"
    ]  # fmt: skip

    code, out, err = run(capsys, "--db", str(path), "tables")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["table", "kind", "rows", "columns"]
    assert [line.split()[:3] for line in lines[1:]] == [[n, k, f"{c:,}"] for n, k, c in expected]


@pytest.mark.parametrize(
    ("table", "order", "offset"),
    [("recipes", "rowid", 200), ("recipe_ingredients", "recipe_id, ingredient_id", 700)],
)
def test_table_page_returns_the_remaining_rows(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], table: str, order: str, offset: int
) -> None:
    path = built["unknown"]
    expected = rows(path, f"SELECT * FROM {table} ORDER BY {order} LIMIT -1 OFFSET ?", (offset,))
    assert len(expected) == 50
    doc = run_json(capsys, "--db", str(path), "tables", table, "--limit", "100", "--offset", str(offset))
    assert (doc["name"], doc["offset"], doc["more"]) == (table, offset, False)
    as_json = [[{"blob_hex": v.hex()} if isinstance(v, bytes) else v for v in r] for r in expected]
    assert doc["rows"] == as_json

    code, out, err = run(capsys, "--db", str(path), "tables", table, "--limit", "100", "--offset", str(offset))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 1 + 50 + 1
    assert lines[-1] == f"rows {offset + 1}–{offset + 50}"


def test_table_page_blobs_are_hex(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    path = built["unknown"]
    photos = rows(path, "SELECT rowid - 1, photo FROM recipes WHERE photo IS NOT NULL ORDER BY rowid")
    assert photos
    index, blob = photos[0]
    doc = run_json(capsys, "--db", str(path), "tables", "recipes", "--limit", "1", "--offset", str(index))
    column = doc["columns"].index("photo")
    assert doc["rows"][0][column] == {"blob_hex": blob.hex()}
    assert doc["more"] is True


def test_unknown_table_is_one_error_line(capsys: pytest.CaptureFixture[str], built: dict[str, Path]) -> None:
    code, out, err = run(capsys, "--db", str(built["unknown"]), "tables", "no_such_table")
    assert_one_error_line(code, out, err, "no_such_table")


@pytest.mark.parametrize(
    ("argv", "missing"),
    [(("sessions",), "sessions"), (("notes", "list", "X"), "notes"), (("schedules", "list"), "schedules")],
)
def test_unknown_file_has_no_sessions_notes_schedules(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], argv: tuple[str, ...], missing: str
) -> None:
    code, out, err = run(capsys, "--db", str(built["unknown"]), *argv)
    assert_one_error_line(code, out, err, f"has no {missing}", "oxmem tables")


def test_note_add_on_omega_is_a_fact_key_value(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(built, "omega", tmp_path)
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), "notes", "add", "4242", "Likes espresso")
    assert_one_error_line(code, out, err, "a fact is written 'key: value'")
    assert state(path) == before


# -- 6. no read command writes ------------------------------------------------------------------------------------

COMMON = [("info",), ("info", "--json"), ("tables",), ("tables", "--json"), ("rankings",), ("evictions",)]
OMEGA_READS = [
    ("tables", "messages", "--limit", "5"),
    ("sessions",),
    ("events", fx.OMEGA_CONVERSATIONS["current"]),
    ("search", fx.OMEGA_CONVERSATIONS["current"], "dentist appointment"),
    ("summary", fx.OMEGA_CONVERSATIONS["dentist"]),
    ("context", fx.OMEGA_CONVERSATIONS["current"]),
    ("notes", "list", "4242"),
    ("schedules", "list"),
    ("schedules", "next", fx.OMEGA_TASKS["standup"]),
    ("schedules", "runs", fx.OMEGA_TASKS["standup"]),
]
ZEKE_READS = [
    ("tables", "memories", "--limit", "5"),
    ("notes", "list", "notes"),
    ("notes", "search", "ops:deploy", "rollback"),
    ("search", "ops:deploy", "rollback"),
    ("evictions", "--at", "2026-03-01T12:00:00Z"),
]
AIDAEMON_READS = [
    ("sessions",),
    ("events", "telegram:123456789"),
    ("search", "telegram:123456789", "timezone"),
    ("summary", "telegram:123456789"),
    ("context", "telegram:123456789"),
    ("notes", "list", "user"),
]
OXYDRA_READS = [
    ("tables", "chunks_vec", "--limit", "5", "--json"),
    ("sessions",),
    ("events", BERLIN),
    ("search", BERLIN, "register my address"),
    ("search", BERLIN, "register my address", "--ranking", "oxydra"),
    ("search", fx.POTION_SESSION, "sourdough starter"),
    ("summary", BERLIN),
    ("context", BERLIN),
    ("notes", "list", "alice"),
    ("notes", "search", "alice", "passport"),
    ("schedules", "list"),
    ("schedules", "next", MONDAY_PLAN),
    ("schedules", "runs", INBOX_WATCH),
]
READS: dict[str, list[tuple[str, ...]]] = {
    "oxmem": [
        ("tables", "chunks", "--limit", "5"),
        ("sessions",),
        ("events", "telegram:alice:lisbon-trip"),
        ("search", "telegram:alice:lisbon-trip", "train to Sintra"),
        ("summary", "telegram:alice:lisbon-trip"),
        ("context", "telegram:alice:lisbon-trip"),
        ("notes", "list", "alice"),
        ("notes", "search", "alice", "travel"),
        ("schedules", "list"),
        ("schedules", "next", "<schedule>"),
        ("schedules", "runs", "<schedule>"),
    ],
    "oxmem-store": [("sessions",), ("schedules", "list"), ("notes", "list", "alice")],
    "omega": OMEGA_READS,
    "omega-old": OMEGA_READS,
    "zeke": ZEKE_READS,
    "zeke-384": ZEKE_READS,
    "aidaemon": [("tables", "events", "--limit", "5"), *AIDAEMON_READS],
    "aidaemon-legacy": [
        ("tables", "messages", "--limit", "5", "--json"),
        *AIDAEMON_READS[:-1],
        ("notes", "list", "family"),
        ("schedules", "list"),
        ("schedules", "next", "weekly-report"),
        ("schedules", "runs", "remind-passport"),
    ],
    "oxydra": OXYDRA_READS,
    "oxydra-agent": OXYDRA_READS,
    LIBSQL: [*OXYDRA_READS, ("--cron-weekdays", "sunday-1", "schedules", "list")],
    "unknown": [("tables", "recipes", "--limit", "5", "--offset", "240", "--json"), ("tables", "quick_recipes")],
    "encrypted-with-key": [("tables", "events", "--limit", "5", "--json"), *AIDAEMON_READS],
}
#: files that cannot be opened as a memory: only `info` must succeed; the rest may refuse, but must not write
UNOPENABLE = {"empty", "not-sqlite", ENCRYPTED}


@pytest.mark.parametrize("name", sorted(set(EXPECTED_FORMATS) | {"encrypted-with-key"}))
def test_read_commands_never_write(
    capsys: pytest.CaptureFixture[str],
    built: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    source = ENCRYPTED if name == "encrypted-with-key" else name
    path = copy(built, source, tmp_path)
    if name == "encrypted-with-key":
        monkeypatch.setenv("OXMEM_DB_KEY", fx.AIDAEMON_KEY)
    if name in UNOPENABLE:
        must_work = [("info",), ("info", "--json")]
        may_refuse = [("tables",), ("tables", "x"), ("sessions",), ("rankings",), ("check",)]
    else:
        must_work = COMMON + READS[name]
        may_refuse = [("check",)] if name != "encrypted-with-key" else []
    if name == "oxmem":
        schedule = one(path, "SELECT schedule_id FROM schedules ORDER BY schedule_id LIMIT 1")
        must_work = [tuple(schedule if a == "<schedule>" else a for a in argv) for argv in must_work]
    before = state(path)
    for argv in must_work:
        code, out, err = run(capsys, "--db", str(path), *argv)
        assert code == 0, (argv, err)
        assert out, argv
        assert state(path) == before, argv
    for argv in may_refuse:
        code, out, err = run(capsys, "--db", str(path), *argv)
        assert "Traceback" not in err, (argv, err)
        if code == 2:
            assert_one_error_line(code, out, err)
        else:
            assert code in (0, 1), (argv, code, err)  # `check`: 1 = a problem found
        assert state(path) == before, argv
