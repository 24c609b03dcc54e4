"""What another program (the agent) added or changed while the inspector showed it, marked until the user has
seen it.

A list model owns a :class:`ChangeMarks`. Every load it shows is observed: a row whose key is new, or whose value
differs from the last one shown, is *unseen* — but only in a load that started after the panel said :meth:`live`
(a re-read after another program wrote; the load takes the word with :meth:`take_live` as it starts), never the
first load, a next page, or a re-read after the user's own edit. A row stops
being unseen when it becomes the current row of its view (:func:`mark_current_seen`), or when the user marks
every change seen. Unseen rows get a dot and a tint; the count goes to the panel's entry in the side list.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView

_NONE = object()
#: the tint of an unseen row, and the colour of its dot
TINT = QColor(255, 229, 138, 90)
DOT = QColor("#2f7fd0")


def _dot() -> QIcon:
    pixmap = QPixmap(10, 10)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(DOT)
    painter.drawEllipse(1, 1, 8, 8)
    painter.end()
    return QIcon(pixmap)


class ChangeMarks:
    """The unseen rows of one list (see the module's docstring). ``key(row)`` identifies a row across loads;
    ``changed()`` is called whenever the number of unseen rows may have changed."""

    def __init__(self, key: Callable[[Any], Hashable], changed: Callable[[], None]) -> None:
        self.key = key
        self.changed = changed
        self.shown: dict[Hashable, Any] = {}  # key → the row as last shown
        self.unseen: set[Hashable] = set()
        self._live = False
        self._icon: QIcon | None = None

    def live(self) -> None:
        """The next load to start is a re-read after another program wrote: what it adds or changes is marked."""
        self._live = True

    def take_live(self) -> bool:
        """Whether the load starting now is a live one (it takes the word: the next is not)."""
        live, self._live = self._live, False
        return live

    def observe(self, rows: Iterable[Any], live: bool) -> None:
        """A load (a first one, or a re-read) was shown: remember its rows; in a live one, mark those new or
        changed."""
        before = len(self.unseen)
        for row in rows:
            key = self.key(row)
            if live and self.shown.get(key, _NONE) != row:
                self.unseen.add(key)
            self.shown[key] = row
        if len(self.unseen) != before:
            self.changed()

    def mark(self, key: Hashable) -> None:
        """A change the rows themselves do not show (a session's counts): ``key``'s row is unseen."""
        if key not in self.unseen:
            self.unseen.add(key)
            self.changed()

    def remember(self, rows: Iterable[Any]) -> None:
        """A next page was shown: nothing in it is a change."""
        for row in rows:
            self.shown[self.key(row)] = row

    def forget(self) -> None:
        """Another file, user or session: nothing shown yet, nothing unseen."""
        self.shown.clear()
        self._live = False
        if self.unseen:
            self.unseen.clear()
            self.changed()

    def seen(self, row: Any) -> None:
        if row is not None and self.key(row) in self.unseen:
            self.unseen.discard(self.key(row))
            self.changed()

    def all_seen(self) -> None:
        if self.unseen:
            self.unseen.clear()
            self.changed()

    def is_unseen(self, row: Any) -> bool:
        return bool(self.unseen) and self.key(row) in self.unseen

    def data(self, row: Any, column: int, role: int) -> Any:
        """What an unseen row adds to its cells: a dot before its first cell and a tint (None: nothing)."""
        if not self.is_unseen(row):
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(TINT)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            self._icon = self._icon or _dot()
            return self._icon
        return None


def mark_current_seen(view: QAbstractItemView, marks: ChangeMarks, row_of: Callable[[int], Any]) -> None:
    """A row of ``view`` is seen once it is the current row (clicked, or reached by the keyboard) — and the
    current row stays seen when the agent changes it: its panes show the change."""

    def current(*_: Any) -> None:
        if view.currentIndex().isValid():
            marks.seen(row_of(view.currentIndex().row()))

    view.selectionModel().currentRowChanged.connect(current)
    view.model().dataChanged.connect(current)


class HoldWhilePointed(QObject):
    """Runs ``refresh`` for another program's change at once — unless the pointer is over ``view``'s rows, where
    a re-read would move them under it: then when the pointer leaves."""

    def __init__(self, view: QAbstractItemView, refresh: Callable[[], None]) -> None:
        super().__init__(view)
        self.view = view
        self.refresh = refresh
        self.pending = False
        view.viewport().installEventFilter(self)

    def __call__(self) -> None:
        if self.view.viewport().underMouse():
            self.pending = True
        else:
            self.refresh()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Leave and self.pending:
            self.pending = False
            self.refresh()
        return False
