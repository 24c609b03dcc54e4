"""Tags as chips: an editor that normalizes as you type and completes from used tags, and a delegate that
paints a list's tags as chips."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, QSize, QStringListModel, Qt, Signal
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QCompleter,
    QHBoxLayout,
    QLineEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QWidget,
)

from ...core.tags import MAX_TAG_CHARS, MAX_TAGS, normalize_tags

TAGS_ROLE = Qt.ItemDataRole.UserRole + 10


class TagEditor(QWidget):
    """Chips for the current tags (click × to remove) and a line edit that adds one on Enter or comma.

    Typing is normalized as SPEC §7 says: lowercase, at most 64 characters; a duplicate is not added; at most
    16 tags. ``tags_changed`` fires after every change.
    """

    tags_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None, placeholder: str = "add a tag…") -> None:
        super().__init__(parent)
        self._tags: list[str] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self.input = QLineEdit(self)
        self.input.setPlaceholderText(placeholder)
        self.input.setMaxLength(MAX_TAG_CHARS + 1)
        self.input.textEdited.connect(self._normalize_typing)
        self.input.returnPressed.connect(self._commit_input)
        self._completions = QStringListModel(self)
        completer = QCompleter(self._completions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.activated.connect(lambda text: (self.input.setText(text), self._commit_input()))
        self.input.setCompleter(completer)
        self._layout.addWidget(self.input, 1)

    def tags(self) -> list[str]:
        return list(self._tags)

    def set_tags(self, tags: list[str]) -> None:
        self._tags = normalize_tags(tags)
        self._rebuild()

    def set_completions(self, tags: list[str]) -> None:
        self._completions.setStringList(tags)

    def _normalize_typing(self, text: str) -> None:
        if "," in text:
            for part in text.split(",")[:-1]:
                self._add(part)
            text = text.split(",")[-1]
        normalized = text.lstrip().lower()[:MAX_TAG_CHARS]
        if normalized != text:
            self.input.setText(normalized)

    def _commit_input(self) -> None:
        self._add(self.input.text())
        self.input.clear()

    def _add(self, text: str) -> None:
        tags = normalize_tags([*self._tags, text])
        if tags != self._tags and len(self._tags) < MAX_TAGS:
            self._tags = tags
            self._rebuild()
            self.tags_changed.emit(self.tags())

    def remove(self, tag: str) -> None:
        if tag in self._tags:
            self._tags.remove(tag)
            self._rebuild()
            self.tags_changed.emit(self.tags())

    def _rebuild(self) -> None:
        while self._layout.count() > 1:
            item = self._layout.takeAt(0)
            item.widget().deleteLater()
        for i, tag in enumerate(self._tags):
            chip = QToolButton(self)
            chip.setText(f"{tag}  ×")
            chip.setToolTip(f"remove “{tag}”")
            chip.setObjectName("tagChip")
            chip.setAutoRaise(False)
            chip.clicked.connect(lambda _=False, t=tag: self.remove(t))
            self._layout.insertWidget(i, chip)


class TagChipDelegate(QStyledItemDelegate):
    """Paints the list in ``TAGS_ROLE`` as rounded chips."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        tags = index.data(TAGS_ROLE) or []
        self.initStyleOption(option, index)
        option.text = ""
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = option.fontMetrics
        x = option.rect.x() + 4
        height = metrics.height() + 2
        y = option.rect.y() + (option.rect.height() - height) // 2
        palette = option.palette
        for tag in tags:
            width = metrics.horizontalAdvance(tag) + 12
            if x + width > option.rect.right():
                painter.setPen(palette.color(QPalette.ColorRole.Text))
                painter.drawText(QRect(x, y, 20, height), Qt.AlignmentFlag.AlignVCenter, "…")
                break
            rect = QRect(x, y, width, height)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(palette.color(QPalette.ColorRole.AlternateBase).darker(112))
            painter.drawRoundedRect(rect, height / 2, height / 2)
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, tag)
            x += width + 4
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802 - Qt's name
        tags = index.data(TAGS_ROLE) or []
        metrics = option.fontMetrics
        return QSize(sum(metrics.horizontalAdvance(t) + 16 for t in tags) + 8, metrics.height() + 8)
