"""Tags as chips: an editor that normalizes as you type and completes from used tags, a layout that wraps chips
onto lines, and a delegate that paints a list's tags as chips."""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QPoint, QRect, QSize, QStringListModel, Qt, Signal
from PySide6.QtGui import QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QCompleter,
    QLabel,
    QLayout,
    QLayoutItem,
    QLineEdit,
    QSizePolicy,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QWidget,
    QWidgetItem,
)

from ...core.api import MAX_TAG_CHARS, MAX_TAGS, normalize_tags

TAGS_ROLE = Qt.ItemDataRole.UserRole + 10
#: a chip's text is cut (with “…”) past this many pixels; its tooltip holds the whole tag
CHIP_TEXT_WIDTH = 150
#: what ends a tag in the entry: a comma, or a line break of pasted text
SEPARATORS = re.compile(r"[,\r\n]")


class FlowLayout(QLayout):
    """Items left to right, wrapping onto new lines as the width runs out (its height follows its width).

    Its minimum width is its widest item's, so adding items never widens the window: they wrap. An item that
    expands horizontally (a line edit) stretches to the end of its line.
    """

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def insertWidget(self, index: int, widget: QWidget) -> None:  # noqa: N802 - Qt's style
        """``widget`` at position ``index`` (as QBoxLayout.insertWidget)."""
        self.addChildWidget(widget)
        self._items.insert(index, QWidgetItem(widget))
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """All items on one line."""
        width, height, shown = 0, 0, 0
        for item in self._items:
            if not item.isEmpty():
                hint = item.sizeHint()
                width, height, shown = width + hint.width(), max(height, hint.height()), shown + 1
        margins = self.contentsMargins()
        return QSize(
            width + self._gap * max(shown - 1, 0) + margins.left() + margins.right(),
            height + margins.top() + margins.bottom(),
        )

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        size = QSize(0, 0)
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize().expandedTo(QSize(item.sizeHint().width(), 0)))
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, apply: bool) -> int:
        """Place the items in ``rect`` (or only measure, ``apply=False``); returns the height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        right = area.x() + max(area.width(), 1)
        lines: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        x = area.x()
        for item in self._items:
            if item.isEmpty():
                continue
            size = item.sizeHint().expandedTo(item.minimumSize()).boundedTo(item.maximumSize())
            size.setWidth(min(size.width(), max(area.width(), item.minimumSize().width())))
            if lines[-1] and x + size.width() > right:
                lines.append([])
                x = area.x()
            lines[-1].append((item, size))
            x += size.width() + self._gap
        y = area.y()
        for line in lines:
            if not line:
                continue
            height = max(size.height() for _, size in line)
            x = area.x()
            for i, (item, size) in enumerate(line):
                width = size.width()
                last = i == len(line) - 1
                if last and item.expandingDirections() & Qt.Orientation.Horizontal:
                    width = max(width, min(right - x, item.maximumSize().width()))
                if apply:
                    top = y + (height - size.height()) // 2
                    item.setGeometry(QRect(QPoint(x, top), QSize(width, size.height())))
                x += width + self._gap
            y += height + self._gap
        used = y - self._gap - area.y() if any(lines) else 0
        return used + margins.top() + margins.bottom()


class TagEditor(QWidget):
    """Chips for the current tags (click × to remove) and an entry that adds tags on Enter or comma; the chips
    wrap onto lines, so many or long tags never widen the window (a long tag's chip is cut, its tooltip says it
    all).

    Typing is normalized as contract §7 says: lowercase (unless :attr:`keep_case`), at most 64 characters; a
    duplicate is not added; at most 16 tags. A comma always ends a tag; pasted text (several characters at once)
    is taken whole, so pasting ``"a, b,c"`` adds three tags. ``tags_changed`` fires after every change.
    """

    tags_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None, placeholder: str = "add a tag…") -> None:
        super().__init__(parent)
        self._tags: list[str] = []
        self._refusal: str | None = None
        self._placeholder = placeholder
        self._chips: list[QWidget] = []
        self._typed = ""
        #: tags kept as written (a format whose tags are case-sensitive: Agno's topics)
        self.keep_case = False
        self._layout = FlowLayout(self)
        self.input = QLineEdit(self)
        self.input.setPlaceholderText(placeholder)
        self.input.setMinimumWidth(self.input.fontMetrics().horizontalAdvance("add a tag…") + 24)
        self.input.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.input.textEdited.connect(self._normalize_typing)
        self.input.returnPressed.connect(self.commit)
        self._completions = QStringListModel(self)
        completer = QCompleter(self._completions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.activated.connect(lambda text: (self.input.setText(text), self.commit()))
        self.input.setCompleter(completer)
        self._layout.addWidget(self.input)
        probe = QToolButton()
        probe.setText(self._chip_text("m" * MAX_TAG_CHARS) + "  ×")
        #: the widest a chip gets; also this editor's minimum width, so its tags never widen a window
        self.chip_width = max(probe.sizeHint().width(), self.input.minimumWidth())
        probe.deleteLater()
        self.setMinimumWidth(self.chip_width)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def tags(self) -> list[str]:
        return list(self._tags)

    def pending(self) -> str:
        """Text typed in the entry and not yet made a tag (normalized; empty when there is none)."""
        return self._case(self.input.text().strip()) if self.input.isEnabled() else ""

    def _case(self, text: str) -> str:
        return text if self.keep_case else text.lower()

    def set_tags(self, tags: list[str]) -> None:
        self._tags = normalize_tags(tags, self.keep_case)
        self.input.clear()
        self._typed = ""
        self._rebuild()

    def clear(self) -> None:
        """No tags and an empty entry (``tags_changed`` fires if there were tags)."""
        had = bool(self._tags)
        self.set_tags([])
        if had:
            self.tags_changed.emit([])

    def set_completions(self, tags: list[str]) -> None:
        self._completions.setStringList(tags)

    def set_read_only(self, refusal: str | None) -> None:
        """``refusal`` None: editable; else the chips cannot be removed and the entry is disabled, with
        ``refusal`` as its tooltip."""
        self._refusal = refusal
        self._rebuild()

    def is_read_only(self) -> bool:
        return self._refusal is not None

    def commit(self) -> None:
        """Make the entry's text tags (split at commas), then empty it."""
        self._add_all(SEPARATORS.split(self.input.text()))
        self.input.clear()
        self._typed = ""

    def _normalize_typing(self, text: str) -> None:
        pasted = len(text) - len(self._typed) > 1
        parts = SEPARATORS.split(text)
        if pasted and len(parts) > 1:  # pasted text is taken whole: every part is a tag
            self._add_all(parts)
            text = ""
        elif len(parts) > 1:  # a comma typed: what comes before it is a tag, what follows is still being typed
            self._add_all(parts[:-1])
            text = parts[-1]
        normalized = self._case(text.lstrip())[:MAX_TAG_CHARS]
        if not self.input.isEnabled():  # full: what did not fit is dropped
            normalized = ""
        if normalized != self.input.text():
            self.input.setText(normalized)
        self._typed = normalized

    def _add_all(self, parts: list[str]) -> None:
        tags = normalize_tags([*self._tags, *(p[:MAX_TAG_CHARS] for p in parts)], self.keep_case)[:MAX_TAGS]
        if tags != self._tags:
            self._tags = tags
            self._rebuild()
            self.tags_changed.emit(self.tags())

    def remove(self, tag: str) -> None:
        if tag in self._tags and self._refusal is None:
            self._tags.remove(tag)
            self._rebuild()
            self.tags_changed.emit(self.tags())

    def _chip_text(self, tag: str) -> str:
        return self.fontMetrics().elidedText(tag, Qt.TextElideMode.ElideRight, CHIP_TEXT_WIDTH)

    def _rebuild(self) -> None:
        for chip in self._chips:
            self._layout.removeWidget(chip)
            chip.hide()
            chip.deleteLater()
        self._chips = []
        full = len(self._tags) >= MAX_TAGS
        self.input.setEnabled(self._refusal is None and not full)
        self.input.setPlaceholderText(
            "" if self._refusal else f"at most {MAX_TAGS} tags" if full else self._placeholder
        )
        self.input.setToolTip(self._refusal or (f"At most {MAX_TAGS} tags: remove one to add another." if full else ""))
        previous: QWidget = self.input
        for i, tag in enumerate(self._tags):
            shown = self._chip_text(tag)
            if self._refusal is None:
                chip: QWidget = QToolButton(self)
                chip.setText(f"{shown}  ×")
                chip.setToolTip(f"{tag}\n(click to remove)")
                chip.setAccessibleName(f"remove tag {tag}")
                chip.setAutoRaise(False)
                chip.clicked.connect(lambda _=False, t=tag: self.remove(t))
            else:
                chip = QLabel(shown, self)
                chip.setFrameShape(QLabel.Shape.StyledPanel)
                chip.setContentsMargins(4, 1, 4, 1)
                chip.setToolTip(tag)
            chip.setObjectName("tagChip")
            chip.setMaximumWidth(self.chip_width)
            self._layout.insertWidget(i, chip)
            chip.show()
            QWidget.setTabOrder(previous, chip)
            previous = chip
            self._chips.append(chip)
        self._layout.invalidate()
        self.updateGeometry()


#: the room around and between chips in a cell, in pixels
CHIP_GAP = 4


def chip_lines(tags: list[str], metrics: QFontMetrics, width: int) -> list[list[tuple[str, int]]]:
    """``tags`` as chips laid out on lines ``width`` pixels wide: each chip as (its text, its width); a tag
    wider than a whole line is cut with "…". No tags: no lines."""
    lines: list[list[tuple[str, int]]] = []
    room = max(width - 2 * CHIP_GAP, 24)
    x = room  # the first chip starts a line
    for tag in tags:
        text = metrics.elidedText(tag, Qt.TextElideMode.ElideRight, room - 12)
        chip = metrics.horizontalAdvance(text) + 12
        if x + chip > room:
            lines.append([])
            x = 0
        lines[-1].append((text, chip))
        x += chip + CHIP_GAP
    return lines


def chip_height(metrics: QFontMetrics, lines: int) -> int:
    """The height of a cell holding ``lines`` lines of chips."""
    return lines * (metrics.height() + 2 + CHIP_GAP) + CHIP_GAP


class TagChipDelegate(QStyledItemDelegate):
    """Paints the list in ``TAGS_ROLE`` as rounded chips, wrapped onto as many lines as the cell's width needs
    (:func:`wrap_chip_rows` makes the rows that tall)."""

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
        height = metrics.height() + 2
        lines = chip_lines(tags, metrics, option.rect.width())
        # one line sits in the middle of a plain row; more start at the top of the row grown for them
        y = option.rect.y() + max(CHIP_GAP, (option.rect.height() - chip_height(metrics, len(lines))) // 2 + CHIP_GAP)
        palette = option.palette
        for line in lines:
            x = option.rect.x() + CHIP_GAP
            for text, width in line:
                rect = QRect(x, y, width, height)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(palette.color(QPalette.ColorRole.AlternateBase).darker(112))
                painter.drawRoundedRect(rect, height / 2, height / 2)
                painter.setPen(palette.color(QPalette.ColorRole.Text))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
                x += width + CHIP_GAP
            y += height + CHIP_GAP
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802 - Qt's name
        tags = index.data(TAGS_ROLE) or []
        metrics = option.fontMetrics
        return QSize(sum(metrics.horizontalAdvance(t) + 16 for t in tags) + 8, metrics.height() + 8)


def wrap_chip_rows(view: QTableView, column: int) -> None:
    """Keep each row of ``view`` tall enough for ``column``'s chips at that column's width: when rows arrive or
    change, and when the column is resized. A row with one line of chips keeps the default height."""
    model = view.model()

    def fit(first: int = 0, last: int | None = None) -> None:
        if view.isColumnHidden(column):
            return
        metrics, width = view.fontMetrics(), view.columnWidth(column)
        plain = view.verticalHeader().defaultSectionSize()
        for row in range(first, model.rowCount() if last is None else last + 1):
            lines = len(chip_lines(model.index(row, column).data(TAGS_ROLE) or [], metrics, width))
            height = max(plain, chip_height(metrics, lines))
            if view.rowHeight(row) != height:
                view.setRowHeight(row, height)

    model.rowsInserted.connect(lambda _parent, first, last: fit(first, last))
    model.modelReset.connect(lambda: fit())
    model.layoutChanged.connect(lambda *_: fit())
    model.dataChanged.connect(lambda top, bottom, *_: fit(top.row(), bottom.row()))
    view.horizontalHeader().sectionResized.connect(lambda section, *_: section == column and fit())
