"""The Tables panel alone (no main window): a thin view over its state (ui/tables_state.py) — the list of tables,
the chosen one's rows a page at a time, the cell's full value; a refresh keeps the table, the rows and the cell."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import QSettings

from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.tables_panel import TablesPanel
from tests.ui.conftest import FakeDialogs, settle


@pytest.fixture
def panel(qtbot, qloop, tmp_path):
    path = tmp_path / "any.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE big (n INTEGER, word TEXT)")
        conn.executemany("INSERT INTO big VALUES (?, ?)", [(i, f"w{i} " + "x" * i) for i in range(450)])
        conn.execute("CREATE TABLE small (x TEXT)")
        conn.execute("INSERT INTO small VALUES ('only')")
    ctx = StoreContext()
    panel = TablesPanel(ctx, FakeDialogs(), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(panel)
    qloop.run_until_complete(ctx.open(path, read_only=True, embedding="deterministic"))
    settle(qloop, ctx)
    yield panel, ctx
    qloop.run_until_complete(ctx.close())


def listed(panel):
    return [panel.list.item(i).text() for i in range(panel.list.count())]


def test_the_panel_alone_lists_the_tables_and_pages_the_chosen_one(panel, qloop):
    panel, ctx = panel
    assert listed(panel) == ["big  (table, 450 rows)", "small  (table, 1 row)"]
    assert (panel.current, panel.model.rowCount(), panel.more.isEnabled()) == ("big", 200, True)
    assert panel.title.text() == "big: rows 1–200 (more to load)"
    panel.load_more()
    settle(qloop, ctx)
    assert (panel.model.rowCount(), panel.title.text()) == (400, "big: rows 1–400 (more to load)")
    panel.view.setCurrentIndex(panel.model.index(300, 1))
    assert panel.cell.toPlainText() == "w300 " + "x" * 300
    panel.reload()  # what another program's write does: the table, its rows and the cell stay
    settle(qloop, ctx)
    assert (panel.current, panel.model.rowCount(), panel.view.currentIndex().row()) == ("big", 400, 300)
    assert panel.cell.toPlainText() == "w300 " + "x" * 300
    assert panel.select_table("small")
    settle(qloop, ctx)
    assert (panel.current, panel.model.rowCount(), panel.more.isEnabled()) == ("small", 1, False)
    assert (panel.title.text(), panel.cell.toPlainText()) == ("small: 1 row", "")


def test_the_filter_hides_names_and_keeps_the_chosen_table(panel, qtbot):
    panel, ctx = panel
    qtbot.keyClicks(panel.filter, "SMA")
    hidden = [panel.list.item(i).isHidden() for i in range(panel.list.count())]
    assert hidden == [True, False] and panel.current == "big"
    panel.filter.clear()
    assert not any(panel.list.item(i).isHidden() for i in range(panel.list.count()))


def test_the_apps_own_saves_update_the_row_counts_when_the_panel_is_next_shown(panel, qloop, tmp_path):
    panel, ctx = panel
    ctx.paused = True  # (the write below is the app's own: no poll may show it as another program's)
    with sqlite3.connect(tmp_path / "any.sqlite") as conn:  # (what a save made in another panel writes)
        conn.execute("INSERT INTO small VALUES ('second')")
    ctx.changed.emit("notes")  # this app wrote, the panel hidden: not read again yet
    settle(qloop, ctx)
    assert listed(panel)[1] == "small  (table, 1 row)"
    panel.show()
    settle(qloop, ctx)
    assert listed(panel)[1] == "small  (table, 2 rows)"
    ctx.changed.emit("notes")  # shown: at once
    settle(qloop, ctx)
    assert listed(panel)[1] == "small  (table, 2 rows)" and not panel._behind
