"""At 1024×640 the text people come to read has at least half the window's width: an event's text in Sessions, a
hit's in Search, a note's in Notes. The columns kept beside it are in view without scrolling sideways; the others
are hidden until asked for, from the header's context menu or the keyboard; an event's JSON wraps."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from oxmem_gui.ui.search.results import TEXT_COLUMN
from oxmem_gui.ui.widgets import ColumnChooser
from tests.ui.conftest import settle
from tests.ui.search.test_panel import search

LISBON = "telegram:alice:lisbon-trip"
HALF = 1024 // 2


def shown(window, qloop, ctx, panel: str) -> None:
    window.resize(1024, 640)
    window.show()
    window.show_panel(panel)
    settle(qloop, ctx)
    QApplication.processEvents()
    assert window.size().toTuple() == (1024, 640)


def visible_columns(view) -> list[int]:
    return [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]


def all_in_view(view) -> bool:
    """Every column shown lies within the viewport: nothing to scroll sideways for."""
    QApplication.processEvents()
    right = max(view.columnViewportPosition(c) + view.columnWidth(c) for c in visible_columns(view))
    return right <= view.viewport().width() and view.horizontalScrollBar().maximum() == 0


def offered(chooser: ColumnChooser) -> dict[str, bool]:
    """The Columns menu as it opens: heading → shown."""
    chooser.menu.aboutToShow.emit()
    return {a.text(): a.isChecked() for a in chooser.menu.actions()}


def test_sessions_an_events_text_has_half_the_window_and_the_lists_columns_are_in_view(make_window, qloop):
    window, ctx, _ = make_window()
    shown(window, qloop, ctx, "sessions")
    panel = window.sessions
    assert panel.select_session(LISBON)
    settle(qloop, ctx)
    panel.events_view.setCurrentIndex(panel.events.index(0, 0))
    QApplication.processEvents()
    events, sessions = panel.events_view, panel.sessions_view
    assert events.columnWidth(4) >= HALF, [events.columnWidth(c) for c in range(5)]
    assert visible_columns(events) == [0, 1, 3, 4] and all_in_view(events)  # Seq, Role, Time, Text
    # the list: the session, whole, and nothing beside it to scroll to; the rest on demand
    assert visible_columns(sessions) == [0] and all_in_view(sessions)
    assert sessions.columnWidth(0) >= sessions.sizeHintForColumn(0)
    assert offered(panel.session_columns) == {
        "Updated": False,
        "Events": False,
        "Chunks": False,
        "Last seq": False,
        "Created": False,
    }
    assert offered(panel.event_columns) == {"Seq": True, "Role": True, "Source": False, "Time": True}


def test_the_hidden_columns_come_from_the_headers_menu_and_the_keyboard(make_window, qloop):
    window, ctx, _ = make_window()
    shown(window, qloop, ctx, "sessions")
    panel = window.sessions
    assert panel.select_session(LISBON)
    settle(qloop, ctx)
    header = panel.sessions_view.horizontalHeader()
    header.customContextMenuRequested.emit(QPoint(5, 5))  # a right-click on the header
    menu = panel.session_columns.menu
    assert menu.isVisible()
    next(a for a in menu.actions() if a.text() == "Events").trigger()
    menu.close()
    assert visible_columns(panel.sessions_view) == [0, 2] and all_in_view(panel.sessions_view)
    settle(qloop, ctx)
    assert panel.sessions.index(panel.sessions_view.currentIndex().row(), 2).data() not in ("", "…")
    # the keyboard: Ctrl+Shift+C in a table opens its Columns menu; the menu key in the list too
    window.activateWindow()
    QApplication.processEvents()
    for view, chooser in ((panel.sessions_view, panel.session_columns), (panel.events_view, panel.event_columns)):
        view.setFocus()
        QApplication.processEvents()
        QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert chooser.menu.isVisible(), view
        chooser.menu.close()
        window.activateWindow()
        QApplication.processEvents()
    panel.sessions_view.customContextMenuRequested.emit(QPoint(5, 5))  # what the menu key asks for
    assert panel.session_columns.menu.isVisible()
    panel.session_columns.menu.close()
    # hidden again from the menu
    panel.session_columns.show_column(2, False)
    assert visible_columns(panel.sessions_view) == [0]


def test_an_events_json_wraps_instead_of_scrolling_sideways(make_window, qloop):
    window, ctx, _ = make_window()
    long_line = "a long message with no line break " * 60 + "x" * 400  # words, then one unbroken run

    async def write():
        await ctx.store.store("cli:long-line", 1, {"role": "user", "content": long_line})

    qloop.run_until_complete(write())
    window.sessions.refresh()
    settle(qloop, ctx)
    shown(window, qloop, ctx, "sessions")
    panel = window.sessions
    assert panel.select_session("cli:long-line")
    settle(qloop, ctx)
    panel.events_view.setCurrentIndex(panel.events.index(0, 0))
    QApplication.processEvents()
    view = panel.json_view
    assert long_line in view.toPlainText()
    assert view.horizontalScrollBar().maximum() == 0 and not view.horizontalScrollBar().isVisible()


def test_search_a_hits_text_has_half_the_window(make_window, qloop):
    window, ctx, _ = make_window()
    shown(window, qloop, ctx, "search")
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    QApplication.processEvents()
    view = panel.view
    assert view.columnWidth(TEXT_COLUMN) >= HALF, [view.columnWidth(c) for c in range(TEXT_COLUMN + 1)]
    assert all_in_view(view)
    assert offered(view.columns) == {
        "Rank": True,
        "Move": True,
        "Score": True,
        "Parts": True,
        "Vector": False,
        "FTS": False,
        "Flags": False,
        "Grade": True,
    }
    assert view.columns.menu.menuAction() in view.actions()  # in the hits' context menu too
    view.columns.show_column(6, True)  # Flags, on demand
    assert not view.isColumnHidden(6) and view.columnWidth(6) > 0


def test_notes_a_notes_text_has_half_the_window(make_window, qloop):
    window, ctx, _ = make_window()
    shown(window, qloop, ctx, "notes")
    notes = window.notes
    notes.set_user("alice")
    settle(qloop, ctx)
    QApplication.processEvents()
    view = notes.list_pane.view
    assert notes.model.rowCount() > 0
    assert view.columnWidth(0) >= HALF, [view.columnWidth(c) for c in range(5)]
    assert visible_columns(view) == [0, 1, 4] and all_in_view(view)  # Note, Tags, Age
    assert offered(notes.list_pane.columns) == {"Tags": True, "Created": False, "Updated": False, "Age": True}


def test_the_columns_chosen_are_kept_for_the_next_launch(make_window, qloop, tmp_path):
    from PySide6.QtCore import QSettings

    from oxmem_gui.core.api import JudgmentStore
    from oxmem_gui.ui.context import StoreContext
    from oxmem_gui.ui.main_window import MainWindow
    from tests.ui.conftest import FakeDialogs

    window, ctx, _ = make_window()
    settle(qloop, ctx)
    sessions, search = window.sessions.sessions_view, window.search.view
    hidden_before = window.sessions.session_columns.hidden()
    assert hidden_before and window.search.view.columns.hidden()
    sessions.setColumnHidden(hidden_before[0], False)  # a column shown on demand…
    for column in window.search.view.columns.hidden():  # …and every hidden one of the search hits
        search.setColumnHidden(column, False)
    window.save_settings()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    again = MainWindow(StoreContext(), settings, FakeDialogs(), JudgmentStore(tmp_path / "again.db"))
    try:
        assert again.sessions.session_columns.hidden() == hidden_before[1:]
        assert again.search.view.columns.hidden() == []
        assert again.notes.list_pane.columns.hidden() == window.notes.list_pane.columns.hidden()
    finally:
        again.deleteLater()
