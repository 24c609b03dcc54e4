"""*Why not…?* in the search panel: the picker, the story beside the ranked list, the memory's row pinned at its
true rank, *Apply*, and the session browser's *Why wasn't this recalled?*."""

from __future__ import annotations

import hashlib
import shutil

from tests.ui.conftest import settle
from tests.ui.search.test_panel import search
from tests.ui.test_formats import files  # noqa: F401  (the fixture: every format's file)

LISBON = "telegram:alice:lisbon-trip"
QUERY = "which seat on the flight"


def test_pick_a_memory_read_why_and_apply_the_change(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, LISBON, QUERY, top_k=3, ranking="tuned")
    assert panel.tools.why_button.isEnabled()
    dialogs.memory_answers.append("5")
    panel.tools.why_button.click()
    settle(qloop, ctx)
    settle(qloop, ctx)
    offered = dialogs.memory_lists[0]
    fifth = next(item for item in offered if item[1] == "5")
    assert fifth[0].startswith("#5 assistant: Two direct options for 12–15 March: easyJet at €168")
    story = panel.state.story
    assert (story.rank, story.of, story.reason) == (11, 13, "outranked")
    m = panel.model
    assert m.rowCount() == 4 and m.index(3, 0).data() == "#11 of 13" and m.hit(3).chunk_id == story.chunk_id
    assert panel.why_label.text().startswith("Not recalled: Outranked within the top 3: #11 with ")
    assert panel.why_label.text().endswith("would bring it back: top 12 (now 3)")
    assert "fts leg: no match: none of seat*, flig* is in its text" in panel.explain_view.toPlainText()
    assert panel.apply_button.isEnabled() and panel.why_bar.isVisibleTo(panel)
    panel.apply_button.click()
    settle(qloop, ctx)
    assert panel.controls.top_k.value() == 12 and not panel.why_bar.isVisibleTo(panel)
    assert story.chunk_id in [h.chunk_id for h in panel.state.result.hits]


def test_the_session_browsers_menu_explains_the_event(make_window, qloop):
    window, ctx, _ = make_window()
    search(window, ctx, qloop, LISBON, QUERY, top_k=3, ranking="tuned")
    window.show_panel("sessions")
    window.sessions.why_not.emit(LISBON, 5)
    settle(qloop, ctx)
    assert window.current_panel() == "search" and window.search.state.story.rank == 11
    # another session's event: its session goes in the field, and the story follows the search
    window.sessions.why_not.emit("cli:alice:invoice-rounding", 7)
    settle(qloop, ctx)
    settle(qloop, ctx)
    panel = window.search
    assert panel.state.result.session_id == "cli:alice:invoice-rounding" and panel.state.story.sequence == 7


def test_an_unknown_memory_is_a_dialog(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, LISBON, QUERY, top_k=3, ranking="tuned")
    panel.why_not("99")
    settle(qloop, ctx)
    assert dialogs.errors == [f"no event at sequence 99 in session '{LISBON}'"] and panel.state.story is None


def test_the_picker_finds_by_typed_words_and_enter_picks(qtbot):
    from PySide6.QtCore import Qt

    from oxmem_gui.ui.search.why_not import WhyNotPicker

    picker = WhyNotPicker([("#1 user: a quiet hotel", "1"), ("#2 user: the easyJet flight", "2"),
                           ("#3 user: an easyJet seat", "3")])  # fmt: skip
    qtbot.addWidget(picker)
    qtbot.keyClicks(picker.find, "easyjet")
    shown = [picker.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(3) if not picker.list.item(i).isHidden()]
    assert shown == ["2", "3"] and picker.list.currentRow() == 1
    qtbot.keyClick(picker.find, Qt.Key.Key_Down)
    assert picker.list.currentRow() == 2
    qtbot.keyClick(picker.list, Qt.Key.Key_Return)
    assert picker.chosen == "3" and picker.result() == picker.DialogCode.Accepted


def test_omegas_recall_explains_an_event_in_omegas_words(files, make_window, qloop, tmp_path):  # noqa: F811
    shutil.copy(files["omega"], tmp_path / "demo.db")
    before = hashlib.sha256((tmp_path / "demo.db").read_bytes()).hexdigest()
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    panel = window.search
    conversation = "0b7e2a10-5c1d-4c1a-8d01-000000000003"
    panel.controls.session.setCurrentText(conversation)
    panel.controls.query.setText("Lisbon")
    panel.search()
    settle(qloop, ctx)
    assert panel.tools.why_button.isEnabled()
    dialogs.memory_answers.append("11")  # an event of this very conversation
    panel.tools.why_button.click()
    settle(qloop, ctx)
    settle(qloop, ctx)
    offered = dict((target, label) for label, target in dialogs.memory_lists[0])
    # the sender's other conversations first (Omega recalls from them), then this one's
    assert offered["5"].startswith("#5 user in 0b7e2a10-5c1d-4c1a-8d01-000000000002: I need to book a flight to Lisbon")
    assert offered["11"].startswith("#11 user in this conversation: Did I book a flight to Lisbon already")
    assert list(offered).index("5") < list(offered).index("11") and "19" not in offered  # not another sender's
    assert panel.state.story.cut == "Omega leaves out the conversation it recalls for: this message is in it"
    assert panel.why_label.text() == (
        "Not recalled: Omega leaves out the conversation it recalls for: this message is in it — nothing within "
        "these controls brings it back"
    )
    assert not panel.apply_button.isEnabled()
    assert hashlib.sha256((tmp_path / "demo.db").read_bytes()).hexdigest() == before


def test_zekes_recall_picks_from_the_scopes_memories(files, make_window, qloop, tmp_path):  # noqa: F811
    shutil.copy(files["zeke"], tmp_path / "demo.db")
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    panel = window.search
    panel.controls.session.setCurrentText("persona:zeke")
    panel.controls.query.setText("Berlin")
    panel.search()
    settle(qloop, ctx)
    assert panel.current_ranking().scope == "notes" and panel.tools.why_button.isEnabled()
    memory = "00000000-0000-4e4e-8000-000000000002"
    dialogs.memory_answers.append(memory)
    panel.tools.why_button.click()
    settle(qloop, ctx)
    settle(qloop, ctx)
    offered = dict((target, label) for label, target in dialogs.memory_lists[0])
    assert offered[memory].startswith(f"{memory}: Dana prefers bullet points")
    assert panel.state.story.chunk_id == memory and panel.state.story.cut.startswith(
        "its FTS leg does not match the query"
    )


def test_why_not_after_all_sessions_with_no_hits_explains_a_memory_in_its_own_session(make_window, qloop):
    from oxmem_gui.core.api import SearchOptions
    from oxmem_gui.ui.search.why_not import many_target

    window, ctx, dialogs = make_window()
    window.show_panel("search")
    settle(qloop, ctx)
    window.search.controls.tags.set_tags(["no-such-tag"])  # nothing is tagged so: no hits in any session
    panel = search(window, ctx, qloop, "(all sessions)", QUERY, top_k=3, ranking="tuned")
    assert panel.state.result.hits == [] and panel.results_label.text() == f"0 hits for “{QUERY}” in (all sessions)"
    assert panel.tools.why_button.isEnabled()
    assert panel.tools.why_button.toolTip().startswith("Pick a memory of any session")
    dialogs.memory_answers.append(many_target(LISBON, "5"))
    panel.tools.why_button.click()
    settle(qloop, ctx)
    settle(qloop, ctx)
    offered = dialogs.memory_lists[0]
    fifth = next(label for label, target in offered if target == f"{LISBON}\t5")
    assert fifth.startswith(f"{LISBON} · #5 assistant: Two direct options for 12–15 March: easyJet at €168")
    assert len({t.partition("\t")[0] for _, t in offered}) >= 3  # every session's memories
    # the story is the core's, for the memory's own session: the same as `oxmem search LISBON QUERY --why 5`
    want = qloop.run_until_complete(
        ctx.store.why_not("tuned", LISBON, QUERY, "5", 3, SearchOptions(tags=("no-such-tag",)))
    )
    story = panel.state.story
    assert story.lines() == want.lines() and (story.reason, story.session_id) == ("tag-filter", LISBON)
    text = panel.explain_view.toPlainText()
    assert text.startswith(
        f"The memory is in session {LISBON}.\n"
        "In the (all sessions) ranking shown: not among its 0 candidates.\n"
        f"Below, ranked within session {LISBON}: Why not…? explains a memory by its own session's ranking"
    )
    assert "\n".join(want.lines()) in text
    assert panel.why_label.text().startswith(f"In session {LISBON}'s own ranking — Not recalled: The tag filter")
    assert not panel.apply_button.isEnabled()


def test_why_not_after_all_sessions_pins_the_memory_at_its_place_in_the_ranking_shown(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "(all sessions)", QUERY, top_k=3, ranking="tuned")
    shown = panel.state.result
    assert len(shown.hits) == 3 and len(shown.ranking) == 18 and panel.tools.why_button.isEnabled()
    # the session browser's Why wasn't this recalled? explains it in the all-sessions search shown
    window.sessions.why_not.emit(LISBON, 6)
    settle(qloop, ctx)
    story = panel.state.story
    assert panel.state.result is shown and (story.session_id, story.sequence) == (LISBON, 6)
    assert shown.ranking[8].chunk_id == story.chunk_id  # #9 of the 18 candidates over every session
    want = qloop.run_until_complete(ctx.store.why_not("tuned", LISBON, QUERY, "6", 3))
    assert story.lines() == want.lines() and (story.rank, story.of) == (want.rank, want.of) != (9, 18)
    m = panel.model
    assert m.rowCount() == 4 and m.index(3, 0).data() == "#9 of 18" and m.hit(3).chunk_id == story.chunk_id
    lines = panel.explain_view.toPlainText().splitlines()
    assert lines[1] == "In the (all sessions) ranking shown: #9 of 18 candidates (not in the top 3)."
    assert lines[4] == want.lines()[0]
    assert not panel.apply_button.isEnabled() and "the memory's own session" in panel.apply_button.toolTip()
