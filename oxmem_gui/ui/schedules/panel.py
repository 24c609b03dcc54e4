"""The schedules panel: the calendar (:class:`~.panes.CalendarPane`) beside the list and details
(:class:`~.panes.ScheduleListPane`), loaded from the store and kept in step with the selection; its writes are
:mod:`.edits`."""

from __future__ import annotations

import asyncio
import zoneinfo
from collections.abc import Callable
from datetime import date, datetime, timezone
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from ...core.api import CalendarItem, Schedule, ScheduleRun, calendar_items, utc_now
from ..change_marks import HoldWhilePointed, mark_current_seen
from ..context import StoreContext, gone
from ..dialogs import Dialogs
from ..widgets import fill_with_panes
from .calendar_views import DayDialog
from .dialog import ScheduleDialog
from .edits import ScheduleEdits
from .model import ScheduleListModel, words
from .panes import CalendarPane, ScheduleListPane
from .state import SchedulesState, search_filters, time_window


class SchedulesPanel(ScheduleEdits, QWidget):
    """Fits in 840 × 520 whatever the calendar shows: the calendar's cells and the title elide rather than widen
    the window."""

    def __init__(
        self,
        ctx: StoreContext,
        dialogs: Dialogs,
        parent: QWidget | None = None,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        #: ``now``: the clock the panel reads (the calendar's first day, what is due); tests pass a fixed one
        self.state = SchedulesState(now=now)
        self.last_dialog: ScheduleDialog | None = None
        self.day_dialog: DayDialog | None = None
        self._syncing = False

        self.calendar = CalendarPane()
        self.list_model = ScheduleListModel(lambda: self.state.now(), self)
        self.list_pane = ScheduleListPane(self.list_model)
        for view in (self.calendar.month, self.calendar.week, self.calendar.agenda):
            view.picked.connect(self.select)
        for view in (self.calendar.month, self.calendar.week):
            view.reschedule.connect(self.move_one_shot)
            view.more.connect(self.show_day)
        self.calendar.view_buttons.idClicked.connect(self.show_view)
        self.calendar.prev_button.clicked.connect(lambda: self.step(-1))
        self.calendar.next_button.clicked.connect(lambda: self.step(1))
        self.calendar.today_button.clicked.connect(self.today)
        self.calendar.zone_mode.currentIndexChanged.connect(lambda _: self.reload_calendar())
        self.calendar.undo_button.clicked.connect(self.undo)
        for signal in (
            self.list_pane.status_filter.currentIndexChanged,
            self.list_pane.type_filter.currentIndexChanged,
            self.list_pane.name_filter.textChanged,
        ):
            signal.connect(lambda *_: self.reload())
        self.list_pane.list_view.selectionModel().currentRowChanged.connect(self._row_changed)
        self.list_pane.new_button.clicked.connect(self.new_schedule)
        self.list_pane.edit_button.clicked.connect(self.edit)
        self.list_pane.pause_button.clicked.connect(lambda: self.set_status("paused"))
        self.list_pane.resume_button.clicked.connect(lambda: self.set_status("active"))
        self.list_pane.delete_button.clicked.connect(self.delete)
        self.list_pane.runs.itemDoubleClicked.connect(self.show_output)
        self.list_pane.sunday_one.toggled.connect(self._weekday_numbering)
        self.splitter = fill_with_panes(self, self.calendar, self.list_pane, (640, 400))
        self.splitter.setChildrenCollapsible(False)

        self.timer = QTimer(self)
        self.timer.setInterval(30_000)
        self.timer.timeout.connect(self.list_model.tick)
        self.timer.start()
        ctx.opened.connect(self._opened)
        ctx.mode_changed.connect(lambda _: self._buttons())
        # what the agent wrote: marked until seen; held while the pointer is over the list (rows would move)
        self.agent_wrote = HoldWhilePointed(self.list_pane.list_view, self._agent_wrote)
        ctx.external_change.connect(self.agent_wrote)
        mark_current_seen(self.list_pane.list_view, self.list_model.marks, self.list_model.row)
        ctx.changed.connect(self._changed)
        self.show_view(0)
        self._show_details()

    # -- state --------------------------------------------------------------------------------------

    def _changed(self, kind: str) -> None:
        if kind == "schedules":  # (this panel's own write, or another panel's)
            self.reload()

    def current_view(self) -> Any:
        return self.calendar.current_view()

    def show_view(self, index: int) -> None:
        """Show the month (0), week (1) or agenda (2) at the date the calendar is on."""
        self.calendar.views.setCurrentIndex(index)
        self.current_view().anchor = self.state.day()
        self.calendar.view_buttons.button(index).setChecked(True)
        self.reload_calendar()

    def step(self, direction: int) -> None:
        view = self.current_view()
        view.step(direction)
        self.state.anchor = view.anchor
        self.reload_calendar()

    def today(self) -> None:
        self.go_to(self.state.now().astimezone().date())

    def go_to(self, day: date) -> None:
        self.state.anchor = day
        for view in (self.calendar.month, self.calendar.week, self.calendar.agenda):
            view.anchor = day
        self.reload_calendar()

    def selected_schedule(self) -> Schedule | None:
        return self.state.selected_schedule()

    def _buttons(self) -> None:
        """Each action enabled when it applies; while the store refuses schedule edits, all are disabled and say
        why in their tooltip."""
        refusal = self.ctx.edit_refusal("schedules")
        for view in (self.calendar.month, self.calendar.week):
            view.editable = refusal is None
        store = self.ctx.store
        refused = store.capabilities.schedule_refusals if store is not None else {}  # actions this agent never takes
        lst = self.list_pane
        buttons = {"new": lst.new_button, "edit": lst.edit_button, "pause": lst.pause_button,
                   "resume": lst.resume_button, "delete": lst.delete_button,
                   "undo": self.calendar.undo_button}  # fmt: skip
        for name, (enabled, tip) in self.state.actions(refusal, refused).items():
            buttons[name].setEnabled(enabled)
            buttons[name].setToolTip(tip)

    # -- loading ------------------------------------------------------------------------------------

    def _opened(self) -> None:
        store = self.ctx.require()
        caps = store.capabilities
        keep = self.ctx.reopened  # the same file again: keep the selection, filters and calendar date
        sunday_one = keep and caps.weekday_choice and self.list_pane.sunday_one.isChecked()
        if sunday_one:
            store.set_weekday_numbering("sunday-1")
        else:
            self.list_pane.sunday_one.blockSignals(True)
            self.list_pane.sunday_one.setChecked(False)
            self.list_pane.sunday_one.blockSignals(False)
        self.list_pane.sunday_one.setVisible(caps.weekday_choice)
        self.list_pane.pause_button.setText(caps.pause_label)
        if not keep:
            self.list_model.marks.forget()
            if self.day_dialog is not None:
                self.day_dialog.hide()
            self.state.forget()
            self.list_model.set_rows([])
            self._show_details()

        def got_zones(zones: list[str]) -> None:
            self.state.zones = zones

        self.ctx.run(lambda: asyncio.to_thread(lambda: sorted(zoneinfo.available_timezones())), on_done=got_zones)
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
        lst = self.list_pane
        filters = search_filters(lst.status_filter.currentText(), lst.type_filter.currentText(), lst.name_filter.text())

        live = self.list_model.marks.take_live()

        def got(found: list[Schedule]) -> None:
            if store is not self.ctx.store:  # another file was opened meanwhile
                return
            self.state.schedules = found
            self._syncing = True
            try:
                self.list_model.set_rows(found, live)
            finally:
                self._syncing = False
            self.list_pane.due_label.setText(self.state.due_line())
            self.select(self.state.selected)
            self.reload_calendar()

        async def load() -> list[Schedule]:
            found = await store.schedules.search(**filters)
            # each row's problem parses its cadence and asks croniter for a fire: worked out here, not while painting
            await asyncio.to_thread(lambda: [s.problem for s in found])
            return found

        self.ctx.run(load, on_done=got)

    def loaded_span(self) -> tuple[datetime, datetime]:
        """The span the calendar loads: the current view's days, a day more each side, in the display zone."""
        local = self.state.now().astimezone().tzinfo if self.calendar.zone_mode.currentData() == "local" else None
        start, end = self.current_view().range()
        return time_window(start, end, local or timezone.utc)

    def reload_calendar(self) -> None:
        store = self.ctx.store
        view = self.current_view()
        self.calendar.title.setText(view.title(), view.shorter_titles())
        if store is None:
            return
        self.state.calendar_generation += 1
        generation = self.state.calendar_generation
        start, end = self.loaded_span()
        schedules, mode, now = list(self.state.schedules), self.calendar.zone_mode.currentData(), self.state.now()
        local = now.astimezone().tzinfo

        async def load() -> list[CalendarItem]:
            runs = await store.schedules.runs_between(start, end)
            return await asyncio.to_thread(calendar_items, schedules, runs, start, end, now, mode, local)

        def got(items: list[CalendarItem]) -> None:
            if generation != self.state.calendar_generation:  # navigated on since: a newer load will show
                return
            names = {s.schedule_id: s.name or s.goal for s in schedules}
            movable = {s.schedule_id for s in schedules if s.cadence_json.find('"once"') >= 0}
            if view is self.calendar.agenda:
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
        row = self.state.select(schedule_id)
        self._syncing = True
        try:
            if row is None:
                self.list_pane.list_view.selectionModel().clearSelection()
                self.list_pane.list_view.setCurrentIndex(QModelIndex())
            else:
                index = self.list_model.index(row, 0)
                self.list_pane.list_view.setCurrentIndex(index)
                self.list_pane.list_view.selectRow(row)
                self.list_pane.list_view.scrollTo(index)
        finally:
            self._syncing = False
        self._show_details()

    def _row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing:
            return
        if current.isValid() and current.row() < len(self.state.schedules):
            self.state.selected = self.state.schedules[current.row()].schedule_id
            self._show_details()

    def _show_details(self) -> None:
        s = self.selected_schedule()
        self._buttons()
        self.list_pane.show_schedule(s, self.state.now())
        if s is None:
            return
        store, schedule_id = self.ctx.require(), s.schedule_id
        self.ctx.run(
            lambda: store.schedules.runs(schedule_id, 200),
            on_done=lambda runs: self._show_runs(runs, schedule_id),
            on_error=gone,
        )

    def _show_runs(self, runs: list[ScheduleRun], schedule_id: str | None = None) -> None:
        if schedule_id is not None and schedule_id != self.state.selected:  # another one was selected meanwhile
            return
        self.list_pane.show_runs(runs)

    def show_output(self, item: QTableWidgetItem) -> None:
        run_id = item.data(Qt.ItemDataRole.UserRole)
        store, schedule_id = self.ctx.require(), self.state.selected

        def got(run: ScheduleRun) -> None:
            if schedule_id != self.state.selected:
                return
            self.list_pane.output.setPlainText(run.output or "(this run has no output)")
            self.list_pane.details.setCurrentWidget(self.list_pane.output)

        self.ctx.run(lambda: store.schedules.run(run_id), on_done=got)
