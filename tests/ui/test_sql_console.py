"""The Tables panel's Execute SQL tab: runs read-only SQL in the background, pages the result as it is scrolled,
refuses writes in one line, cancels a long query, keeps a history per file, completes names, exports."""

from __future__ import annotations

import asyncio
import csv
import json

from oxmem_gui.ui.sql_console import PAGE
from tests.ui.conftest import settle

COUNT_TO = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {}) SELECT i, 'row ' || i AS label FROM n"
)


def console_of(make_window, qloop):
    window, ctx, dialogs = make_window()
    window.show_panel("tables")
    window.tables.tabs.setCurrentIndex(1)
    settle(qloop, ctx)
    return window.tables.console, ctx, dialogs


def run(console, ctx, qloop, sql):
    console.editor.setPlainText(sql)
    console.run()
    settle(qloop, ctx)


def test_a_query_shows_its_rows_and_goes_into_the_files_history(make_window, qloop):
    console, ctx, _ = console_of(make_window, qloop)
    run(console, ctx, qloop, "SELECT session_id FROM sessions WHERE session_id LIKE 'telegram:%' ORDER BY 1")
    m = console.model
    assert m.columns == ["session_id"]
    assert [m.index(r, 0).data() for r in range(m.rowCount())] == [
        "telegram:alice:lisbon-trip",
        "telegram:alice:tomatoes",
    ]
    assert console.status.text() == "2 rows" and not m.canFetchMore()
    assert console.history.itemText(0).startswith("SELECT session_id FROM sessions")
    assert console.export_button.isEnabled()


def test_a_big_result_pages_as_it_is_scrolled(make_window, qloop):
    console, ctx, _ = console_of(make_window, qloop)
    run(console, ctx, qloop, COUNT_TO.format(1200))
    m = console.model
    assert m.rowCount() == PAGE and m.canFetchMore()
    assert console.status.text() == f"{PAGE} rows so far (scroll for more)"
    m.fetchMore()
    settle(qloop, ctx)
    assert m.rowCount() == 2 * PAGE and m.index(PAGE, 1).data() == f"row {PAGE + 1}"
    console.view.scrollToBottom()  # the view asks for the rest itself
    settle(qloop, ctx)
    console.view.scrollToBottom()
    settle(qloop, ctx)
    assert m.rowCount() == 1200 and not m.canFetchMore() and console.status.text() == "1,200 rows"
    assert [m.index(r, 0).data() for r in (0, 599, 1199)] == ["1", "600", "1200"]


def test_a_write_is_refused_in_one_line_and_changes_nothing(make_window, qloop):
    console, ctx, _ = console_of(make_window, qloop)
    before = qloop.run_until_complete(ctx.store.sql("SELECT count(*) FROM sessions")).rows
    run(console, ctx, qloop, "DELETE FROM sessions")
    assert console.status.text() == "Refused: DELETE from sessions — the SQL console only reads; nothing was changed"
    assert console.status.styleSheet().startswith("color: #c0392b")
    assert qloop.run_until_complete(ctx.store.sql("SELECT count(*) FROM sessions")).rows == before
    assert console.history.count() == 0  # only queries that ran are remembered


def test_cancel_stops_a_long_query_with_sqlites_interrupt(make_window, qloop):
    console, ctx, _ = console_of(make_window, qloop)
    console.editor.setPlainText(
        COUNT_TO.format(200_000_000).replace("SELECT i, 'row ' || i AS label", "SELECT count(*)")
    )
    console.run()
    for _ in range(200):  # until the statement is running on the connection's thread, and stopped
        qloop.run_until_complete(asyncio.sleep(0.05))
        console.cancel()
        if not console.cancel_button.isEnabled():
            break
    settle(qloop, ctx)
    assert console.status.text() == "The statement was stopped; nothing was changed"
    run(console, ctx, qloop, "SELECT 1 AS one")  # the connection works on
    assert console.model.rowCount() == 1 and console.status.text() == "1 row"


def test_names_complete_and_the_result_exports(make_window, qloop, qtbot, tmp_path):
    console, ctx, dialogs = console_of(make_window, qloop)
    names = console.editor.completer.model().stringList()
    assert {"sessions", "session_id", "chunks_fts", "select"} <= set(names)
    console.editor.setFocus()
    qtbot.keyClicks(console.editor, "SELECT * FROM sess")
    assert console.editor.completer.completionPrefix() == "sess"
    assert console.editor.completer.currentCompletion() == "session_id"
    console.editor.completer.popup().hide()
    console.editor.insert_completion("sessions")
    assert console.editor.toPlainText() == "SELECT * FROM sessions"
    run(console, ctx, qloop, COUNT_TO.format(3))
    dialogs.files += [tmp_path / "out.csv", tmp_path / "out.json"]
    console.export()
    settle(qloop, ctx)
    console.export()
    settle(qloop, ctx)
    with (tmp_path / "out.csv").open(newline="") as f:
        assert list(csv.reader(f)) == [["i", "label"], ["1", "row 1"], ["2", "row 2"], ["3", "row 3"]]
    assert json.loads((tmp_path / "out.json").read_text())[2] == {"i": 3, "label": "row 3"}
    assert console.status.text() == f"Exported to {tmp_path / 'out.json'}"


def test_history_is_kept_per_file(make_window, qloop):
    console, ctx, _ = console_of(make_window, qloop)
    run(console, ctx, qloop, "SELECT 42 AS answer")
    key = console._key()
    assert console.settings.value(key) == ["SELECT 42 AS answer"]
    console.history.setCurrentIndex(0)
    console.editor.clear()
    console._recall(0)
    assert console.editor.toPlainText() == "SELECT 42 AS answer"
