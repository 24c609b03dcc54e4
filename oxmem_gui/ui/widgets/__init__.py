"""Widgets shared by the panels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeySequence, QPainter, QPaintEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QLabel,
    QLineEdit,
    QMenu,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..words import plural as plural  # (re-exported: the panels say counts with it)

#: any item view (:func:`tab_leaves` gives back the view it was given, as its own type)
View = TypeVar("View", bound=QAbstractItemView)


def line_edit(box: QComboBox) -> QLineEdit:
    """The text field of an editable combo box."""
    field = box.lineEdit()
    assert field is not None, "the combo box is not editable"
    return field


def escape_clears(field: QLineEdit) -> QLineEdit:
    """A filter field: a clear button, and Escape empties it (emitting ``textChanged``/``textEdited``)."""
    field.setClearButtonEnabled(True)

    def clear() -> None:
        if field.text():
            field.clear()
            field.textEdited.emit("")

    shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), field)
    shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)  # the constructor's context= is not applied
    shortcut.activated.connect(clear)
    return field


class _SelectOnFocus(QObject):
    """Tabbing into a view with no current row selects its first row, rather than Qt's default of making it
    current unselected — which would show that row's details beside a list with nothing highlighted."""

    def eventFilter(self, view: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.FocusIn and isinstance(view, QAbstractItemView):
            model, selection = view.model(), view.selectionModel()
            if model is not None and selection is not None and not view.currentIndex().isValid() and model.rowCount():
                flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
                if view.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows:
                    flags |= QItemSelectionModel.SelectionFlag.Rows
                selection.setCurrentIndex(model.index(0, 0), flags)
        return False


def tab_leaves(view: View) -> View:
    """Tab moves focus out of ``view`` (to the next control) instead of from cell to cell; the arrows move
    within it. Tabbing in with nothing current selects the first row (see :class:`_SelectOnFocus`)."""
    view.setTabKeyNavigation(False)
    view.installEventFilter(_SelectOnFocus(view))
    return view


def show_editable(widgets: list[QWidget], refusal: str | None, tip: str = "") -> None:
    """Enable ``widgets`` when ``refusal`` is None, else disable them with the refusal as their tooltip
    (``tip``: the tooltip when enabled)."""
    for widget in widgets:
        widget.setEnabled(refusal is None)
        widget.setToolTip(refusal or tip)


def fill_with_panes(
    panel: QWidget,
    left: QWidget,
    right: QWidget,
    sizes: tuple[int, int],
    orientation: Qt.Orientation = Qt.Orientation.Horizontal,
) -> QSplitter:
    """Lay ``left`` and ``right`` out in a splitter filling ``panel`` (panels save the splitter's state)."""
    split = QSplitter(orientation)
    split.addWidget(left)
    split.addWidget(right)
    split.setSizes(list(sizes))
    QVBoxLayout(panel).addWidget(split)
    return split


def fitted(metrics: QFontMetrics, width: int, texts: Sequence[str]) -> str:
    """The first of ``texts`` (longest and most telling first) that fits in ``width`` pixels; when none does,
    the last cut with "…"."""
    for text in texts:
        if metrics.horizontalAdvance(text) <= width:
            return text
    return metrics.elidedText(texts[-1] if texts else "", Qt.TextElideMode.ElideRight, max(width, 0))


class ElidedLabel(QLabel):
    """One line of text fitted to the width the layout gives it: the text, else the first of its shorter forms
    that fits, else the shortest cut with "…"; the whole text is its tooltip. Its minimum width does not depend
    on the text, so long content never widens the panel holding it."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.shorter: tuple[str, ...] = ()
        self.setText(text)

    def setText(self, text: str, shorter: Sequence[str] = ()) -> None:  # noqa: N802 - Qt's name
        """Show ``text``, or where it does not fit the first of ``shorter`` that does."""
        self.shorter = tuple(shorter)
        super().setText(text)
        self.setToolTip(text)

    def shown(self) -> str:
        """What is painted at the current width."""
        return fitted(self.fontMetrics(), self.contentsRect().width(), (self.text(), *self.shorter))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(0, super().sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.drawText(
            self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), self.shown()
        )


def fit_columns(view: QTableView, columns: range | tuple[int, ...], widest: int | None = None) -> None:
    """Size ``columns`` to their content, at most ``widest`` pixels (a cut cell's tooltip holds it whole),
    whenever a model's first rows arrive (the last column stretches)."""
    model = view.model()

    def fit(*_: Any) -> None:
        if model.rowCount() <= 250:
            for column in columns:
                view.resizeColumnToContents(column)
                if widest is not None and view.columnWidth(column) > widest:
                    view.setColumnWidth(column, widest)

    model.rowsInserted.connect(fit)
    model.modelReset.connect(fit)
    fit()


#: opens a table's *Columns* menu (:class:`ColumnChooser`) from the keyboard
COLUMNS_KEY = "Ctrl+Shift+C"


class ColumnChooser(QObject):
    """Which of ``view``'s columns show. Those in ``hidden`` start hidden, so the text people come to read keeps
    the width; the *Columns* menu shows or hides each column but those in ``fixed`` (always shown, or shown by the
    panel itself). The menu opens from the header (right-click) and, unless ``own_menu`` (the view has a context
    menu of its own), as the view's context menu; from the keyboard, :data:`COLUMNS_KEY` in the view opens it (and
    so do the menu key or Shift+F10, unless ``own_menu``). ``changed(column, shown)`` follows each choice."""

    changed = Signal(int, bool)

    def __init__(
        self, view: QTableView, hidden: Iterable[int] = (), fixed: Iterable[int] = (), own_menu: bool = False
    ) -> None:
        super().__init__(view)
        self.view = view
        self.fixed = frozenset(fixed)
        for column in hidden:
            view.setColumnHidden(column, True)
        #: the *Columns* menu, its entries made afresh each time it opens (a heading can change with the file)
        self.menu = QMenu("Columns", view)
        self.menu.aboutToShow.connect(self._fill)
        header = view.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(lambda point: self.popup(header.mapToGlobal(point)))
        if not own_menu:
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(lambda point: self.popup(view.viewport().mapToGlobal(point)))
        key = QShortcut(QKeySequence(COLUMNS_KEY), view)
        key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # (the constructor's context is not applied)
        key.activated.connect(self._popup_at_current)

    def hidden(self) -> list[int]:
        """The columns the menu offers that are hidden now (what the window keeps between launches)."""
        return [c for c, _ in self.offered() if self.view.isColumnHidden(c)]

    def hide_only(self, columns: Iterable[object]) -> None:
        """Show every column the menu offers but ``columns`` (as kept: numbers, or their text); anything else
        in ``columns`` is ignored."""
        wanted = {int(c) for c in columns if str(c).isdigit()}
        for column, _ in self.offered():
            self.view.setColumnHidden(column, column in wanted)

    def offered(self) -> list[tuple[int, str]]:
        """The columns the menu offers, ``(column, heading)``, in the model's order."""
        model = self.view.model()
        return [
            (c, str(model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)))
            for c in range(model.columnCount())
            if c not in self.fixed
        ]

    def _fill(self) -> None:
        self.menu.clear()
        for column, heading in self.offered():
            action = self.menu.addAction(heading)
            action.setCheckable(True)
            action.setChecked(not self.view.isColumnHidden(column))
            action.toggled.connect(lambda shown, c=column: self.show_column(c, shown))

    def show_column(self, column: int, shown: bool) -> None:
        """Show or hide ``column`` (one never sized gets the width of its content)."""
        self.view.setColumnHidden(column, not shown)
        if shown and self.view.columnWidth(column) < self.view.horizontalHeader().minimumSectionSize():
            self.view.resizeColumnToContents(column)
        self.changed.emit(column, shown)

    def popup(self, at: QPoint) -> None:
        self.menu.popup(at)

    def _popup_at_current(self) -> None:
        cell = self.view.visualRect(self.view.currentIndex())
        self.popup(self.view.viewport().mapToGlobal(cell.bottomLeft() if cell.isValid() else QPoint(0, 0)))
