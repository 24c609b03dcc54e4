"""The schedule calendar: every schedule's future fires and past runs on a month, week or agenda view, beside a
filterable list, the selected schedule's details, and create / edit / pause / resume / delete."""

from __future__ import annotations

import asyncio
import json
import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core import ConflictError
from ..core.schedules.cadence import (
    CADENCE_TYPES,
    OnceCadence,
    cadence_dict,
    describe,
    format_in_timezone,
    next_runs,
    parse_cadence,
    utc_now,
)
from ..core.schedules.calendar import calendar_items
from ..core.schedules.store import STATUSES, Schedule, ScheduleRun, time_or_none
from ..core.store.inputs import parse_stored
from .calendar_views import STATUS, AgendaView, DayDialog, MonthView, WeekView, schedule_color
from .context import StoreContext, gone
from .dialogs import Dialogs
from .schedule_dialog import ScheduleDialog
from .sessions import fit_columns
from .table_model import RowsModel
from .widgets import escape_clears, fill_with_panes, plural, tab_leaves
from .widgets.json_view import JsonView

ZONE_LABELS = {"local": "Local time", "utc": "UTC", "schedule": "Each schedule's zone"}
DUE_SOON = timedelta(hours=1)


def countdown(stamp: str | None, now: datetime) -> str:
    if not stamp:
        return "—"
    when = time_or_none(stamp)
    if when is None:
        return f"⚠ {stamp[:40]}"
    seconds = (when - now).total_seconds()
    if seconds < 0:
        return f"{stamp[:16].replace('T', ' ')} (due)"
    parts = []
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            parts.append(f"{int(seconds // size)} {unit}")
            seconds %= size
    return f"{stamp[:16].replace('T', ' ')} (in {' '.join(parts[:2]) or '<1 min'})"


def words(schedule: Schedule) -> str:
    """The cadence in words; a row another program wrote badly says what is wrong with it, flagged ⚠."""
    problem = schedule.problem
    return f"⚠ {problem}" if problem else describe(schedule.cadence)


def schedule_text(s: Schedule) -> str:
    """A schedule as the conflict dialog shows it."""
    last = f"{s.last_run_at or '—'} {s.last_run_status or ''}".strip()
    return (
        f"name: {s.name or '(unnamed)'}\ngoal: {s.goal}\ncadence: {words(s)}\nstatus: {s.status}\n"
        f"next run: {s.next_run_at or '—'}\nlast run: {last}\nfailures in a row: {s.consecutive_failures}\n"
        f"updated {s.updated_at}"
    )


class ScheduleListModel(RowsModel):
    COLUMNS = ("Name", "Goal", "Cadence", "Status", "Next run", "Last run", "Fails")

    def __init__(self, now: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.now = now

    @property
    def schedules(self) -> list[Schedule]:
        return self.rows

    def tick(self) -> None:
        if self.rows:
            self.dataChanged.emit(self.index(0, 4), self.index(len(self.rows) - 1, 4))

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.schedules):
            return None
        s, col = self.schedules[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell_text(s, col)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col in (0, 2) and s.problem:
                return QBrush("#c0392b")
            if col == 0:
                return QBrush(schedule_color(s.schedule_id))
            if col == 5 and s.last_run_status in STATUS:
                return QBrush(STATUS[s.last_run_status][1])
            if col == 6 and s.consecutive_failures:
                return QBrush("#c0392b")
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.cell_text(s, col)
            if col == 5 and s.last_run_at:
                text = f"last run {s.last_run_at} {s.last_run_status or ''}".strip()
            if col not in (0, 1, 2):
                return text
            problem = s.problem
            flag = f"\n⚠ written by another program in a form oxmem cannot use: {problem}" if problem else ""
            note = f"\nⓘ {s.note}" if s.note else ""
            return f"{text}\n\n{s.schedule_id}\n{s.goal}\n{s.cadence_json}{flag}{note}"
        return None

    def cell_text(self, s: Schedule, col: int) -> str:
        """A cell's text in full (the table may elide it; its tooltip holds it whole)."""
        if col == 0:
            return ("⚠ " if s.problem else "") + (s.name or "(unnamed)")
        if col == 1:
            return s.goal
        if col == 2:
            return words(s) + (" ⓘ" if s.note else "")
        if col == 3:
            return s.status
        if col == 4:
            return countdown(s.next_run_at, self.now())
        if col == 5:
            return f"{(s.last_run_at or '')[:16].replace('T', ' ')} {s.last_run_status or ''}".strip() or "—"
        return str(s.consecutive_failures)


@dataclass
class MoveRecord:
    schedule_id: str
    previous: dict
    #: the schedule as the move left it: undo refuses to overwrite a change another program made since
    after: Schedule | None = None


class SchedulesPanel(QWidget):
    """Fits in 840 × 520 whatever the calendar shows: the calendar's cells and the title elide rather than widen
    the window."""

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.now = utc_now  # tests set a fixed clock
        self.zones: list[str] = ["UTC"]
        self.schedules: list[Schedule] = []
        self.selected: str | None = None
        self.undo_move: MoveRecord | None = None
        self.last_dialog: ScheduleDialog | None = None
        self.day_dialog: DayDialog | None = None
        #: the date every calendar view shows (switching views keeps it)
        self.anchor = date.today()
        self._calendar_generation = 0
        self._syncing = False

        self.month, self.week, self.agenda = MonthView(), WeekView(), AgendaView()
        self.views = QStackedWidget()
        for view in (self.month, self.week, self.agenda):
            self.views.addWidget(view)
            view.picked.connect(self.select)
        for view in (self.month, self.week):
            view.reschedule.connect(self.move_one_shot)
            view.more.connect(self.show_day)
        self.view_buttons = QButtonGroup(self)
        view_row = QHBoxLayout()
        for i, name in enumerate(("Month", "Week", "Agenda")):
            button = QToolButton(text=name, checkable=True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.view_buttons.addButton(button, i)
            view_row.addWidget(button)
        self.view_buttons.button(0).setChecked(True)
        self.view_buttons.idClicked.connect(self.show_view)
        prev_button, today_button, next_button = QToolButton(text="◀"), QToolButton(text="Today"), QToolButton(text="▶")
        prev_button.setToolTip("Earlier")
        next_button.setToolTip("Later")
        for b in (prev_button, today_button, next_button):
            b.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        prev_button.clicked.connect(lambda: self.step(-1))
        next_button.clicked.connect(lambda: self.step(1))
        today_button.clicked.connect(self.today)
        self.title = QLabel()
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        # the title changes with the view and the date: it may be cut short, never widen the panel
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.title.setMinimumWidth(0)
        self.zone_mode = QComboBox()
        for mode, label in ZONE_LABELS.items():
            self.zone_mode.addItem(label, mode)
        self.zone_mode.setToolTip("The time zone the calendar shows times in")
        self.zone_mode.currentIndexChanged.connect(lambda _: self.reload_calendar())
        self.undo_button = QPushButton("Undo move")
        self.undo_button.clicked.connect(self.undo)
        date_row = QHBoxLayout()
        for b in (prev_button, today_button, next_button):
            date_row.addWidget(b)
        date_row.addWidget(self.title, 1)
        date_row.addWidget(self.undo_button)
        view_row.addStretch(1)
        view_row.addWidget(self.zone_mode)

        self.status_filter = QComboBox()
        self.status_filter.addItems(["any status", *STATUSES])
        self.type_filter = QComboBox()
        self.type_filter.addItems(["any cadence", *CADENCE_TYPES])
        self.name_filter = escape_clears(QLineEdit(placeholderText="name contains…"))
        self.name_filter.setMinimumWidth(80)
        for signal in (
            self.status_filter.currentIndexChanged,
            self.type_filter.currentIndexChanged,
            self.name_filter.textChanged,
        ):
            signal.connect(lambda *_: self.reload())
        self.due_label = QLabel()
        self.due_label.setWordWrap(True)
        self.due_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.list_model = ScheduleListModel(lambda: self.now(), self)
        self.list_view = QTableView()
        self.list_view.setModel(self.list_model)
        self.list_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setWordWrap(False)
        self.list_view.verticalHeader().setVisible(False)
        self.list_view.horizontalHeader().setStretchLastSection(True)
        tab_leaves(self.list_view)
        fit_columns(self.list_view, range(7))
        self.list_view.selectionModel().currentRowChanged.connect(self._row_changed)

        self.new_button = QPushButton("New…")
        self.new_button.clicked.connect(self.create)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.clicked.connect(self.edit)
        self.pause_button = QPushButton("Pause")
        self.pause_button.clicked.connect(lambda: self.set_status("paused"))
        self.resume_button = QPushButton("Resume")
        self.resume_button.clicked.connect(lambda: self.set_status("active"))
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(self.delete)

        self.detail_title = QLabel()
        self.detail_title.setWordWrap(True)
        self.detail_title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.cadence_view = JsonView()
        self.next_fires = tab_leaves(QTableWidget(0, 2))
        self.next_fires.setHorizontalHeaderLabels(["In the schedule's zone", "UTC"])
        self.next_fires.horizontalHeader().setStretchLastSection(True)
        self.next_fires.verticalHeader().setVisible(False)
        self.next_fires.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs = tab_leaves(QTableWidget(0, 4))
        self.runs.setHorizontalHeaderLabels(["Started", "Status", "Turns", "Summary"])
        self.runs.horizontalHeader().setStretchLastSection(True)
        self.runs.verticalHeader().setVisible(False)
        self.runs.setWordWrap(False)
        self.runs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs.itemDoubleClicked.connect(self.show_output)
        self.output = JsonView()
        self.output.setPlaceholderText("Double-click a run to see its full output")
        self.details = QTabWidget()
        self.details.addTab(self.runs, "Runs")
        self.details.addTab(self.next_fires, "Next 10 fires")
        self.details.addTab(self.cadence_view, "Cadence JSON")
        self.details.addTab(self.output, "Run output")
        self.details.tabBar().setExpanding(False)
        self.details.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.details.tabBar().setUsesScrollButtons(True)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.sunday_one = QCheckBox("Weekdays as the agent counts them (Sunday = 1)")
        self.sunday_one.setToolTip(
            "Newer Oxydra numbers cron weekdays 1–7 from Sunday: its `0 8 * * 1` runs on Sundays. Shows its "
            "schedules as it runs them (editing is off meanwhile)."
        )
        self.sunday_one.setVisible(False)
        self.sunday_one.toggled.connect(self._weekday_numbering)
        filters = QHBoxLayout()
        for w in (self.status_filter, self.type_filter):
            filters.addWidget(w)
        filters.addWidget(self.name_filter, 1)
        right_layout.addLayout(filters)
        right_layout.addWidget(self.sunday_one)
        right_layout.addWidget(self.due_label)
        right_layout.addWidget(self.list_view, 2)
        buttons = QHBoxLayout()
        for b in (self.new_button, self.edit_button, self.pause_button, self.resume_button, self.delete_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        right_layout.addLayout(buttons)
        right_layout.addWidget(self.detail_title)
        right_layout.addWidget(self.details, 2)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(date_row)
        left_layout.addLayout(view_row)
        left_layout.addWidget(self.views, 1)
        self.splitter = fill_with_panes(self, left, right, (640, 400))
        self.splitter.setChildrenCollapsible(False)

        self.timer = QTimer(self)
        self.timer.setInterval(30_000)
        self.timer.timeout.connect(self.list_model.tick)
        self.timer.start()
        ctx.opened.connect(self._opened)
        ctx.mode_changed.connect(lambda _: self._buttons())
        ctx.external_change.connect(self.reload)
        ctx.changed.connect(lambda kind: kind == "schedules" and self.reload())
        self.show_view(0)
        self._show_details()

    # -- state --------------------------------------------------------------------------------------

    def current_view(self) -> Any:
        return self.views.currentWidget()

    def show_view(self, index: int) -> None:
        """Show the month (0), week (1) or agenda (2) at the date the calendar is on."""
        self.views.setCurrentIndex(index)
        self.current_view().anchor = self.anchor
        self.view_buttons.button(index).setChecked(True)
        self.reload_calendar()

    def step(self, direction: int) -> None:
        view = self.current_view()
        view.step(direction)
        self.anchor = view.anchor
        self.reload_calendar()

    def today(self) -> None:
        self.go_to(self.now().astimezone().date())

    def go_to(self, day: date) -> None:
        self.anchor = day
        for view in (self.month, self.week, self.agenda):
            view.anchor = day
        self.reload_calendar()

    def selected_schedule(self) -> Schedule | None:
        return next((s for s in self.schedules if s.schedule_id == self.selected), None)

    def _buttons(self) -> None:
        """Each action enabled when it applies; while the store refuses schedule edits, all are disabled and say
        why in their tooltip."""
        s = self.selected_schedule()
        refusal = self.ctx.edit_refusal("schedules")
        actions = (self.new_button, self.edit_button, self.pause_button, self.resume_button, self.delete_button)
        for view in (self.month, self.week):
            view.editable = refusal is None
        if refusal is not None:
            for button in (*actions, self.undo_button):
                button.setEnabled(False)
                button.setToolTip(refusal)
            return
        pick = "Select a schedule first"
        status = s.status if s is not None else None
        states = (
            (self.new_button, True, "Create a schedule"),
            (self.edit_button, s is not None, "Edit the selected schedule" if s else pick),
            (
                self.pause_button,
                status == "active",
                "Stop it firing until resumed" if status == "active" else f"It is {status}" if s else pick,
            ),
            (
                self.resume_button,
                s is not None and status != "active",
                "It is active already" if status == "active" else "Let it fire again" if s else pick,
            ),
            (self.delete_button, s is not None, "Delete it with its run history" if s else pick),
            (
                self.undo_button,
                self.undo_move is not None,
                "Put the last dragged one-shot back" if self.undo_move else "Nothing was moved",
            ),
        )
        for button, enabled, tip in states:
            button.setEnabled(enabled)
            button.setToolTip(tip)

    # -- loading ------------------------------------------------------------------------------------

    def _opened(self) -> None:
        store = self.ctx.require()
        caps = store.capabilities
        keep = self.ctx.reopened  # the same file again: keep the selection, filters and calendar date
        sunday_one = keep and caps.weekday_choice and self.sunday_one.isChecked()
        if sunday_one:
            store.set_weekday_numbering("sunday-1")
        else:
            self.sunday_one.blockSignals(True)
            self.sunday_one.setChecked(False)
            self.sunday_one.blockSignals(False)
        self.sunday_one.setVisible(caps.weekday_choice)
        if not keep:
            if self.day_dialog is not None:
                self.day_dialog.hide()
            self.undo_move = None
            self.selected = None
            self.schedules = []
            self.list_model.set_rows([])
            self._show_details()
        self.ctx.run(
            lambda: asyncio.to_thread(lambda: sorted(zoneinfo.available_timezones())),
            on_done=lambda zones: setattr(self, "zones", zones),
        )
        self.reload()

    def _weekday_numbering(self, on: bool) -> None:
        store = self.ctx.store
        if store is None:
            return
        store.set_weekday_numbering("sunday-1" if on else "standard")
        self.reload()

    def reload(self) -> None:
        store = self.ctx.store
        if store is None:
            return
        status = self.status_filter.currentText()
        kind = self.type_filter.currentText()
        filters = dict(
            status=None if status == "any status" else status,
            cadence_type=None if kind == "any cadence" else kind,
            name_contains=self.name_filter.text().strip() or None,
            limit=1000,
        )

        def got(found: list[Schedule]) -> None:
            if store is not self.ctx.store:  # another file was opened meanwhile
                return
            self.schedules = found
            self._syncing = True
            try:
                self.list_model.set_rows(found)
            finally:
                self._syncing = False
            now = self.now()
            soon = [s for s in found if s.status == "active" and (t := s.next_run_time) and t - now <= DUE_SOON]
            flagged = sum(1 for s in found if s.problem)
            unreadable = f" · ⚠ {flagged} cannot be read as {'it is' if flagged == 1 else 'they are'}"
            self.due_label.setText(
                f"{plural(len(found), 'schedule')} · {len(soon)} due within the hour" + (unreadable if flagged else "")
            )
            self.select(self.selected)
            self.reload_calendar()

        async def load() -> list[Schedule]:
            found = await store.schedules.search(**filters)
            # each row's problem parses its cadence and asks croniter for a fire: worked out here, not while painting
            await asyncio.to_thread(lambda: [s.problem for s in found])
            return found

        self.ctx.run(load, on_done=got)

    def time_window(self) -> tuple[datetime, datetime]:
        """The span the calendar loads: the current view's days, a day more each side, in the display zone."""
        start, end = self.current_view().range()
        local = self.now().astimezone().tzinfo if self.zone_mode.currentData() == "local" else timezone.utc
        # a day's edges in the display zone; a margin of a day covers schedules shown in their own zones
        return (
            datetime.combine(start, time(), local) - timedelta(days=1),
            datetime.combine(end, time(), local) + timedelta(days=1),
        )

    def reload_calendar(self) -> None:
        store = self.ctx.store
        view = self.current_view()
        self.title.setText(view.title())
        self.title.setToolTip(view.title())
        if store is None:
            return
        self._calendar_generation += 1
        generation = self._calendar_generation
        start, end = self.time_window()
        schedules, mode, now = list(self.schedules), self.zone_mode.currentData(), self.now()
        local = now.astimezone().tzinfo

        async def load() -> list:
            runs = await store.schedules.runs_between(start, end)
            return await asyncio.to_thread(calendar_items, schedules, runs, start, end, now, mode, local)

        def got(items: list) -> None:
            if generation != self._calendar_generation:  # navigated on since: a newer load will show
                return
            names = {s.schedule_id: s.name or s.goal for s in schedules}
            movable = {s.schedule_id for s in schedules if s.cadence_json.find('"once"') >= 0}
            if view is self.agenda:
                descriptions = {s.schedule_id: words(s) for s in schedules}
                view.set_items(items, names, movable, lambda sid: descriptions.get(sid, ""))
            else:
                view.set_items(items, names, movable)
            if self.day_dialog is not None and self.day_dialog.isVisible():
                self._fill_day(self.day_dialog.day)

        self.ctx.run(load, on_done=got)

    def show_day(self, day: date) -> DayDialog:
        """List every entry the calendar holds on ``day`` (what its "+N more" leaves out) in a small window;
        clicking one selects its schedule."""
        if self.day_dialog is None:
            self.day_dialog = DayDialog(self)
            self.day_dialog.picked.connect(self.select)
        view = self.current_view()
        self.day_dialog.show_day(day, view.items, view.names)
        self.day_dialog.show()
        self.day_dialog.raise_()
        return self.day_dialog

    def _fill_day(self, day: date | None) -> None:
        """Refresh the open day list from what the calendar loaded, when that covers its day."""
        view = self.current_view()
        if self.day_dialog is None or day is None:
            return
        start, end = view.range()
        if start <= day < end:
            self.day_dialog.show_day(day, view.items, view.names)

    # -- selection and details ----------------------------------------------------------------------

    def select(self, schedule_id: str | None) -> None:
        """Select ``schedule_id``'s row and show its details; when it is not listed (deleted, filtered away)
        nothing is selected and the details pane is empty."""
        row = next((r for r, s in enumerate(self.schedules) if s.schedule_id == schedule_id), None)
        self.selected = schedule_id if row is not None else None
        self._syncing = True
        try:
            if row is None:
                self.list_view.selectionModel().clearSelection()
                self.list_view.setCurrentIndex(QModelIndex())
            else:
                index = self.list_model.index(row, 0)
                self.list_view.setCurrentIndex(index)
                self.list_view.selectRow(row)
                self.list_view.scrollTo(index)
        finally:
            self._syncing = False
        self._show_details()

    def _row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing:
            return
        if current.isValid() and current.row() < len(self.schedules):
            self.selected = self.schedules[current.row()].schedule_id
            self._show_details()

    def _show_details(self) -> None:
        s = self.selected_schedule()
        self._buttons()
        self.runs.setRowCount(0)
        self.next_fires.setRowCount(0)
        self.output.clear()
        if s is None:
            self.cadence_view.clear()
            self.detail_title.setText("No schedule selected: pick one in the list or on the calendar.")
            self.detail_title.setToolTip("")
            return
        self.detail_title.setText(f"Details of “{s.name or s.goal}”")
        self.detail_title.setToolTip(f"{s.name or '(unnamed)'}\n{s.goal}")
        problem = s.problem
        if problem:
            self.cadence_view.setPlainText(f"{s.cadence_json}\n\n⚠ {problem}")
            fires = []
        else:
            cadence = s.cadence
            if s.note:  # how another agent's row is read (its weekday numbering): said beside the cadence
                self.cadence_view.setPlainText(f"{s.cadence_json}\n\nⓘ {s.note}")
            else:
                self.cadence_view.show_value(cadence_dict(cadence))
            fires = next_runs(cadence, self.now(), 10) if s.status == "active" else []
        self.next_fires.setRowCount(len(fires))
        for r, moment in enumerate(fires):
            for c, text in enumerate((format_in_timezone(moment, cadence), moment.strftime("%Y-%m-%d %H:%M UTC"))):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.next_fires.setItem(r, c, item)
        store, schedule_id = self.ctx.require(), s.schedule_id
        self.ctx.run(
            lambda: store.schedules.runs(schedule_id, 200),
            on_done=lambda runs: self._show_runs(runs, schedule_id),
            on_error=gone,
        )

    def _show_runs(self, runs: list[ScheduleRun], schedule_id: str | None = None) -> None:
        if schedule_id is not None and schedule_id != self.selected:  # another one was selected meanwhile
            return
        self.runs.setRowCount(len(runs))
        for r, run in enumerate(runs):
            cells = [run.started_at[:19].replace("T", " "), run.status, str(run.turn_count), run.output_summary or ""]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(run.started_at if c == 0 else text)
                item.setData(Qt.ItemDataRole.UserRole, run.run_id)
                if c == 1 and run.status in STATUS:
                    item.setForeground(QBrush(STATUS[run.status][1]))
                self.runs.setItem(r, c, item)
        self.runs.resizeColumnsToContents()

    def show_output(self, item: QTableWidgetItem) -> None:
        run_id = item.data(Qt.ItemDataRole.UserRole)
        store, schedule_id = self.ctx.require(), self.selected

        def got(run: ScheduleRun) -> None:
            if schedule_id != self.selected:
                return
            self.output.setPlainText(run.output or "(this run has no output)")
            self.details.setCurrentWidget(self.output)

        self.ctx.run(lambda: store.schedules.run(run_id), on_done=got)

    # -- editing ------------------------------------------------------------------------------------

    def make_dialog(self, schedule: Schedule | None = None) -> ScheduleDialog:
        user = (
            schedule.user_id
            if schedule
            else (self.selected_schedule().user_id if self.selected_schedule() else "default")
        )
        self.last_dialog = ScheduleDialog(self.zones, schedule, user, self, now=self.now)
        return self.last_dialog

    def create(self, dialog: ScheduleDialog | None = None) -> None:
        store = self.ctx.writable("schedules")
        if store is None:
            return
        dialog = dialog or self.make_dialog()
        if not dialog.result() and dialog.exec() != ScheduleDialog.DialogCode.Accepted:
            return
        fields, cadence, now = dialog.fields(), dialog.cadence_dict(), self.now()

        def done(made: Schedule) -> None:
            self.selected = made.schedule_id
            self.reload()

        self.ctx.run(
            lambda: store.schedules.create(fields.pop("user_id"), fields.pop("goal"), cadence, now=now, **fields),
            label="Creating schedule",
            on_done=done,
            changes="schedules",
        )

    def _write(
        self,
        label: str,
        loaded: Schedule,
        attempt: Any,
        mine: str,
        on_done: Any = None,
    ) -> None:
        """Run ``attempt(expected)`` — a write that carries the schedule as this window loaded it. If the agent
        ran it or another program changed it since, nothing is written and the conflict dialog shows theirs vs
        mine: *Apply mine* repeats the write over what is there now; *Keep theirs* drops it."""

        def failed(exc: Exception) -> bool:
            if not isinstance(exc, ConflictError):
                return False
            theirs = exc.current
            if theirs is None:
                self.dialogs.error(str(exc))
                self.selected = None
                self.reload()
                return True
            choice = self.dialogs.conflict(
                "Schedule changed by another program",
                str(exc),
                schedule_text(theirs),
                mine,
                [("mine", "Apply mine"), ("theirs", "Keep theirs")],
            )
            if choice == "mine":
                self._write(label, theirs, attempt, mine, on_done)
            else:
                self.reload()
            return True

        self.ctx.run(lambda: attempt(loaded), label=label, on_done=on_done, on_error=failed, changes="schedules")

    def edit(self, dialog: ScheduleDialog | None = None) -> None:
        s = self.selected_schedule()
        store = self.ctx.writable("schedules")
        if s is None or store is None:
            return
        dialog = dialog or self.make_dialog(s)
        if not dialog.result() and dialog.exec() != ScheduleDialog.DialogCode.Accepted:
            return
        fields = dialog.fields()
        patch = {"name": fields["name"], "goal": fields["goal"], "notification_policy": fields["notification_policy"]}
        if parse_stored(s.cadence_json) != dialog.cadence_dict():  # a foreign row's unreadable cadence is replaced
            patch["cadence"] = dialog.cadence_dict()
        now = self.now()
        mine = (
            f"name: {patch['name'] or '(unnamed)'}\ngoal: {patch['goal']}\n"
            f"cadence: {describe(parse_cadence(dialog.cadence_dict()))}\nnotify: {patch['notification_policy']}"
        )
        self._write(
            "Saving schedule",
            s,
            lambda loaded: store.schedules.update(s.schedule_id, patch, now, expected=loaded),
            mine,
        )

    def set_status(self, status: str) -> None:
        s = self.selected_schedule()
        store = self.ctx.writable("schedules")
        if s is None or store is None:
            return
        now = self.now()
        self._write(
            "Pausing" if status == "paused" else "Resuming",
            s,
            lambda loaded: store.schedules.update(s.schedule_id, {"status": status}, now, expected=loaded),
            f"status: {status}",
        )

    def delete(self) -> None:
        s = self.selected_schedule()
        store = self.ctx.writable("schedules")
        if s is None or store is None:
            return

        def ask(count: int) -> None:
            text = (
                f"Delete the schedule “{s.name or s.goal}” ({words(s)})? Its {plural(count, 'run')} of history "
                f"{'goes' if count == 1 else 'go'} with it."
            )
            if self.dialogs.confirm("Delete schedule", text):
                self.selected = None
                self._write(
                    "Deleting schedule",
                    s,
                    lambda loaded: store.schedules.delete(s.schedule_id, expected=loaded),
                    "(deleted, with its run history)",
                )

        self.ctx.run(lambda: store.schedules.run_count(s.schedule_id), on_done=ask)

    def move_one_shot(self, schedule_id: str, when: datetime) -> None:
        """A one-shot dragged to another day or time: reschedule it (Undo move puts it back)."""
        s = next((x for x in self.schedules if x.schedule_id == schedule_id), None)
        store = self.ctx.writable("schedules")
        if s is None or store is None or s.problem or not isinstance(s.cadence, OnceCadence):
            return
        previous = json.loads(s.cadence_json)
        cadence = {"type": "once", "at": when.astimezone(timezone.utc).isoformat()}
        now = self.now()

        def done(moved: Schedule) -> None:
            self.undo_move = MoveRecord(schedule_id, previous, moved)
            self.reload()

        self._write(
            "Rescheduling",
            s,
            lambda loaded: store.schedules.update(schedule_id, {"cadence": cadence}, now, expected=loaded),
            f"cadence: {describe(parse_cadence(cadence))}",
            done,
        )

    def undo(self) -> None:
        record, store = self.undo_move, self.ctx.writable("schedules")
        if record is None or store is None:
            return
        now = self.now()

        def done(_: Any) -> None:
            self.undo_move = None
            self.reload()

        self._write(
            "Undoing the move",
            record.after,
            lambda loaded: store.schedules.update(
                record.schedule_id, {"cadence": record.previous}, now, expected=loaded
            ),
            f"cadence: {describe(parse_cadence(record.previous))}",
            done,
        )
