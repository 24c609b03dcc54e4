"""``oxmem diff`` / Compare with Backup: a file against itself is empty; against a backup after scripted edits it
lists exactly those edits — for the store and for every other agent's format oxmem edits notes of."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from oxmem_gui.core.compare import diff_files, word_diff
from oxmem_gui.core.errors import InvalidInputError
from oxmem_gui.core.memory import open_memory
from tests.conftest import open_sync, user
from tests.core.formats.fixtures import AIDAEMON_KEY, write_all


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def diff(old: Path, new: Path, **options):
    return asyncio.run(diff_files(old, new, embedding="deterministic", **options))


def test_word_diff_keeps_words_and_marks_the_changed_ones():
    assert word_diff("likes dark mode in vim", "likes light mode in vim and emacs") == [
        ("=", "likes "),
        ("-", "dark"),
        ("+", "light"),
        ("=", " mode in vim"),
        ("+", " and emacs"),
    ]
    ops = word_diff("a b  c", "a c d")
    assert "".join(t for op, t in ops if op != "+") == "a b  c"
    assert "".join(t for op, t in ops if op != "-") == "a c d"
    assert word_diff("same", "same") == [("=", "same")]


def test_the_store_against_a_backup_lists_exactly_the_scripted_edits(tmp_path, loop):
    path = tmp_path / "memory.db"
    store = open_sync(loop, path)
    store.store_many([("chat", i, user(f"turn {i}")) for i in range(1, 4)])
    store.store_many([("gone", 1, user("to be forgotten")), ("kept", 1, user("untouched"))])
    kept = store.save_note("ann", "likes dark mode in vim", ["ui", "editor"])
    dropped = store.save_note("ann", "a note to delete", [])
    hourly, weekly = {"type": "interval", "every_secs": 3600}, {"type": "interval", "every_secs": 604800}
    sched = store.schedules.create(user_id="ann", goal="water the basil", cadence=hourly)
    other = store.schedules.create(user_id="ann", goal="weekly report", cadence=weekly)
    store.aclose()
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    assert diff(backup, path).empty
    store = open_sync(loop, path)
    store.store_many([("chat", 4, user("turn 4")), ("chat", 5, user("turn 5"))])
    store.store("new", 1, user("a new session"))
    store.forget("gone")
    store.write_summary_state("chat", "they talked about turns", 5, 0)
    store.update_note("ann", kept.note_id, "likes light mode in vim", ["ui", "theme"])
    store.delete_note("ann", dropped.note_id)
    added = store.save_note("bob", "prefers window seats", ["travel"])
    store.schedules.pause(sched.schedule_id)
    store.schedules.update(
        other.schedule_id, {"goal": "monthly report"}, now=datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    )
    store.aclose()
    before = (_sha(backup), _sha(path))
    d = diff(backup, path)
    assert (_sha(backup), _sha(path)) == before  # both only read
    assert [(c.session_id, c.kind, c.old_events, c.new_events) for c in d.sessions] == [
        ("gone", "removed", 1, None),
        ("new", "added", None, 1),
        ("chat", "appended", 3, 5),
    ]
    assert [(c.session_id, c.old, c.new) for c in d.summaries] == [("chat", None, "they talked about turns")]
    notes = {(c.group, c.note_id): c for c in d.notes}
    assert sorted((k, c.kind) for k, c in notes.items()) == sorted(
        [(("ann", dropped.note_id), "deleted"), (("bob", added.note_id), "added"), (("ann", kept.note_id), "changed")]
    )
    changed = notes[("ann", kept.note_id)]
    assert changed.tags_added == ["theme"] and changed.tags_removed == ["editor"] and changed.text_changed
    assert word_diff(changed.old.content, changed.new.content) == [
        ("=", "likes "),
        ("-", "dark"),
        ("+", "light"),
        ("=", " mode in vim"),
    ]
    assert [(c.schedule_id, c.kind, c.fields) for c in d.schedules] == sorted(
        [
            (sched.schedule_id, "paused", [("status", "active", "paused")]),
            (other.schedule_id, "changed", [("goal", "weekly report", "monthly report")]),
        ]
    )
    assert d.counts() == {
        "sessions removed": 1,
        "sessions added": 1,
        "sessions appended": 1,
        "notes deleted": 1,
        "notes added": 1,
        "notes changed": 1,
        "schedules paused": 1,
        "schedules changed": 1,
        "events appended": 2,
        "summaries changed": 1,
    }


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("formats"))


@pytest.mark.parametrize("name", ["omega", "zeke", "aidaemon", "oxydra", "aidaemon-encrypted"])
def test_every_format_diffs_empty_against_itself_and_lists_note_edits(formats, tmp_path, name):
    if name not in formats:
        pytest.skip(f"{name}: its engine is not installed")  # write_all leaves it out then
    key = AIDAEMON_KEY if name == "aidaemon-encrypted" else None
    original = tmp_path / f"{name}.db"
    shutil.copy(formats[name], original)
    backup = tmp_path / f"{name}-backup.db"
    shutil.copy(original, backup)
    assert diff(original, original, key=key).empty
    assert diff(backup, original, key=key).empty

    async def edit() -> tuple[str, str, str, str]:
        m = await open_memory(original, read_only=False, key=key, embedding="deterministic")
        try:
            groups = await m.note_users()
            group = groups[0]
            first, second = (await m.list_notes(group))[:2]
            await m.update_note(group, first.note_id, first.content + " (corrected)", first.tags, expected=first)
            await m.delete_notes(group, [second.note_id], expected=[second])
            added = await m.save_note(group, "favourite_tea: sencha")
            return group, first.note_id, second.note_id, added.note_id
        finally:
            await m.aclose()

    group, changed, deleted, added = asyncio.run(edit())
    d = diff(backup, original, key=key)
    assert sorted((c.group, c.old.note_id if c.old else "", c.kind) for c in d.notes) == sorted(
        [(group, changed, "changed"), (group, deleted, "deleted"), (group, "", "added")]
    ), d.notes
    assert next(c for c in d.notes if c.kind == "added").note_id == added
    change = next(c for c in d.notes if c.kind == "changed")
    assert word_diff(change.old.content, change.new.content)[-1] == ("+", " (corrected)")
    assert d.schedules == [] and d.summaries == []
    assert all(c.kind != "removed" for c in d.sessions)


def test_files_of_two_formats_are_refused_in_one_line(formats):
    with pytest.raises(InvalidInputError, match=r"^omega\.db is an Omega .* and zeke\.db is a ZEKE .*: compare"):
        diff(formats["omega"], formats["zeke"])


def test_a_diff_of_a_thousand_notes_3_changed_2_added_1_deleted_gives_exactly_those(tmp_path, loop):
    path = tmp_path / "memory.db"
    store = open_sync(loop, path)
    ids = [store.save_note(f"user{i % 4}", f"note {i} likes tea number {i}", ["tea", f"n{i % 7}"]).note_id
           for i in range(1000)]  # fmt: skip
    store.aclose()
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    store = open_sync(loop, path)
    store.update_note("user1", ids[1], "note 1 likes coffee number 1", ["tea", "n1"])  # text only
    store.update_note("user2", ids[502], "note 502 likes tea number 502", ["tea", "green"])  # tags only
    store.update_note("user3", ids[999], "note 999 likes tea number 999 and cake", ["n5", "cake"])  # both
    added = [store.save_note("user0", "prefers window seats", ["travel"]), store.save_note("zoe", "likes jazz")]
    store.delete_note("user0", ids[400])
    store.aclose()
    before = (_sha(backup), _sha(path))
    d = diff(backup, path)
    assert (_sha(backup), _sha(path)) == before
    assert d.counts() == {"notes deleted": 1, "notes added": 2, "notes changed": 3}
    assert [(c.kind, c.group, c.note_id) for c in d.notes] == [
        ("deleted", "user0", ids[400]),
        ("added", "user0", added[0].note_id),
        ("added", "zoe", added[1].note_id),
        ("changed", "user1", ids[1]),
        ("changed", "user2", ids[502]),
        ("changed", "user3", ids[999]),
    ]
    deleted, *_, text, tags, both = d.notes
    assert (deleted.old.content, deleted.old.tags) == ("note 400 likes tea number 400", ["tea", "n1"])
    assert deleted.new is None
    assert [(c.old, c.new.content, c.new.tags) for c in d.notes[1:3]] == [
        (None, "prefers window seats", ["travel"]),
        (None, "likes jazz", []),
    ]
    assert word_diff(text.old.content, text.new.content) == [
        ("=", "note 1 likes "), ("-", "tea"), ("+", "coffee"), ("=", " number 1")
    ]  # fmt: skip
    assert (text.tags_added, text.tags_removed, tags.text_changed) == ([], [], False)
    assert (tags.tags_added, tags.tags_removed) == (["green"], ["n5"])
    assert (both.tags_added, both.tags_removed, both.text_changed) == (["cake"], ["tea"], True)
    assert diff(path, backup).counts() == {"notes deleted": 2, "notes added": 1, "notes changed": 3}


def test_diff_a_note_rewritten_in_other_bytes_is_not_a_change_and_one_edited_in_place_is(tmp_path, loop):
    path = tmp_path / "memory.db"
    store = open_sync(loop, path)
    same, edited = (store.save_note("ann", text, ["a", "b"]) for text in ("same words", "old words"))
    store.aclose()
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    store = open_sync(loop, path)  # as another program might: metadata keys reordered, tags too, a new time
    for note_id, payload in ((same.note_id, None), (edited.note_id, '{"content": "new words", "role": "user"}')):
        store.exec_sql(
            "UPDATE chunks SET metadata_json = json_set(json_remove(metadata_json, '$.tags'), '$.tags', "
            "json('[\"b\",\"a\"]'), '$.updated_at', '2030-01-01T00:00:00+00:00') WHERE session_id = 'memory:ann' "
            "AND json_extract(metadata_json, '$.note_id') = ?",
            (note_id,),
        )
        if payload:
            store.exec_sql(
                "UPDATE conversation_events SET payload_json = ? WHERE session_id = 'memory:ann' AND sequence = "
                "(SELECT sequence_start FROM chunks WHERE json_extract(metadata_json, '$.note_id') = ?)",
                (payload, note_id),
            )
    store.aclose()
    d = diff(backup, path)
    assert [(c.kind, c.note_id, c.old.content, c.new.content, c.new.tags) for c in d.notes] == [
        ("changed", edited.note_id, "old words", "new words", ["b", "a"])
    ]


def test_diff_reads_a_note_id_on_two_rows_as_the_notes_list_reads_it(tmp_path, loop):
    path = tmp_path / "memory.db"
    store = open_sync(loop, path)
    first, second = store.save_note("ann", "first", ["a"]), store.save_note("ann", "second", ["a"])
    store.aclose()
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    store = open_sync(loop, path)
    store.exec_sql(
        "UPDATE chunks SET metadata_json = json_set(metadata_json, '$.note_id', ?) WHERE session_id = 'memory:ann' "
        "AND json_extract(metadata_json, '$.note_id') = ?",
        (first.note_id, second.note_id),
    )
    assert [n.content for n in store.list_notes("ann")] == ["second", "first"]  # both rows now say first's id
    store.aclose()
    # a dict of that list keeps its last: the first note, unchanged; the second is gone
    assert [(c.kind, c.note_id) for c in diff(backup, path).notes] == [("deleted", second.note_id)]
