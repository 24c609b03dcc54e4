"""Month, week and agenda views of a schedule calendar (painted; the data comes from ``core.calendar``), and the
list of one day's every entry that a cell's "+N more" opens."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QHelpEvent, QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QToolTip,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.api import CalendarItem, CellLine, by_day, by_hour, cell_lines
from ..widgets import fitted, plural, tab_leaves

SCHEDULE_COLORS = [
    "#3b82c4",
    "#e08a2c",
    "#2e8b57",
    "#9b59b6",
    "#c0392b",
    "#16a085",
    "#d35400",
    "#7f8c8d",
    "#8e44ad",
    "#2c3e50",
]
STATUS = {"success": ("✓", "#2e8b57"), "failed": ("✗", "#c0392b"), "cancelled": ("⊘", "#7f8c8d")}
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
#: the smallest a month or week grid gets: narrower cells elide their lines (the full text is in tooltips)
GRID_MIN_WIDTH = 300
GRID_MIN_HEIGHT = 280


def schedule_color(schedule_id: str) -> QColor:
    digest = hashlib.blake2s(schedule_id.encode(), digest_size=2).digest()
    return QColor(SCHEDULE_COLORS[int.from_bytes(digest, "big") % len(SCHEDULE_COLORS)])


def line_texts(line: CellLine, name: str, with_time: bool = True) -> list[str]:
    """A calendar line's text, longest first: ``✓ 07:30 Inbox watch``, then without the name (the colour bar
    beside it says which schedule), then without the run's mark (its colour says how the run went). A line
    with no time or count to show (a week cell's) keeps its name: the only shorter form is the name cut."""
    when = line.first.shown.strftime("%H:%M") if with_time and line.count == 1 else ""
    count = f"×{line.count}" if line.count > 1 else ""
    mark = STATUS.get(line.first.status or "", ("?", ""))[0] if line.kind == "run" else ""
    full = " ".join(part for part in (mark, when, name, count) if part)
    if not (when or count):
        return [full]
    shorter = (" ".join(part for part in (mark, when, count) if part), " ".join(part for part in (when, count) if part))
    return list(dict.fromkeys((full, *shorter)))


def item_text(item: CalendarItem, name: str) -> str:
    """One entry in full: ``08:00  Morning briefing — fires`` or ``02:30  nightly — run failed ✗``."""
    when = item.shown.strftime("%H:%M")
    if item.kind == "run":
        mark = STATUS.get(item.status or "", ("?", ""))[0]
        return f"{when}  {name} — run {item.status or 'of unknown status'} {mark}"
    return f"{when}  {name} — fires"


def line_tooltip(line: CellLine, name: str) -> str:
    """A calendar line's full text: the schedule's name, what happens and when (a folded line: how often)."""
    first = line.first
    day, at = first.shown.strftime("%a %d %b %Y"), first.shown.strftime("%H:%M")
    status = f" {first.status}" if line.kind == "run" else ""
    if line.count > 1:
        what = f"{'runs' if line.kind == 'run' else 'fires'}{status} {line.count} times on {day}, first at {at}"
    else:
        what = f"{'run' if line.kind == 'run' else 'fires'}{status} at {at} on {day}"
    return f"{name}\n{what}"


class _GridView(QWidget):
    """Shared painting of cells with lines, hit-testing, and dragging one-shot fires."""

    reschedule = Signal(str, object)  # schedule_id, new time in the display zone (aware datetime)
    picked = Signal(str)  # schedule_id
    more = Signal(object)  # the day whose "+N more" was clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[CalendarItem] = []
        self.names: dict[str, str] = {}
        self.movable: set[str] = set()  # one-shot schedules (their fire can be dragged)
        self.anchor = date.today()
        self.hits: list[tuple[QRect, CellLine]] = []
        #: the text painted on each line, in painting order (a narrow cell paints a shorter form)
        self.painted: list[str] = []
        #: where each "+N more" was painted, with its day and how many lines it stands for
        self.more_hits: list[tuple[QRect, date, int]] = []
        #: whether a one-shot's fire may be dragged to another time (False while the store refuses edits)
        self.editable = True
        self._drag: CellLine | None = None
        self._drag_at: QPoint | None = None
        self.setMouseTracking(True)
        self.setMinimumSize(GRID_MIN_WIDTH, GRID_MIN_HEIGHT)

    def set_items(self, items: list[CalendarItem], names: dict[str, str], movable: set[str]) -> None:
        self.items, self.names, self.movable = items, names, movable
        self.update()

    def _draw_lines(
        self, painter: QPainter, rect: QRect, lines: list[CellLine], day: date, with_time: bool = True
    ) -> None:
        """Paint ``lines`` in ``rect``, elided to its width; those that do not fit are counted in a "+N more" —
        on a line of its own, or (a cell with room for one line or none) as "+N" at the end of the first."""
        metrics = painter.fontMetrics()
        height = metrics.height() + 2
        room = max(0, rect.height() // height)
        inline = len(lines) > room and room <= 1
        shown = lines if len(lines) <= room else lines[:room] if inline else lines[: room - 1]
        hidden = len(lines) - len(shown)
        if inline:  # "+N" at the end of the first line
            badge = min(rect.width(), metrics.horizontalAdvance(f"+{hidden}") + 8)
            more = QRect(rect.right() - badge + 1, rect.y(), badge, min(height, max(rect.height(), 1)))
        else:  # "+N more" on the line after the last shown
            badge = 0
            more = QRect(rect.x(), rect.y() + len(shown) * height, rect.width(), height)
        y = rect.y()
        for line in shown:
            box = QRect(rect.x(), y, rect.width() - badge, height)
            color = schedule_color(line.schedule_id)
            painter.fillRect(QRect(box.x(), box.y() + 3, 4, height - 6), color)
            if line.kind == "run":
                painter.setPen(QColor(STATUS.get(line.first.status or "", ("", "#7f8c8d"))[1]))
            else:
                painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
            text = fitted(metrics, box.width() - 8, line_texts(line, self.names.get(line.schedule_id, "?"), with_time))
            painter.drawText(box.adjusted(7, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, text)
            self.hits.append((box, line))
            self.painted.append(text)
            y += height
        if not hidden:
            return
        forms = [f"+{hidden}"] if inline else [f"+{hidden} more", f"+{hidden}"]
        label = fitted(metrics, more.width() - (0 if inline else 8), forms)
        painter.setPen(self.palette().color(QPalette.ColorRole.Link))
        painter.drawText(
            more.adjusted(0 if inline else 7, 0, 0, 0),
            Qt.AlignmentFlag.AlignVCenter | (Qt.AlignmentFlag.AlignHCenter if inline else Qt.AlignmentFlag.AlignLeft),
            label,
        )
        self.painted.append(label)
        self.more_hits.append((more, day, hidden))

    def line_at(self, pos: QPoint) -> CellLine | None:
        for rect, line in self.hits:
            if rect.contains(pos):
                return line
        return None

    def more_at(self, pos: QPoint) -> date | None:
        """The day whose "+N more" is at ``pos``, or None."""
        return next((day for rect, day, _ in self.more_hits if rect.contains(pos)), None)

    def tooltip_at(self, pos: QPoint) -> str:
        """The full text of what is painted at ``pos`` (elided in a narrow cell); empty over nothing."""
        line = self.line_at(pos)
        if line is not None:
            return line_tooltip(line, self.names.get(line.schedule_id, "?"))
        for rect, day, hidden in self.more_hits:
            if rect.contains(pos):
                return f"{hidden} more on {day.strftime('%A %d %B')}: click to list all of that day"
        return ""

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def when_at(self, pos: QPoint, keep: datetime) -> datetime | None:
        raise NotImplementedError

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        day = self.more_at(event.position().toPoint())
        if day is not None:
            self.more.emit(day)
            return
        line = self.line_at(event.position().toPoint())
        if line is not None:
            self.picked.emit(line.schedule_id)
            if self.editable and line.kind == "fire" and line.count == 1 and line.schedule_id in self.movable:
                self._drag, self._drag_at = line, event.position().toPoint()
                self.setCursor(Qt.CursorShape.ClosedHandCursor)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        line, self._drag = self._drag, None
        self.unsetCursor()
        if line is None or self._drag_at is None:
            return
        pos = event.position().toPoint()
        if (pos - self._drag_at).manhattanLength() < 6:
            return
        target = self.when_at(pos, line.first.shown)
        if target is not None and target != line.first.shown:
            self.reschedule.emit(line.schedule_id, target)


class MonthView(_GridView):
    """Six weeks from the Monday on or before the first of the anchor's month."""

    def first_day(self) -> date:
        first = self.anchor.replace(day=1)
        return first - timedelta(days=first.weekday())

    def range(self) -> tuple[date, date]:
        start = self.first_day()
        return start, start + timedelta(days=42)

    def title(self) -> str:
        return self.anchor.strftime("%B %Y")

    def shorter_titles(self) -> list[str]:
        return [self.anchor.strftime("%b %Y")]

    def step(self, direction: int) -> None:
        month = self.anchor.month - 1 + direction
        self.anchor = date(self.anchor.year + month // 12, month % 12 + 1, 1)

    def _cell(self, index: int) -> QRect:
        width, top = self.width() / 7, 22
        height = (self.height() - top) / 6
        col, row = index % 7, index // 7
        return QRect(int(col * width), int(top + row * height), int(width), int(height))

    def lines_for(self, day: date) -> list[CellLine]:
        return cell_lines(by_day(self.items).get(day, []))

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        painter = QPainter(self)
        palette = self.palette()
        self.hits, self.more_hits, self.painted = [], [], []
        days = by_day(self.items)
        width = self.width() / 7
        for i, name in enumerate(WEEKDAYS):
            painter.drawText(QRect(int(i * width), 0, int(width), 20), Qt.AlignmentFlag.AlignCenter, name)
        start = self.first_day()
        bold = QFont(painter.font())
        bold.setBold(True)
        for i in range(42):
            day = start + timedelta(days=i)
            cell = self._cell(i)
            inside = day.month == self.anchor.month
            painter.fillRect(cell, palette.color(QPalette.ColorRole.Base if inside else QPalette.ColorRole.Window))
            painter.setPen(palette.color(QPalette.ColorRole.Mid))
            painter.drawRect(cell)
            painter.setPen(
                palette.color(QPalette.ColorRole.WindowText if inside else QPalette.ColorRole.PlaceholderText)
            )
            painter.setFont(bold if day == date.today() else painter.font())
            painter.drawText(
                cell.adjusted(4, 2, -4, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, str(day.day)
            )
            painter.setFont(QFont(self.font()))
            self._draw_lines(painter, cell.adjusted(3, 18, -3, -2), cell_lines(days.get(day, [])), day)
        painter.end()

    def when_at(self, pos: QPoint, keep: datetime) -> datetime | None:
        for i in range(42):
            if self._cell(i).contains(pos):
                day = self.first_day() + timedelta(days=i)
                return keep.replace(year=day.year, month=day.month, day=day.day)
        return None


class WeekView(_GridView):
    """Seven days from the Monday of the anchor's week, by hour."""

    def first_day(self) -> date:
        return self.anchor - timedelta(days=self.anchor.weekday())

    def range(self) -> tuple[date, date]:
        start = self.first_day()
        return start, start + timedelta(days=7)

    def title(self) -> str:
        start = self.first_day()
        return f"Week of {start.strftime('%d %B %Y')}"

    def shorter_titles(self) -> list[str]:
        """``23–29 Nov 2026`` (a week across months: ``30 Nov – 06 Dec 2026``), then without the year."""
        start = self.first_day()
        end = start + timedelta(days=6)
        days = f"{start:%d}–{end:%d %b}" if start.month == end.month else f"{start:%d %b} – {end:%d %b}"
        return [f"{days} {end.year}", days]

    def step(self, direction: int) -> None:
        self.anchor += timedelta(days=7 * direction)

    def _geometry(self) -> tuple[float, float, float]:
        left, top = 44, 22
        return left, top, (self.height() - top) / 24

    def _cell(self, day_index: int, hour: int) -> QRect:
        left, top, height = self._geometry()
        width = (self.width() - left) / 7
        return QRect(int(left + day_index * width), int(top + hour * height), int(width), int(height))

    def lines_for(self, day: date, hour: int) -> list[CellLine]:
        return cell_lines(by_hour(self.items).get((day, hour), []), fold_above=1)

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        painter = QPainter(self)
        palette = self.palette()
        self.hits, self.more_hits, self.painted = [], [], []
        cells = by_hour(self.items)
        start = self.first_day()
        left, top, height = self._geometry()
        for d in range(7):
            day = start + timedelta(days=d)
            header = self._cell(d, 0).adjusted(0, -22, 0, 0)
            header.setHeight(20)
            painter.setPen(palette.color(QPalette.ColorRole.WindowText))
            painter.drawText(
                header,
                Qt.AlignmentFlag.AlignCenter,
                painter.fontMetrics().elidedText(
                    f"{WEEKDAYS[d]} {day.day}", Qt.TextElideMode.ElideRight, header.width()
                ),
            )
        for hour in range(24):
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(
                QRect(0, int(top + hour * height), int(left) - 4, int(height)),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                f"{hour:02d}:00",
            )
            for d in range(7):
                cell = self._cell(d, hour)
                painter.fillRect(cell, palette.color(QPalette.ColorRole.Base))
                painter.setPen(palette.color(QPalette.ColorRole.Midlight))
                painter.drawRect(cell)
                day = start + timedelta(days=d)
                lines = cell_lines(cells.get((day, hour), []), fold_above=1)
                if lines:
                    self._draw_lines(painter, cell.adjusted(2, 0, -2, 0), lines, day, with_time=False)
        painter.end()

    def when_at(self, pos: QPoint, keep: datetime) -> datetime | None:
        for d in range(7):
            for hour in range(24):
                if self._cell(d, hour).contains(pos):
                    day = self.first_day() + timedelta(days=d)
                    return datetime.combine(day, time(hour, keep.minute), keep.tzinfo)
        return None


class AgendaView(QTreeWidget):
    """Day by day, every fire and run of the next 14 days (and the past ones in that window)."""

    picked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.anchor = date.today()
        self.items: list[CalendarItem] = []
        self.names: dict[str, str] = {}
        self.setHeaderLabels(["When", "Schedule", "What"])
        self.setRootIsDecorated(False)
        tab_leaves(self)
        self.itemClicked.connect(self._clicked)

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        schedule_id = item.data(0, Qt.ItemDataRole.UserRole)
        if schedule_id:  # (a day's heading names no schedule)
            self.picked.emit(schedule_id)

    def range(self) -> tuple[date, date]:
        return self.anchor, self.anchor + timedelta(days=14)

    def title(self) -> str:
        start, end = self.range()
        return f"{start.strftime('%d %b')} – {(end - timedelta(days=1)).strftime('%d %b %Y')}"

    def shorter_titles(self) -> list[str]:
        start, end = self.range()
        return [f"{start.strftime('%d %b')} – {(end - timedelta(days=1)).strftime('%d %b')}"]

    def step(self, direction: int) -> None:
        self.anchor += timedelta(days=14 * direction)

    def set_items(
        self,
        items: list[CalendarItem],
        names: dict[str, str],
        movable: set[str],
        describe: Callable[[str], str] = lambda sid: "",
    ) -> None:
        self.items, self.names = items, names
        self.clear()
        start, end = self.range()
        for day, day_items in sorted(by_day(items).items()):
            if not start <= day < end:  # the loaded window has a margin for other zones
                continue
            header = QTreeWidgetItem([day.strftime("%A %d %B %Y"), "", ""])
            font = header.font(0)
            font.setBold(True)
            header.setFont(0, font)
            self.addTopLevelItem(header)
            header.setFirstColumnSpanned(True)  # the day across the row: the When column stays narrow
            for line in cell_lines(day_items):
                when = line.first.shown.strftime("%H:%M") if line.count == 1 else f"×{line.count}"
                if line.kind == "run":
                    what = f"run: {line.first.status}"
                else:
                    what = "fires" if line.count == 1 else f"fires {line.count} times ({describe(line.schedule_id)})"
                row = QTreeWidgetItem([f"   {when}", names.get(line.schedule_id, "?"), what])
                for col in range(3):
                    row.setToolTip(col, row.text(col).strip())
                row.setForeground(1, schedule_color(line.schedule_id))
                if line.kind == "run":
                    row.setForeground(2, QColor(STATUS.get(line.first.status or "", ("", "#7f8c8d"))[1]))
                row.setData(0, Qt.ItemDataRole.UserRole, line.schedule_id)
                self.addTopLevelItem(row)
        for col in range(3):
            self.resizeColumnToContents(col)


class DayDialog(QDialog):
    """Every entry of one day, one per line (what a cell's "+N more" leaves out included); clicking one emits
    ``picked(schedule_id)``. Escape or Close closes it."""

    picked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.day: date | None = None
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.entries = QListWidget()
        self.entries.itemClicked.connect(self._picked)
        self.entries.itemActivated.connect(self._picked)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.entries, 1)
        layout.addWidget(buttons)
        self.resize(420, 360)

    def show_day(self, day: date, items: list[CalendarItem], names: dict[str, str]) -> None:
        """List ``items`` (those of ``day``) by time."""
        self.day = day
        title = day.strftime("%A %d %B %Y")
        self.setWindowTitle(title)
        mine = sorted((i for i in items if i.shown.date() == day), key=lambda i: (i.shown, i.kind, i.schedule_id))
        fires = sum(1 for i in mine if i.kind == "fire")
        parts = [plural(fires, "fire")] if fires else []
        if len(mine) - fires:
            parts.append(plural(len(mine) - fires, "run"))
        self.heading.setText(f"{title}: {', '.join(parts) or 'nothing'}")
        self.entries.clear()
        for item in mine:
            text = item_text(item, names.get(item.schedule_id, "?"))
            row = QListWidgetItem(text, self.entries)
            row.setToolTip(text)
            row.setData(Qt.ItemDataRole.UserRole, item.schedule_id)
            if item.kind == "run":
                row.setForeground(QColor(STATUS.get(item.status or "", ("", "#7f8c8d"))[1]))

    def texts(self) -> list[str]:
        return [self.entries.item(i).text() for i in range(self.entries.count())]

    def _picked(self, row: QListWidgetItem) -> None:
        self.picked.emit(row.data(Qt.ItemDataRole.UserRole))
