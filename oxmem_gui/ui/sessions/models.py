"""The session browser's table models, loaded a page at a time: sessions (with their counts), a session's events
(what each says, in a line) and its chunks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont

from ...core.api import ChunkRow, Event, PayloadNotIndexable, SessionRow, SessionStats, extract_text, normalize
from ..context import StoreContext
from ..paged import PagedTableModel
from ..rows_model import tip

ID_ROLE = Qt.ItemDataRole.UserRole + 1


def preview(text: str, width: int = 160) -> str:
    text = normalize(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def short_id(session_id: str, keep: int = 8) -> str:
    """An id of more than 20 characters as its first and last ``keep``, so ids that share a prefix (the uuids of
    one agent's conversations) stay apart; the whole id is in the tooltip and what is copied."""
    return session_id if len(session_id) <= 20 else f"{session_id[:keep]}…{session_id[-keep:]}"


class SessionsModel(PagedTableModel):
    COLUMNS = ("Session", "Updated", "Events", "Chunks", "Last seq", "Created")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.filter = ""
        self.stats: dict[str, Any] = {}

    async def page(self, after: Any, limit: int) -> list[SessionRow]:
        return await self.ctx.require().sessions_page(after, limit, self.filter or None)

    def cursor(self, row: SessionRow) -> tuple[str, str]:
        return (row.updated_at, row.session_id)

    def key(self, row: SessionRow) -> str:
        return row.session_id  # its time moves when the agent writes to it

    def display(self, row: SessionRow, column: int) -> Any:
        if column == 0:  # what a person tells rows apart by first (channel · sender · started), then the id, short
            short = [str(v) for v in row.details.values() if v not in (None, "") and len(str(v)) <= 24]
            if not short:
                return row.session_id
            started = row.created_at[:16].replace("T", " ")
            label = " · ".join([*short, started] if started else short)
            if len(row.session_id) <= 20:  # a name the program gave (a thread's): it comes first
                return f"{row.session_id}  ·  {label}"
            return f"{label}  ·  {short_id(row.session_id)}"
        if column in (1, 5):
            return {1: row.updated_at[:16], 5: row.created_at[:16]}[column]
        stats = self.stats.get(row.session_id)
        if stats is None:
            return "…"
        return {2: f"{stats.event_count:,}", 3: f"{stats.chunk_count:,}", 4: stats.last_sequence}[column]

    def full(self, row: SessionRow, column: int) -> str:
        if column == 0:
            return row.session_id
        if column in (1, 5):
            return row.updated_at if column == 1 else row.created_at
        return super().full(row, column)

    def extra(self, row: SessionRow, column: int, role: int) -> Any:
        if role == ID_ROLE:
            return row.session_id
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (2, 3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            details = "".join(f"\n{k}: {v}" for k, v in row.details.items() if v not in (None, ""))
            return tip(row.session_id + (f"\nagent: {row.agent_identity}" if row.agent_identity else "") + details)
        return None

    def on_rows_loaded(self, first: int, last: int, live: bool = False) -> None:
        """Read the rows' counts; in a live reload, a session whose counts moved is marked (its time has whole
        seconds, so its row alone may not show that the agent wrote to it)."""
        ids = [r.session_id for r in self.rows[first : last + 1]]
        generation = self._generation

        def got(stats: dict[str, SessionStats]) -> None:
            if generation != self._generation:
                return
            if live:
                for session_id, now in stats.items():
                    if session_id in self.stats and self.stats[session_id] != now:
                        self.marks.mark(session_id)
            self.stats.update(stats)
            for i, row in enumerate(self.rows):
                if row.session_id in stats:
                    self.dataChanged.emit(self.index(i, 2), self.index(i, 4))

        self.ctx.run(lambda: self.ctx.require().session_stats(ids), on_done=got)

    def set_filter(self, text: str) -> None:
        self.filter = text.strip()
        self.restart()

    def hides(self, session_id: str) -> bool:
        """Whether the filter certainly leaves ``session_id`` out (it keeps ids containing it, ignoring case)."""
        return bool(self.filter) and self.filter.casefold() not in session_id.casefold()


def tool_names(payload: Any) -> list[str]:
    """The names of the tools a message calls (none when it calls none)."""
    calls = payload.get("tool_calls") if isinstance(payload, dict) else None
    return [c["name"] for c in calls or [] if isinstance(c, dict) and isinstance(c.get("name"), str)]


def describe_event(event: Event) -> tuple[str, str, str]:
    """``(role, source, text)`` for the events table; a payload that is not a message says so.

    A tool call starts with "→ tool NAME": alone, "→ tool NAME arguments {…}"; with text,
    "→ tool NAME — TEXT" followed by the arguments (names joined by ", " for several calls). A tool's output
    starts with "← "."""
    try:
        extracted = extract_text(event.payload)
    except PayloadNotIndexable as exc:
        return "?", "not indexed", f"⚠ not indexed: {exc}"
    text = extracted.text
    if extracted.source == "assistant_tool_call":
        names = tool_names(event.payload)
        content = event.payload.get("content") or ""
        content = content.strip()
        if content or len(names) > 1:
            calls = text[len(content) :].lstrip("\n")
            text = f"→ tool {', '.join(names)} — " + (f"{content}\n{calls}" if content else calls)
        else:
            text = "→ " + text
    elif extracted.source == "tool_output":
        text = "← " + text
    return extracted.role, extracted.source, text


class EventsModel(PagedTableModel):
    COLUMNS = ("Seq", "Role", "Source", "Time", "Text")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.session_id: str | None = None

    def active(self) -> bool:
        return self.ctx.store is not None and self.session_id is not None

    async def page(self, after: Any, limit: int) -> list[Event]:
        session = self.session_id
        return await self.ctx.require().events_page(session, after, limit) if session is not None else []

    def cursor(self, row: Event) -> int:
        return row.sequence

    def display(self, row: Event, column: int) -> Any:
        if column == 0:
            return row.sequence
        if column == 3:
            return self.short_time(row.created_at)
        role, source, text = describe_event(row)
        return (role, source, preview(text))[{1: 0, 2: 1, 4: 2}[column]]

    def short_time(self, stamp: str) -> str:
        """An event's time to the minute, as short as the events loaded allow (the Text column keeps the width):
        the clock alone while they are all of one day, with month and day while of one year, else whole (the
        tooltip and the line above the JSON have it whole)."""
        stamp = stamp[:16]
        first, last = (self.rows[0].created_at, self.rows[-1].created_at) if self.rows else (stamp, stamp)
        if first[:10] == last[:10] == stamp[:10]:
            return stamp[11:]
        if first[:4] == last[:4] == stamp[:4]:
            return stamp[5:]
        return stamp

    def full(self, row: Event, column: int) -> str:
        if column == 3:
            return row.created_at
        if column == 4:
            return describe_event(row)[2]
        return super().full(row, column)

    def extra(self, row: Event, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and column in (1, 2):  # the column may be too narrow for them
            return describe_event(row)[column - 1]
        if role == Qt.ItemDataRole.ForegroundRole and column == 4:
            kind = describe_event(row)[1]
            if kind == "not indexed":
                return QBrush(QColor("#c0392b"))
        if role == Qt.ItemDataRole.FontRole and column == 4 and describe_event(row)[1] == "assistant_tool_call":
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def row_of(self, sequence: int) -> int | None:
        return next((i for i, e in enumerate(self.rows) if e.sequence == sequence), None)

    def set_session(self, session_id: str | None) -> None:
        if session_id != self.session_id:
            self.marks.forget()  # sequences are another session's
        self.session_id = session_id
        self.restart()


class ChunksModel(PagedTableModel):
    COLUMNS = ("Chunk", "Sequences", "Model", "Dims", "Text")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.session_id: str | None = None

    def active(self) -> bool:
        return self.ctx.store is not None and self.session_id is not None

    async def page(self, after: Any, limit: int) -> list[ChunkRow]:
        session = self.session_id
        return await self.ctx.require().chunks_page(session, after, limit) if session is not None else []

    def cursor(self, row: ChunkRow) -> int:
        return row.rowid

    def display(self, row: ChunkRow, column: int) -> Any:
        seq = (
            f"{row.sequence_start}"
            if row.sequence_start == row.sequence_end
            else f"{row.sequence_start}–{row.sequence_end}"
        )
        return (row.chunk_id, seq, row.embedding_model or "— no vector", row.dimensions, preview(row.text))[column]

    def full(self, row: ChunkRow, column: int) -> str:
        return row.text if column == 4 else super().full(row, column)

    def set_session(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.restart()
