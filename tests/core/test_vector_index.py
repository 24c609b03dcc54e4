"""libSQL's vector index kept whole, on a small in-memory libSQL table: deletions noted in TEMP tables only, a
twin left by a deletion moved to the deleted row's rowid, a deleted vector inserted again under its old rowid,
rows re-inserted unchanged, and the check and repair of a whole index finding nothing to do. And the deletions kept
between processes, on a small file: what is written (rowids and hashes, modes 0700/0600, the newest only), what
is refused when read back, and a later writer — or one open beside — giving a deleted vector its rowid back."""

from __future__ import annotations

import errno
import logging
import stat

import numpy as np
import pytest

from oxmem_gui.core import vector_deletions, vector_index

libsql = pytest.importorskip("libsql")

INDEX = "idx_ann"
UNIT = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)]
INSERT = "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) VALUES (?, ?, ?)"


def blob(values) -> bytes:
    return np.array(values, dtype="<f4").tobytes()


def rows(conn) -> list[tuple]:
    return conn.execute("SELECT rowid, chunk_id, embedding_model FROM chunks_vec ORDER BY rowid").fetchall()


def four_rows(where: str = ":memory:"):
    """Four orthogonal vectors (rowids 1–4, chunks c1–c4) in a ``FLOAT32(4)`` table with an ANN index."""
    c = libsql.connect(where, isolation_level=None)
    c.execute(
        "CREATE TABLE chunks_vec (chunk_id TEXT PRIMARY KEY, embedding_blob FLOAT32(4) NOT NULL, "
        "embedding_model TEXT NOT NULL)"
    )
    c.execute(f"CREATE INDEX {INDEX} ON chunks_vec(libsql_vector_idx(embedding_blob))")
    for i, values in enumerate(UNIT, 1):
        c.execute(
            f"INSERT INTO chunks_vec (rowid, chunk_id, embedding_blob, embedding_model) VALUES ({i}, ?, ?, 'm')",
            (f"c{i}", blob(values)),
        )
    return c


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory, monkeypatch):
    """oxmem's cache folder in the test run's own folder, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
def conn():
    c = four_rows()
    yield c
    c.close()


def test_only_an_index_on_libsql_vector_idx_is_the_vector_index():
    c = libsql.connect(":memory:", isolation_level=None)
    c.execute("CREATE TABLE chunks_vec (chunk_id TEXT PRIMARY KEY, embedding_blob FLOAT32(4), embedding_model TEXT)")
    c.execute("CREATE INDEX by_model ON chunks_vec(embedding_model)")
    assert vector_index.index_name(c) is None
    c.execute("CREATE INDEX ann ON chunks_vec (LIBSQL_VECTOR_IDX (embedding_blob))")
    assert vector_index.index_name(c) == "ann"
    c.close()


def test_a_deletion_is_noted_with_its_vector_in_temp_tables_and_the_file_gains_nothing(conn):
    schema = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
    vector_index.watch_deletions(conn, INDEX)
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c2'")
    conn.execute(INSERT, ("c5", blob((1, 1, 0, 0)), "m"))
    assert conn.execute("SELECT id, blob FROM temp.oxmem_vec_gone").fetchall() == [(2, blob(UNIT[1]))]
    near = {r[0] for r in conn.execute("SELECT id FROM temp.oxmem_vec_near").fetchall()}
    assert {2, 5} <= near  # the deleted row's neighbours (itself first) and the inserted row
    assert conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall() == schema


def test_a_twin_stranded_by_deleting_the_older_one_moves_to_its_rowid_before_the_commit(conn):
    vector_index.watch_deletions(conn, INDEX)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(INSERT, ("twin", blob(UNIT[0]), "m"))  # rowid 5, the same vector as c1
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c1'")
    assert vector_index.keep_reachable(conn, INDEX) == {5: 1}
    conn.execute("COMMIT")
    assert rows(conn) == [(1, "twin", "m"), (2, "c2", "m"), (3, "c3", "m"), (4, "c4", "m")]
    assert vector_index.unfound(conn, INDEX) == (4, 4, [])


def test_a_deleted_vector_inserted_again_is_given_the_deleted_rows_rowid(conn):
    vector_index.watch_deletions(conn, INDEX)
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c2'")
    again = ["c2-again", blob(UNIT[1]), "m"]
    assert vector_index.into_deleted_twin(conn, INSERT, again) == (
        "INSERT INTO chunks_vec (rowid, chunk_id, embedding_blob, embedding_model) VALUES (?, ?, ?, ?)",
        [2, *again],
    )
    other = ["c6", blob((0, 1, 1, 0)), "m"]
    assert vector_index.into_deleted_twin(conn, INSERT, other) == (INSERT, other)  # a vector never deleted
    replace = INSERT.replace("INSERT", "INSERT OR REPLACE")
    assert vector_index.into_deleted_twin(conn, replace, again) == (replace, again)  # not the core's insert
    conn.execute(
        "INSERT INTO chunks_vec (rowid, chunk_id, embedding_blob, embedding_model) VALUES (2, 'x', ?, 'm')",
        (blob((1, 1, 1, 1)),),
    )
    assert vector_index.into_deleted_twin(conn, INSERT, again) == (INSERT, again)  # its rowid is taken again


def test_reinsert_keeps_every_column_and_is_not_noted_as_the_users_edit(conn):
    vector_index.watch_deletions(conn, INDEX)
    before = conn.execute("SELECT chunk_id, embedding_blob, embedding_model FROM chunks_vec ORDER BY rowid").fetchall()
    vector_index.reinsert(conn, INDEX, {3: 3, 4: 9})
    assert rows(conn) == [(1, "c1", "m"), (2, "c2", "m"), (3, "c3", "m"), (9, "c4", "m")]
    after = conn.execute("SELECT chunk_id, embedding_blob, embedding_model FROM chunks_vec ORDER BY rowid").fetchall()
    assert after == before
    assert conn.execute("SELECT count(*) FROM temp.oxmem_vec_gone").fetchall() == [(0,)]
    assert conn.execute("SELECT count(*) FROM temp.oxmem_vec_near").fetchall() == [(0,)]
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c1'")  # the watch is back afterwards
    assert conn.execute("SELECT id FROM temp.oxmem_vec_gone").fetchall() == [(1,)]


def test_the_check_asks_every_row_up_to_the_limit_and_an_even_spread_beyond(conn):
    assert vector_index.unfound(conn, INDEX) == (4, 4, [])
    assert vector_index.unfound(conn, INDEX, limit=2) == (4, 2, [])
    conn.execute(INSERT, ("c5", blob((1, 1, 0, 0)), "m"))
    assert vector_index.unfound(conn, INDEX, limit=2) == (5, 2, [])  # rows 0 and 3 of 5 (every third)
    assert vector_index.unfound(conn, INDEX, limit=1) == (5, 1, [])


def test_repairing_a_whole_index_reinserts_nothing_and_rebuilds_nothing(conn):
    from oxmem_gui.core.libsql_writer import LibsqlConnection

    before = conn.execute("SELECT rowid, chunk_id, embedding_blob FROM chunks_vec ORDER BY rowid").fetchall()
    assert vector_index.repair(LibsqlConnection(conn)) == (4, [], False)
    assert conn.execute("SELECT rowid, chunk_id, embedding_blob FROM chunks_vec ORDER BY rowid").fetchall() == before


def test_a_row_the_agent_stranded_in_a_tiny_index_is_found_and_made_reachable_every_time():
    """libSQL starts each search on a random node, so in a four-row index a stranded row is often "found" by
    chance: the check asks as often as the index is small (ten times here), and the repair leaves it reachable."""
    from oxmem_gui.core.libsql_writer import LibsqlConnection

    outcomes = []
    for _ in range(25):
        c = four_rows()
        c.execute(INSERT, ("twin", blob(UNIT[0]), "m"))  # rowid 5, c1's vector
        c.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c1'")  # as the agent would: nobody watching
        lost = vector_index.unfound(c, INDEX)[2]
        total, reinserted, _ = vector_index.repair(LibsqlConnection(c))
        outcomes.append((lost, total, reinserted, vector_index.unfound(c, INDEX)[2]))
        c.close()
    assert outcomes == [([5], 4, [5], [])] * 25


# -- the deletions kept between processes ----------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """oxmem's cache folder in the test's own folder (never the user's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "oxmem"


def writer(db):
    """A writer's connection to ``db``, as the libSQL child opens it (another process's, for what it keeps)."""
    from oxmem_gui.core.libsql_writer import LibsqlConnection

    return LibsqlConnection(libsql.connect(str(db)), path=str(db))


def test_deleted_rowids_and_hashes_are_kept_in_oxmems_folder_and_nothing_else(cache, tmp_path):
    db = tmp_path / "memory.db"
    entries = [(7, vector_index.digest(blob(UNIT[0]))), (3, "a" * 64)]
    assert vector_deletions.write_deletions(db, entries)
    place = vector_deletions.deletions_file(db)
    assert place.parent == cache / "vector-deletions" and len(place.name) == 64
    assert place.read_bytes() == b"oxmem vector deletions 1\n7 " + entries[0][1].encode() + b"\n3 " + b"a" * 64 + b"\n"
    assert stat.S_IMODE(place.parent.stat().st_mode) == 0o700 and stat.S_IMODE(place.stat().st_mode) == 0o600
    assert vector_deletions.read_deletions(db) == entries
    many = [(i, "b" * 64) for i in range(1, vector_deletions.MAX_DELETIONS + 51)]
    assert vector_deletions.write_deletions(db, many) and vector_deletions.read_deletions(db) == many[50:]  # the newest
    assert vector_deletions.write_deletions(db, []) and not place.exists()
    assert sorted(p.name for p in place.parent.iterdir()) == []  # no temporary file left


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"oxmem vector deletions 1",  # no end of line
        b"oxmem vector deletions 2\n",
        b'{"deleted": [[2, "' + b"a" * 64 + b'"]]}\n',
        b"oxmem vector deletions 1\n2 " + b"A" * 64 + b"\n",  # upper case
        b"oxmem vector deletions 1\n2 " + b"a" * 63 + b"\n",
        b"oxmem vector deletions 1\n0 " + b"a" * 64 + b"\n",
        b"oxmem vector deletions 1\n-2 " + b"a" * 64 + b"\n",
        b"oxmem vector deletions 1\n02 " + b"a" * 64 + b"\n",
        b"oxmem vector deletions 1\n9223372036854775808 " + b"a" * 64 + b"\n",  # past SQLite's rowids
        b"oxmem vector deletions 1\n2 " + b"a" * 64 + b"\r\n",
        b"oxmem vector deletions 1\n2 " + b"a" * 64 + b"\n\n",
        b"oxmem vector deletions 1\n2  " + b"a" * 64 + b"\n",
        b"oxmem vector deletions 1\n2 " + b"a" * 64 + b"\n3 " + b"a" * 64,  # the last line cut
        b"oxmem vector deletions 1\n2 " + b"a" * 64 + b"\x00\n",
        b"oxmem vector deletions 1\n\xff\xfe " + b"a" * 64 + b"\n",
        b"oxmem vector deletions 1\n" + b"".join(b"%d " % i + b"a" * 64 + b"\n" for i in range(1, 10_002)),
    ],
    ids=lambda c: repr(c[:40]),
)
def test_a_kept_file_in_any_doubt_is_ignored_whole(cache, tmp_path, content):
    db = tmp_path / "memory.db"
    place = vector_deletions.deletions_file(db)
    place.parent.mkdir(parents=True)
    place.write_bytes(b"oxmem vector deletions 1\n5 " + b"c" * 64 + b"\n")
    assert vector_deletions.read_deletions(db) == [(5, "c" * 64)]
    place.write_bytes(content)
    assert vector_deletions.read_deletions(db) == []


def test_a_kept_file_that_cannot_be_written_is_only_not_kept(cache, tmp_path, monkeypatch):
    db = tmp_path / "memory.db"
    cache.parent.mkdir()
    cache.write_bytes(b"")  # oxmem's cache folder a file: no folder can be made in it
    assert vector_deletions.write_deletions(db, [(2, "a" * 64)]) is False
    cache.unlink()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(vector_deletions.os, "replace", full)
    assert vector_deletions.write_deletions(db, [(2, "a" * 64)]) is False
    assert list((cache / "vector-deletions").iterdir()) == []  # the temporary file removed


def test_a_later_writer_gives_a_vector_deleted_by_an_earlier_one_its_rowid_back(cache, tmp_path):
    """What one process deleted, the next — which opens the file afresh — knows: the same vector inserted again
    takes the deleted rowid, whose leftover edges libSQL then overwrites. A writer already open beside (the
    inspector while a command runs) learns it at its next write. Before, each knew only its own deletions."""
    db = tmp_path / "memory.db"
    four_rows(str(db)).close()
    beside = writer(db)
    first = writer(db)
    first.execute("BEGIN IMMEDIATE")
    first.execute("DELETE FROM chunks_vec WHERE chunk_id IN ('c2', 'c3')")
    first.execute("COMMIT")
    first.raw.close()
    assert sorted(vector_deletions.read_deletions(db)) == [(2, vector_index.digest(blob(UNIT[1]))),
                                                       (3, vector_index.digest(blob(UNIT[2])))]  # fmt: skip
    later = writer(db)
    later.execute("BEGIN IMMEDIATE")
    later.execute(INSERT, ("c2-again", blob(UNIT[1]), "m"))
    later.execute("COMMIT")
    beside.execute("BEGIN IMMEDIATE")
    beside.execute(INSERT, ("c3-again", blob(UNIT[2]), "m"))
    beside.execute("COMMIT")
    assert rows(later.raw) == [(1, "c1", "m"), (2, "c2-again", "m"), (3, "c3-again", "m"), (4, "c4", "m")]
    assert vector_index.unfound(later.raw, INDEX) == (4, 4, [])
    assert vector_deletions.read_deletions(db) == []  # both rowids taken again: nothing left to keep


def test_a_new_vector_never_takes_the_rowid_of_a_deleted_one(conn):
    """SQLite gives a new row the highest rowid plus one: after the newest row is deleted, its own. Another vector
    there would leave the deleted one's edges naming a row that is not it, and that vector, inserted again (an edit
    back), no rowid to repair them with: a new vector goes past every deleted rowid."""
    vector_index.watch_deletions(conn, INDEX)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c4'")
    other = ["c5", blob((1, 1, 0, 0)), "m"]
    sql, args = vector_index.into_deleted_twin(conn, INSERT, other)
    assert args == [5, *other]
    conn.execute(sql, args)
    sql, args = vector_index.into_deleted_twin(conn, INSERT, ["c4-again", blob(UNIT[3]), "m"])
    assert args[0] == 4
    conn.execute(sql, args)
    vector_index.keep_reachable(conn, INDEX)
    conn.execute("COMMIT")
    assert [r[:2] for r in rows(conn)] == [(1, "c1"), (2, "c2"), (3, "c3"), (4, "c4-again"), (5, "c5")]


def test_a_row_still_not_found_after_its_reinsert_is_logged(conn, caplog):
    """The agent (unwatched) stores c1's vector again and deletes c1: edges naming rowid 1 still carry that vector,
    and oxmem never saw it go. The same vector inserted by oxmem then cannot be made reachable without rebuilding
    the index, which locks the file for the agent: it is said in the log, rowids only."""
    conn.execute(INSERT, ("twin", blob(UNIT[0]), "m"))
    conn.execute("DELETE FROM chunks_vec WHERE chunk_id = 'c1'")
    vector_index.watch_deletions(conn, INDEX)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(INSERT, ("again", blob(UNIT[0]), "m"))  # rowid 6
    with caplog.at_level(logging.WARNING, logger="oxmem_gui.core.vector_index"):
        assert vector_index.keep_reachable(conn, INDEX) == {6: 6}
    conn.execute("COMMIT")
    (record,) = caplog.records
    assert "still not found by vector_top_k (rowids 6)" in record.getMessage()
    assert "oxmem check --repair" in record.getMessage()


def _warn(conn) -> int:
    logging.getLogger("oxmem_gui.core.vector_index").warning("a warning of the libSQL writer's")
    return 7


def test_the_writers_warnings_reach_the_parents_log(tmp_path, caplog):
    """The libSQL writer is a child process whose stderr goes nowhere: what it logs comes back with each result."""
    from oxmem_gui.core.libsql_writer import LibsqlWriter

    db = tmp_path / "memory.db"
    four_rows(str(db)).close()
    child = LibsqlWriter(db, 1000)
    try:
        with caplog.at_level(logging.WARNING, logger="oxmem_gui.core.vector_index"):
            assert child.call(_warn) == 7
    finally:
        child.close()
    assert [r.getMessage() for r in caplog.records] == ["a warning of the libSQL writer's (the libSQL writer)"]
