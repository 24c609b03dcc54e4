"""The Notes panel's state without Qt (ui/notes/state.py): the list read in the store's order with its filters, read
on to the note kept, what a new list does to the note in the editor, undo records and the count's words."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from oxmem_gui.core.api import Note, open_memory
from oxmem_gui.ui.notes.state import NoteFilters, NotesState, UndoRecord, count_text


@pytest.fixture
def store_path(tmp_path):
    """alice: 7 notes, every other one tagged ``travel``; bob: 1."""

    async def make():
        async with await open_memory(tmp_path / "m.db", read_only=False, embedding="deterministic") as m:
            for i in range(7):
                await m.save_note("alice", f"note {i}", ["travel"] if i % 2 == 0 else [])
            await m.save_note("bob", "bob's only note")

    asyncio.run(make())
    return tmp_path / "m.db"


def run(path, steps):
    async def go():
        async with await open_memory(path, read_only=False, embedding="deterministic") as memory:
            return await steps(memory)

    return asyncio.run(go())


def contents(notes):
    return [n.content for n in notes]


def test_a_list_is_the_first_page_in_the_stores_order_with_the_tags_in_use(store_path):
    async def steps(m):
        whole = await m.list_notes("alice")
        listing = await NotesState().read_list(m, "alice", NoteFilters(), 3, None)
        tagged = await NotesState().read_list(m, "alice", NoteFilters(("travel",)), 10, None)
        found = await NotesState().read_list(m, "alice", NoteFilters(text="note 5"), 10, None)
        return whole, listing, tagged, found

    whole, listing, tagged, found = run(store_path, steps)
    assert contents(listing.notes) == contents(whole[:3]) and listing.exhausted is False
    assert listing.tags_used == [("travel", 4)]
    assert sorted(contents(tagged.notes)) == ["note 0", "note 2", "note 4", "note 6"] and tagged.exhausted is True
    assert contents(found.notes) == ["note 5"]


def test_the_note_kept_is_read_on_to_unless_it_left_the_file(store_path):
    async def steps(m):
        whole = await m.list_notes("alice")
        last = whole[-1]
        kept = await NotesState().read_list(m, "alice", NoteFilters(), 2, last.note_id)
        await m.delete_note("alice", last.note_id)
        gone = await NotesState().read_list(m, "alice", NoteFilters(), 2, last.note_id)
        return whole, kept, gone

    whole, kept, gone = run(store_path, steps)
    assert contents(kept.notes) == contents(whole) and kept.exhausted is True
    assert contents(gone.notes) == contents(whole[:2]) and gone.exhausted is False


def test_the_next_page_follows_the_last_note_listed(store_path):
    async def steps(m):
        whole = await m.list_notes("alice")
        return whole, await NotesState.next_page(m, "alice", whole[2], NoteFilters())

    whole, page = run(store_path, steps)
    assert contents(page) == contents(whole[3:])


NOTE = Note("n1", "alice", "as loaded", ["a"], "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z", 1)
THEIRS = dataclasses.replace(NOTE, content="changed by the agent", updated_at="2020-01-03T00:00:00Z")
OTHER = dataclasses.replace(NOTE, note_id="n2", content="another")


def editing(note=NOTE):
    state = NotesState(user="alice")
    state.show(note)
    return state


def test_a_new_list_shows_the_kept_note_as_listed_when_nothing_is_being_edited():
    state = editing()
    assert state.relist([OTHER, THEIRS], "n1", dirty=False, filtered=False) == (1, True)
    assert (state.current, state.changed_elsewhere, state.unlisted) == (THEIRS, False, "")


def test_an_edit_in_progress_is_kept_and_marked_when_the_agent_changed_its_note():
    state = editing()
    assert state.relist([THEIRS], "n1", dirty=True, filtered=False) == (0, False)
    assert (state.current, state.changed_elsewhere) == (NOTE, True)
    same = editing()
    assert same.relist([NOTE], "n1", dirty=True, filtered=False) == (0, False) and not same.changed_elsewhere


def test_an_edit_whose_note_left_the_list_says_why_and_a_clean_editor_empties():
    hidden, deleted, clean = editing(), editing(), editing()
    assert hidden.relist([OTHER], "n1", dirty=True, filtered=True) == (None, False)
    assert (hidden.current, hidden.unlisted) == (NOTE, "the filters hide it")
    assert deleted.relist([OTHER], "n1", dirty=True, filtered=False) == (None, False)
    assert deleted.unlisted == "it is no longer in the file"
    assert clean.relist([OTHER], "n1", dirty=False, filtered=False) == (None, True) and clean.current is None


def test_a_new_note_is_not_kept_and_the_generation_moves_on():
    state = NotesState(user="alice")
    state.show(None)
    state.is_new = True
    assert state.kept() is None and editing().kept() == "n1"
    assert state.relist([NOTE], None, dirty=True, filtered=False) == (None, False) and state.is_new
    assert [state.new_list(), state.new_list()] == [1, 2]


def test_undo_records_say_what_they_undo_and_what_each_note_must_hold():
    record = UndoRecord("delete 2 notes", before=[NOTE, OTHER], after=[THEIRS], user="alice")
    assert record.expected() == {"n1": THEIRS, "n2": None}
    state = NotesState()
    assert state.undo_tip() == "Nothing to undo"
    state.history.push(record)
    assert state.undo_tip() == "Undo: delete 2 notes"


def test_the_count_says_how_many_in_the_formats_words():
    assert count_text(1, True, False, 0, "note", "notes") == "1 note"
    assert count_text(200, False, True, 3, "fact", "facts") == (
        "200 facts match the filters so far · scroll for more · 3 selected"
    )
    assert count_text(1, True, True, 1, "memory", "memories") == "1 memory matches the filters"
