"""The schedule calendar, offscreen: fires in a daylight-saving month, runs by status, the dialog, dragging."""

from __future__ import annotations

from datetime import date, datetime, timezone

from PySide6.QtCore import QDateTime, QPoint, Qt, QTime
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox

from oxmem_gui.ui.schedules.dialog import ScheduleDialog
from tests.ui.conftest import settle


def utc(*a):
    return datetime(*a, tzinfo=timezone.utc)


def panel_at(make_window, qloop, now):
    window, ctx, dialogs = make_window()
    panel = window.schedules
    panel.state.now = lambda: now
    panel.state.anchor = None  # the calendar's day: from this clock, not the one the window was built with
    window.show_panel("schedules")
    return window, ctx, dialogs, panel


def create(qloop, ctx, cadence, name, now):
    return qloop.run_until_complete(ctx.store.schedules.create("alice", name, cadence, name=name, now=now))


def test_month_of_a_dst_cron_and_a_failed_run(make_window, qloop):
    now = utc(2037, 2, 20)
    window, ctx, _, panel = panel_at(make_window, qloop, now)
    nightly = create(
        qloop, ctx, {"type": "cron", "expression": "30 2 * * *", "timezone": "America/New_York"}, "nightly", now
    )
    qloop.run_until_complete(
        ctx.store.schedules.record_run(
            nightly.schedule_id,
            started_at=utc(2037, 3, 5, 7, 30),
            finished_at=utc(2037, 3, 5, 7, 31),
            status="failed",
            output_summary="the API timed out",
            now=now,
        )
    )
    panel.calendar.zone_mode.setCurrentIndex(panel.calendar.zone_mode.findData("schedule"))
    panel.go_to(date(2037, 3, 1))
    panel.reload()
    settle(qloop, ctx)
    month = panel.calendar.month
    assert month.title() == "March 2037"
    mine = [i for i in month.items if i.schedule_id == nightly.schedule_id and i.kind == "fire" and i.shown.month == 3]
    assert len(mine) == 31
    (dst_day,) = [line for line in month.lines_for(date(2037, 3, 8)) if line.kind == "fire"]
    assert dst_day.first.shown.strftime("%H:%M") == "03:00"
    runs = [line for line in month.lines_for(date(2037, 3, 5)) if line.kind == "run"]
    assert [(r.first.status, r.first.shown.strftime("%H:%M")) for r in runs] == [("failed", "02:30")]
    panel.show_view(1)
    panel.go_to(date(2037, 3, 9))
    settle(qloop, ctx)
    assert [line.kind for line in panel.calendar.week.lines_for(date(2037, 3, 9), 2)] == ["fire"]
    panel.show_view(2)
    settle(qloop, ctx)
    rows = [panel.calendar.agenda.topLevelItem(i) for i in range(panel.calendar.agenda.topLevelItemCount())]
    mine = [r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == nightly.schedule_id]
    assert [r.text(0).strip() for r in mine] == ["02:30"] * 14 and mine[0].text(2) == "fires"


def test_list_details_and_due_soon(make_window, qloop):
    now = utc(2037, 11, 22, 12)
    window, ctx, _, panel = panel_at(make_window, qloop, now)
    panel.reload()
    settle(qloop, ctx)
    names = [s.name for s in panel.state.schedules]
    assert len(names) == 7 and "Lisbon fare tracker" in names
    row = names.index("Lisbon fare tracker")
    panel.list_pane.list_view.setCurrentIndex(panel.list_model.index(row, 0))
    settle(qloop, ctx)
    assert panel.list_model.index(row, 3).data() == "disabled" and panel.list_model.index(row, 6).data() == "5"
    assert panel.list_pane.runs.rowCount() == 5 and panel.list_pane.runs.item(0, 1).text() == "failed"
    panel.show_output(panel.list_pane.runs.item(0, 0))
    settle(qloop, ctx)
    assert panel.list_pane.output.toPlainText().startswith("Airline site answered 503 Service Unavailable")
    assert panel.list_pane.due_label.text().startswith("7 schedules · ")
    panel.list_pane.status_filter.setCurrentText("paused")
    settle(qloop, ctx)
    assert [s.name for s in panel.state.schedules] == ["Water the tomatoes"]


def fill(dialog: ScheduleDialog, **kw):
    dialog.name.setText(kw.get("name", "briefing"))
    dialog.goal.setText(kw.get("goal", "summarize the day"))
    dialog.kind.setCurrentText(kw["kind"])


def test_the_dialog_stores_the_exact_cadence_json(make_window, qloop):
    now = utc(2037, 11, 22, 12)
    window, ctx, _, panel = panel_at(make_window, qloop, now)
    cases = [
        (
            dict(kind="cron"),
            lambda d: (d.expression.setText("0 8 * * 1-5"), d.zone.setCurrentText("Europe/Lisbon")),
            '{"expression":"0 8 * * 1-5","timezone":"Europe/Lisbon","type":"cron"}',
        ),
        (
            dict(kind="interval"),
            lambda d: (d.every.setValue(2), d.unit.setCurrentText("hours")),
            '{"every_secs":7200,"type":"interval"}',
        ),
        (
            dict(kind="once"),
            lambda d: (d.zone.setCurrentText("UTC"), d.at.setDateTime(QDateTime(date(2037, 12, 1), QTime(9, 30)))),
            '{"at":"2037-12-01T09:30:00.000000+00:00","type":"once"}',
        ),
    ]
    for i, (fields, setup, expected) in enumerate(cases):
        dialog = panel.make_dialog()
        fill(dialog, name=f"s{i}", **fields)
        setup(dialog)
        assert dialog.problem() is None and dialog.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()
        assert dialog.preview.count() == (1 if fields["kind"] == "once" else 10)
        dialog.setResult(ScheduleDialog.DialogCode.Accepted)
        panel.new_schedule(dialog)
        settle(qloop, ctx)
        (made,) = qloop.run_until_complete(ctx.store.schedules.search(name_contains=f"s{i}"))
        assert made.cadence_json == expected and made.goal == "summarize the day"


def test_an_invalid_cron_blocks_saving_with_its_message(make_window, qloop):
    window, ctx, _, panel = panel_at(make_window, qloop, utc(2037, 11, 22, 12))
    dialog = panel.make_dialog()
    fill(dialog, kind="cron")
    dialog.expression.setText("61 * * * *")
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert not save.isEnabled() and dialog.error.text() == "cron expression '61 * * * *': minute must be 0–59, not 61"
    dialog.expression.setText("0 0 1,15 * 5")
    assert save.isEnabled() and dialog.words.text() == "on days 1 and 15 of the month and every Friday at 00:00 UTC"
    assert dialog.warning.text().startswith("this cron restricts both the day of the month (1,15)")
    dialog.kind.setCurrentText("interval")
    dialog.unit.setCurrentText("seconds")
    dialog.every.setValue(30)
    assert not save.isEnabled() and dialog.error.text() == "interval of 30 seconds is below the minimum of 60"
    dialog.kind.setCurrentText("once")
    dialog.at.setDateTime(QDateTime(date(2037, 1, 1), QTime(9, 0)))
    assert not save.isEnabled() and "is in the past" in dialog.error.text()
    dialog.accept()
    assert dialog.result() == 0  # refused


def test_pause_resume_delete_and_drag_a_one_shot(make_window, qloop, qtbot):
    now = utc(2037, 11, 22, 12)
    window, ctx, dialogs, panel = panel_at(make_window, qloop, now)
    once = create(qloop, ctx, {"type": "once", "at": "2037-11-25T10:00:00Z"}, "dentist", now)
    panel.calendar.zone_mode.setCurrentIndex(panel.calendar.zone_mode.findData("utc"))
    panel.go_to(date(2037, 11, 1))
    panel.reload()
    settle(qloop, ctx)
    panel.select(once.schedule_id)
    panel.set_status("paused")
    settle(qloop, ctx)
    assert qloop.run_until_complete(ctx.store.schedules.get(once.schedule_id)).status == "paused"
    panel.set_status("active")
    settle(qloop, ctx)
    window.resize(1400, 900)
    month = panel.calendar.month
    month.grab()  # paint: hit areas are known after painting
    (line_rect,) = [rect for rect, line in month.hits if line.schedule_id == once.schedule_id]
    target = month._cell((date(2037, 11, 27) - month.first_day()).days).center()
    QTest.mousePress(month, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, line_rect.center())
    QTest.mouseRelease(month, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(target))
    settle(qloop, ctx)
    moved = qloop.run_until_complete(ctx.store.schedules.get(once.schedule_id))
    assert moved.cadence_json == '{"at":"2037-11-27T10:00:00.000000+00:00","type":"once"}'
    assert panel.calendar.undo_button.isEnabled()
    panel.undo()
    settle(qloop, ctx)
    back = qloop.run_until_complete(ctx.store.schedules.get(once.schedule_id))
    assert back.cadence_json == '{"at":"2037-11-25T10:00:00.000000+00:00","type":"once"}'
    panel.select(once.schedule_id)
    panel.delete()
    settle(qloop, ctx)
    assert dialogs.confirms[-1] == (
        "Delete the schedule “dentist” (once on 2037-11-25 10:00 UTC)? Its 0 runs of history go with it."
    )
    assert qloop.run_until_complete(ctx.store.schedules.search(name_contains="dentist")) == []


def test_the_panel_alone_lists_selects_and_keeps_read_only_visible(alone, qloop):
    from oxmem_gui.ui.schedules.panel import SchedulesPanel
    from tests.ui.conftest import DEMO_NOW

    panel, ctx, _ = alone(lambda ctx, dialogs: SchedulesPanel(ctx, dialogs, now=lambda: DEMO_NOW))
    assert panel.state.anchor == DEMO_NOW.astimezone().date()  # the calendar opens on the clock's day
    assert panel.list_pane.due_label.text() == "7 schedules · 1 due within the hour"
    assert {"UTC", "Europe/Berlin"} <= set(panel.state.zones)  # what the schedule dialog offers
    briefing = next(s for s in panel.state.schedules if s.name == "Morning briefing")
    panel.select(briefing.schedule_id)
    settle(qloop, ctx)
    assert panel.list_pane.detail_title.text() == "Details of “Morning briefing”"
    assert not panel.list_pane.edit_button.isEnabled() and panel.list_pane.edit_button.toolTip().startswith("Read-only")
