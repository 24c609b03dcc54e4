"""Create or edit a schedule: the cadence with live validation, words, warnings and a preview of the next fires."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any

from PySide6.QtCore import QDateTime, QStringListModel, Qt, QTime
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.api import (
    POLICIES,
    CronCadence,
    IntervalCadence,
    OnceCadence,
    OxmemError,
    Schedule,
    cadence_warnings,
    describe,
    format_in_timezone,
    next_runs,
    parse_cadence,
    to_rfc3339,
    utc_now,
    validate_cadence,
    zone,
)

UNITS = (("seconds", 1), ("minutes", 60), ("hours", 3600), ("days", 86400))


class ZonePicker(QComboBox):
    """An editable list of IANA zones with type-to-search (matches anywhere in the name)."""

    def __init__(self, zones: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.addItems(zones)
        completer = QCompleter(QStringListModel(zones, self), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.setCompleter(completer)
        self.setCurrentText("UTC")


class ScheduleDialog(QDialog):
    """``cadence()`` and ``fields()`` give what to store once ``result()`` is accepted; saving is only possible
    while the form is valid, and every problem is shown inline."""

    def __init__(
        self,
        zones: list[str],
        schedule: Schedule | None = None,
        user: str = "default",
        parent: QWidget | None = None,
        now: Any = utc_now,
    ) -> None:
        super().__init__(parent)
        self.now = now
        self.setWindowTitle("Edit schedule" if schedule else "New schedule")
        self.name = QLineEdit(placeholderText="a name people will recognise")
        self.user = QLineEdit(user)
        self.goal = QLineEdit(placeholderText="what the agent should do")
        self.policy = QComboBox()
        self.policy.addItems(list(POLICIES))
        self.kind = QComboBox()
        self.kind.addItems(["cron", "interval", "once"])
        self.expression = QLineEdit("0 8 * * *")
        self.expression.setPlaceholderText("minute hour day-of-month month day-of-week")
        self.zone = ZonePicker(zones)
        self.every = QSpinBox(minimum=1, maximum=10_000_000, value=1)
        self.unit = QComboBox()
        self.unit.addItems([u for u, _ in UNITS])
        self.unit.setCurrentText("hours")
        self.at = QDateTimeEdit(calendarPopup=True)
        self.at.setDisplayFormat("yyyy-MM-dd HH:mm")
        start = (now() + timedelta(days=1)).astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
        self.at.setDateTime(QDateTime(start.date(), QTime(start.hour, 0)))

        cron_page = QWidget()
        cron_form = QFormLayout(cron_page)
        cron_form.addRow("Cron", self.expression)
        interval_page = QWidget()
        interval_row = QHBoxLayout(interval_page)
        interval_row.addWidget(QLabel("Every"))
        interval_row.addWidget(self.every)
        interval_row.addWidget(self.unit)
        interval_row.addStretch(1)
        once_page = QWidget()
        once_form = QFormLayout(once_page)
        once_form.addRow("At", self.at)
        self.pages = QStackedWidget()
        for page in (cron_page, interval_page, once_page):
            self.pages.addWidget(page)
        self.kind.currentIndexChanged.connect(self.pages.setCurrentIndex)

        self.words = QLabel()
        self.words.setWordWrap(True)
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #b35c00")
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b; font-weight: bold")
        self.preview = QListWidget()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("User", self.user)
        form.addRow("Goal", self.goal)
        form.addRow("Notify", self.policy)
        form.addRow("Cadence", self.kind)
        form.addRow("", self.pages)
        form.addRow("", self.error)  # right under the cadence it is about
        form.addRow("Time zone", self.zone)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.words)
        layout.addWidget(self.warning)
        layout.addWidget(QLabel("Next 10 fires"))
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.buttons)

        if schedule is not None:
            self._load(schedule)
        for signal in (
            self.kind.currentIndexChanged,
            self.expression.textChanged,
            self.zone.currentTextChanged,
            self.every.valueChanged,
            self.unit.currentIndexChanged,
            self.at.dateTimeChanged,
            self.goal.textChanged,
            self.user.textChanged,
        ):
            signal.connect(self.refresh)
        self.refresh()
        self.resize(560, 620)

    def _load(self, schedule: Schedule) -> None:
        self.name.setText(schedule.name or "")
        self.user.setText(schedule.user_id)
        self.goal.setText(schedule.goal)
        self.policy.setCurrentText(schedule.notification_policy)
        try:
            cadence = schedule.cadence
        except OxmemError:
            return
        if isinstance(cadence, CronCadence):
            self.kind.setCurrentText("cron")
            self.expression.setText(cadence.expression)
            self.zone.setCurrentText(cadence.timezone)
        elif isinstance(cadence, IntervalCadence):
            self.kind.setCurrentText("interval")
            unit, size = next((u, s) for u, s in reversed(UNITS) if cadence.every_secs % s == 0)
            self.unit.setCurrentText(unit)
            self.every.setValue(cadence.every_secs // size)
        else:
            self.kind.setCurrentText("once")
            self.zone.setCurrentText("UTC")
            at = cadence.at
            self.at.setDateTime(QDateTime(at.date(), QTime(at.hour, at.minute)))
        self.pages.setCurrentIndex(self.kind.currentIndex())

    def cadence_dict(self) -> dict[str, Any]:
        kind = self.kind.currentText()
        if kind == "cron":
            return {
                "type": "cron",
                "expression": self.expression.text().strip(),
                "timezone": self.zone.currentText().strip(),
            }
        if kind == "interval":
            size = dict(UNITS)[self.unit.currentText()]
            return {"type": "interval", "every_secs": self.every.value() * size}
        local = self.at.dateTime().toPython().replace(second=0, microsecond=0)
        moment = local.replace(tzinfo=zone(self.zone.currentText().strip()))
        return {"type": "once", "at": to_rfc3339(moment)}

    def fields(self) -> dict[str, Any]:
        return {
            "name": self.name.text().strip() or None,
            "user_id": self.user.text().strip(),
            "goal": self.goal.text().strip(),
            "notification_policy": self.policy.currentText(),
        }

    def problem(self) -> str | None:
        """The first thing that stops saving, in words; None when the form can be saved."""
        try:
            cadence = parse_cadence(self.cadence_dict())
            validate_cadence(cadence, self.now())
        except OxmemError as exc:
            return str(exc)
        if not self.user.text().strip():
            return "a schedule needs a user"
        if not self.goal.text().strip():
            return "a schedule needs a goal"
        return None

    def refresh(self) -> None:
        self.preview.clear()
        self.words.clear()
        self.warning.clear()
        try:
            cadence = parse_cadence(self.cadence_dict())
        except OxmemError as exc:
            cadence = None
            self.error.setText(str(exc))
        if cadence is not None:
            self.words.setText(describe(cadence))
            self.warning.setText("\n".join(cadence_warnings(cadence)))
            shown = cadence if isinstance(cadence, CronCadence) else None
            for moment in next_runs(cadence, self.now(), 10):
                local = format_in_timezone(moment, shown) if shown else moment.strftime("%Y-%m-%d %H:%M UTC")
                self.preview.addItem(f"{local}   ({to_rfc3339(moment)[:16].replace('T', ' ')} UTC)")
            if isinstance(cadence, OnceCadence) and not self.preview.count():
                self.preview.addItem("— (the time has passed)")
        problem = self.problem()
        self.error.setText(problem or "")
        self.error.setVisible(problem is not None)
        bad_cron = problem is not None and self.kind.currentText() == "cron" and problem.startswith("cron expression")
        self.expression.setStyleSheet("border: 1px solid #c0392b" if bad_cron else "")
        self.expression.setToolTip(problem if bad_cron else "minute hour day-of-month month day-of-week")
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(problem is None)

    def accept(self) -> None:
        if self.problem() is None:
            super().accept()
