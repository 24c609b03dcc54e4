"""Writes to newer Oxydra's file with libSQL's vector index (``core/libsql_writer.py``), on a file the agent's own
migrations 0001–0024 made: every kind of edit goes through the libSQL engine in a child process, and after each,
libSQL's ``integrity_check`` is ok and ``vector_top_k`` finds every stored vector (the ANN index is valid), while
the inspector's APSW connection reads the same file beside it. A conflicting change by another process is shown,
bad input writes nothing, and no oxmem migration is ever recorded in the agent's file."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import apsw
import numpy as np
import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError, vector_deletions
from oxmem_gui.core.embeddings.backends import DeterministicEmbedding
from oxmem_gui.core.errors import StoreBusyError
from oxmem_gui.core.memory import open_memory
from oxmem_gui.core.store.notes import notes_session
from tests.core.formats import fixtures as fx

BERLIN = next(iter(fx.OXYDRA_SESSIONS))
MONDAY_PLAN = "00000000-0000-4000-8000-000000000001"  # an Oxydra schedule of the fixture
#: the index of the agent's migration 0024
INDEX = "idx_chunks_vec_embedding_ann"

_PROBE = """
import json, sys, libsql
conn = libsql.connect(sys.argv[1])
out = {"integrity": [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]}
rows = conn.execute("SELECT rowid, chunk_id, embedding_blob FROM chunks_vec").fetchall()
present = {r[0] for r in rows}
twins = {}
for _, _, blob in rows:
    twins[bytes(blob)] = twins.get(bytes(blob), 0) + 1
lost, ghosts = [], set()
for rowid, chunk, blob in rows:
    for _ in range(3):  # libSQL starts each search on a random node: a stranded row is found only from itself
        near = [r[0] for r in conn.execute("SELECT id FROM vector_top_k(?, ?, 30)", (sys.argv[2], blob)).fetchall()]
        ghosts |= set(near) - present
        # its own vector, at distance 0, is the nearest — among its twins, which share that distance, when rows
        # hold the same vector (a stale entry ranks elsewhere)
        if rowid not in near[: twins[bytes(blob)]]:
            lost.append(chunk)
            break
out["vectors"] = len(rows)
out["chunk_ids"] = sorted(r[1] for r in rows)
out["lost"] = lost
out["ghosts"] = len(ghosts)
out["lengths"] = sorted({len(r[2]) for r in rows})
out["orphans"] = conn.execute(
    "SELECT count(*) FROM chunks_vec v WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = v.chunk_id)"
).fetchall()[0][0]
out["unindexed"] = conn.execute(
    "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.chunk_id)"
).fetchall()[0][0]
out["fts"] = conn.execute("SELECT count(*) FROM chunks_fts").fetchall()[0][0]
out["chunks"] = conn.execute("SELECT count(*) FROM chunks").fetchall()[0][0]
out["versions"] = [r[0] for r in conn.execute("SELECT version FROM memory_migrations ORDER BY 1").fetchall()]
conn.close()
print(json.dumps(out))
"""


def through_libsql(path: Path) -> dict:
    """The file as the libSQL engine sees it, from another process."""
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path), INDEX], capture_output=True, text=True,
                          check=True, timeout=120)  # fmt: skip
    return json.loads(done.stdout)


def healthy(path: Path, before: dict | None = None) -> dict:
    """libSQL's checks after an edit: integrity ok; the ANN index returns no row that is gone; every vector this
    edit wrote (all of them, with no ``before``) is the nearest to itself (with its twins, rows of the same
    vector) — an entry left stale would rank elsewhere; 512-float blobs only; the FTS index one row per chunk; no
    vector without its chunk; no oxmem version recorded. (After deletions libSQL's own graph may leave an older
    vector unreachable — it does so when the agent deletes too — so older vectors are not held to that.)"""
    state = through_libsql(path)
    assert state["integrity"] == ["ok"]
    assert state["ghosts"] == 0 and state["orphans"] == 0 and state["unindexed"] == 0
    written = set(state["chunk_ids"]) - set(before["chunk_ids"] if before else ())
    assert not written & set(state["lost"]), state["lost"]
    assert state["lengths"] == [2048]
    assert state["fts"] == state["chunks"]
    assert state["versions"] == fx.OXYDRA_AGENT_MIGRATIONS
    return state


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory, monkeypatch):
    """oxmem's cache folder — where the libSQL writer keeps what it deleted from the index — in the test run's own
    folder, here and in every child, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
def libsql_file(tmp_path: Path) -> Path:
    return fx.make_oxydra_libsql(tmp_path / "memory.db")


def run(path: Path, fn):
    async def go():
        async with await open_memory(path, read_only=False, embedding="deterministic") as m:
            return await fn(m)

    return asyncio.run(go())


def test_storing_events_goes_through_libsql_and_apsw_reads_them_beside_it(libsql_file):
    before = healthy(libsql_file)

    async def store(m):
        one = await m.store("web:new", 1, {"role": "user", "content": "The bakery on Rue Cler opens at seven."})
        more = await m.store_many(
            [("web:new", 2, {"role": "assistant", "content": "Noted: Rue Cler, seven o'clock."}),
             (BERLIN, 99, {"role": "user", "content": "And the museum pass costs 29 euros."})]
        )  # fmt: skip
        found = await m.hybrid_query("web:new", "bakery Rue Cler", 2)  # APSW, in this process, meanwhile
        return one, more, found

    one, more, found = run(libsql_file, store)
    assert (one.new_chunks, [r.new_chunks for r in more]) == (1, [1, 1])
    assert "The bakery on Rue Cler opens at seven." in [h.text for h in found.hits]
    after = healthy(libsql_file)
    assert after["vectors"] == before["vectors"] + 3


def test_notes_are_saved_edited_tagged_and_deleted_through_libsql(libsql_file):
    async def notes(m):
        note = await m.save_note("alice", "Alice prefers window seats", ["travel"])
        edited = await m.update_note("alice", note.note_id, "Alice prefers aisle seats", ["travel"], expected=note)
        tagged = await m.set_note_tags("alice", [note.note_id], add=["seats"], expected=[edited])
        hits = await m.search_notes("alice", "aisle seats", 3)
        return note, edited, tagged, hits

    fresh = through_libsql(libsql_file)
    note, edited, tagged, hits = run(libsql_file, notes)
    assert edited.content == "Alice prefers aisle seats" and sorted(tagged[0].tags) == ["seats", "travel"]
    assert note.note_id in [h.note_id for h in hits]
    healthy(libsql_file, fresh)
    run(libsql_file, lambda m: m.delete_notes("alice", [note.note_id], expected=tagged))
    state = healthy(libsql_file, fresh)
    restored = run(libsql_file, lambda m: m.restore_notes(tagged, expected={note.note_id: None}))  # undo
    assert restored[0].content == "Alice prefers aisle seats"
    assert healthy(libsql_file, state)["vectors"] == state["vectors"] + 1


def test_forgetting_a_session_cascades_through_the_vector_index(libsql_file):
    before = through_libsql(libsql_file)
    run(libsql_file, lambda m: m.forget(fx.POTION_SESSION))  # vectors of a model oxmem cannot run: only deleted
    run(libsql_file, lambda m: m.forget(BERLIN))
    after = healthy(libsql_file, before)
    assert after["vectors"] == after["chunks"] < before["vectors"] - 4
    sessions = run(libsql_file, lambda m: m.list_sessions())
    assert BERLIN not in [s.session_id for s in sessions] and fx.POTION_SESSION not in [s.session_id for s in sessions]


def test_import_and_reindex_go_through_libsql(libsql_file):
    records = [("import:s", i, {"role": "user", "content": f"imported line {i} about trains"}) for i in range(1, 6)]

    async def work(m):
        imported = await m.import_events(records)
        reindexed = await m.reindex(session_id=fx.POTION_SESSION)  # POTION's 4 chunks get deterministic vectors
        return imported, reindexed

    before = through_libsql(libsql_file)
    imported, reindexed = run(libsql_file, work)
    assert (imported.stored, reindexed.reembedded) == (5, 4)
    state = healthy(libsql_file, before)
    potion = [c for c in state["chunk_ids"] if fx.POTION_SESSION in c]
    assert len(potion) == 4 and not set(potion) & set(state["lost"])  # re-embedded: no stale entry left
    assert state["chunks"] == 21 + 5


def test_a_note_the_agent_changed_meanwhile_is_a_conflict_and_is_kept(libsql_file):
    """The agent (another process, through libSQL) rewrites the note's stored message meanwhile."""
    note = run(libsql_file, lambda m: m.save_note("alice", "Alice's gate code is 4471"))
    agent = (
        "import libsql, sys; c = libsql.connect(sys.argv[1]); c.execute('BEGIN IMMEDIATE'); "
        "c.execute(\"UPDATE conversation_events SET payload_json = json_set(payload_json, '$.content', "
        "'Alice''s gate code is 9902') WHERE session_id = ?\", (sys.argv[2],)); c.execute('COMMIT'); c.close()"
    )

    async def scenario(m):
        loaded = await m.get_note("alice", note.note_id)
        subprocess.run([sys.executable, "-c", agent, str(libsql_file), notes_session("alice")], check=True, timeout=60)
        with pytest.raises(ConflictError) as info:
            await m.update_note("alice", note.note_id, "Alice's gate code is 1234", expected=loaded)
        return info.value.current

    theirs = run(libsql_file, scenario)
    assert theirs is not None and "9902" in theirs.content
    current = run(libsql_file, lambda m: m.get_note("alice", note.note_id))
    assert "9902" in current.content
    assert through_libsql(libsql_file)["integrity"] == ["ok"]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m.save_note("alice", "   "), InvalidInputError, "empty"),
        (lambda m: m.update_note("alice", "note-00000000-0000-4000-8000-0000000000ff", "x"), NotFoundError, "no note"),
        (lambda m: m.forget("no-such-session"), NotFoundError, "no-such-session"),
        (lambda m: m.store(BERLIN, 1, {"role": "user", "content": "a sequence already stored"}), InvalidInputError,
         "sequence"),
    ],
)  # fmt: skip
def test_bad_input_is_one_error_and_writes_nothing(libsql_file, call, error, message):
    before = through_libsql(libsql_file)
    with pytest.raises(error, match=message):
        run(libsql_file, call)
    assert through_libsql(libsql_file) == before


def test_the_agent_holding_the_write_lock_is_a_clear_busy_error(libsql_file, tmp_path):
    ready = tmp_path / "ready"
    hold = (
        "import libsql, sys, time, pathlib; c = libsql.connect(sys.argv[1]); c.execute('BEGIN IMMEDIATE'); "
        "pathlib.Path(sys.argv[2]).touch(); time.sleep(30)"
    )
    agent = subprocess.Popen([sys.executable, "-c", hold, str(libsql_file), str(ready)])
    try:
        for _ in range(600):
            if ready.exists():
                break
            asyncio.run(asyncio.sleep(0.05))
        assert ready.exists(), "the stand-in agent never took the write lock"

        async def attempt():
            async with await open_memory(libsql_file, read_only=False, embedding="deterministic",
                                         busy_timeout_ms=200) as m:  # fmt: skip
                await m.save_note("alice", "written while the agent holds the lock")

        with pytest.raises(StoreBusyError, match="locked"):
            asyncio.run(attempt())
    finally:
        agent.kill()
        agent.wait()
    assert through_libsql(libsql_file)["chunks"] == 21


def test_vectors_are_stored_zero_padded_as_oxydra_stores_them(libsql_file):
    run(libsql_file, lambda m: m.store("web:new", 1, {"role": "user", "content": "padding check"}))
    code = (
        "import libsql, sys; c = libsql.connect(sys.argv[1]); "
        'print(c.execute("SELECT hex(embedding_blob) FROM chunks_vec v JOIN chunks c USING (chunk_id) '
        "WHERE c.session_id = 'web:new'\").fetchall()[0][0])"
    )
    blob = bytes.fromhex(subprocess.run([sys.executable, "-c", code, str(libsql_file)], capture_output=True,
                                        text=True, check=True).stdout.strip())  # fmt: skip
    vector = np.frombuffer(blob, dtype="<f4")
    expected = DeterministicEmbedding().embed(["padding check"])[0]
    assert vector.shape == (512,) and np.allclose(vector[:64], expected) and not vector[64:].any()


def test_without_the_libsql_package_vector_writes_are_refused_saying_what_to_install(libsql_file, monkeypatch):
    from oxmem_gui.core import memory_store
    from oxmem_gui.core.errors import ReadOnlyError

    monkeypatch.setattr(memory_store, "have_libsql", lambda: False)
    before = through_libsql(libsql_file)

    async def attempt(m):
        assert set(m.capabilities.refusals) == {"events", "sessions", "turns", "notes"}
        with pytest.raises(ReadOnlyError, match=r"needs the libSQL engine \(pip install 'oxmem-gui\[libsql\]'\)"):
            await m.save_note("alice", "not written")
        return await m.schedules.pause(MONDAY_PLAN)  # schedules touch no vector: still written here

    assert run(libsql_file, attempt).status == "paused"
    assert through_libsql(libsql_file)["chunks"] == before["chunks"]


def test_editing_or_deleting_a_note_whose_words_another_note_repeats_leaves_both_findable(libsql_file):
    """libSQL strands the newer of two rows with the same vector when the older is deleted (``vector_index``'s
    docstring: reachable only through its twin, and the zombie edges left behind still carry the twin's vector).
    An edit deletes the old vector: oxmem moves the surviving twin to the deleted one's rowid before committing,
    so every row stays the nearest to itself. Three pairs: without the move, at least one is stranded."""
    words = ["Alice prefers window seats", "The spare key is under the blue pot", "Bob is allergic to peanuts"]

    async def twins(m):
        pairs = [(await m.save_note("alice", w), await m.save_note("alice", w)) for w in words]
        for i, (older, _) in enumerate(pairs):
            if i == 2:
                await m.delete_notes("alice", [older.note_id], expected=[older])
            else:
                await m.update_note("alice", older.note_id, f"{words[i]}, said in March", expected=older)
        return [newer for _, newer in pairs]

    before = through_libsql(libsql_file)
    newer = run(libsql_file, twins)
    state = healthy(libsql_file, before)  # every row written here is the nearest to itself, none stranded
    assert state["vectors"] == state["chunks"] == 21 + 5
    found = run(libsql_file, lambda m: m.list_notes("alice"))
    assert {n.note_id: n.content for n in found if n.note_id in {x.note_id for x in newer}} == {
        x.note_id: x.content for x in newer
    }


_AGENT_STRANDS = """
import libsql, sys
conn = libsql.connect(sys.argv[1])
chunk = conn.execute("SELECT chunk_id FROM chunks_vec ORDER BY rowid LIMIT 1").fetchall()[0][0]
columns = [r[1] for r in conn.execute("PRAGMA table_info(chunks)").fetchall() if r[1] != "chunk_id"]
names = ", ".join(columns)
conn.execute("BEGIN IMMEDIATE")
conn.execute(f"INSERT INTO chunks (chunk_id, {names}) SELECT chunk_id || ':again', {names} FROM chunks "
             "WHERE chunk_id = ?", (chunk,))
conn.execute("INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) SELECT chunk_id || ':again', "
             "embedding_blob, embedding_model FROM chunks_vec WHERE chunk_id = ?", (chunk,))
conn.execute("COMMIT")
conn.execute("BEGIN IMMEDIATE")
conn.execute("DELETE FROM chunks WHERE chunk_id = ?", (chunk,))
conn.execute("COMMIT")
print(chunk + ":again")
"""


def test_a_row_the_agent_stranded_is_found_by_check_and_repaired(libsql_file, capsys):
    """The agent itself (libSQL, another process) stores a chunk again and deletes the first copy: the copy is
    stranded. ``oxmem check`` names it; ``check --repair`` makes it findable with its row unchanged."""
    from tests.cli._support import run as cli

    again = subprocess.run([sys.executable, "-c", _AGENT_STRANDS, str(libsql_file)], capture_output=True, text=True,
                           check=True, timeout=60).stdout.strip()  # fmt: skip
    row = "SELECT chunk_id, embedding_blob, embedding_model, created_at, updated_at FROM chunks_vec WHERE chunk_id = ?"
    before = apsw.Connection(str(libsql_file)).execute(row, (again,)).fetchall()
    # What is guaranteed, not what the graph happens to be: libSQL starts each search at a random node, and after
    # the agent's deletion its graph may leave an older vector unreachable too (see ``healthy``; it does under load)
    assert again in through_libsql(libsql_file)["lost"]
    code, out, _ = cli(capsys, "--db", str(libsql_file), "check")
    named = re.search(r"(\d+) of the 21 vectors are not found by idx_chunks_vec_embedding_ann", out)
    assert code == 1 and named and int(named[1]) >= 1, out
    code, out, err = cli(capsys, "--db", str(libsql_file), "check", "--repair")
    assert code == 0 and out.splitlines()[-1] == "healthy"
    assert re.match(r"oxmem: re-inserted \d+ of 21 vectors", err), err
    assert again not in through_libsql(libsql_file)["lost"]
    assert apsw.Connection(str(libsql_file)).execute(row, (again,)).fetchall() == before


def test_resaving_unchanged_text_and_undoing_a_delete_leave_every_row_findable(libsql_file):
    """Deleting a row leaves edges to it in libSQL's graph that still carry its vector; the same vector inserted
    again under a new rowid is then refused by every node holding one (``vector_index``'s docstring). Re-saving
    a note's unchanged text with new tags, and undoing a deletion, do exactly that: oxmem gives the new row the
    deleted one's rowid, which libSQL overwrites those edges with. Twelve notes re-saved, two deleted and
    restored: before, 6–8 of 33 rows were lost in every run."""

    async def resave(m):
        notes = [await m.save_note("alice", f"note number {i} about the trip") for i in range(12)]
        saved = [await m.update_note("alice", n.note_id, n.content, ["trip"], expected=n) for n in notes]
        await m.delete_notes("alice", [n.note_id for n in saved[:2]], expected=saved[:2])
        await m.restore_notes(saved[:2], expected={n.note_id: None for n in saved[:2]})

    before = through_libsql(libsql_file)
    run(libsql_file, resave)
    state = healthy(libsql_file, before)  # every row written here is the nearest to itself, none stranded
    assert state["vectors"] == state["chunks"] == 21 + 12


_OXMEM = "import sys; from oxmem_gui.cli import main; sys.exit(main())"


def oxmem(path: Path, *argv: str) -> dict:
    """``oxmem --db PATH ARGV… --json`` in a process of its own (the deterministic model; oxmem's cache folder where
    the test's ``XDG_CACHE_HOME`` says): its answer. No traceback, no hang."""
    env = {**os.environ, "OXMEM_EMBEDDING": "deterministic"}
    assert "XDG_CACHE_HOME" in env, "a test never touches the user's cache folder"
    done = subprocess.run([sys.executable, "-c", _OXMEM, "--db", str(path), *argv, "--json"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_edits_in_separate_processes_never_strand_a_row(libsql_file, tmp_path, monkeypatch):
    """The reported sequence, each command an ``oxmem`` process of its own: a note saved twice (twins), the older
    deleted, the same words added again; four notes edited, then edited back (the command line's undo). A deletion
    leaves edges in libSQL's graph that still carry the deleted vector, and only that vector inserted again under
    the deleted row's rowid repairs them (``vector_index``'s docstring) — which a later process knows only from what
    the earlier one kept in oxmem's cache folder: rowids and hashes, nothing of the memory's content. Before, the
    row an edit back wrote was not found by ``vector_top_k`` in every run (one or two of 28)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    before = through_libsql(libsql_file)
    key = "The spare key is under the blue pot"
    twins = [oxmem(libsql_file, "notes", "add", "alice", key)["note_id"] for _ in range(2)]
    words = [f"note number {i} about the trip" for i in range(4)]
    notes = [oxmem(libsql_file, "notes", "add", "alice", w)["note_id"] for w in words]
    oxmem(libsql_file, "notes", "delete", "alice", twins[0])
    oxmem(libsql_file, "notes", "add", "alice", key)
    for i, note in enumerate(notes):
        oxmem(libsql_file, "notes", "update", "alice", note, f"changed {i} elsewhere")
    for note, w in zip(notes, words, strict=True):
        oxmem(libsql_file, "notes", "update", "alice", note, w)
    state = healthy(libsql_file, before)  # every row written here is the nearest to itself, none stranded
    assert state["vectors"] == state["chunks"] == 21 + 6
    kept = vector_deletions.deletions_file(libsql_file)
    assert kept.parent == cache / "oxmem" / "vector-deletions"
    lines = kept.read_text("ascii").splitlines()
    assert lines[0] == "oxmem vector deletions 1" and len(lines) > 1
    assert all(re.fullmatch(r"[1-9][0-9]* [0-9a-f]{64}", line) for line in lines[1:]), lines
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700 and stat.S_IMODE(kept.stat().st_mode) == 0o600
