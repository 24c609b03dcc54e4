"""The context preview widget on real previews of the demo store: the figures line, a row per message with its
status, tokens and colour (the summary message first when there is one), the over-budget warning, clearing,
and the budget stepped or typed with the keyboard."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.demo import fill_demo
from oxmem_gui.ui.rows_model import tip
from oxmem_gui.ui.sessions.context_preview import ContextPreview
from oxmem_gui.ui.sessions.models import preview as cut
from tests.ui.conftest import DEMO_NOW

LISBON = "telegram:alice:lisbon-trip"  # the demo's one session with a rolling summary
INVOICE = "cli:alice:invoice-rounding"
ASKED = [(LISBON, 2000), (LISBON, 100), (INVOICE, 200), (INVOICE, 2000)]


@pytest.fixture(scope="module")
def previews(tmp_path_factory):
    """``(session, budget)`` → the demo store's own context preview."""

    async def read():
        store = await MemoryStore.open(tmp_path_factory.mktemp("demo") / "demo.db", embedding="deterministic")
        try:
            await fill_demo(store, now=DEMO_NOW)
            return {(s, b): await store.context_preview(s, b) for s, b in ASKED}
        finally:
            await store.aclose()

    return asyncio.run(read())


@pytest.fixture
def widget(qtbot):
    shown = ContextPreview()
    qtbot.addWidget(shown)
    return shown


def rows(widget: ContextPreview) -> list[list[str]]:
    table = widget.context_table
    return [[table.item(r, c).text() for c in range(4)] for r in range(table.rowCount())]


def colour(widget: ContextPreview, row: int) -> str | None:
    brush = widget.context_table.item(row, 0).data(Qt.ItemDataRole.ForegroundRole)
    return brush.color().name() if brush is not None else None


def test_without_a_summary_each_message_has_a_row_dropped_ones_greyed(widget, previews):
    shown = previews[(INVOICE, 200)]
    widget.show_preview(shown)
    assert widget.context_info.text() == "190 of 200 tokens — 9 messages included, 4 dropped, 0 covered by the summary"
    assert widget.context_warning.isHidden()
    assert rows(widget)[:5] == [
        ["1", "dropped", "18", "system"],
        ["2", "dropped", "19", "user"],
        ["3", "dropped", "17", "assistant"],
        ["4", "dropped", "242", "tool"],
        ["5", "included", "18", "assistant"],
    ]
    assert len(rows(widget)) == 13 and rows(widget)[-1] == ["13", "included", "18", "assistant"]
    assert [colour(widget, r) for r in (0, 3, 4, 12)] == ["#9a9a9a", "#9a9a9a", None, None]


def test_a_long_message_is_cut_in_its_cell_and_whole_in_its_tooltip(widget, previews):
    shown = previews[(INVOICE, 2000)]
    widget.show_preview(shown)
    pytest_output = shown.items[3].text  # the tool's test run: many lines
    cell = widget.context_table.item(3, 4)
    assert len(pytest_output) > 160 and cell.text() == cut(pytest_output) and cell.text().endswith("…")
    assert cell.toolTip() == tip(pytest_output)
    assert widget.context_info.text().endswith("13 messages included, 0 dropped, 0 covered by the summary")


def test_the_summary_message_comes_first_and_covered_messages_are_blue(widget, previews):
    shown = previews[(LISBON, 2000)]
    widget.show_preview(shown)
    assert rows(widget)[0] == ["—", "summary", str(shown.summary_tokens), "system"]
    assert shown.summary_tokens == 457 and len(rows(widget)) == 1 + 15
    assert rows(widget)[1] == ["1", "summarized", "17", "system"]
    assert rows(widget)[-1] == ["15", "included", "6", "user"]
    assert [colour(widget, r) for r in (0, 1, 14, 15)] == [None, "#2d7fb8", "#2d7fb8", None]


def test_over_the_budget_warns_and_clear_empties_everything(widget, previews):
    widget.show_preview(previews[(LISBON, 100)])
    assert not widget.context_warning.isHidden()
    assert widget.context_warning.text() == (
        "⚠ 457 tokens — 357 over the 100 budget: the summary message alone takes 457 tokens"
    )
    assert widget.context_info.text() == (
        "457 of 100 tokens — summary message: 457 tokens; 0 messages included, 1 dropped, 14 covered by the summary"
    )
    widget.clear()
    assert widget.context_table.rowCount() == 0 and widget.context_info.text() == ""
    assert widget.context_warning.isHidden()


def test_a_smaller_preview_replaces_every_row_of_a_larger_one(widget, previews):
    widget.show_preview(previews[(LISBON, 2000)])
    widget.show_preview(previews[(INVOICE, 200)])
    assert len(rows(widget)) == 13 and rows(widget)[0] == ["1", "dropped", "18", "system"]
    assert widget.context_warning.isHidden()


def test_the_budget_steps_by_500_and_takes_a_typed_value(widget, qtbot):
    widget.show()
    widget.activateWindow()
    widget.budget.setFocus()
    QApplication.processEvents()
    asked = []
    widget.budget.valueChanged.connect(asked.append)
    qtbot.keyClick(widget.budget, Qt.Key.Key_Up)
    assert widget.budget.value() == 2500 and widget.budget.text() == "2500 tokens"
    widget.budget.selectAll()
    qtbot.keyClicks(widget.budget, "120")
    qtbot.keyClick(widget.budget, Qt.Key.Key_Return)
    assert widget.budget.value() == 120 and asked[0] == 2500 and asked[-1] == 120
    qtbot.keyClick(widget.budget, Qt.Key.Key_Down)
    assert widget.budget.value() == 50  # not below the minimum
