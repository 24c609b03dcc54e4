"""libSQL's vector index kept whole, on a small in-memory libSQL table: deletions noted in TEMP tables only, a
twin left by a deletion moved to the deleted row's rowid, a deleted vector inserted again under its old rowid,
rows re-inserted unchanged, and the check and repair of a whole index finding nothing to do."""

from __future__ import annotations

import numpy as np
import pytest

from oxmem_gui.core import vector_index

libsql = pytest.importorskip("libsql")

INDEX = "idx_ann"
UNIT = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)]
INSERT = "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) VALUES (?, ?, ?)"


def blob(values) -> bytes:
    return np.array(values, dtype="<f4").tobytes()


def rows(conn) -> list[tuple]:
    return conn.execute("SELECT rowid, chunk_id, embedding_model FROM chunks_vec ORDER BY rowid").fetchall()


def four_rows():
    """Four orthogonal vectors (rowids 1–4, chunks c1–c4) in a ``FLOAT32(4)`` table with an ANN index."""
    c = libsql.connect(":memory:", isolation_level=None)
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
