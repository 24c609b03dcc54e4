"""The Schedules panel on a laptop screen: it fits in every calendar view, "+N more" lists the whole day, views keep
their date, cron mistakes are said in words, read-only is visible, no pane shows a schedule that is gone, and the
keyboard, tooltips and counts are right."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.schedules.cadence import parse_cadence
from oxmem_gui.core.schedules.calendar import by_day
from oxmem_gui.ui.schedules.model import countdown, full_countdown
from tests.ui.conftest import DEMO_NOW, settle
from tests.ui.layout import unreachable

VIEWS = ("Month", "Week", "Agenda")
ACTIONS = ("new_button", "edit_button", "pause_button", "resume_button", "delete_button", "undo_button")


def details(panel):
    """How many runs and next fires the details show, and the cadence's JSON."""
    pane = panel.list_pane
    return pane.runs.rowCount(), pane.next_fires.rowCount(), pane.cadence_view.toPlainText()


def action(panel, name):
    """The panel's button ``name`` (Undo is the calendar's; the others the list's)."""
    return getattr(panel.calendar if name == "undo_button" else panel.list_pane, name)


def utc(*a):
    return datetime(*a, tzinfo=timezone.utc)


def open_panel(make_window, qloop, now=DEMO_NOW, read_only=False):
    """The schedules panel on the demo, its clock at ``now`` (by default the demo's, which its runs lead up to)."""
    window, ctx, dialogs = make_window(read_only=read_only)
    panel = window.schedules
    panel.state.now = lambda: now
    panel.state.anchor = None  # the calendar's day: from this clock, not the one the window was built with
    window.show_panel("schedules")
    panel.calendar.zone_mode.setCurrentIndex(panel.calendar.zone_mode.findData("utc"))
    panel.reload()
    settle(qloop, ctx)
    return window, ctx, dialogs, panel


def on_screen(window, qloop, ctx):
    window.resize(1024, 640)
    window.show()
    settle(qloop, ctx)
    QApplication.processEvents()


def row_of(panel, schedule_id):
    return next(r for r, s in enumerate(panel.state.schedules) if s.schedule_id == schedule_id)


def named(panel, name):
    return next(s for s in panel.state.schedules if s.name == name)


# -- 1. fits ----------------------------------------------------------------------------------------------------


def test_the_panel_fits_840_by_520_in_every_view_and_switching_never_grows_the_window(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12))
    on_screen(window, qloop, ctx)
    sizes = {}
    for index, name in enumerate(VIEWS):
        panel.show_view(index)
        panel.step(1)  # a longer title ("Week of 30 November 2037") must not widen anything
        settle(qloop, ctx)
        hint = panel.minimumSizeHint()
        sizes[name] = (hint.width(), hint.height())
        assert hint.width() <= 840 and hint.height() <= 520, (name, hint)
        window.resize(1024, 640)
        QApplication.processEvents()
        assert window.size() == QSize(1024, 640), name
        assert unreachable(window) == [], name
    assert len(set(sizes.values())) == 1, sizes  # the same minimum whatever the view shows


def test_at_1024_by_640_titles_month_lines_the_list_and_the_agenda_show_what_matters_uncut(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop)
    on_screen(window, qloop, ctx)
    panel.go_to(DEMO_NOW.date())  # the demo's runs lead up to its now
    settle(qloop, ctx)
    for index, view in enumerate((panel.calendar.month, panel.calendar.week, panel.calendar.agenda)):
        panel.show_view(index)
        settle(qloop, ctx)
        shown = panel.calendar.title.shown()  # the whole title, else a shorter form: never one cut short
        assert shown in (view.title(), *view.shorter_titles()) and "…" not in shown, shown
        assert panel.calendar.title.toolTip() == view.title()
    panel.calendar.week.anchor = date(2037, 11, 25)
    assert panel.calendar.week.shorter_titles() == ["23–29 Nov 2037", "23–29 Nov"]
    panel.calendar.week.step(1)
    assert panel.calendar.week.shorter_titles() == ["30 Nov – 06 Dec 2037", "30 Nov – 06 Dec"]
    panel.go_to(DEMO_NOW.date())

    panel.show_view(0)
    settle(qloop, ctx)
    panel.calendar.month.grab()
    # a narrow cell drops the name (the colour bar says which schedule), never the time or the count
    assert panel.calendar.month.painted and not [text for text in panel.calendar.month.painted if "…" in text]
    shapes = re.compile(r"(?:[✓✗⊘] )?(?:\d\d:\d\d|×\d+)|\+\d+(?: more)?")
    assert [text for text in panel.calendar.month.painted if not shapes.fullmatch(text)] == []
    assert any(":" in text for text in panel.calendar.month.painted) and any(
        "×" in text for text in panel.calendar.month.painted
    )

    header, viewport = panel.list_pane.list_view.horizontalHeader(), panel.list_pane.list_view.viewport().width()
    assert [panel.list_model.COLUMNS[header.logicalIndex(v)] for v in range(4)] == [
        "Name",
        "Status",
        "Next run",
        "Fails",
    ]
    for column in (0, 3, 4, 6):  # in view without scrolling sideways
        assert header.sectionViewportPosition(column) + header.sectionSize(column) <= viewport, column

    panel.show_view(2)
    settle(qloop, ctx)
    rows = [panel.calendar.agenda.topLevelItem(i) for i in range(panel.calendar.agenda.topLevelItemCount())]
    days = [row for row in rows if not row.data(0, Qt.ItemDataRole.UserRole)]
    assert days and all(day.isFirstColumnSpanned() for day in days)
    what = panel.calendar.agenda.header()
    metrics = panel.calendar.agenda.fontMetrics()
    widest = max(metrics.horizontalAdvance(row.text(2)) for row in rows)
    assert what.sectionViewportPosition(2) + widest <= panel.calendar.agenda.viewport().width()


@pytest.mark.parametrize(
    ("stamp", "short", "full"),
    [
        ("2037-11-23T15:20:00Z", "15:20 (in 3 h 20 min)", "2037-11-23 15:20 UTC (in 3 h 20 min)"),
        ("2037-11-24T07:30:00Z", "07:30 (in 19 h 30 min)", "2037-11-24 07:30 UTC (in 19 h 30 min)"),
        ("2037-11-30T08:00:00Z", "30 Nov 08:00 (in 6 d)", "2037-11-30 08:00 UTC (in 6 d 20 h)"),
        ("2037-11-23T11:00:00Z", "23 Nov 11:00 (due)", "2037-11-23 11:00 UTC (due)"),
        ("next tuesday", "⚠ next tuesday", "⚠ next tuesday"),
        (None, "—", "—"),
    ],
)
def test_the_next_run_cell_is_short_and_its_tooltip_whole(stamp, short, full):
    now = utc(2037, 11, 23, 12)
    assert (countdown(stamp, now), full_countdown(stamp, now)) == (short, full)


def test_long_names_elide_instead_of_widening_the_panel(make_window, qloop):
    now = utc(2037, 11, 23, 12)
    window, ctx, _, panel = open_panel(make_window, qloop, now)
    before = panel.minimumSizeHint()
    long = "A schedule whose name goes on and on " * 8
    made = qloop.run_until_complete(
        ctx.store.schedules.create(
            "alice", long * 2, {"type": "once", "at": "2037-11-25T10:00:00Z"}, name=long, now=now
        )
    )
    panel.go_to(date(2037, 11, 23))
    panel.reload()
    settle(qloop, ctx)
    panel.select(made.schedule_id)
    settle(qloop, ctx)
    for index in range(3):
        panel.show_view(index)
        settle(qloop, ctx)
        assert panel.minimumSizeHint() == before
    assert before.width() <= 840 and before.height() <= 520


# -- 2. calendar ----------------------------------------------------------------------------------------------


def crowd(qloop, ctx, day, count, now):
    """``count`` one-shot schedules on ``day``, an hour apart from 09:00 UTC."""
    made = []
    for i in range(count):
        at = datetime.combine(day, datetime.min.time(), timezone.utc) + timedelta(hours=9 + i)
        cadence = {"type": "once", "at": at.isoformat()}
        made.append(
            qloop.run_until_complete(
                ctx.store.schedules.create("alice", f"task {i}", cadence, name=f"dentist {i}", now=now)
            )
        )
    return made


def test_more_opens_the_whole_day_and_an_entry_there_selects_its_row(make_window, qloop):
    now = utc(2037, 11, 23, 12)
    window, ctx, _, panel = open_panel(make_window, qloop, now)
    day = date(2037, 12, 9)
    made = crowd(qloop, ctx, day, 6, now)
    panel.go_to(day)
    panel.reload()
    settle(qloop, ctx)
    on_screen(window, qloop, ctx)
    month = panel.calendar.month
    month.grab()  # paint: where lines and "+N more" are is known after painting
    (more,) = [(rect, hidden) for rect, d, hidden in month.more_hits if d == day]
    shown = [line for _, line in month.hits if line.first.shown.date() == day]
    assert more[1] == len(month.lines_for(day)) - len(shown) and more[1] >= 3
    assert month.tooltip_at(more[0].center()).startswith(f"{more[1]} more on Wednesday 09 December")
    QTest.mouseClick(month, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, more[0].center())
    dialog = panel.day_dialog
    assert dialog is not None and dialog.isVisible() and dialog.day == day
    entries = by_day(month.items)[day]
    assert dialog.entries.count() == len(entries)
    texts = dialog.texts()
    for i in range(len(made)):
        assert f"{9 + i:02d}:00  dentist {i} — fires" in texts
    assert dialog.heading.text().startswith("Wednesday 09 December 2037: ")
    # an entry in the list selects its schedule's row
    entry = next(dialog.entries.item(i) for i in range(dialog.entries.count()) if "dentist 5" in texts[i])
    dialog.entries.itemClicked.emit(entry)
    settle(qloop, ctx)
    assert panel.state.selected == made[5].schedule_id
    assert panel.list_pane.list_view.selectionModel().selectedRows()[0].row() == row_of(panel, made[5].schedule_id)
    # the day list is a dialog: Escape closes it
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
    # the same through the method tests and the week view use
    assert panel.show_day(day).entries.count() == len(entries)


def test_clicking_a_calendar_entry_selects_its_row(make_window, qloop):
    now = utc(2037, 11, 23, 12)
    window, ctx, _, panel = open_panel(make_window, qloop, now)
    (once,) = crowd(qloop, ctx, date(2037, 11, 26), 1, now)
    panel.go_to(date(2037, 11, 26))
    panel.reload()
    settle(qloop, ctx)
    on_screen(window, qloop, ctx)
    other = named(panel, "Inbox watch")
    panel.list_pane.list_view.setCurrentIndex(panel.list_model.index(row_of(panel, other.schedule_id), 0))
    settle(qloop, ctx)
    assert panel.state.selected == other.schedule_id
    month = panel.calendar.month
    month.grab()
    (rect,) = [rect for rect, line in month.hits if line.schedule_id == once.schedule_id]
    assert month.tooltip_at(rect.center()) == "dentist 0\nfires at 09:00 on Thu 26 Nov 2037"
    QTest.mouseClick(month, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    settle(qloop, ctx)
    row = row_of(panel, once.schedule_id)
    assert panel.state.selected == once.schedule_id
    assert panel.list_pane.list_view.currentIndex().row() == row
    assert [i.row() for i in panel.list_pane.list_view.selectionModel().selectedRows()] == [row]
    assert panel.list_pane.detail_title.text() == "Details of “dentist 0”"
    assert (
        panel.list_pane.next_fires.rowCount() == 1
        and panel.list_pane.next_fires.item(0, 1).text() == "2037-11-26 09:00 UTC"
    )


def test_switching_views_keeps_the_navigated_date(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12))
    panel.go_to(date(2037, 11, 23))
    panel.show_view(1)
    panel.step(1)
    panel.step(1)
    settle(qloop, ctx)
    assert panel.calendar.week.title() == panel.calendar.title.text() == "Week of 07 December 2037"
    panel.calendar.view_buttons.button(0).click()
    settle(qloop, ctx)
    assert panel.current_view() is panel.calendar.month and panel.calendar.title.text() == "December 2037"
    panel.calendar.view_buttons.button(2).click()
    settle(qloop, ctx)
    assert panel.calendar.title.text() == "07 Dec – 20 Dec 2037"
    panel.calendar.view_buttons.button(1).click()
    settle(qloop, ctx)
    assert panel.calendar.title.text() == "Week of 07 December 2037"
    assert panel.calendar.week.range() == (date(2037, 12, 7), date(2037, 12, 14))


# -- 3. cron errors in words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("60 * * * *", "cron expression '60 * * * *': minute must be 0–59, not 60"),
        ("0 24 * * *", "cron expression '0 24 * * *': hour must be 0–23, not 24"),
        ("0 8 *", "cron expression '0 8 *': expected 5 fields (minute hour day-of-month month day-of-week), got 3"),
        ("0 8 * 13 *", "cron expression '0 8 * 13 *': month must be 1–12 or jan–dec, not 13"),
        ("0 8 * * fri-sun,9", "cron expression '0 8 * * fri-sun,9': day of week must be 0–7 or sun–sat, not 9"),
    ],
)
def test_an_invalid_cron_says_which_field_in_the_dialog_and_the_core(make_window, qloop, expression, message):
    window, ctx, _, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12))
    dialog = panel.make_dialog()
    dialog.goal.setText("g")
    dialog.kind.setCurrentText("cron")
    dialog.expression.setText(expression)
    assert dialog.error.text() == message and not dialog.error.isHidden()
    assert dialog.expression.toolTip() == message
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()
    with pytest.raises(InvalidInputError) as raised:
        parse_cadence({"type": "cron", "expression": expression})
    assert str(raised.value) == message  # the CLI prints this same line
    dialog.expression.setText("0 8 * * 1-5")
    assert dialog.error.text() == "" and dialog.error.isHidden()
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()


# -- 4. read-only is visible; re-opening keeps the view -----------------------------------------------------


def test_read_only_disables_every_action_with_the_reason_until_editing_is_enabled(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12), read_only=True)
    refusal = ctx.edit_refusal("schedules")
    assert refusal is not None and refusal.startswith("Read-only")
    lisbon = named(panel, "Lisbon fare tracker")
    panel.select(lisbon.schedule_id)
    settle(qloop, ctx)
    for name in ACTIONS:
        button = action(panel, name)
        assert not button.isEnabled() and button.toolTip() == refusal, name
    assert panel.calendar.month.editable is False  # a one-shot cannot be dragged either
    panel.list_pane.name_filter.setText("o")
    panel.show_view(1)
    panel.go_to(date(2037, 12, 16))
    settle(qloop, ctx)
    runs_before = panel.list_pane.runs.rowCount()
    assert runs_before == 5

    qloop.run_until_complete(ctx.enable_editing())
    settle(qloop, ctx)
    assert ctx.edit_refusal("schedules") is None
    # the same file again: selection, filter and the calendar's date are kept
    assert panel.state.selected == lisbon.schedule_id
    assert panel.list_pane.list_view.selectionModel().selectedRows()[0].row() == row_of(panel, lisbon.schedule_id)
    assert panel.list_pane.name_filter.text() == "o"
    assert panel.current_view() is panel.calendar.week and panel.calendar.title.text() == "Week of 14 December 2037"
    assert (
        panel.list_pane.runs.rowCount() == runs_before
        and panel.list_pane.detail_title.text() == "Details of “Lisbon fare tracker”"
    )
    # every action that applies to a disabled schedule is enabled now
    enabled = {name: action(panel, name).isEnabled() for name in ACTIONS}
    assert enabled == {
        "new_button": True,
        "edit_button": True,
        "pause_button": False,  # it is not active
        "resume_button": True,
        "delete_button": True,
        "undo_button": False,  # nothing was moved
    }
    assert panel.list_pane.new_button.toolTip() == "Create a schedule"
    assert panel.list_pane.pause_button.toolTip() == "It is disabled"
    assert panel.calendar.month.editable is True


# -- 5. no stale pane -------------------------------------------------------------------------------------------


def test_the_details_clear_when_their_schedule_is_filtered_away_or_deleted(make_window, qloop):
    window, ctx, dialogs, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12))
    lisbon = named(panel, "Lisbon fare tracker")
    panel.list_pane.list_view.setCurrentIndex(panel.list_model.index(row_of(panel, lisbon.schedule_id), 0))
    settle(qloop, ctx)
    assert (
        panel.list_pane.runs.rowCount() == 5
        and panel.list_pane.detail_title.text() == "Details of “Lisbon fare tracker”"
    )
    empty = "No schedule selected: pick one in the list or on the calendar."

    panel.list_pane.name_filter.setText("tomatoes")
    settle(qloop, ctx)
    assert [s.name for s in panel.state.schedules] == ["Water the tomatoes"]
    assert panel.state.selected is None and panel.list_pane.detail_title.text() == empty
    assert details(panel) == (0, 0, "")
    assert not panel.list_pane.edit_button.isEnabled() and not panel.list_pane.delete_button.isEnabled()

    on_screen(window, qloop, ctx)
    window.activateWindow()
    panel.list_pane.name_filter.setFocus()
    QTest.keyClick(panel.list_pane.name_filter, Qt.Key.Key_Escape)  # Escape empties the filter
    settle(qloop, ctx)
    assert panel.list_pane.name_filter.text() == "" and len(panel.state.schedules) == 7

    panel.select(lisbon.schedule_id)
    settle(qloop, ctx)
    assert panel.list_pane.runs.rowCount() == 5
    panel.delete()
    settle(qloop, ctx)
    assert dialogs.confirms[-1].endswith("Its 5 runs of history go with it.")
    assert all(s.schedule_id != lisbon.schedule_id for s in panel.state.schedules)
    assert panel.state.selected is None and panel.list_pane.detail_title.text() == empty
    assert details(panel) == (0, 0, "")
    assert panel.list_pane.list_view.selectionModel().selectedRows() == []


# -- 6. keyboard, tooltips, plurals ---------------------------------------------------------------------------


def test_tab_leaves_tables_and_tooltips_hold_the_full_text(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop, utc(2037, 11, 23, 12))
    for view in (panel.list_pane.list_view, panel.list_pane.runs, panel.list_pane.next_fires, panel.calendar.agenda):
        assert view.tabKeyNavigation() is False
    on_screen(window, qloop, ctx)
    panel.list_pane.list_view.setFocus()
    QTest.keyClick(panel.list_pane.list_view, Qt.Key.Key_Tab)
    assert not panel.list_pane.list_view.hasFocus()

    lisbon = named(panel, "Lisbon fare tracker")
    row = row_of(panel, lisbon.schedule_id)
    goal_tip = panel.list_model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert goal_tip.startswith("Alert if the EZY7Q2K fare class drops below €150\n\n")
    status = panel.list_model.index(row, 3)
    assert status.data(Qt.ItemDataRole.ToolTipRole) == status.data() == "disabled"
    panel.select(lisbon.schedule_id)
    settle(qloop, ctx)
    summary = panel.list_pane.runs.item(0, 3)
    assert summary.toolTip() == summary.text() == "Airline site answered 503 Service Unavailable"

    panel.show_view(2)
    settle(qloop, ctx)
    rows = [panel.calendar.agenda.topLevelItem(i) for i in range(panel.calendar.agenda.topLevelItemCount())]
    entry = next(r for r in rows if r.data(0, Qt.ItemDataRole.UserRole))
    assert entry.toolTip(1) == entry.text(1) and entry.toolTip(1)


def test_counts_use_the_right_plural(make_window, qloop):
    window, ctx, _, panel = open_panel(make_window, qloop)
    now = DEMO_NOW
    for name in ("Morning briefing", "Weekly KPI post", "Check-in reminder"):  # only the hourly one is due soon
        qloop.run_until_complete(ctx.store.schedules.update(named(panel, name).schedule_id, {"status": "paused"}, now))
    panel.reload()
    settle(qloop, ctx)
    inbox = named(panel, "Inbox watch")
    panel.state.now = lambda: inbox.next_run_time - timedelta(minutes=10)
    panel.reload()
    settle(qloop, ctx)
    assert panel.list_pane.due_label.text() == "7 schedules · 1 due within the hour"
    panel.list_pane.name_filter.setText("Lisbon")
    settle(qloop, ctx)
    assert panel.list_pane.due_label.text() == "1 schedule · 0 due within the hour"


def test_calendar_entries_show_their_full_text_as_a_tooltip(make_window, qloop):
    now = utc(2037, 11, 23, 12)
    window, ctx, _, panel = open_panel(make_window, qloop, now)
    long = "Renew the passport at the consulate before the summer trip to Lisbon"
    made = qloop.run_until_complete(
        ctx.store.schedules.create("alice", "g", {"type": "once", "at": "2037-11-27T16:45:00Z"}, name=long, now=now)
    )
    panel.go_to(date(2037, 11, 27))
    panel.reload()
    settle(qloop, ctx)
    on_screen(window, qloop, ctx)
    month = panel.calendar.month
    month.grab()
    (rect,) = [rect for rect, line in month.hits if line.schedule_id == made.schedule_id]
    assert rect.width() < month.fontMetrics().horizontalAdvance(long)  # the cell elides it
    assert month.tooltip_at(rect.center()) == f"{long}\nfires at 16:45 on Fri 27 Nov 2037"
    assert month.tooltip_at(QPoint(1, 1)) == ""
    # in the week an hour has room for one line: the first is shown, "+N" stands for the rest and lists the day
    vet = qloop.run_until_complete(
        ctx.store.schedules.create("alice", "g", {"type": "once", "at": "2037-11-27T16:15:00Z"}, name="vet", now=now)
    )
    panel.show_view(1)
    panel.reload()
    settle(qloop, ctx)
    week = panel.calendar.week
    week.grab()
    friday_16 = week._cell(4, 16)
    lines = week.lines_for(date(2037, 11, 27), 16)
    ids = [line.schedule_id for line in lines]  # in time order; the demo's hourly schedule may fire there too
    assert ids.index(vet.schedule_id) < ids.index(made.schedule_id)
    (more,) = [rect for rect, day, hidden in week.more_hits if friday_16.contains(rect.center())]
    assert (
        week.tooltip_at(more.center()) == f"{len(lines) - 1} more on Friday 27 November: click to list all of that day"
    )
    assert [line for rect, line in week.hits if friday_16.contains(rect.center())] == lines[:1]
    QTest.mouseClick(week, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, more.center())
    assert panel.day_dialog.isVisible() and panel.day_dialog.day == date(2037, 11, 27)
    texts = panel.day_dialog.texts()
    assert "16:15  vet — fires" in texts and f"16:45  {long} — fires" in texts
    assert len(texts) == len(by_day(week.items)[date(2037, 11, 27)])
