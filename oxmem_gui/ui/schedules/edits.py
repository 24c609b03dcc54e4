"""The schedules panel's writes, each carrying the schedule as this window loaded it (a change by the agent or
another program since is shown as theirs vs mine, never overwritten): create, edit, pause, resume, delete, move
a one-shot by dragging it on the calendar, and undo that move.

:class:`ScheduleEdits` is mixed into :class:`~.panel.SchedulesPanel`: it uses the panel's selection and reloads.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ...core.api import ConflictError, OnceCadence, Schedule, describe, parse_cadence, parse_stored
from ..context import StoreContext
from ..dialogs import Dialogs
from ..widgets import plural
from .dialog import ScheduleDialog
from .model import schedule_text, words
from .state import MoveRecord, SchedulesState

if TYPE_CHECKING:  # mixed into a QWidget (the panel)
    from PySide6.QtWidgets import QWidget as _Panel
else:
    _Panel = object


class ScheduleEdits(_Panel):
    """The writes of :class:`~.panel.SchedulesPanel` (see the module's docstring)."""

    # what it uses of the panel
    ctx: StoreContext
    dialogs: Dialogs
    state: SchedulesState
    last_dialog: ScheduleDialog | None
    if TYPE_CHECKING:

        def selected_schedule(self) -> Schedule | None: ...
        def reload(self) -> None: ...

    # -- editing ------------------------------------------------------------------------------------

    def make_dialog(self, schedule: Schedule | None = None) -> ScheduleDialog:
        selected = schedule or self.selected_schedule()
        user = selected.user_id if selected is not None else "default"
        self.last_dialog = ScheduleDialog(self.state.zones, schedule, user, self, now=self.state.now)
        return self.last_dialog

    def new_schedule(self, dialog: ScheduleDialog | None = None) -> None:
        store = self.ctx.writable("schedules")
        if store is None:
            return
        dialog = dialog or self.make_dialog()
        if not dialog.result() and dialog.exec() != ScheduleDialog.DialogCode.Accepted:
            return
        fields, cadence, now = dialog.fields(), dialog.cadence_dict(), self.state.now()

        def done(made: Schedule) -> None:
            self.state.selected = made.schedule_id
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
                self.state.selected = None
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
        now = self.state.now()
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
        now = self.state.now()
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
                self.state.selected = None
                self._write(
                    "Deleting schedule",
                    s,
                    lambda loaded: store.schedules.delete(s.schedule_id, expected=loaded),
                    "(deleted, with its run history)",
                )

        self.ctx.run(lambda: store.schedules.run_count(s.schedule_id), on_done=ask)

    def move_one_shot(self, schedule_id: str, when: datetime) -> None:
        """A one-shot dragged to another day or time: reschedule it (Undo move puts it back)."""
        s = next((x for x in self.state.schedules if x.schedule_id == schedule_id), None)
        store = self.ctx.writable("schedules")
        if s is None or store is None or s.problem or not isinstance(s.cadence, OnceCadence):
            return
        previous = json.loads(s.cadence_json)
        cadence = {"type": "once", "at": when.astimezone(timezone.utc).isoformat()}
        now = self.state.now()

        def done(moved: Schedule) -> None:
            self.state.undo_move = MoveRecord(schedule_id, previous, moved)
            self.reload()

        self._write(
            "Rescheduling",
            s,
            lambda loaded: store.schedules.update(schedule_id, {"cadence": cadence}, now, expected=loaded),
            f"cadence: {describe(parse_cadence(cadence))}",
            done,
        )

    def undo(self) -> None:
        record, store = self.state.undo_move, self.ctx.writable("schedules")
        if record is None or record.after is None or store is None:
            return
        now = self.state.now()

        def done(_: Any) -> None:
            self.state.undo_move = None
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
