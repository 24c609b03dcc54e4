"""Editing ZEKE's memories (``core/formats/zeke_edits.py``) on files built from ZEKE's own schema statements: each
edit is ZEKE's ``remember`` upsert (the FTS index follows by its triggers, ``created_at`` and the TTL stay, the
vector is made again or left NULL as ZEKE leaves it when it cannot embed), and the file reads right through ZEKE's
own search SQL afterwards; a change ZEKE made meanwhile (a real second process) is a conflict, its recall touching
a memory is not; bad input writes nothing."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oxmem_gui.core import ConflictError, InvalidInputError
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.check import check_store
from oxmem_gui.core.embeddings.backends import choose_backend
from oxmem_gui.core.formats.times import parse_when
from tests.cli._support import assert_one_error_line, build_demo, run_json
from tests.cli._support import run as cli
from tests.core.formats import fixtures as fx
from tests.core.formats.test_omega_facts import digest, rows, run, the_agent
from tests.semantic import model_dir_or_skip

NEW_TEXT = "Guest Wi-Fi password is taped under the router"
#: ZEKE's own SQL (``core/memory/memory_store.py`` at 210a5a2): its search legs and its recall's access stamp
ZEKE_VECTOR_LEG = "SELECT * FROM memories WHERE scope LIKE ? AND embedding IS NOT NULL"
ZEKE_FTS_LEG = (
    "SELECT m.*, bm25(memories_fts) as rank FROM memories m JOIN memories_fts ON m.id = memories_fts.id "
    "WHERE memories_fts MATCH ? AND m.scope LIKE ? ORDER BY rank LIMIT ?"
)
ZEKE_TOUCH = "UPDATE memories SET last_accessed_at = ? WHERE id = ?"
ZEKE_UPSERT = (
    "INSERT INTO memories (id, text, scope, tags, created_at, last_accessed_at, ttl_seconds, embedding) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET text = excluded.text, scope = excluded.scope, "
    "tags = excluded.tags, last_accessed_at = excluded.last_accessed_at, ttl_seconds = excluded.ttl_seconds, "
    "embedding = excluded.embedding"
)


def memory_in(path: Path, scope: str, starts: str) -> str:
    return rows(path, "SELECT id FROM memories WHERE scope = ? AND text LIKE ?", (scope, starts + "%"))[0][0]


def healthy(path: Path) -> None:
    report = asyncio.run(check_store(path))
    found = {f.check: (f.level, f.detail) for f in report.findings}
    assert report.ok and found["index sync"][0] == "ok" and found["unique keys"][0] == "ok", found


@pytest.fixture
def zeke384(tmp_path: Path) -> Path:
    return fx.make_zeke(tmp_path / "memory.db", "384")


@pytest.fixture
def zeke1536(tmp_path: Path) -> Path:
    return fx.make_zeke(tmp_path / "memory.db")


def test_an_edit_is_zekes_upsert_and_a_384_memory_gets_its_new_vector(zeke384: Path) -> None:
    model_dir_or_skip()
    mid = memory_in(zeke384, "notes", "Guest Wi-Fi")
    (created, ttl) = rows(zeke384, "SELECT created_at, ttl_seconds FROM memories WHERE id = ?", (mid,))[0]

    async def edit(m):
        loaded = await m.get_note("notes", mid)
        return await m.update_note("notes", mid, NEW_TEXT, ["home", "wifi"], expected=loaded)

    note = run(zeke384, edit)
    assert (note.content, note.tags) == (NEW_TEXT, ["home", "wifi"])
    (text, tags, created_now, accessed, ttl_now, blob) = rows(
        zeke384, "SELECT text, tags, created_at, last_accessed_at, ttl_seconds, embedding FROM memories WHERE id = ?",
        (mid,),
    )[0]  # fmt: skip
    assert (text, json.loads(tags), created_now, accessed, ttl_now) == (NEW_TEXT, ["home", "wifi"], created, None, ttl)
    expected = choose_backend("semantic").backend.embed([NEW_TEXT])[0]
    assert len(blob) == 1536 and float(np.dot(np.frombuffer(blob, dtype="<f4"), expected)) > 0.9999
    healthy(zeke384)
    # ZEKE's own FTS leg finds it by its new words
    assert [r[0] for r in rows(zeke384, ZEKE_FTS_LEG, ('"router"', "notes%", 8))] == [mid]


def test_a_memory_of_a_model_oxmem_cannot_run_is_left_without_a_vector_as_zeke_does(zeke1536: Path) -> None:
    mid = memory_in(zeke1536, "notes", "Guest Wi-Fi")
    run(zeke1536, lambda m: m.update_note("notes", mid, NEW_TEXT, ["home"]))
    assert rows(zeke1536, "SELECT embedding FROM memories WHERE id = ?", (mid,)) == [(None,)]
    # read through ZEKE's own search SQL: its vector leg skips the memory, its FTS leg finds it
    assert mid not in [r[0] for r in rows(zeke1536, ZEKE_VECTOR_LEG, ("notes%",))]
    assert [r[0] for r in rows(zeke1536, ZEKE_FTS_LEG, ('"router"', "notes%", 8))] == [mid]
    note = run(zeke1536, lambda m: m.get_note("notes", mid), read_only=True)
    assert note.details["embedding_dims"] == "none"
    healthy(zeke1536)


def test_new_memory_takes_the_scope_default_ttl_and_delete_keeps_the_index(zeke1536: Path) -> None:
    added = run(zeke1536, lambda m: m.save_note("task:inbox", "Renew the passport before May", ["travel"]))
    assert rows(zeke1536, "SELECT scope, tags, ttl_seconds, last_accessed_at FROM memories WHERE id = ?",
                (added.note_id,)) == [("task:inbox", '["travel"]', 90 * 86400, None)]  # fmt: skip
    healthy(zeke1536)
    assert run(zeke1536, lambda m: m.delete_notes("task:inbox", [added.note_id], expected=[added])) == 1
    assert rows(zeke1536, "SELECT count(*) FROM memories WHERE id = ?", (added.note_id,)) == [(0,)]
    healthy(zeke1536)


def test_zeke_changing_a_memory_meanwhile_is_a_conflict_its_recall_is_not(zeke1536: Path) -> None:
    mid = memory_in(zeke1536, "notes", "Guest Wi-Fi")
    loaded = run(zeke1536, lambda m: m.get_note("notes", mid), read_only=True)
    the_agent(zeke1536, ZEKE_TOUCH, ("2026-03-02T10:00:00.000001", mid))  # ZEKE's recall stamps its access
    run(zeke1536, lambda m: m.update_note("notes", mid, "Wi-Fi: see the fridge", ["home"], expected=loaded))
    loaded = run(zeke1536, lambda m: m.get_note("notes", mid), read_only=True)
    the_agent(zeke1536, ZEKE_UPSERT, (mid, "Wi-Fi changed by ZEKE", "notes", None, "2025-10-03T20:00:00", None, None,
                                      None))  # fmt: skip
    with pytest.raises(ConflictError) as exc:
        run(zeke1536, lambda m: m.update_note("notes", mid, "mine", [], expected=loaded))
    assert exc.value.current.content == "Wi-Fi changed by ZEKE"
    assert rows(zeke1536, "SELECT text FROM memories WHERE id = ?", (mid,)) == [("Wi-Fi changed by ZEKE",)]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.save_note("notes", "   "),
        lambda m: m.update_note("notes", "no-such-memory", "x"),
        lambda m: m.save_note("   ", "text"),
    ],
)
def test_bad_input_writes_nothing(zeke1536: Path, call) -> None:
    before = digest(zeke1536)
    with pytest.raises((InvalidInputError, LookupError)):
        run(zeke1536, call)
    assert digest(zeke1536) == before


def test_read_only_until_editing_is_enabled(zeke1536: Path) -> None:
    before = digest(zeke1536)
    with pytest.raises(Exception, match="enable editing"):
        run(zeke1536, lambda m: m.save_note("notes", "x"), read_only=True)
    assert digest(zeke1536) == before


# -- applying ZEKE's eviction -----------------------------------------------------------------------------------

SMALL_CAPS = {"scope_caps": {"task": 2, "ops": 1}, "global_cap": None}


def preview_ids(path: Path) -> tuple[str, list[str]]:
    preview = run(path, lambda m: m.eviction_preview(fx.ZEKE_NOW, **SMALL_CAPS), read_only=True)
    return preview.now, [e.id for e in preview.items]


def test_applying_the_preview_deletes_exactly_its_memories_and_undo_puts_them_back(zeke1536: Path) -> None:
    now, ids = preview_ids(zeke1536)
    expired = [fx.ZEKE_IDS[name] for name in fx.ZEKE_EXPIRED]
    extra = [fx.ZEKE_IDS[name] for name in ("t-passport", "o-freeze", "o-hotfix")]
    assert ids == expired + extra
    of_ids = f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(ids))}) ORDER BY id"
    before = rows(zeke1536, of_ids, ids)
    gone = run(zeke1536, lambda m: m.apply_eviction(ids, now, **SMALL_CAPS))
    assert sorted(n.note_id for n in gone) == sorted(ids)
    assert rows(zeke1536, "SELECT count(*) FROM memories") == [(26 - len(ids),)]
    # ZEKE's own FTS leg no longer finds a deleted memory, and its index matches its table
    assert rows(zeke1536, ZEKE_FTS_LEG, ('"Q3"', "task:%", 5)) == []
    healthy(zeke1536)
    run(zeke1536, lambda m: m.restore_notes(gone, expected={n.note_id: None for n in gone}))
    after = rows(zeke1536, of_ids, ids)

    # undo brings back text, scope, tags, times (as ZEKE's isoformat() writes them) and TTL; the vector is made
    # again (NULL: OpenAI's model)
    def same(r: tuple) -> tuple:
        return (*r[:4], parse_when(r[4]), parse_when(r[5]), r[6])

    assert [same(r) for r in after] == [same(r) for r in before]
    assert before[7][5] == "2026-01-09T09:25:00.000000" and after[7][5] == "2026-01-09T09:25:00"
    found = rows(zeke1536, ZEKE_FTS_LEG, ('"Q3"', "task:%", 5))
    assert [r[1] for r in found] == ["Reply to the accountant about the Q3 invoice."]
    healthy(zeke1536)


def test_zeke_using_a_memory_after_the_preview_is_a_conflict_and_deletes_nothing(zeke1536: Path) -> None:
    now, ids = preview_ids(zeke1536)
    # ZEKE's recall stamps t-passport (due to go by the task: cap): it is now the most recently used task
    the_agent(zeke1536, ZEKE_TOUCH, ("2026-02-28T23:00:00", fx.ZEKE_IDS["t-passport"]))
    before = digest(zeke1536)
    with pytest.raises(ConflictError, match=rf"not the {len(ids)} confirmed; nothing was deleted"):
        run(zeke1536, lambda m: m.apply_eviction(ids, now, **SMALL_CAPS))
    assert digest(zeke1536) == before


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, ids: m.apply_eviction(ids, "2999-01-01T00:00:00Z"), "in the future"),
        (lambda m, ids: m.apply_eviction(ids, "yesterday"), "not an RFC 3339 time"),
        (lambda m, ids: m.apply_eviction(ids[:-1], "2026-03-01T12:00:00Z", **SMALL_CAPS), "confirmed; nothing was"),
        (lambda m, ids: m.apply_eviction(ids, "2026-03-01T12:00:00Z", scope_caps={"task": -1}), "whole number"),
    ],
)
def test_bad_eviction_requests_write_nothing(zeke1536: Path, call, message: str) -> None:
    _, ids = preview_ids(zeke1536)
    before = digest(zeke1536)
    with pytest.raises((InvalidInputError, ConflictError), match=message):
        run(zeke1536, lambda m: call(m, ids))
    assert digest(zeke1536) == before


def test_applying_is_refused_until_editing_is_enabled(zeke1536: Path) -> None:
    now, ids = preview_ids(zeke1536)
    before = digest(zeke1536)
    with pytest.raises(Exception, match="enable editing"):
        run(zeke1536, lambda m: m.apply_eviction(ids, now, **SMALL_CAPS), read_only=True)
    assert digest(zeke1536) == before


def test_cli_applies_the_eviction_only_with_the_count_the_preview_listed(zeke1536: Path, capsys) -> None:
    db = ("--db", str(zeke1536))
    listed = run_json(capsys, *db, "evictions")["items"]
    before = digest(zeke1536)
    for argv, fragment in [
        (("--apply", str(len(listed) + 1)), f"would delete {len(listed)} rows now, not {len(listed) + 1}"),
        (("--apply", str(len(listed)), "--at", "2026-03-01T12:00:00Z"), "--at is for previews"),
        (("--apply", "-1"), "--apply"),
    ]:
        assert_one_error_line(*cli(capsys, *db, "evictions", *argv), fragment)
        assert digest(zeke1536) == before
    done = run_json(capsys, *db, "evictions", "--apply", str(len(listed)))
    assert done["deleted"] == [e["id"] for e in listed] and len(listed) >= len(fx.ZEKE_EXPIRED)
    assert rows(zeke1536, "SELECT count(*) FROM memories") == [(26 - len(listed),)]
    assert run_json(capsys, *db, "evictions")["items"] == []
    healthy(zeke1536)


# -- scope and TTL --------------------------------------------------------------------------------------------


def test_moving_a_memory_and_setting_its_ttl_is_zekes_remember_and_undo_moves_it_back(zeke1536: Path) -> None:
    mid = memory_in(zeke1536, "notes", "Guest Wi-Fi")

    async def move(m):
        loaded = await m.get_note("notes", mid)
        moved = await m.update_note("notes", mid, loaded.content, loaded.tags, expected=loaded, scope="task:home",
                                    ttl_seconds=3600)  # fmt: skip
        return loaded, moved

    loaded, moved = run(zeke1536, move)
    assert (moved.user, moved.details["ttl_seconds"]) == ("task:home", 3600)
    assert rows(zeke1536, "SELECT scope, ttl_seconds, created_at FROM memories WHERE id = ?", (mid,)) == [
        ("task:home", 3600, fx_created(loaded))
    ]
    # ZEKE's FTS leg finds it under its new scope only
    assert [r[0] for r in rows(zeke1536, ZEKE_FTS_LEG, ('"Wi"', "task:%", 5))] == [mid]
    assert rows(zeke1536, ZEKE_FTS_LEG, ('"Wi"', "notes%", 5)) == []
    healthy(zeke1536)
    run(zeke1536, lambda m: m.restore_notes([loaded], expected={mid: moved}))
    assert rows(zeke1536, "SELECT scope, ttl_seconds FROM memories WHERE id = ?", (mid,)) == [("notes", None)]
    healthy(zeke1536)


def fx_created(note) -> str:
    return parse_when(note.created_at).replace(tzinfo=None).isoformat()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"ttl_seconds": 0}, "whole number of seconds"),
        ({"ttl_seconds": "a day"}, "whole number of seconds"),
        ({"scope": "task:home", "ttl_seconds": None}, "90-day TTL when none is given"),
        ({"scope": "   "}, "needs a scope"),
    ],
)
def test_bad_scope_or_ttl_writes_nothing(zeke1536: Path, fields: dict, message: str) -> None:
    mid = memory_in(zeke1536, "notes", "Guest Wi-Fi")
    before = digest(zeke1536)
    with pytest.raises(InvalidInputError, match=message):
        run(zeke1536, lambda m: m.update_note("notes", mid, "Guest Wi-Fi", [], **fields))
    assert digest(zeke1536) == before


def test_cli_moves_a_memory_and_sets_its_ttl_and_other_formats_refuse_the_options(
    zeke1536: Path, tmp_path: Path, capsys
) -> None:
    mid = memory_in(zeke1536, "notes", "Guest Wi-Fi")
    db = ("--db", str(zeke1536))
    done = run_json(
        capsys, *db, "notes", "update", "notes", mid, "Wi-Fi: fridge", "--scope", "task:home", "--ttl", "60"
    )
    assert done == {"note_id": mid}
    assert rows(zeke1536, "SELECT text, scope, ttl_seconds FROM memories WHERE id = ?", (mid,)) == [
        ("Wi-Fi: fridge", "task:home", 60)
    ]
    before = digest(zeke1536)
    assert_one_error_line(*cli(capsys, *db, "notes", "update", "task:home", mid, "x", "--ttl", "none"), "90-day TTL")
    assert digest(zeke1536) == before
    demo = build_demo(tmp_path / "demo")
    note = run_json(capsys, "--db", str(demo), "notes", "add", "alice", "plain note")["note_id"]
    before = digest(demo)
    assert_one_error_line(
        *cli(capsys, "--db", str(demo), "notes", "update", "alice", note, "y", "--scope", "bob", "--ttl", "5"),
        "notes have no scope or ttl to change (--scope and --ttl: for ZEKE's memories)",
    )
    assert digest(demo) == before


def test_the_search_cache_follows_its_own_edits_and_zekes(zeke1536: Path) -> None:
    """The scope's vectors are read once and kept while the file is unchanged (a search at 20,000 memories: 155 →
    under 100 ms, most of it ZEKE's own FTS query); an edit here (``total_changes``) or ZEKE's upsert from another
    process (``data_version``, which rewrites the embedding under the same rowid) is seen by the next search."""
    target = memory_in(zeke1536, "persona:zeke", "")
    (blob,) = rows(zeke1536, "SELECT embedding FROM memories WHERE id = ?", (target,))[0]
    own = np.frombuffer(blob, dtype="<f4")
    created, accessed, ttl = rows(
        zeke1536, "SELECT created_at, last_accessed_at, ttl_seconds FROM memories WHERE id = ?", (target,)
    )[0]

    async def go(m):
        async def best() -> tuple[str, str]:
            hit = (
                await m.search("zeke", "persona", "zzz-no-such-word", 1, options=SearchOptions(query_embedding=own))
            ).hits[0]
            return hit.chunk_id, hit.text

        seen = [await best()]
        # without the 1536-value model the edit leaves the embedding NULL, as ZEKE does when it cannot embed
        await m.update_note("persona:zeke", target, NEW_TEXT, [])
        seen.append(await best())
        # ZEKE's upsert, in another process (the blob travels as hex)
        code = (
            "import sqlite3, sys, json; conn = sqlite3.connect(sys.argv[1]); args = json.loads(sys.argv[3]); "
            "conn.execute(sys.argv[2], [*args[:-1], bytes.fromhex(args[-1])]); conn.commit(); conn.close()"
        )
        values = [target, NEW_TEXT, "persona:zeke", "[]", created, accessed, ttl, blob.hex()]
        subprocess.run([sys.executable, "-c", code, str(zeke1536), ZEKE_UPSERT, json.dumps(values)], check=True)
        seen.append(await best())
        return seen

    first, after_edit, after_zeke = run(zeke1536, go)
    assert first[0] == target
    assert after_edit[0] != target  # its vector is gone: the cached one was not used
    assert after_zeke == (target, NEW_TEXT)  # ZEKE put a vector back, in place: read again
