"""What the Tables panel shows, without Qt: the file's tables, the one chosen, the rows of it loaded so far, and the
words of its title. :class:`~.tables_panel.TablesPanel` is a thin view of it: it calls these coroutines (through
the store context) and redraws when the state says it changed.

The state never shows rows that no longer match the choice: a page asked for before another table was chosen, or
before the list was read again, is dropped when it arrives (``generation``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.api import TABLE_MAX_PAGE, MemoryReader, TableInfo

PAGE = 200
NO_TABLE = "Choose a table"
NO_TABLES = "This file has no tables"


def table_label(table: TableInfo) -> str:
    """How the list names a table: its kind and exact row count (``?`` when it was not counted)."""
    rows = "? rows" if table.rows is None else f"{table.rows:,} row{'s' if table.rows != 1 else ''}"
    return f"{table.name}  ({table.kind}, {rows})"


@dataclass
class TablesState:
    """The Tables panel's state. ``changed(what)`` is called after each change: ``"tables"`` (the list), ``"rows"``
    (the chosen table's rows, ``kept`` when a refresh re-read the same rows) or ``"title"``."""

    tables: list[TableInfo] = field(default_factory=list)
    current: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    more: bool = False
    title: str = NO_TABLE
    #: bumped when the list is read again or another table is chosen: a page asked for before is dropped
    generation: int = 0
    changed: Callable[[str], None] = lambda what: None

    def names(self, text: str = "") -> list[str]:
        """The tables whose name contains ``text`` (ignoring case), in the file's order."""
        needle = text.strip().casefold()
        return [t.name for t in self.tables if needle in t.name.casefold()]

    async def reload(self, store: MemoryReader, keep: bool = True) -> None:
        """Read the tables again. The chosen table stays chosen while it exists: with ``keep`` as many of its rows
        as were loaded are read again (``changed("kept")``), else its first page afresh; a table gone leaves the
        first one chosen."""
        self.generation += 1
        generation = self.generation
        tables = await store.tables()
        if generation != self.generation:
            return
        self.tables = tables
        self.changed("tables")
        names = [t.name for t in tables]
        if self.current in names and keep:
            await self._load(store, 0, min(max(PAGE, len(self.rows)), TABLE_MAX_PAGE), kept=True)
        elif self.current in names or names:
            await self.choose(store, self.current if self.current in names else names[0])
        else:
            self._show(None, [], [], False, NO_TABLES)

    async def choose(self, store: MemoryReader, name: str | None) -> None:
        """Choose ``name`` (None: none) and read its first page."""
        self.generation += 1
        self._show(name, [], [], False, NO_TABLE if name is None else f"{name}: loading…")
        if name is not None:
            await self._load(store, 0, PAGE)

    async def load_more(self, store: MemoryReader) -> None:
        """The next page of the chosen table."""
        if self.current is not None and self.more:
            await self._load(store, len(self.rows), PAGE)

    async def _load(self, store: MemoryReader, offset: int, limit: int, kept: bool = False) -> None:
        name, generation = self.current, self.generation
        assert name is not None
        page = await store.table_page(name, offset, limit)
        if name != self.current or generation != self.generation:
            return  # the choice moved on meanwhile: never show another table's rows
        rows = [tuple(r) for r in page.rows]
        if offset:
            rows = self.rows + rows
        shown = len(rows)
        counted = f"rows 1–{shown:,}" if shown > 1 else ("1 row" if shown == 1 else "no rows")
        self._show(
            name,
            list(page.columns),
            rows,
            page.more,
            f"{name}: {counted}" + (" (more to load)" if page.more else ""),
            "kept" if kept else "rows",
        )

    def _show(
        self,
        name: str | None,
        columns: list[str],
        rows: list[tuple[Any, ...]],
        more: bool,
        title: str,
        what: str = "rows",
    ) -> None:
        self.current, self.columns, self.rows, self.more, self.title = name, columns, rows, more, title
        self.changed(what)
