"""The schedules panel: the calendar (:class:`~.panes.CalendarPane`) beside the list and details
(:class:`~.panes.ScheduleListPane`), loaded from the store and kept in step with the selection; its writes are
:mod:`.edits`."""

from __future__ import annotations

import asyncio
import zoneinfo
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from ...core.api import Schedule, ScheduleRun, calendar_items, utc_now
from ..change_marks import HoldWhilePointed, mark_current_seen
from ..context import StoreContext, gone
from ..dialogs import Dialogs
from ..widgets import fill_with_panes, plural
from .calendar_views import DayDialog
from .dialog import ScheduleDialog
from .edits import MoveRecord, ScheduleEdits
from .model import ScheduleListModel, words
from .panes import CalendarPane, ScheduleListPane

DUE_SOON = timedelta(hours=1)
#: the widgets of the two panes that the panel shows as its own attributes
CALENDAR_WIDGETS = ("month", "week", "agenda", "views", "view_buttons", "title", "zone_mode", "undo_button")
LIST_WIDGETS = ("status_filter", "type_filter", "name_filter", "due_label", "list_view", "new_button", "edit_button",
                "pause_button", "resume_button", "delete_button", "detail_title", "cadence_view", "next_fires",
                "runs", "output", "details", "sunday_one")  # fmt: skip


class SchedulesPanel(ScheduleEdits, QWidget):
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

        self.calendar = CalendarPane()
        self.list_model = ScheduleListModel(lambda: self.now(), self)
        self.list_pane = ScheduleListPane(self.list_model)
        for name in CALENDAR_WIDGETS:
            setattr(self, name, getattr(self.calendar, name))
        for name in LIST_WIDGETS:
            setattr(self, name, getattr(self.list_pane, name))
        for view in (self.month, self.week, self.agenda):
            view.picked.connect(self.select)
        for view in (self.month, self.week):
            view.reschedule.connect(self.move_one_shot)
            view.more.connect(self.show_day)
        self.view_buttons.idClicked.connect(self.show_view)
        self.calendar.prev_button.clicked.connect(lambda: self.step(-1))
        self.calendar.next_button.clicked.connect(lambda: self.step(1))
        self.calendar.today_button.clicked.connect(self.today)
        self.zone_mode.currentIndexChanged.connect(lambda _: self.reload_calendar())
        self.undo_button.clicked.connect(self.undo)
        for signal in (
            self.status_filter.currentIndexChanged,
            self.type_filter.currentIndexChanged,
            self.name_filter.textChanged,
        ):
            signal.connect(lambda *_: self.reload())
        self.list_view.selectionModel().currentRowChanged.connect(self._row_changed)
        self.new_button.clicked.connect(self.create)
        self.edit_button.clicked.connect(self.edit)
        self.pause_button.clicked.connect(lambda: self.set_status("paused"))
        self.resume_button.clicked.connect(lambda: self.set_status("active"))
        self.delete_button.clicked.connect(self.delete)
        self.runs.itemDoubleClicked.connect(self.show_output)
        self.sunday_one.toggled.connect(self._weekday_numbering)
        self.splitter = fill_with_panes(self, self.calendar, self.list_pane, (640, 400))
        self.splitter.setChildrenCollapsible(False)

        self.timer = QTimer(self)
        self.timer.setInterval(30_000)
        self.timer.timeout.connect(self.list_model.tick)
        self.timer.start()
        ctx.opened.connect(self._opened)
        ctx.mode_changed.connect(lambda _: self._buttons())
        # what the agent wrote: marked until seen; held while the pointer is over the list (rows would move)
        self.agent_wrote = HoldWhilePointed(self.list_view, self._agent_wrote)
        ctx.external_change.connect(self.agent_wrote)
        mark_current_seen(self.list_view, self.list_model.marks, self.list_model.row)
        ctx.changed.connect(lambda kind: kind == "schedules" and self.reload())
        self.show_view(0)
        self._show_details()

    # -- state --------------------------------------------------------------------------------------

    def current_view(self) -> Any:
        return self.calendar.current_view()

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
        refused = self.ctx.require().capabilities.schedule_refusals  # actions this agent never takes
        buttons = {
            "new": self.new_button,
            "edit": self.edit_button,
            "resume": self.resume_button,
            "delete": self.delete_button,
        }
        for button, enabled, tip in states:
            action = next((a for a, b in buttons.items() if b is button and a in refused), None)
            button.setEnabled(enabled and action is None)
            button.setToolTip(f"{refused[action]}." if action else tip)

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
        self.pause_button.setText(caps.pause_label)
        if not keep:
            self.list_model.marks.forget()
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

    def _agent_wrote(self) -> None:
        self.list_model.marks.live()
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

        live = self.list_model.marks.take_live()

        def got(found: list[Schedule]) -> None:
            if store is not self.ctx.store:  # another file was opened meanwhile
                return
            self.schedules = found
            self._syncing = True
            try:
                self.list_model.set_rows(found, live)
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
        self.title.setText(view.title(), view.shorter_titles())
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
        self.list_pane.show_schedule(s, self.now())
        if s is None:
            return
        store, schedule_id = self.ctx.require(), s.schedule_id
        self.ctx.run(
            lambda: store.schedules.runs(schedule_id, 200),
            on_done=lambda runs: self._show_runs(runs, schedule_id),
            on_error=gone,
        )

    def _show_runs(self, runs: list[ScheduleRun], schedule_id: str | None = None) -> None:
        if schedule_id is not None and schedule_id != self.selected:  # another one was selected meanwhile
            return
        self.list_pane.show_runs(runs)

    def show_output(self, item: QTableWidgetItem) -> None:
        run_id = item.data(Qt.ItemDataRole.UserRole)
        store, schedule_id = self.ctx.require(), self.selected

        def got(run: ScheduleRun) -> None:
            if schedule_id != self.selected:
                return
            self.output.setPlainText(run.output or "(this run has no output)")
            self.details.setCurrentWidget(self.output)

        self.ctx.run(lambda: store.schedules.run(run_id), on_done=got)
