"""The search's result tools row: the query set grades go into (typed, trimmed, kept when the file's sets are
offered, ``default`` when none), the controls in their order and the *Make default* menu."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QToolButton

from oxmem_gui.ui.search.tools import ResultTools


@pytest.fixture
def tools(qtbot):
    model_box = QComboBox()
    model_box.addItems(["all-MiniLM-L6-v2", "no vectors"])
    row = ResultTools(model_box)
    qtbot.addWidget(row)
    return row


def sets(tools: ResultTools) -> list[str]:
    return [tools.set_box.itemText(i) for i in range(tools.set_box.count())]


def type_set(tools: ResultTools, text: str, qtbot) -> None:
    tools.show()
    tools.activateWindow()
    tools.set_box.setFocus()
    QApplication.processEvents()
    tools.set_box.lineEdit().selectAll()
    qtbot.keyClicks(tools.set_box.lineEdit(), text)


def test_with_nothing_typed_and_no_sets_grades_go_into_default(tools):
    assert tools.set_name() == "default" and sets(tools) == []
    assert tools.set_box.lineEdit().placeholderText() == "query set"
    tools.offer_sets([])
    assert sets(tools) == ["default"] and tools.set_name() == "default"


def test_a_typed_set_name_is_trimmed(tools, qtbot):
    type_set(tools, "  groceries  ", qtbot)
    assert tools.set_name() == "groceries"
    qtbot.keyClick(tools.set_box.lineEdit(), Qt.Key.Key_Return)
    assert tools.set_name() == "groceries"


def test_offering_the_files_sets_keeps_the_one_typed(tools, qtbot):
    type_set(tools, "groceries", qtbot)
    tools.offer_sets(["trips", "work"])
    assert sets(tools) == ["trips", "work"] and tools.set_name() == "groceries"
    tools.offer_sets([])
    assert sets(tools) == ["default"] and tools.set_name() == "groceries"


def test_with_nothing_typed_the_first_offered_set_is_chosen_and_the_arrows_pick_another(tools, qtbot):
    tools.offer_sets(["trips", "work"])
    assert tools.set_name() == "trips"
    tools.show()
    tools.activateWindow()
    tools.set_box.setFocus()
    QApplication.processEvents()
    qtbot.keyClick(tools.set_box.lineEdit(), Qt.Key.Key_Down)
    assert tools.set_name() == "work"
    qtbot.keyClick(tools.set_box.lineEdit(), Qt.Key.Key_Up)
    assert tools.set_name() == "trips"


def test_the_row_holds_the_model_box_then_the_tools_in_order(tools):
    layout = tools.layout()
    shown = [layout.itemAt(i).widget() for i in range(layout.count())]
    names = [w.text() if hasattr(w, "text") else w.currentText() for w in shown if w is not None]
    assert names == [
        "all-MiniLM-L6-v2",
        "Make default",
        "Why not…?",
        "Pin as A",
        "Compare…",
        "Export…",
        "Judge into",
        "",
        "Metrics…",
    ]
    assert shown[0].parent() is tools and shown[8] is tools.set_box


def test_make_default_opens_its_menu_of_three_choices_at_once(tools):
    assert tools.default_button.popupMode() == QToolButton.ToolButtonPopupMode.InstantPopup
    menu = tools.default_button.menu()
    assert [a.text() for a in menu.actions()] == [
        "For this session",
        "For every session of this file",
        "",
        "Forget the choices: built-in default",
    ]
    assert menu.actions()[2].isSeparator()
    assert [tools.default_session_action, tools.default_file_action, tools.forget_default_action] == [
        menu.actions()[i] for i in (0, 1, 3)
    ]
    assert tools.default_button.toolTip() == tools.default_tip and tools.why_button.toolTip() == tools.why_tip
