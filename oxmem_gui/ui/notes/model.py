"""The notes list: its table model (text, tag chips, dates, an age that fades) and what its cells show in full."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QPalette

from ...core.api import Note, utc_now
from ..rows_model import RowsModel
from ..widgets import plural
from ..widgets.tags import TAGS_ROLE

NOTE_ROLE = Qt.ItemDataRole.UserRole + 2
#: a note's tooltip in the list shows at most this much of its text
TOOLTIP_CHARS = 2000


def readable(stamp: str | None) -> str:
    """An RFC 3339 time as a person reads it, to the second, in UTC (``2026-02-27 16:03:30 UTC``); text that is
    no time as it is, and "—" for none."""
    if not stamp:
        return "—"
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def age(stamp: str | None, now: datetime) -> tuple[str, float]:
    """``("3 d", days)``: how long before ``now`` an RFC 3339 time was; a time over a minute after it is
    ``("ahead", 0.0)`` (the agent's clock, or this one, is off: no clock is trusted), up to a minute ``0 min``."""
    if not stamp:
        return "—", 0.0
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "?", 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    seconds = (now - then).total_seconds()
    if seconds < -60:
        return "ahead", 0.0
    seconds = max(0.0, seconds)
    days = seconds / 86400
    for limit, size, unit in (
        (3600, 60, "min"),
        (86400, 3600, "h"),
        (86400 * 60, 86400, "d"),
        (86400 * 730, 86400 * 30.44, "mo"),
    ):
        if seconds < limit:
            return f"{int(seconds // size)} {unit}", days
    return f"{int(seconds // (86400 * 365.25))} y", days


class NotesModel(RowsModel):
    """The notes listed so far: a page at a time, the next asked of ``fetcher`` when the view scrolls to the end
    (Qt's ``canFetchMore``/``fetchMore``); ``exhausted`` once a page came back short."""

    COLUMNS = ("Note", "Tags", "Created", "Updated", "Age")

    def __init__(self, parent: Any = None, now: Callable[[], datetime] = utc_now) -> None:
        super().__init__(parent)
        #: the clock the Age column and the fading read (tests pass a fixed one)
        self.now = now
        self.exhausted = True
        self.loading = False
        #: loads the page after the last note and hands it to :meth:`append_notes`
        self.fetcher: Callable[[], None] | None = None

    @property
    def notes(self) -> list[Note]:
        return self.rows

    def key(self, row: Note) -> str:
        return row.note_id

    def set_notes(self, notes: list[Note], exhausted: bool = True, live: bool = False) -> None:
        """List ``notes`` (``live``: a re-read after another program wrote, whose changes are marked)."""
        self.exhausted, self.loading = exhausted, False
        self.marks.observe(notes, live)
        self.set_rows(notes)

    def append_notes(self, notes: list[Note], exhausted: bool) -> None:
        """Add the next page (a note already listed, moved by a change meanwhile, is not listed twice)."""
        self.exhausted, self.loading = exhausted, False
        listed = {n.note_id for n in self.rows}
        new = [n for n in notes if n.note_id not in listed]
        self.marks.remember(new)
        if new:
            self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(new) - 1)
            self.rows.extend(new)
            self.endInsertRows()

    def canFetchMore(self, parent: Any = QModelIndex()) -> bool:  # noqa: N802, B008
        return not parent.isValid() and not self.exhausted and not self.loading and self.fetcher is not None

    def fetchMore(self, parent: Any = QModelIndex()) -> None:  # noqa: N802, B008
        if self.canFetchMore(parent) and self.fetcher is not None:
            self.loading = True
            self.fetcher()

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.notes):
            return None
        note, column = self.notes[index.row()], index.column()
        marked = self.marks.data(note, column, role)
        if marked is not None:
            return marked
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return (note.content.strip().splitlines() or [""])[0]
            if column == 1:
                return ", ".join(note.tags)
            if column == 2:
                return (note.created_at or "")[:10]
            if column == 3:
                return (note.updated_at or "")[:10]
            return age(note.updated_at, self.now())[0]
        if role == TAGS_ROLE and column == 1:
            return note.tags
        if role == NOTE_ROLE:
            return note
        if role == Qt.ItemDataRole.ToolTipRole:
            return note_tooltip(note, column)
        if role == Qt.ItemDataRole.ForegroundRole:  # older notes are visibly older: they fade
            days = age(note.updated_at, self.now())[1]
            return QBrush(fading(days, QPalette().color(QPalette.ColorRole.Text)))
        return None


#: a detail that is a time oxmem's readers give (RFC 3339): shown as :func:`readable` shows one
TIME_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


def shown_detail(value: Any) -> str:
    """A detail's value in words: None as —, a truth as yes/no, a time as :func:`readable` shows it, a list one
    item after another (a record's fields as ``name value``), anything else as it prints."""
    if value is None:
        return "—"  # never, or no such
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {shown_detail(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "; ".join(shown_detail(v) for v in value) or "—"
    if isinstance(value, str) and TIME_TEXT.match(value):
        return readable(value)
    return str(value)


def detail_lines(details: dict[str, Any]) -> list[str]:
    """What another agent's format adds to a note, one line each; superseded versions listed newest first."""
    lines = []
    for key, value in details.items():
        if key == "history":
            continue
        lines.append(f"{key.replace('_', ' ')}: {shown_detail(value)}")
    history = details.get("history") or []
    if history:
        lines.append(f"{plural(len(history), 'earlier version')}:")
        for old in history:
            if isinstance(old, dict):
                when = old.get("superseded_at") or old.get("created_at") or ""
                lines.append(f"  • {old.get('value', old)}  (superseded {when})")
            else:
                lines.append(f"  • {old}")
    return lines


def fading(days: float, base: QColor) -> QColor:
    color = QColor(base)
    # the faintest, black on white, is #666666: 5.7:1, over WCAG's 4.5:1 for text
    color.setAlphaF(1.0 if days < 7 else 0.85 if days < 30 else 0.72 if days < 365 else 0.6)
    return color


def note_tooltip(note: Note, column: int) -> str:
    """The whole of what a cell of the notes list may cut: the note's text (up to ``TOOLTIP_CHARS``), all its
    tags, its full dates."""
    if column == 0:
        text = note.content
        if len(text) > TOOLTIP_CHARS:
            text = f"{text[:TOOLTIP_CHARS]}… ({len(text) - TOOLTIP_CHARS:,} more characters)"
        return text
    if column == 1:
        return ", ".join(note.tags) if note.tags else "no tags"
    return f"created {readable(note.created_at)}\nupdated {readable(note.updated_at)}"
