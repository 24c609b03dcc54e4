"""``oxmem info``: what a database file is — its format, version markers, tables with row counts, journal mode
and the embedding models and dimensions found in it. Read-only; works on files that cannot be opened too
(encrypted, not SQLite), where it says what they are."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from ..store.migrations import recorded_versions, table_names
from .detect import LABELS
from .table_browser import TableInfo, list_tables


@dataclass
class EmbeddingInfo:
    """Vectors found in one table: the model that made them (as recorded, or as the format documents it),
    their stored and real dimensions (zero padding is not real), and how many rows have one."""

    table: str
    model: str
    stored_dimensions: int
    dimensions: int
    rows: int
    encoding: str = "float32"


@dataclass
class DatabaseInfo:
    path: str
    format: str
    label: str
    size_bytes: int
    journal_mode: str | None = None
    page_size: int | None = None
    user_version: int | None = None
    markers: list[str] = field(default_factory=list)
    tables: list[TableInfo] = field(default_factory=list)
    embeddings: list[EmbeddingInfo] = field(default_factory=list)
    #: why the file is read-only in oxmem, or which edits are refused (empty: every edit can be enabled)
    editing: str = ""


def file_info(path: str | os.PathLike[str], fmt: str, editing: str = "") -> DatabaseInfo:
    """What can be said of a file without reading it as SQLite."""
    p = Path(path).expanduser()
    size = p.stat().st_size if p.exists() else 0
    return DatabaseInfo(str(p), fmt, LABELS.get(fmt, fmt), size, editing=editing)


def gather_info(
    conn: apsw.Connection,
    path: Path,
    fmt: str,
    markers: list[str] | None = None,
    embeddings: list[EmbeddingInfo] | None = None,
    editing: str = "",
) -> DatabaseInfo:
    info = file_info(path, fmt, editing)
    info.journal_mode = str(conn.execute("PRAGMA journal_mode").fetchall()[0][0])
    info.page_size = int(conn.execute("PRAGMA page_size").fetchall()[0][0])
    info.user_version = int(conn.execute("PRAGMA user_version").fetchall()[0][0])
    info.markers = list(markers or [])
    info.tables = list_tables(conn, counts=True)
    info.embeddings = list(embeddings or [])
    return info


def real_dimensions(blob: bytes) -> int:
    """The dimensions of a float32 vector without its trailing zero padding."""
    n = len(blob) // 4
    while n and blob[4 * n - 4 : 4 * n] in (b"\x00\x00\x00\x00", b"\x00\x00\x00\x80"):
        n -= 1
    return n


def info_lines(info: DatabaseInfo) -> list[str]:
    """The info as lines of text (``oxmem info`` and the GUI's *About This Database*)."""
    lines = [f"{info.path}: {info.format} ({info.label}), {info.size_bytes:,} bytes"]
    if info.journal_mode is not None:
        lines.append(f"journal {info.journal_mode}, page size {info.page_size:,}, user_version {info.user_version}")
    lines += [f"marker: {m}" for m in info.markers]
    if info.editing:
        lines.append(f"editing: {info.editing}")
    if info.tables:
        rows = [("table", "kind", "rows", "columns")] + [
            (t.name, t.kind, "?" if t.rows is None else f"{t.rows:,}", str(len(t.columns))) for t in info.tables
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for e in info.embeddings:
        padded = f" (stored {e.stored_dimensions}, zero-padded)" if e.stored_dimensions != e.dimensions else ""
        lines.append(
            f"embeddings: {e.table}: {e.model}, {e.dimensions} dimensions{padded}, {e.rows:,} rows, {e.encoding}"
        )
    return lines


def native_info(conn: apsw.Connection, path: Path, fmt: str, editing: str) -> DatabaseInfo:
    """:func:`gather_info` of a file in the store's own tables (oxmem's, Oxydra's): its recorded migrations and its
    vectors per model; ``editing`` says which edits are refused there."""
    versions = recorded_versions(conn) if "memory_migrations" in table_names(conn) else []
    markers = [f"memory_migrations: {len(versions)} recorded, latest {versions[-1]}"] if versions else []
    if fmt == "oxydra-libsql":
        markers.append("libSQL vector index idx_chunks_vec_embedding_ann (libsql_vector_idx)")
    embeddings = []
    for model, size, rows, blob in conn.execute(
        "SELECT embedding_model, length(embedding_blob), count(*), embedding_blob FROM chunks_vec "
        "GROUP BY embedding_model, length(embedding_blob) ORDER BY embedding_model"
    ):
        embeddings.append(EmbeddingInfo("chunks_vec", model, size // 4, real_dimensions(blob), rows))
    return gather_info(conn, path, fmt, markers, embeddings, editing)
