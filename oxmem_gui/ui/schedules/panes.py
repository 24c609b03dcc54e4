"""The two panes of the schedules panel: the calendar with its navigation (:class:`CalendarPane`), and the
filtered list of schedules with the selected one's details (:class:`ScheduleListPane`). They hold widgets and
show what they are given; the panel loads and writes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt
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

from ...core.api import CADENCE_TYPES, STATUSES, Schedule, ScheduleRun, cadence_dict, format_in_timezone, next_runs
from ..widgets import ElidedLabel, escape_clears, fit_columns, tab_leaves
from ..widgets.json_view import JsonView
from .calendar_views import STATUS, AgendaView, MonthView, WeekView
from .model import ScheduleListModel

#: the widest a schedule list column gets (a long name or cadence is cut, whole in its tooltip), so that a
#: laptop-wide pane shows name, status, next run and failures without scrolling
LIST_COLUMN_WIDEST = 150
ZONE_LABELS = {"local": "Local time", "utc": "UTC", "schedule": "Each schedule's zone"}


class CalendarPane(QWidget):
    """The month, week and agenda views of the calendar, the date row (earlier, today, later, the title, undo
    move) and the view row (which view, which time zone)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.month, self.week, self.agenda = MonthView(), WeekView(), AgendaView()
        self.views = QStackedWidget()
        for view in (self.month, self.week, self.agenda):
            self.views.addWidget(view)
        self.view_buttons = QButtonGroup(self)
        view_row = QHBoxLayout()
        for i, name in enumerate(("Month", "Week", "Agenda")):
            button = QToolButton(text=name, checkable=True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.view_buttons.addButton(button, i)
            view_row.addWidget(button)
        self.view_buttons.button(0).setChecked(True)
        self.prev_button, self.today_button = QToolButton(text="◀"), QToolButton(text="Today")
        self.next_button = QToolButton(text="▶")
        self.prev_button.setToolTip("Earlier")
        self.next_button.setToolTip("Later")
        for b in (self.prev_button, self.today_button, self.next_button):
            b.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # the title changes with the view and the date: a narrow panel shows a shorter form, never widens
        self.title = ElidedLabel()
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.zone_mode = QComboBox()
        for mode, label in ZONE_LABELS.items():
            self.zone_mode.addItem(label, mode)
        self.zone_mode.setToolTip("The time zone the calendar shows times in")
        self.undo_button = QPushButton("Undo move")
        date_row = QHBoxLayout()
        for b in (self.prev_button, self.today_button, self.next_button):
            date_row.addWidget(b)
        date_row.addWidget(self.title, 1)
        date_row.addWidget(self.undo_button)
        view_row.addStretch(1)
        view_row.addWidget(self.zone_mode)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(date_row)
        layout.addLayout(view_row)
        layout.addWidget(self.views, 1)

    def current_view(self) -> Any:
        return self.views.currentWidget()


class ScheduleListPane(QWidget):
    """The filters, the agent's weekday numbering switch, what is due, the list, the actions, and the selected
    schedule's runs, next fires, cadence and a run's output."""

    def __init__(self, model: ScheduleListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status_filter = QComboBox()
        self.status_filter.addItems(["any status", *STATUSES])
        self.type_filter = QComboBox()
        self.type_filter.addItems(["any cadence", *CADENCE_TYPES])
        self.name_filter = escape_clears(QLineEdit(placeholderText="name contains…"))
        self.name_filter.setMinimumWidth(80)
        self.due_label = QLabel()
        self.due_label.setWordWrap(True)
        self.due_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.list_view = QTableView()
        self.list_view.setModel(model)
        self.list_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setWordWrap(False)
        self.list_view.verticalHeader().setVisible(False)
        self.list_view.horizontalHeader().setStretchLastSection(True)
        tab_leaves(self.list_view)
        header = self.list_view.horizontalHeader()
        for visual, logical in enumerate(model.SHOWN):
            header.moveSection(header.visualIndex(logical), visual)
        fit_columns(self.list_view, range(7), widest=LIST_COLUMN_WIDEST)

        self.new_button = QPushButton("New…")
        self.edit_button = QPushButton("Edit…")
        self.pause_button = QPushButton("Pause")
        self.resume_button = QPushButton("Resume")
        self.delete_button = QPushButton("Delete…")

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

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.sunday_one = QCheckBox("Weekdays as the agent counts them (Sunday = 1)")
        self.sunday_one.setToolTip(
            "Newer Oxydra numbers cron weekdays 1–7 from Sunday: its `0 8 * * 1` runs on Sundays. Shows its "
            "schedules as it runs them (editing is off meanwhile)."
        )
        self.sunday_one.setVisible(False)
        filters = QHBoxLayout()
        for w in (self.status_filter, self.type_filter):
            filters.addWidget(w)
        filters.addWidget(self.name_filter, 1)
        layout.addLayout(filters)
        layout.addWidget(self.sunday_one)
        layout.addWidget(self.due_label)
        layout.addWidget(self.list_view, 2)
        buttons = QHBoxLayout()
        for b in (self.new_button, self.edit_button, self.pause_button, self.resume_button, self.delete_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self.detail_title)
        layout.addWidget(self.details, 2)

    def show_schedule(self, s: Schedule | None, now: datetime) -> None:
        """The details of ``s`` (its runs come later, from :meth:`show_runs`); None empties them."""
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
            fires = next_runs(cadence, now, 10) if s.status == "active" else []
        self.next_fires.setRowCount(len(fires))
        for r, moment in enumerate(fires):
            for c, text in enumerate((format_in_timezone(moment, cadence), moment.strftime("%Y-%m-%d %H:%M UTC"))):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.next_fires.setItem(r, c, item)

    def show_runs(self, runs: list[ScheduleRun]) -> None:
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
