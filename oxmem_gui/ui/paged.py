"""A table model that loads its rows a page at a time from the store, off the GUI thread.

Qt asks ``canFetchMore``/``fetchMore`` as the view scrolls; ``fetchMore`` starts an operation and the rows are
inserted when it finishes, so a million-row table opens with one page. ``reload`` re-reads the rows loaded so
far (after another program wrote) and reports back so the view can restore its selection and scroll position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from ..core.browse import PAGE
from .context import StoreContext, gone
from .table_model import Index, RowsModel


class PagedTableModel(RowsModel):
    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._exhausted = True
        self._loading = False
        self._generation = 0

    # -- to implement -------------------------------------------------------------------------------

    def active(self) -> bool:
        """Whether there is anything to load (a store, a selected session…)."""
        return self.ctx.store is not None

    async def page(self, after: Any, limit: int) -> list[Any]:
        raise NotImplementedError

    def cursor(self, row: Any) -> Any:
        """The keyset key after which the next page starts."""
        raise NotImplementedError

    def display(self, row: Any, column: int) -> Any:
        raise NotImplementedError

    def extra(self, row: Any, column: int, role: int) -> Any:
        return None

    def on_rows_loaded(self, first: int, last: int) -> None:
        """Hook: the rows ``first..last`` were just inserted."""

    # -- Qt -----------------------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.display(row, index.column())
            return None if value is None else str(value)
        return self.extra(row, index.column(), role)

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: N802, B008
        return not parent.isValid() and not self._exhausted and not self._loading and self.active()

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: N802, B008
        if not self.canFetchMore(parent):
            return
        self._load(self.cursor(self.rows[-1]) if self.rows else None, PAGE, replace=False)

    # -- loading ------------------------------------------------------------------------------------

    def restart(self) -> None:
        """Empty the model and load its first page."""
        self._generation += 1
        self.beginResetModel()
        self.rows = []
        self._loading = False
        self._exhausted = not self.active()
        self.endResetModel()
        self.fetchMore()

    def reload(self, done: Callable[[], None] | None = None) -> None:
        """Re-read as many rows as are loaded (at least a page), replacing them; then call ``done``."""
        if not self.active():
            self.restart()
            return
        self._load(None, max(PAGE, len(self.rows)), replace=True, done=done)

    def _load(self, after: Any, limit: int, replace: bool, done: Callable[[], None] | None = None) -> None:
        self._loading = True
        generation = self._generation

        def loaded(rows: list[Any]) -> None:
            if generation != self._generation:
                return
            self._loading = False
            self._exhausted = len(rows) < limit
            if replace:
                self.beginResetModel()
                self.rows = list(rows)
                self.endResetModel()
                if rows:
                    self.on_rows_loaded(0, len(rows) - 1)
            elif rows:
                first = len(self.rows)
                self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
                self.rows.extend(rows)
                self.endInsertRows()
                self.on_rows_loaded(first, first + len(rows) - 1)
            if done:
                done()

        def failed(exc: Exception) -> bool:
            if generation == self._generation:
                self._loading = False
                self._exhausted = True
            return gone(exc)

        self.ctx.run(lambda: self.page(after, limit), on_done=loaded, on_error=failed)
