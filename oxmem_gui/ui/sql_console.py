"""The Tables panel's *Execute SQL* tab: read-only SQL on the open file, like DB Browser for SQLite's.

An editor with SQL highlighting and completion of the file's table and column names (as you type, or Ctrl+Space);
Ctrl+Enter runs. The result fills a grid a page at a time as it is scrolled (``fetchMore``: the statement runs
again for the next page, skipping the rows shown), so a million rows never freeze the window; *Cancel* (or Escape)
stops a long query with SQLite's interrupt. Each file keeps its own history of queries that ran (*History*), and
the whole result exports as CSV or JSON. SQLite itself refuses anything but reading (:mod:`~..core.store.sql_console`).
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, QStringListModel, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.api import InvalidInputError, OperationCancelled, SqlResult, TableInfo
from .cells_model import CellsModel
from .context import StoreContext
from .dialogs import Dialogs
from .widgets import tab_leaves

PAGE = 500
HISTORY = 50
KEYWORDS = (
    "select from where and or not in is null like glob between order by group having limit offset as on join left "
    "inner outer cross natural using distinct all union except intersect with recursive case when then else end "
    "exists cast collate asc desc values pragma explain query plan count sum min max avg total"
).split()
ERROR_STYLE = "color: #c0392b;"


class SqlHighlighter(QSyntaxHighlighter):
    """Keywords, strings, numbers and comments, each in its colour."""

    def __init__(self, document: Any) -> None:
        super().__init__(document)

        def fmt(color: str, bold: bool = False) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setForeground(QColor(color))
            if bold:
                f.setFontWeight(QFont.Weight.Bold)
            return f

        self.rules = [
            (re.compile(r"\b(" + "|".join(KEYWORDS) + r")\b", re.IGNORECASE), fmt("#1f4e9c", True)),
            (re.compile(r"\b\d+(\.\d+)?\b"), fmt("#8a4b08")),
            (re.compile(r"'(?:[^']|'')*'?"), fmt("#1e7b34")),
            (re.compile(r"--[^\n]*"), fmt("#7a7a7a")),
        ]

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        for pattern, form in self.rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), form)


class SqlEditor(QPlainTextEdit):
    """The query; Ctrl+Enter asks to run it, and names complete from :meth:`set_names`."""

    run_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self.setPlaceholderText("SELECT … — Ctrl+Enter runs; Ctrl+Space completes a table or column name")
        self.highlighter = SqlHighlighter(self.document())
        self.completer = QCompleter([], self)
        self.completer.setWidget(self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self.insert_completion)

    def set_names(self, names: list[str]) -> None:
        self.completer.setModel(QStringListModel(sorted(set(names), key=str.casefold), self.completer))

    def _prefix(self) -> str:
        cursor = self.textCursor()
        cursor.select(QTextCursor.SelectionType.WordUnderCursor)
        word = cursor.selectedText()
        return word if re.fullmatch(r"\w+", word or "") else ""

    def insert_completion(self, completion: str) -> None:
        cursor = self.textCursor()
        cursor.select(QTextCursor.SelectionType.WordUnderCursor)
        cursor.insertText(completion)
        self.setTextCursor(cursor)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        popup = self.completer.popup()
        keys = (Qt.Key.Key_Enter, Qt.Key.Key_Return, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
        if popup.isVisible() and event.key() in keys:
            event.ignore()  # the completer's popup takes them
            return
        control = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if control and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.run_requested.emit()
            return
        asked = control and event.key() == Qt.Key.Key_Space
        if not asked:
            super().keyPressEvent(event)
        prefix = self._prefix()
        if not asked and (len(prefix) < 2 or not event.text() or not event.text()[-1].isalnum()):
            popup.hide()
            return
        self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 8)
        self.completer.complete(rect)


class ResultModel(CellsModel):
    """The rows of a result shown so far; the view asks for more as it is scrolled (``fetchMore``)."""

    def __init__(self, fetch: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.more = False
        self.loading = False
        self._fetch = fetch

    def canFetchMore(self, parent: QModelIndex = QModelIndex()) -> bool:  # noqa: N802, B008 - Qt's name
        return not parent.isValid() and self.more and not self.loading

    def fetchMore(self, parent: QModelIndex = QModelIndex()) -> None:  # noqa: N802, B008 - Qt's name
        if self.canFetchMore(parent):
            self.loading = True
            self._fetch()


def _export(path: Path, result: SqlResult) -> Path:
    """Write ``result`` as CSV (a header row, BLOBs as hex) or, for a ``.json`` path, a list of objects."""
    rows = [[v.hex() if isinstance(v, bytes) else v for v in row] for row in result.rows]
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps([dict(zip(result.columns, r, strict=True)) for r in rows], indent=1) + "\n")
    else:
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(result.columns)
            writer.writerows(rows)
    return path


class SqlConsole(QWidget):
    """See the module's docstring."""

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, settings: QSettings | None = None, parent: Any = None):
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.settings = settings or QSettings()
        self._query: str | None = None  # the query whose result is shown
        self._generation = 0
        self.editor = SqlEditor()
        self.editor.run_requested.connect(self.run)
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the query (Ctrl+Enter in the editor)")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running query (Escape)")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.cancel)
        self.history = QComboBox()
        self.history.setToolTip("Queries that ran on this file, newest first: choosing one puts it in the editor")
        self.history.setMinimumContentsLength(24)
        self.history.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.history.activated.connect(self._recall)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("The whole result as CSV or JSON")
        self.export_button.clicked.connect(self.export)
        self.export_button.setEnabled(False)
        self.status = QLabel("Read-only: SQLite refuses anything but reading")
        self.status.setWordWrap(True)
        self.model = ResultModel(self._fetch_more, self)
        self.view = tab_leaves(QTableView())
        self.view.setModel(self.model)
        self.view.setWordWrap(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        buttons = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.history, self.export_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        top = QWidget()
        column = QVBoxLayout(top)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.editor, 1)
        column.addLayout(buttons)
        column.addWidget(self.status)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.view)
        split.setSizes([180, 320])
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        ctx.opened.connect(self._opened)

    # -- the file -------------------------------------------------------------------------------------

    def _key(self) -> str:
        store = self.ctx.store
        return f"sql_history/{store.path.resolve()}" if store is not None else ""

    def _opened(self) -> None:
        """Another file (or the same again): its history and names; a result of another file is cleared."""
        store = self.ctx.require()
        self.history.clear()
        self.history.addItems([q.replace("\n", " ") for q in self._history()])
        if not self.ctx.reopened:
            self._query = None
            self.model.reset([], [])
            self.model.more = False
            self.export_button.setEnabled(False)

        def names(tables: list[TableInfo]) -> None:
            self.editor.set_names([n for t in tables for n in (t.name, *t.columns)] + KEYWORDS)

        self.ctx.run(store.tables, on_done=names)

    def _history(self) -> list[str]:
        found = self.settings.value(self._key(), []) if self._key() else []
        return [str(q) for q in (found if isinstance(found, list) else [found])]

    def _remember(self, query: str) -> None:
        queries = [query, *(q for q in self._history() if q != query)][:HISTORY]
        self.settings.setValue(self._key(), queries)
        self.history.clear()
        self.history.addItems([q.replace("\n", " ") for q in queries])

    def _recall(self, index: int) -> None:
        queries = self._history()
        if 0 <= index < len(queries):
            self.editor.setPlainText(queries[index])
            self.editor.setFocus()

    # -- running --------------------------------------------------------------------------------------

    def run(self) -> None:
        store, query = self.ctx.store, self.editor.toPlainText()
        if store is None or not query.strip():
            self._say("Type a query to run." if store is not None else "Open a file first.", error=True)
            return
        self._generation += 1
        generation = self._generation
        self.cancel_button.setEnabled(True)
        self._say("Running…")

        def got(result: SqlResult) -> None:
            if generation != self._generation:
                return
            self.cancel_button.setEnabled(False)
            self._query = query
            self.model.reset(result.columns, [list(r) for r in result.rows])
            self.model.more, self.model.loading = result.more, False
            self.view.resizeColumnsToContents()
            self.export_button.setEnabled(bool(result.columns))
            self._remember(query)
            self._count()

        self.ctx.run(lambda: store.sql(query, PAGE), on_done=got, on_error=lambda exc: self._failed(exc, generation))

    def _fetch_more(self) -> None:
        store, query, generation = self.ctx.store, self._query, self._generation
        if store is None or query is None:
            self.model.loading = False
            return
        skip = self.model.rowCount()

        def got(result: SqlResult) -> None:
            if generation != self._generation or query != self._query:
                return  # another query ran meanwhile: never add its rows to this one's
            self.model.append([list(r) for r in result.rows])
            self.model.more, self.model.loading = result.more, False
            self._count()

        self.ctx.run(
            lambda: store.sql(query, PAGE, skip), on_done=got, on_error=lambda exc: self._failed(exc, generation)
        )

    def _failed(self, exc: Exception, generation: int) -> bool:
        if generation != self._generation:
            return True
        self.cancel_button.setEnabled(False)
        self.model.loading = False
        if isinstance(exc, InvalidInputError | OperationCancelled):
            self._say(str(exc)[:1].upper() + str(exc)[1:], error=isinstance(exc, InvalidInputError))
            return True
        return False

    def cancel(self) -> None:
        """Stop the running statement (SQLite's interrupt): "The statement was stopped; nothing was changed"."""
        store = self.ctx.store
        if store is not None and self.cancel_button.isEnabled():
            store.interrupt()

    def _count(self) -> None:
        rows = self.model.rowCount()
        more = " so far (scroll for more)" if self.model.more else ""
        self._say(f"{rows:,} row{'' if rows == 1 else 's'}{more}")

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(ERROR_STYLE if error else "")

    def export(self) -> None:
        store, query = self.ctx.store, self._query
        if store is None or query is None:
            return
        path = self.dialogs.save_file("Export the result", "CSV (*.csv);;JSON (*.json)", "result.csv")
        if path is None:
            return

        async def work() -> Path:
            result = await store.sql(query, 1 << 62)
            return await asyncio.to_thread(_export, Path(path), result)

        self.ctx.run(work, label="Exporting the result", on_done=lambda p: self._say(f"Exported to {p}"))
