"""The status bar alone (ui/status_bar.py): the room its message gets (a gap short of the first visible permanent
widget, never negative), and the message as painted: whole, cut with "…" to fit, or nothing once cleared."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication, QLabel

from oxmem_gui.ui.status_bar import GAP, StatusBar

LONG = "Imported 1,234 events from conversation-export-2037-11-24-final.jsonl — 3 lines skipped (not JSON)"


@pytest.fixture
def bar(qtbot):
    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.resize(400, 24)
    bar.show()
    QApplication.processEvents()
    return bar


def with_labels(bar):
    path, mode = QLabel("demo.db · deterministic"), QLabel("read-only")
    bar.addPermanentWidget(path)
    bar.addPermanentWidget(mode)
    QApplication.processEvents()
    return path, mode


def test_with_no_permanent_widget_the_message_has_the_width_less_the_gap(bar):
    assert bar.permanent == []
    assert bar.message_rect() == QRect(6, 0, 400 - 6 - GAP, 24)


def test_the_message_ends_a_gap_before_the_first_visible_permanent_widget(bar):
    path, mode = with_labels(bar)
    assert bar.permanent == [path, mode]
    assert 6 < path.x() < mode.x()
    assert bar.message_rect() == QRect(6, 0, path.x() - GAP - 6, 24)
    path.hide()
    QApplication.processEvents()
    assert bar.message_rect() == QRect(6, 0, mode.x() - GAP - 6, 24)  # a hidden widget leaves its room


def test_a_bar_too_narrow_leaves_the_message_no_room_rather_than_less(bar):
    bar.resize(GAP, 24)
    assert bar.message_rect() == QRect(6, 0, 0, 24)


def test_a_long_message_is_painted_cut_to_its_room_and_nothing_once_cleared(bar):
    with_labels(bar)
    bar.showMessage(LONG)
    bar.grab()
    shown, rect = bar.painted
    assert rect == bar.message_rect()
    assert shown.endswith("…") and LONG.startswith(shown[:-1]) and shown != LONG
    assert bar.fontMetrics().horizontalAdvance(shown) <= rect.width()
    bar.clearMessage()
    bar.grab()
    assert bar.painted == ("", QRect())
