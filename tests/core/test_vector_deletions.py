"""What oxmem keeps of its deletions from libSQL's vector index between processes (``vector_index``'s docstring) is
untrusted when read back. Each case plants something at that file's place (or names rowids that are taken), then
runs the reported sequence — ``oxmem notes delete`` in one process, the same words added again in the next, each a
child with a timeout: the edits succeed, with no traceback and no hang; the re-added vector still gets the deleted
row's rowid (before, no process knew it: it got a new one, which libSQL's leftover edges refuse); nothing outside
oxmem's folder changes; and libSQL finds every row the edits wrote."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import apsw
import blake3
import pytest

from oxmem_gui.core import vector_deletions
from oxmem_gui.core.store.notes import notes_session
from tests.core.formats import fixtures as fx
from tests.core.test_libsql_writer import healthy, oxmem, run, through_libsql

pytest.importorskip("libsql")

X = "Alice prefers window seats"
HUGE = 64 << 30
HEADER = b"oxmem vector deletions 1\n"


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """The fixture's file with two notes of alice's (X, then another: X's row is not the newest), oxmem's cache
    folder in the test's own folder (here and in every child). The file, X's note, and its row's rowid and hash."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = fx.make_oxydra_libsql(tmp_path / "memory.db")
    note = run(path, lambda m: m.save_note("alice", X))
    run(path, lambda m: m.save_note("alice", "Bob is allergic to peanuts"))
    rowid, blob = rows(path)[note.note_id]
    return path, note.note_id, rowid, blake3.blake3(blob).hexdigest()


def kept_at(path: Path) -> Path:
    """Where oxmem keeps the deletions from ``path``'s vector index: its cache folder, a file named by the hash of
    the file's resolved path."""
    name = blake3.blake3(os.fsencode(path.resolve())).hexdigest()
    return Path(os.environ["XDG_CACHE_HOME"]) / "oxmem" / "vector-deletions" / name


def rows(path: Path) -> dict[str, tuple[int, bytes]]:
    """Each of alice's notes' rowid in ``chunks_vec`` and its vector, by note id."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            note: (rowid, bytes(blob))
            for note, rowid, blob in conn.execute(
                "SELECT json_extract(c.metadata_json, '$.note_id'), v.rowid, v.embedding_blob FROM chunks c "
                "JOIN chunks_vec v USING (chunk_id) WHERE c.session_id = ?",
                (notes_session("alice"),),
            )
        }
    finally:
        conn.close()


def outside(root: Path, path: Path) -> dict[str, tuple]:
    """Everything under ``root`` but oxmem's cache folder and the memory file itself: kind, size, time, content's
    hash (small regular files); links not followed."""
    ours = root / "cache" / "oxmem"
    seen = {}
    for p in sorted(root.rglob("*")):
        if p == ours or ours in p.parents or p.name.startswith(path.name):
            continue
        st = p.lstat()
        small = stat.S_ISREG(st.st_mode) and st.st_size < 1 << 20
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if small else None
        target = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
        seen[str(p)] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, digest, target)
    return seen


def kept_file(rowids_and_hashes) -> bytes:
    return HEADER + b"".join(f"{r} {h}\n".encode() for r, h in rowids_and_hashes)


def sparse(where: Path) -> Path:
    with open(where, "wb"):
        pass
    os.truncate(where, HUGE)
    return where


def plant_fifo(place: Path, root: Path, rowid: int, digest: str) -> None:
    os.mkfifo(place)


def plant_link_to_a_huge_file(place: Path, root: Path, rowid: int, digest: str) -> None:
    place.symlink_to(sparse(root / "outside" / "huge"))


def plant_link_to_a_kept_file(place: Path, root: Path, rowid: int, digest: str) -> None:
    """A valid file elsewhere naming a free rowid of X's hash: followed, it would be kept with oxmem's own."""
    (root / "outside" / "kept").write_bytes(kept_file([(10**6, digest)]))
    place.symlink_to(root / "outside" / "kept")


def plant_huge_sparse_file(place: Path, root: Path, rowid: int, digest: str) -> None:
    sparse(place)


def plant_json(place: Path, root: Path, rowid: int, digest: str) -> None:
    place.write_text(f'{{"deleted": [[{rowid}, "{digest}"]]}}\n')


def plant_binary(place: Path, root: Path, rowid: int, digest: str) -> None:
    place.write_bytes(bytes(range(256)) * 64)


def plant_one_bad_line(place: Path, root: Path, rowid: int, digest: str) -> None:
    """A free rowid of X's hash, then a line that is not an entry: the whole file is ignored."""
    place.write_bytes(kept_file([(10**6, digest)]) + b"-3 " + digest.encode() + b"\n")


def plant_too_many(place: Path, root: Path, rowid: int, digest: str) -> None:
    place.write_bytes(kept_file([(10**6 + i, digest) for i in range(10_001)]))  # one more than kept


HOSTILE = {
    "a FIFO": plant_fifo,
    "a link to a 64 GiB file": plant_link_to_a_huge_file,
    "a link to a file elsewhere": plant_link_to_a_kept_file,
    "a 64 GiB sparse file": plant_huge_sparse_file,
    "JSON": plant_json,
    "binary garbage": plant_binary,
    "one bad line": plant_one_bad_line,
    "more entries than kept": plant_too_many,
}


@pytest.mark.parametrize("plant", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_file_is_ignored_and_replaced_and_the_edits_still_repair(setup, tmp_path, plant):
    path, note, rowid, digest = setup
    place = kept_at(path)
    place.parent.mkdir(parents=True, mode=0o700)
    (tmp_path / "outside").mkdir()
    plant(place, tmp_path, rowid, digest)
    around, before = outside(tmp_path, path), through_libsql(path)

    assert oxmem(path, "notes", "delete", "alice", note) == {"deleted": note}
    kept = place.lstat()
    again = oxmem(path, "notes", "add", "alice", X)["note_id"]

    now, blob = rows(path)[again]
    assert (now, blake3.blake3(blob).hexdigest()) == (rowid, digest)  # the deleted rowid: its edges overwritten
    assert stat.S_ISREG(kept.st_mode) and kept.st_size == len(kept_file([(rowid, digest)]))  # replaced, not merged
    assert vector_deletions.deletions_file(path) == place and not place.exists()  # the rowid is taken again
    assert outside(tmp_path, path) == around
    healthy(path, before)


def test_entries_naming_rowids_taken_since_are_never_reused(setup, tmp_path):
    """A kept entry of X's hash names a rowid the agent has given another row since (the fixture's first row,
    another note's): the row there is left as it is, and X goes back to its own deleted rowid, which is free."""
    path, note, rowid, digest = setup
    other = next(r for n, r in rows(path).items() if n != note)
    taken = "SELECT rowid, chunk_id, embedding_blob FROM chunks_vec WHERE rowid IN (1, ?) ORDER BY rowid"
    first = apsw.Connection(str(path)).execute(taken, (other[0],)).fetchall()
    place = kept_at(path)
    place.parent.mkdir(parents=True, mode=0o700)
    place.write_bytes(kept_file([(1, digest), (other[0], digest)]))
    before = through_libsql(path)

    oxmem(path, "notes", "delete", "alice", note)
    again = oxmem(path, "notes", "add", "alice", X)["note_id"]

    assert rows(path)[again][0] == rowid
    assert apsw.Connection(str(path)).execute(taken, (other[0],)).fetchall() == first
    state = healthy(path, before)
    assert state["vectors"] == before["vectors"]


def test_a_link_as_oxmems_folder_is_never_followed(setup, tmp_path):
    """``vector-deletions`` itself a link to a folder elsewhere holding a file of the right name: nothing is read
    from it or written into it — nothing is kept (so this passes before too: it proves no link is followed), and
    the edits succeed. (Nothing kept, the re-added row may be one libSQL's leftover edges refuse, as before:
    only libSQL's integrity is checked.)"""
    path, note, rowid, digest = setup
    place = kept_at(path)
    elsewhere = tmp_path / "outside"
    elsewhere.mkdir()
    (elsewhere / place.name).write_bytes(kept_file([(10**6, digest)]))
    place.parent.parent.mkdir(parents=True, exist_ok=True)
    place.parent.symlink_to(elsewhere, target_is_directory=True)
    around, before = outside(tmp_path, path), through_libsql(path)

    oxmem(path, "notes", "delete", "alice", note)
    again = oxmem(path, "notes", "add", "alice", X)["note_id"]

    assert rows(path)[again][0] != 10**6
    assert outside(tmp_path, path) == around and place.parent.is_symlink()
    state = through_libsql(path)
    assert state["integrity"] == ["ok"] and state["vectors"] == before["vectors"]
