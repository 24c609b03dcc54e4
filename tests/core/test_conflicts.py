"""Optimistic concurrency: a write that carries the row as it was loaded never overwrites another program's change."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from oxmem_gui.core import ConflictError
from tests.processes import agent, oxmem

NOW = datetime(2037, 11, 22, 12, tzinfo=timezone.utc)


def test_update_note_with_a_stale_version_writes_nothing(store):
    loaded = store.save_note("u", "first", ["a"])
    theirs = store.update_note("u", loaded.note_id, "agent's version", ["b"])  # another writer, meanwhile
    with pytest.raises(ConflictError) as caught:
        store.update_note("u", loaded.note_id, "mine", ["c"], expected=loaded)
    assert str(caught.value) == (
        f"note {loaded.note_id} was changed by another program since it was loaded (now updated "
        f"{theirs.updated_at}); nothing was saved"
    )
    assert caught.value.current == theirs
    assert store.get_note("u", loaded.note_id) == theirs
    mine = store.update_note("u", loaded.note_id, "mine", ["c"], expected=theirs)  # "keep mine", knowingly
    assert (mine.content, mine.tags, mine.created_at) == ("mine", ["c"], loaded.created_at)


def test_update_of_a_note_the_cli_changed_from_another_process(store):
    loaded = store.save_note("u", "first", [])
    done = oxmem("--db", str(store.path), "notes", "update", "u", loaded.note_id, "from the command line")
    assert done.returncode == 0, done.stderr
    with pytest.raises(ConflictError) as caught:
        store.update_note("u", loaded.note_id, "mine", expected=loaded)
    assert caught.value.current.content == "from the command line"
    assert store.get_note("u", loaded.note_id).content == "from the command line"


def test_a_note_deleted_meanwhile(store):
    loaded = store.save_note("u", "first", [])
    store.delete_note("u", loaded.note_id)
    with pytest.raises(ConflictError, match="was deleted by another program since it was loaded; nothing was saved"):
        store.update_note("u", loaded.note_id, "mine", expected=loaded)
    assert store.list_notes("u") == []
    back = store.restore_notes([loaded], expected={loaded.note_id: None})
    assert [n.content for n in back] == ["first"]
    with pytest.raises(ConflictError, match="was saved by another program meanwhile"):
        store.restore_notes([loaded], expected={loaded.note_id: None})


def test_deleting_one_note_checks_it_is_still_as_loaded(store):
    loaded = store.save_note("u", "first", [])
    done = oxmem("--db", str(store.path), "notes", "update", "u", loaded.note_id, "from the command line")
    assert done.returncode == 0, done.stderr
    with pytest.raises(ConflictError) as caught:
        store.delete_note("u", loaded.note_id, expected=loaded)
    assert caught.value.current.content == "from the command line"
    assert store.get_note("u", loaded.note_id).content == "from the command line"
    store.delete_note("u", loaded.note_id, expected=caught.value.current)
    assert store.list_notes("u") == []


def test_bulk_tag_and_delete_check_every_note(store):
    a, b = store.save_note("u", "a", []), store.save_note("u", "b", [])
    changed = store.update_note("u", b.note_id, "b2", [])
    for call in (
        lambda: store.set_note_tags("u", [a.note_id, b.note_id], ["x"], expected=[a, b]),
        lambda: store.delete_notes("u", [a.note_id, b.note_id], expected=[a, b]),
    ):
        with pytest.raises(ConflictError) as caught:
            call()
        assert caught.value.current == changed
    assert sorted((n.content, tuple(n.tags)) for n in store.list_notes("u")) == [("a", ()), ("b2", ())]
    assert store.delete_notes("u", [a.note_id, b.note_id], expected=[a, changed]) == 2


def test_schedule_changed_by_a_run_of_the_agent(store):
    loaded = store.schedules.create("u", "g", {"type": "interval", "every_secs": 3600}, name="n")
    ran = agent(store.path, "run", loaded.schedule_id)  # the agent, in its own process, runs it
    with pytest.raises(ConflictError) as caught:
        store.schedules.update(loaded.schedule_id, {"goal": "mine"}, expected=loaded)
    assert str(caught.value) == (
        f"schedule {loaded.schedule_id} was changed by another program since it was loaded (now updated "
        f"{ran['updated_at']}); nothing was changed"
    )
    theirs = caught.value.current
    assert (theirs.goal, theirs.last_run_status) == ("g", "success")
    with pytest.raises(ConflictError):
        store.schedules.pause(loaded.schedule_id, expected=loaded)
    with pytest.raises(ConflictError):
        store.schedules.delete(loaded.schedule_id, expected=loaded)
    mine = store.schedules.update(loaded.schedule_id, {"goal": "mine"}, expected=theirs)
    assert (mine.goal, mine.last_run_status, store.schedules.run_count(loaded.schedule_id)) == ("mine", "success", 1)


def test_schedule_deleted_meanwhile(store):
    loaded = store.schedules.create("u", "g", {"type": "once", "at": (NOW + timedelta(days=400)).isoformat()}, now=NOW)
    store.schedules.delete(loaded.schedule_id)
    with pytest.raises(ConflictError, match="was deleted by another program since it was loaded"):
        store.schedules.update(loaded.schedule_id, {"goal": "x"}, expected=loaded)
    assert store.schedules.count() == 0
