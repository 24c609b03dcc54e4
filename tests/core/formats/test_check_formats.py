"""``oxmem check`` on every format it reads: a healthy file says healthy and names its format; a broken FTS index
and a duplicated unique key of that format are named. The check never writes (its file is compared byte for
byte, with the files beside it).

Damage is made the way it happens: FTS rows deleted or written by hand (a writer without the agent's triggers),
and a unique key whose index stopped enforcing it (:func:`duplicate_unique_key`: the index is made plain for
one insert, then unique again, through ``writable_schema``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import apsw
import pytest

from tests.cli._support import build_demo, run
from tests.core.formats import fixtures as fx
from tests.core.formats.test_detect import copy, state

#: fixture → the format line ``oxmem check`` prints after the path
HEALTHY = {
    "oxmem": "oxmem store",
    "oxydra": "Oxydra memory",
    "oxydra-agent": "Oxydra memory",
    "oxydra-libsql": "Oxydra memory (libSQL vector index)",
    "omega": "Omega memory",
    "omega-old": "Omega memory",
    "zeke": "ZEKE memory",
    "zeke-384": "ZEKE memory",
    "aidaemon": "aidaemon memory",
    "aidaemon-legacy": "aidaemon memory (before v0.9)",
    "aidaemon-encrypted": "aidaemon memory (SQLCipher-encrypted: checked on its decrypted copy in memory)",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = fx.write_all(tmp_path_factory.mktemp("formats"))
    files["oxmem"] = build_demo(tmp_path_factory.mktemp("demo"))
    return files


def check(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[int, list[str], dict[str, tuple]]:
    """Run ``oxmem check``; the exit status, the output lines and ``{check: (status, finding)}``."""
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), *extra, "check")
    assert err == "", err
    assert state(path) == before  # nothing written, nothing left beside it
    lines = out.splitlines()
    found = {}
    for line in lines[2:]:
        cells = re.split(r"\s{2,}", line, maxsplit=2)
        if len(cells) == 3 and cells[0] in ("ok", "warning", "problem"):
            found.setdefault(cells[1], []).append((cells[0], cells[2]))
    return code, lines, {k: v[0] if len(v) == 1 else tuple(v) for k, v in found.items()}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_a_healthy_file_of_each_format(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path, name: str
) -> None:
    path = copy(built, name, tmp_path)
    extra = ("--key", fx.AIDAEMON_KEY) if name == "aidaemon-encrypted" else ()
    code, lines, found = check(capsys, path, *extra)
    assert code == 0, lines
    assert lines[0].startswith(f"{path}: {HEALTHY[name]}")
    assert lines[-1] == "healthy"
    assert found["unique keys"][0] == "ok"
    assert all(level == "ok" for level, _ in found.values()), found


def test_formats_get_their_own_checks(capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path):
    _, _, omega = check(capsys, copy(built, "omega", tmp_path))
    assert omega["index sync"] == ("ok", "messages_fts against the user messages: 11 indexed = 11 expected")
    assert omega["unique keys"] == ("ok", "16 unique keys hold, each read from its table's rows")
    _, _, zeke = check(capsys, copy(built, "zeke", tmp_path))
    assert zeke["index sync"] == (
        "ok",
        "memories_fts against the memories: 26 indexed = 26 expected, and their text agrees",
    )
    _, lines, libsql = check(capsys, copy(built, "oxydra-libsql", tmp_path))
    assert libsql["vector index"] == ("ok", "idx_chunks_vec_embedding_ann finds each of the 21 vectors (libSQL)")
    assert libsql["index sync"] == ("ok", "chunks 21 = FTS rows 21 = vectors 21")  # not the ANN index's 0
    assert libsql["schema"] == (
        "ok",
        "the agent's schema, 24 versions recorded, latest 0024_create_chunks_vec_vector_index "
        "(oxmem never migrates it)",
    )
    assert "counts: sessions 5, events 21, chunks 21, fts rows 21, vectors 21," in lines[-2]


def test_encrypted_file_without_its_key(capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path):
    path = copy(built, "aidaemon-encrypted", tmp_path)
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), "check")
    assert (code, out) == (2, "")
    assert err.startswith("oxmem: error: aidaemon-encrypted.db is encrypted — provide the key")
    assert state(path) == before


# -- damage ------------------------------------------------------------------------------------------------------


def _sql(path: Path, *statements: str, args: tuple = ()) -> None:
    conn = apsw.Connection(str(path))
    try:
        for statement in statements:
            conn.execute(statement, args)
    finally:
        conn.close()


def duplicate_unique_key(
    path: Path, index: str, loosen: str | None = None, copy_from: str = "LIMIT 1", change: dict[str, str] | None = None
) -> None:
    """Put two rows with the same key under unique index ``index``: the index is made a plain one (an explicit
    ``CREATE UNIQUE INDEX``: its SQL; a constraint's automatic index: the table's SQL loses the constraint
    matched by the regex ``loosen`` and the index gets a plain ``CREATE INDEX``), a row is copied with its key
    (and a new rowid; ``change`` gives other columns an expression), then the schema is put back. The index
    b-tree holds both entries."""
    conn = apsw.Connection(str(path))
    table, index_sql = conn.execute("SELECT tbl_name, sql FROM sqlite_master WHERE name = ?", (index,)).fetchall()[0]
    table_sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchall()
    table_sql = table_sql[0][0]
    columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    key = [r[2] for r in conn.execute(f'PRAGMA index_info("{index}")')]
    plain_name = index if index_sql else f"{index}_plain"
    plain_sql = re.sub("CREATE UNIQUE INDEX", "CREATE INDEX", index_sql) if index_sql else (
        f'CREATE INDEX "{plain_name}" ON "{table}" ({", ".join(key)})'
    )  # fmt: skip
    loose_table = re.sub(loosen, "", table_sql, count=1) if loosen else table_sql
    assert loose_table != table_sql or not loosen, (loosen, table_sql)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (loose_table, table))
    conn.execute("UPDATE sqlite_master SET name = ?, sql = ? WHERE name = ?", (plain_name, plain_sql, index))
    conn.close()
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA foreign_keys = OFF")
    rowid_alias = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")') if r[5] and r[2].upper() == "INTEGER"]
    exprs = {**{c: "NULL" for c in rowid_alias}, **(change or {})}
    picked = ", ".join(exprs.get(c, f'"{c}"') for c in columns)
    conn.execute(f'INSERT INTO "{table}" SELECT {picked} FROM "{table}" {copy_from}')
    conn.close()
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (table_sql, table))
    conn.execute("UPDATE sqlite_master SET name = ?, sql = ? WHERE name = ?", (index, index_sql, plain_name))
    conn.close()


DUPLICATES = {
    # fixture: (unique index, constraint to loosen, which row to copy, the problem named[, columns changed])
    "oxmem": ("sqlite_autoindex_sessions_1", r" PRIMARY KEY(?=,\n    agent_identity)", "LIMIT 1",
              "sessions (session_id): 1 values held by more than one row"),
    "oxydra-libsql": ("sqlite_autoindex_memory_migrations_1", r" PRIMARY KEY(?=,\n            applied_at)",
                      "LIMIT 1", "memory_migrations (version): 1 values held by more than one row"),
    "oxydra-agent": ("sqlite_autoindex_schedules_1", r" PRIMARY KEY(?=,\n    user_id)", "LIMIT 1",
                     "schedules (schedule_id): 1 values held by more than one row"),
    "omega": ("sqlite_autoindex_facts_2", r",\s*UNIQUE ?\(sender_id, key\)", "LIMIT 1",
              "facts (sender_id, key): 1 values held by more than one row", {"id": "id || '-copy'"}),
    "zeke": ("sqlite_autoindex_memories_1", r" PRIMARY KEY(?=,\s+text)", "LIMIT 1",
             "memories (id): 1 values held by more than one row"),
    "aidaemon": ("idx_facts_active_unique", None, "WHERE superseded_at IS NULL LIMIT 1",
                 "facts (category, key): 1 values held by more than one row"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_a_duplicated_unique_key_is_named(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path, name: str
) -> None:
    path = copy(built, name, tmp_path)
    index, loosen, copy_from, problem, *change = DUPLICATES[name]
    duplicate_unique_key(path, index, loosen, copy_from, *change)
    code, lines, found = check(capsys, path)
    assert code == 1, lines
    assert found["unique keys"] == ("problem", problem)
    assert lines[-1].startswith("problems found")


def test_oxmem_and_oxydra_fts_out_of_sync(capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path):
    for name in ("oxydra-agent", "oxydra-libsql"):
        path = copy(built, name, tmp_path)
        _sql(path, "DELETE FROM chunks_fts WHERE rowid = (SELECT min(rowid) FROM chunks)")
        code, _, found = check(capsys, path)
        assert code == 1
        assert found["index sync"] == ("problem", "1 chunks without an FTS row"), name


def test_omega_fts_missing_a_user_message_or_holding_another(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(built, "omega", tmp_path)
    _sql(
        path,
        "INSERT INTO messages_fts (messages_fts, rowid, content) SELECT 'delete', rowid, content FROM messages "
        "WHERE role = 'user' ORDER BY rowid LIMIT 1",
        "INSERT INTO messages_fts (rowid, content) SELECT rowid, content FROM messages WHERE role = 'assistant' "
        "ORDER BY rowid LIMIT 2",
    )
    code, _, found = check(capsys, path)
    assert code == 1
    assert found["index sync"] == (
        "problem",
        "messages_fts against the user messages: 1 rows not in the FTS index; 2 FTS rows without their row",
    )


def test_zeke_fts_whose_text_differs_from_its_memory(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    path = copy(built, "zeke", tmp_path)
    _sql(
        path,
        "INSERT INTO memories_fts (memories_fts, rowid, id, text, scope, tags) SELECT 'delete', rowid, id, text, "
        "scope, tags FROM memories WHERE rowid = 3",
        "INSERT INTO memories_fts (rowid, id, text, scope, tags) SELECT rowid, id, 'an older text', scope, tags "
        "FROM memories WHERE rowid = 3",
    )
    code, _, found = check(capsys, path)
    assert code == 1
    level, detail = found["index sync"]
    assert (level, detail.split(":")[0]) == ("problem", "memories_fts does not match the memories' text")

    path = copy(built, "zeke-384", tmp_path)
    _sql(
        path,
        "INSERT INTO memories_fts (memories_fts, rowid, id, text, scope, tags) SELECT 'delete', rowid, id, text, "
        "scope, tags FROM memories WHERE rowid = 5",
    )
    code, _, found = check(capsys, path)
    assert found["index sync"] == ("problem", "memories_fts against the memories: 1 rows not in the FTS index")


def test_libsql_vector_index_out_of_date(capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path):
    """Nodes missing from the ANN index's shadow table (a writer that bypassed libSQL): plain SQLite's
    ``integrity_check`` cannot see it; the libSQL engine's self-lookup does."""
    path = copy(built, "oxydra-libsql", tmp_path)
    _sql(
        path,
        "PRAGMA foreign_keys = OFF",
        "DELETE FROM idx_chunks_vec_embedding_ann_shadow WHERE index_key IN "
        "(SELECT rowid FROM chunks_vec NOT INDEXED ORDER BY rowid LIMIT 2)",
    )
    code, _, found = check(capsys, path)
    assert code == 1
    level, detail = found["vector index"]
    # the two nodes removed are never found; a neighbour reachable only through them may be lost too
    lost = re.fullmatch(
        r"(\d+) of the 21 vectors are not found by idx_chunks_vec_embedding_ann \(first chunks_vec rowid 1\): the "
        r"agent's vector search misses them \(stranded when a twin was deleted, or an index out of date\); `oxmem "
        r"check --repair` re-inserts them \(rebuilding the index if need be\), after a backup",
        detail,
    )
    assert level == "problem" and lost and 2 <= int(lost.group(1)) <= 21, detail
    # the repair: a backup first, the lost rows re-inserted (the index rebuilt if that is not enough), then healthy
    shadow = "SELECT count(*) FROM idx_chunks_vec_embedding_ann_shadow"
    assert apsw.Connection(str(path)).execute(shadow).fetchall() == [(19,)]
    backups = Path(os.environ["OXMEM_BACKUP_DIR"])
    taken = {b.name for b in backups.iterdir()}
    code, out, err = run(capsys, "--db", str(path), "check", "--repair")
    assert code == 0 and out.splitlines()[-1] == "healthy", out
    said = r"oxmem: re-inserted (\d+) of 21 vectors( and rebuilt the index)? \(libSQL vector index\)\n"
    assert re.fullmatch(said, err), err
    assert apsw.Connection(str(path)).execute(shadow).fetchall() == [(21,)]
    (backup,) = {b.name for b in backups.iterdir()} - taken
    assert backup.startswith(path.stem)
