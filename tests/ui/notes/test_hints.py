"""What saving will change is said before saving, where the note is typed: the format's rules for writing one
(Omega's ``key: value``), and what the agent will see differently (ZEKE: no vector, its last use cleared)."""

from __future__ import annotations

import shutil

from tests.core.formats import fixtures
from tests.ui.conftest import settle


def editing(make_window, qloop, tmp_path, fixture, user):
    shutil.copy(fixture(tmp_path / "agent.db"), tmp_path / "demo.db")
    window, ctx, _ = make_window(read_only=True)
    settle(qloop, ctx)
    window.show_panel("notes")
    window.notes.set_user(user)
    settle(qloop, ctx)
    assert window.notes.editor.hint.isHidden()  # read-only: nothing will be saved, nothing to say
    window.enable_editing()
    settle(qloop, ctx)
    return window.notes


def select(notes, note_id):
    notes.list_pane.view.setCurrentIndex(notes.model.index(next(
        i for i, n in enumerate(notes.model.notes) if n.note_id == note_id), 0))  # fmt: skip


def test_omegas_rule_for_a_fact_is_said_where_one_is_typed(make_window, qloop, tmp_path):
    notes = editing(make_window, qloop, tmp_path, fixtures.make_omega, "4242")
    notes.new_note()
    assert not notes.editor.hint.isHidden()
    assert notes.editor.hint.text() == (
        "A fact is written “key: value” (e.g. “home city: Berlin”): the key before the first colon."
    )


def test_a_zeke_memory_says_before_saving_that_its_last_use_is_cleared_and_it_gets_no_vector(
    make_window, qloop, tmp_path
):
    notes = editing(make_window, qloop, tmp_path, fixtures.make_zeke, "persona:zeke")
    select(notes, fixtures.ZEKE_IDS["p-style"])  # last used 2026-02-27
    said = notes.editor.hint.text()
    assert said.startswith("The memory is saved without a vector — oxmem cannot make text-embedding-3-small vectors")
    assert said.endswith(
        "Saving clears its last use, as ZEKE's upsert does: its clean-up then counts its age from its creation."
    )
    select(notes, fixtures.ZEKE_IDS["p-coffee"])  # never used: nothing to clear
    assert "last use" not in notes.editor.hint.text() and "without a vector" in notes.editor.hint.text()
    notes.new_note()
    assert "last use" not in notes.editor.hint.text()
