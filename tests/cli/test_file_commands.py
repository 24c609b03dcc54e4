"""``oxmem sql``: read-only SQL on every format, enforced by SQLite. Every kind of write is refused with one line
(exit 2) and leaves every file byte for byte as it was — also on a connection that could write (the authorizer
alone must hold)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import apsw
import pytest

from oxmem_gui.cli import main
from oxmem_gui.core.errors import InvalidInputError
from oxmem_gui.core.store.sql_console import run_sql
from tests.core.formats.fixtures import AIDAEMON_KEY, write_all

WRITES = {
    "INSERT INTO t VALUES (1)": "INSERT into t",
    "UPDATE t SET x = 2": "UPDATE of t.x",
    "DELETE FROM t": "DELETE from t",
    "WITH gone AS (SELECT 1) DELETE FROM t": "DELETE from t",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) INSERT INTO t SELECT i FROM n": (
        "INSERT into t"
    ),
    "SELECT 1; DELETE FROM t": "DELETE from t",
    "CREATE TABLE u (x)": "a change of the schema",
    "CREATE TEMP TABLE u (x)": "a change of the schema",
    "DROP TABLE t": "a change of the schema",
    "ALTER TABLE t ADD COLUMN y": "ALTER TABLE t",
    "CREATE TRIGGER g AFTER INSERT ON t BEGIN DELETE FROM t; END": "CREATE TRIGGER g",
    "ATTACH 'other.db' AS other": "ATTACH of 'other.db'",
    "VACUUM INTO 'copy.db'": "ATTACH of 'copy.db'",
    "VACUUM": "VACUUM",
    "PRAGMA writable_schema = 1": "PRAGMA writable_schema = 1",
    "PRAGMA user_version = 7": "PRAGMA user_version = 7",
    "PRAGMA journal_mode = DELETE": "PRAGMA journal_mode = DELETE",
    "SELECT load_extension('libevil')": "the function load_extension()",
    "BEGIN IMMEDIATE": "BEGIN (a transaction)",
    "REINDEX": "REINDEX",
    "ANALYZE": "a change of the schema",
}


FIRST_TABLE = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_write_is_refused_by_sqlite_on_a_connection_that_could_write(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE t (x); CREATE INDEX t_x ON t (x); INSERT INTO t VALUES (1)")
    before = sha256(path)
    for sql, what in WRITES.items():
        with pytest.raises(InvalidInputError) as refused:
            run_sql(conn, sql)
        assert str(refused.value).startswith(f"refused: {what}"), sql
        assert str(refused.value).endswith("the SQL console only reads; nothing was changed")
    assert run_sql(conn, "SELECT x FROM t").rows == [(1,)]
    conn.execute("INSERT INTO t VALUES (2)")  # the authorizer was only there for the console's statements
    conn.close()
    assert before != sha256(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.db"]  # no other.db, no copy.db


def test_reads_pragmas_that_read_and_limits(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "r.db"))
    conn.execute("CREATE TABLE t (x, y); INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, x'00ff')")
    assert run_sql(conn, "SELECT x, y FROM t ORDER BY x", limit=2).rows == [(1, "a"), (2, None)]
    assert run_sql(conn, "SELECT x, y FROM t ORDER BY x", limit=2).more is True
    assert run_sql(conn, "SELECT x FROM t", limit=3).more is False
    assert [r[1] for r in run_sql(conn, "PRAGMA table_info(t)").rows] == ["x", "y"]
    assert run_sql(conn, "PRAGMA user_version").rows == [(0,)]
    assert run_sql(conn, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4) "
                         "SELECT sum(i) AS s FROM n").columns == ["s"]  # fmt: skip
    for bad, line in [("", "no SQL given"), ("SELEC 1", 'SQL error: near "SELEC": syntax error'),
                      ("SELECT * FROM nowhere", "SQL error: no such table: nowhere")]:  # fmt: skip
        with pytest.raises(InvalidInputError, match=f"^{line}$"):
            run_sql(conn, bad)


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = write_all(tmp_path_factory.mktemp("formats"))
    return {name: path for name, path in files.items() if name not in ("not-sqlite", "empty")}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_oxmem_sql_on_every_format_reads_and_refuses_writes(
    capsys: pytest.CaptureFixture[str], formats: dict[str, Path]
) -> None:
    for name, path in formats.items():
        key = ["--key", AIDAEMON_KEY] if name == "aidaemon-encrypted" else []
        before = {p.name: sha256(p) for p in path.parent.iterdir() if p.name.startswith(path.name)}
        code, out, err = cli(
            capsys, "--db", str(path), *key, "--json", "sql", "SELECT count(*) AS n FROM sqlite_master"
        )
        assert code == 0, (name, err)
        assert json.loads(out)["columns"] == ["n"] and json.loads(out)["rows"][0][0] > 0
        code, out, err = cli(capsys, "--db", str(path), *key, "--json", "sql", FIRST_TABLE)
        table = json.loads(out)["rows"][0][0]
        attempts = [
            (f'DELETE FROM "{table}"', f"DELETE from {table}"),
            (f'DROP TABLE "{table}"', "a change of the schema (CREATE, DROP, ALTER or ANALYZE)"),
            ("PRAGMA writable_schema = 1", "PRAGMA writable_schema = 1"),
        ]
        for sql, what in attempts:
            code, out, err = cli(capsys, "--db", str(path), *key, "sql", sql)
            assert (code, out) == (2, ""), name
            assert err.splitlines()[-1] == (
                f"oxmem: error: refused: {what} — the SQL console only reads; nothing was changed"
            )
        after = {p.name: sha256(p) for p in path.parent.iterdir() if p.name.startswith(path.name)}
        assert after == before, name


def test_oxmem_sql_csv_and_table(capsys: pytest.CaptureFixture[str], formats: dict[str, Path]) -> None:
    omega = str(formats["omega"])
    code, out, err = cli(capsys, "--db", omega, "sql", "SELECT role, count(*) AS n FROM messages GROUP BY role "
                         "ORDER BY role", "--csv")  # fmt: skip
    assert code == 0 and out.splitlines()[0] == "role,n" and out.splitlines()[1].startswith("assistant,")
    assert err == "2 rows\n"
    code, out, err = cli(capsys, "--db", omega, "sql", "SELECT id FROM messages ORDER BY rowid", "--limit", "3")
    assert code == 0 and len(out.splitlines()) == 1 + 3 and err == "3 rows; more with --limit 30\n"
