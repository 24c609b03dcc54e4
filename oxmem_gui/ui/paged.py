"""A table model that loads its rows a page at a time from the store, off the GUI thread.

Qt asks ``canFetchMore``/``fetchMore`` as the view scrolls; ``fetchMore`` starts an operation and the rows are
inserted when it finishes, so a million-row table opens with one page. ``reload`` re-reads the rows loaded so
far (after another program wrote) and reports back so the view can restore its selection and scroll position.
``load_until`` loads further pages until a row is found (to select a row that is not on the first page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from ..core.api import BROWSE_PAGE as PAGE
from .context import StoreContext, gone
from .rows_model import Index, RowsModel, tip

#: a cell whose text is at least this long gets a tooltip even when shown whole (the column may cut it)
TIP_FROM = 20


class PagedTableModel(RowsModel):
    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._exhausted = True
        self._loading = False
        self._generation = 0
        #: called (in order) each time a load finishes, ok or not; emptied by ``restart``
        self._waiters: list[Callable[[], None]] = []

    # -- to implement -------------------------------------------------------------------------------

    def active(self) -> bool:
        """Whether there is anything to load (a store, a selected session…)."""
        return self.ctx.store is not None

    async def page(self, after: Any, limit: int) -> list[Any]:
        raise NotImplementedError

    def cursor(self, row: Any) -> Any:
        """The keyset key after which the next page starts."""
        raise NotImplementedError

    def key(self, row: Any) -> Any:
        """What identifies a row across reloads (default: its keyset key)."""
        return self.cursor(row)

    def display(self, row: Any, column: int) -> Any:
        raise NotImplementedError

    def extra(self, row: Any, column: int, role: int) -> Any:
        return None

    def full(self, row: Any, column: int) -> str:
        """The cell's whole text (its tooltip when the cell shows less or may be cut by the column width)."""
        value = self.display(row, column)
        return "" if value is None else str(value)

    def on_rows_loaded(self, first: int, last: int, live: bool = False) -> None:
        """Hook: the rows ``first..last`` were just inserted or changed (``live``: by a re-read after another
        program wrote)."""

    # -- Qt -----------------------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        marked = self.marks.data(row, index.column(), role)
        if marked is not None:
            return marked
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.display(row, index.column())
            return None if value is None else str(value)
        value = self.extra(row, index.column(), role)
        if value is None and role == Qt.ItemDataRole.ToolTipRole:
            shown = self.display(row, index.column())
            whole = self.full(row, index.column())
            if whole and (whole != ("" if shown is None else str(shown)) or len(whole) >= TIP_FROM):
                return tip(whole)
        return value

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: N802, B008
        return not parent.isValid() and not self._exhausted and not self._loading and self.active()

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: N802, B008
        if not self.canFetchMore(parent):
            return
        self._load(self.cursor(self.rows[-1]) if self.rows else None, PAGE, replace=False)

    # -- loading ------------------------------------------------------------------------------------

    def restart(self, done: Callable[[], None] | None = None) -> None:
        """Empty the model and load its first page; then call ``done`` (at once when there is nothing to load).
        Pending ``load_until`` searches are dropped."""
        self._generation += 1
        self._waiters = []
        self.beginResetModel()
        self.rows = []
        self._loading = False
        self._exhausted = not self.active()
        self.endResetModel()
        if self._exhausted:
            if done:
                done()
            return
        self._load(None, PAGE, replace=False, done=done)

    def reload(self, done: Callable[[], None] | None = None) -> None:
        """Re-read as many rows as are loaded (at least a page), replacing them; then call ``done``."""
        if not self.active():
            self.restart(done)
            return
        self._load(None, max(PAGE, len(self.rows)), replace=True, done=done)

    def load_until(
        self, found: Callable[[Any], bool], done: Callable[[int | None], None], within: int | None = None
    ) -> None:
        """Call ``done(row)`` with the index of the first row for which ``found(row)`` is true, loading further
        pages as needed (after a load in progress finishes); ``done(None)`` when no row matches — or, with
        ``within``, when that many rows are loaded without a match. Nothing is called when the model is
        restarted meanwhile."""
        generation = self._generation

        def step() -> None:
            if generation != self._generation:
                return
            hit = next((i for i, row in enumerate(self.rows) if found(row)), None)
            if hit is not None:
                done(hit)
            elif self._loading:
                self._waiters.append(step)
            elif self._exhausted or not self.active() or (within is not None and len(self.rows) >= within):
                done(None)
            else:
                self._waiters.append(step)
                self.fetchMore()

        step()

    def _load(self, after: Any, limit: int, replace: bool, done: Callable[[], None] | None = None) -> None:
        self._loading = True
        generation = self._generation
        live = self.marks.take_live() if replace or after is None else False

        def loaded(rows: list[Any]) -> None:
            if generation != self._generation:
                return
            self._loading = False
            self._exhausted = len(rows) < limit
            if replace:
                self._replace(list(rows), live)
            elif rows:
                first = len(self.rows)
                if first:
                    self.marks.remember(rows)
                else:  # a first page: a live one marks what is new
                    self.marks.observe(rows, live)
                self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
                self.rows.extend(rows)
                self.endInsertRows()
                self.on_rows_loaded(first, first + len(rows) - 1)
            if done:
                done()
            self._wake()

        def failed(exc: Exception) -> bool:
            if generation == self._generation:
                self._loading = False
                self._exhausted = True
                self._wake()
            return gone(exc)

        self.ctx.run(lambda: self.page(after, limit), on_done=loaded, on_error=failed)

    def _replace(self, rows: list[Any], live: bool = False) -> None:
        """The rows of a reload, told to the view as what changed: nothing when they are the same; rows appended
        after the same ones, as an insertion; the same rows (by key) with other values, as those rows' data
        changing — so the view keeps its selection, scroll and column widths and repaints only what changed.
        Anything else (rows gone, new ones among them, another order) resets the model. ``on_rows_loaded`` hears
        of the rows that changed — of every row in a ``live`` reload, since what rows do not carry (a session's
        counts) may have changed too."""
        self.marks.observe(rows, live)
        old = self.rows
        same = 0
        while same < min(len(old), len(rows)) and old[same] == rows[same]:
            same += 1
        changed: tuple[int, int] | None = None
        if same == len(old) and len(rows) >= len(old):
            if len(rows) > len(old):
                self.beginInsertRows(QModelIndex(), len(old), len(rows) - 1)
                self.rows = rows
                self.endInsertRows()
                changed = (len(old), len(rows) - 1)
        elif len(rows) == len(old) and all(self.key(a) == self.key(b) for a, b in zip(old, rows, strict=True)):
            last = max(i for i in range(len(rows)) if old[i] != rows[i])
            self.rows = rows
            self.dataChanged.emit(self.index(same, 0), self.index(last, self.columnCount() - 1))
            changed = (same, last)
        else:
            self.beginResetModel()
            self.rows = rows
            self.endResetModel()
            changed = (0, len(rows) - 1) if rows else None
        if live and rows:
            changed = (0, len(rows) - 1)
        if changed is not None:
            self.on_rows_loaded(*changed, live=live)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter()
