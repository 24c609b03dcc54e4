"""The context preview of a session (contract §8): under a token budget, which messages the agent would see, which are
dropped and which the rolling summary covers, and the summary message itself."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..rows_model import tip
from ..widgets import plural, tab_leaves
from .models import preview

WARNING_STYLE = "color: #c0392b; font-weight: bold;"


class ContextPreview(QWidget):
    """The budget (changing it asks for the preview again: ``budget.valueChanged``), what the preview found, and
    a row per message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.budget = QSpinBox(minimum=50, maximum=1_000_000, singleStep=500, value=2000, suffix=" tokens")
        self.context_warning = QLabel()
        self.context_warning.setWordWrap(True)
        self.context_warning.setStyleSheet(WARNING_STYLE)
        self.context_warning.setVisible(False)
        self.context_info = QLabel()
        self.context_info.setWordWrap(True)
        self.context_table = QTableWidget(0, 5)
        self.context_table.setHorizontalHeaderLabels(["Seq", "Status", "Tokens", "Role", "Text"])
        self.context_table.verticalHeader().setVisible(False)
        self.context_table.horizontalHeader().setStretchLastSection(True)
        self.context_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.context_table.setWordWrap(False)
        self.context_table.verticalHeader().setDefaultSectionSize(self.context_table.fontMetrics().height() + 8)
        tab_leaves(self.context_table)
        ctx_layout = QVBoxLayout(self)
        row = QHBoxLayout()
        budget_label = QLabel("&Token budget")
        budget_label.setBuddy(self.budget)
        row.addWidget(budget_label)
        row.addWidget(self.budget)
        row.addStretch(1)
        ctx_layout.addLayout(row)
        ctx_layout.addWidget(self.context_warning)
        ctx_layout.addWidget(self.context_info)
        ctx_layout.addWidget(self.context_table, 1)

    def clear(self) -> None:
        self.context_table.setRowCount(0)
        self.context_info.setText("")
        self.context_warning.setVisible(False)

    def show_preview(self, preview: Any) -> None:
        """What the agent would see under the budget: counts, a warning when over it, and each message."""
        counts = {s: sum(1 for i in preview.items if i.status == s) for s in ("included", "dropped", "summarized")}
        summary = f"summary message: {plural(preview.summary_tokens, 'token')}; " if preview.summary_message else ""
        self.context_info.setText(
            f"{preview.used:,} of {plural(preview.budget, 'token')} — {summary}"
            f"{plural(counts['included'], 'message')} included, {counts['dropped']:,} dropped, "
            f"{counts['summarized']:,} covered by the summary"
        )
        over = preview.used - preview.budget
        if over > 0:
            alone = (
                f": the summary message alone takes {plural(preview.summary_tokens, 'token')}"
                if preview.summary_tokens > preview.budget
                else ""
            )
            self.context_warning.setText(
                f"⚠ {plural(preview.used, 'token')} — {over:,} over the {preview.budget:,} budget{alone}"
            )
        self.context_warning.setVisible(over > 0)
        rows = preview.items
        colors = {"included": None, "dropped": QColor("#9a9a9a"), "summarized": QColor("#2d7fb8")}
        self.context_table.setRowCount(len(rows) + (1 if preview.summary_message else 0))
        offset = 0
        if preview.summary_message:
            cells = ["—", "summary", str(preview.summary_tokens), "system", preview.summary_message]
            for c, text in enumerate(cells):
                self.context_table.setItem(0, c, self._cell(text, c))
            offset = 1
        for r, item in enumerate(rows):
            cells = [str(item.sequence), item.status, str(item.tokens), item.role, item.text]
            for c, text in enumerate(cells):
                cell = self._cell(text, c)
                if colors[item.status] is not None:
                    cell.setForeground(QBrush(colors[item.status]))
                self.context_table.setItem(r + offset, c, cell)
        for column in range(4):
            self.context_table.resizeColumnToContents(column)

    @staticmethod
    def _cell(text: str, column: int) -> QTableWidgetItem:
        if column != 4:
            return QTableWidgetItem(text)
        cell = QTableWidgetItem(preview(text))
        cell.setToolTip(tip(text))
        return cell
