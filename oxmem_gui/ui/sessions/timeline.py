"""A session's versions to step through (LangGraph's checkpoints, :class:`~...core.api.TimelineReader`): the
checkpoints newest first, and the session's events as of the one selected."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.api import CheckpointInfo, Event
from ..rows_model import tip
from ..widgets import tab_leaves
from .models import describe_event, preview

CHECKPOINT_COLUMNS = ("Step", "Source", "Time", "Messages", "Changed", "Checkpoint")
EVENT_COLUMNS = ("Seq", "Role", "Text")


def checkpoint_cells(c: CheckpointInfo) -> list[str]:
    """A checkpoint's row: its step, source, time, messages, the channels it changed and its id (⚠ first when it
    has problems)."""
    changed = "?" if c.changed is None else ", ".join(c.changed) or "—"
    messages = "—" if c.messages is None else f"{c.messages:,}"
    step = "—" if c.step is None else str(c.step)
    return [("⚠ " if c.problems else "") + step, c.source or "—", c.created_at[:19].replace("T", " "), messages,
            changed, c.checkpoint_id]  # fmt: skip


def _table(columns: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    tab_leaves(table)
    return table


def _fill(table: QTableWidget, rows: list[list[str]], tips: list[str]) -> None:
    table.setRowCount(len(rows))
    for r, (cells, why) in enumerate(zip(rows, tips, strict=True)):
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(tip(why or text))
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


class TimelinePane(QWidget):
    """The checkpoints (selecting one emits :attr:`chosen` with its id) and the events as of the chosen one."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.checkpoints_table = _table(CHECKPOINT_COLUMNS)
        self.events_table = _table(EVENT_COLUMNS)
        self.events_label = QLabel()
        self._ids: list[str] = []
        self.checkpoints_table.currentCellChanged.connect(self._moved)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.events_label)
        lower_layout.addWidget(self.events_table, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.checkpoints_table)
        split.addWidget(lower)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.info)
        layout.addWidget(split, 1)

    def clear(self) -> None:
        self._ids = []
        self.info.setText("")
        self.checkpoints_table.setRowCount(0)
        self.show_events(None, [])

    def show_checkpoints(self, checkpoints: list[CheckpointInfo]) -> None:
        """The timeline, newest first; the newest is selected (its events follow through :attr:`chosen`)."""
        self._ids = [c.checkpoint_id for c in checkpoints]
        problems = sum(1 for c in checkpoints if c.problems)
        self.info.setText(
            f"{len(checkpoints):,} checkpoints, newest first — select one to see the messages as of it"
            + (f"; ⚠ {problems} with problems (hover a row)" if problems else "")
        )
        _fill(
            self.checkpoints_table,
            [checkpoint_cells(c) for c in checkpoints],
            ["\n".join(c.problems) for c in checkpoints],
        )
        if checkpoints:
            self.checkpoints_table.setCurrentCell(0, 0)

    def selected(self) -> str | None:
        row = self.checkpoints_table.currentRow()
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def _moved(self, row: int, *_: Any) -> None:
        if 0 <= row < len(self._ids):
            self.chosen.emit(self._ids[row])

    def show_events(self, checkpoint_id: str | None, events: list[Event]) -> None:
        """The events as of ``checkpoint_id`` (None: nothing chosen)."""
        self.events_label.setText(
            "" if checkpoint_id is None else f"As of checkpoint {checkpoint_id}: {len(events):,} messages"
        )
        rows = [[str(e.sequence), describe_event(e)[0], preview(describe_event(e)[2])] for e in events]
        _fill(self.events_table, rows, [describe_event(e)[2] for e in events])
