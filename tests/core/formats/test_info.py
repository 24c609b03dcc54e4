"""``oxmem info``'s facts about a file: its size and label unopened, its pragmas, tables and vectors per model (zero
padding left out of the dimensions), and the lines they are shown in."""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np

from oxmem_gui.core.formats.info import (
    DatabaseInfo,
    EmbeddingInfo,
    file_info,
    gather_info,
    info_lines,
    native_info,
    real_dimensions,
)
from oxmem_gui.core.formats.table_browser import TableInfo


def f32(*values: float) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()


def test_real_dimensions_drop_only_trailing_zeros_of_either_sign():
    assert real_dimensions(f32(0.5, 0.0, 2.0, 0.0, 0.0)) == 3  # a zero inside the vector is a value
    assert real_dimensions(f32(1.0, -0.0, -0.0)) == 1  # negative zero is padding too
    assert real_dimensions(f32(0.0, 0.0)) == 0
    assert real_dimensions(b"") == 0
    assert real_dimensions(f32(1.0, 2.0) + b"\x00\x00") == 2  # a partial float at the end is not counted


def test_file_info_of_a_missing_file_and_an_unknown_format(tmp_path):
    info = file_info(tmp_path / "gone.db", "not-sqlite")
    assert (info.path, info.format, info.label, info.size_bytes) == (
        str(tmp_path / "gone.db"),
        "not-sqlite",
        "not a SQLite database",
        0,
    )
    assert (info.journal_mode, info.tables, info.embeddings, info.markers) == (None, [], [], [])
    (tmp_path / "x.bin").write_bytes(b"x" * 1234)
    other = file_info(tmp_path / "x.bin", "mystery", editing="refused")
    assert (other.label, other.size_bytes, other.editing) == ("mystery", 1234, "refused")


def test_info_lines_align_the_tables_and_describe_padded_vectors():
    info = DatabaseInfo(
        "/m/agent.db",
        "oxydra",
        "Oxydra memory",
        1234567,
        journal_mode="wal",
        page_size=4096,
        user_version=3,
        markers=["memory_migrations: 2 recorded, latest 0002_x"],
        tables=[
            TableInfo("chunks", "table", ["a", "b", "c"], 12345, None),
            TableInfo("chunks_fts", "virtual", ["text"], None, None),
        ],
        embeddings=[
            EmbeddingInfo("chunks_vec", "model-a", 512, 256, 1500),
            EmbeddingInfo("chunks_vec", "model-b", 64, 64, 3),
        ],
        editing="notes are read-only here",
    )
    assert info_lines(info) == [
        "/m/agent.db: oxydra (Oxydra memory), 1,234,567 bytes",
        "journal wal, page size 4,096, user_version 3",
        "marker: memory_migrations: 2 recorded, latest 0002_x",
        "editing: notes are read-only here",
        "table       kind     rows    columns",
        "chunks      table    12,345  3",
        "chunks_fts  virtual  ?       1",
        "embeddings: chunks_vec: model-a, 256 dimensions (stored 512, zero-padded), 1,500 rows, float32",
        "embeddings: chunks_vec: model-b, 64 dimensions, 3 rows, float32",
    ]


def test_info_lines_of_an_unopened_file_are_one_line():
    assert info_lines(DatabaseInfo("/m/x.db", "encrypted", "encrypted database", 4096)) == [
        "/m/x.db: encrypted (encrypted database), 4,096 bytes"
    ]


def test_gather_info_reads_the_pragmas_and_counts_the_tables(tmp_path):
    path = tmp_path / "plain.db"
    conn = apsw.Connection(str(path))
    for pragma in ("page_size = 8192", "journal_mode = wal", "user_version = 42"):
        conn.execute(f"PRAGMA {pragma}").fetchall()
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); CREATE VIEW recent AS SELECT body FROM notes")
    conn.execute("INSERT INTO notes (body) VALUES ('a'), ('b'), ('c')")
    info = gather_info(conn, path, "sqlite-unknown", ["m1"], editing="read-only")
    conn.close()
    assert (info.format, info.label, info.journal_mode, info.page_size, info.user_version) == (
        "sqlite-unknown",
        "SQLite database",
        "wal",
        8192,
        42,
    )
    assert [(t.name, t.kind, t.columns, t.rows) for t in info.tables] == [
        ("notes", "table", ["id", "body"], 3),
        ("recent", "view", ["body"], 3),
    ]
    assert (info.markers, info.embeddings, info.editing) == (["m1"], [], "read-only")


def test_native_info_groups_vectors_by_model_and_stored_size(tmp_path):
    conn = apsw.Connection(str(tmp_path / "vec.db"))
    conn.execute("CREATE TABLE chunks_vec (chunk_id TEXT PRIMARY KEY, embedding_model TEXT, embedding_blob BLOB)")
    rows = [
        ("1", "zeta", f32(1, 2, 3, 0)),
        ("2", "zeta", f32(1, 2, 3, 0)),
        ("3", "alpha", f32(1, 0, 0, 0, 0, 0)),
        ("4", "alpha", f32(4, 5)),
    ]
    conn.executemany("INSERT INTO chunks_vec VALUES (?, ?, ?)", rows)
    info = native_info(conn, Path(tmp_path / "vec.db"), "oxydra-libsql", "")
    conn.close()
    assert info.markers == ["libSQL vector index idx_chunks_vec_embedding_ann (libsql_vector_idx)"]
    assert sorted((e.model, e.stored_dimensions, e.dimensions, e.rows) for e in info.embeddings) == [
        ("alpha", 2, 2, 1),
        ("alpha", 6, 1, 1),
        ("zeta", 4, 3, 2),
    ]
    assert [e.model for e in info.embeddings] == ["alpha", "alpha", "zeta"]


def test_an_oxmem_stores_info_names_its_migration_and_its_vectors(store):
    store.save_note("alice", "Prefers dark mode", ["ui"])
    store.save_note("alice", "Flies with aisle seats", ["travel"])
    info = store.info()
    assert (info.format, info.label, info.editing) == ("oxmem", "oxmem store", "")
    assert info.markers == ["memory_migrations: 1 recorded, latest 0001_initial"]
    assert [(e.table, e.model, e.stored_dimensions, e.dimensions, e.rows, e.encoding) for e in info.embeddings] == [
        ("chunks_vec", "deterministic-hash-v1", 64, 64, 2, "float32")
    ]
    assert {t.name: t.rows for t in info.tables}["chunks"] == 2
