"""Editing and cancelling Omega's scheduled tasks (``core/formats/omega_tasks.py``) on files built from Omega's
own migration scripts: only a pending task changes, in Omega's own columns and forms; a task Omega delivered or
changed meanwhile — in a real second process, with Omega's own SQL — is a conflict and is kept; whatever Omega
never does (delete, reactivate, create, a repeat it has no word for) is one clear line and writes nothing."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError
from oxmem_gui.core.errors import ReadOnlyError
from oxmem_gui.core.memory import open_memory
from tests.cli._support import assert_one_error_line, run_json
from tests.cli._support import run as cli
from tests.core.formats import fixtures as fx
from tests.core.formats.test_omega_facts import digest, invariants, rows, the_agent

BRIEFING, PLANTS, RENT = fx.OMEGA_TASKS["briefing"], fx.OMEGA_TASKS["plants"], fx.OMEGA_TASKS["rent"]
DELIVERED = fx.OMEGA_TASKS["dentist-reminder"]
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
TASK = "SELECT description, due_at, repeat, status FROM scheduled_tasks WHERE id = ?"
#: Omega's own update_task (store/tasks.rs lines 344–347) as the agent runs it
OMEGA_UPDATE = "UPDATE scheduled_tasks SET description = ? WHERE id LIKE ? AND sender_id = ? AND status = 'pending'"


@pytest.fixture
def omega(tmp_path: Path) -> Path:
    return fx.make_omega(tmp_path / "memory.db")


def run(path: Path, fn, read_only: bool = False):
    async def go():
        async with await open_memory(path, read_only=read_only, embedding="deterministic") as m:
            return await fn(m)

    return asyncio.run(go())


def baseline(path: Path) -> tuple[list, list]:
    return (
        rows(path, "SELECT id FROM messages_fts_docsize ORDER BY id"),
        rows(path, "SELECT name, applied_at FROM _migrations ORDER BY name"),
    )


def test_description_and_a_weekday_repeat_are_omegas_update_task(omega):
    before = baseline(omega)

    async def edit(m):
        loaded = await m.schedules.get(BRIEFING)
        cadence = {"type": "cron", "expression": "15 6 * * 1-5", "timezone": "UTC"}
        return await m.schedules.update(
            BRIEFING, {"goal": "Briefing: calendar and trains", "cadence": cadence}, NOW, expected=loaded
        )

    changed = run(omega, edit)
    assert rows(omega, TASK, (BRIEFING,)) == [
        ("Briefing: calendar and trains", "2026-03-02 06:15:00", "weekdays", "pending")
    ]
    assert (changed.goal, changed.next_run_at) == ("Briefing: calendar and trains", "2026-03-02T06:15:00.000000+00:00")
    invariants(omega, *before)


@pytest.mark.parametrize(
    "cadence, due, repeat",
    [
        ({"type": "once", "at": "2026-04-01T09:30:00Z"}, "2026-04-01 09:30:00", None),
        ({"type": "cron", "expression": "0 7 * * *", "timezone": "UTC"}, "2026-03-02 07:00:00", "daily"),
        ({"type": "cron", "expression": "0 18 * * 3", "timezone": "UTC"}, "2026-03-04 18:00:00", "weekly"),
        ({"type": "cron", "expression": "0 8 15 * *", "timezone": "UTC"}, "2026-03-15 08:00:00", "monthly"),
    ],
)
def test_each_cadence_omega_has_becomes_its_due_at_and_repeat(omega, cadence, due, repeat):
    run(omega, lambda m: m.schedules.update(PLANTS, {"cadence": cadence}, NOW))
    assert rows(omega, TASK, (PLANTS,)) == [("Water the balcony plants", due, repeat, "pending")]


def test_pausing_is_omegas_cancel_task(omega):
    before = baseline(omega)
    cancelled = run(omega, lambda m: m.schedules.pause(PLANTS))
    assert rows(omega, TASK, (PLANTS,))[0][3] == "cancelled" and cancelled.status == "disabled"
    assert rows(omega, "SELECT count(*) FROM scheduled_tasks") == [(8,)]  # never deleted
    invariants(omega, *before)


def test_omega_changing_the_task_meanwhile_is_a_conflict_and_is_kept(omega):
    async def scenario(m):
        loaded = await m.schedules.get(PLANTS)
        the_agent(omega, OMEGA_UPDATE, ("Water the plants and the basil", PLANTS[:8] + "%", "4242"))
        with pytest.raises(ConflictError) as info:
            await m.schedules.update(PLANTS, {"goal": "Water the plants"}, NOW, expected=loaded)
        return info.value.current

    theirs = run(omega, scenario)
    assert theirs.goal == "Water the plants and the basil"
    assert rows(omega, TASK, (PLANTS,))[0][0] == "Water the plants and the basil"


def test_a_task_delivered_meanwhile_is_a_conflict(omega):
    async def scenario(m):
        loaded = await m.schedules.get(PLANTS)
        the_agent(omega, "UPDATE scheduled_tasks SET status = 'delivered', delivered_at = datetime('now') WHERE id = ?",
                  (PLANTS,))  # fmt: skip
        with pytest.raises(ConflictError):
            await m.schedules.pause(PLANTS, expected=loaded)

    run(omega, scenario)
    assert rows(omega, TASK, (PLANTS,))[0][3] == "delivered"


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m.schedules.delete(PLANTS), ReadOnlyError, "Omega never deletes a task"),
        (lambda m: m.schedules.resume(RENT), InvalidInputError, "is cancelled: Omega changes only a pending task"),
        (lambda m: m.schedules.update(DELIVERED, {"goal": "x"}, NOW), InvalidInputError, "is delivered"),
        (lambda m: m.schedules.create("4242", "g", {"type": "once", "at": "2037-01-01T00:00:00Z"}), ReadOnlyError,
         "Omega creates its tasks"),
        (lambda m: m.schedules.update(PLANTS, {"cadence": {"type": "interval", "every_secs": 3600}}, NOW),
         InvalidInputError, "Omega repeats a task daily"),
        (lambda m: m.schedules.update(PLANTS, {"cadence": {"type": "cron", "expression": "0 7 * * *",
                                                           "timezone": "Europe/Paris"}}, NOW),
         InvalidInputError, "in UTC"),
        (lambda m: m.schedules.update(PLANTS, {"cadence": {"type": "cron", "expression": "*/5 * * * *"}}, NOW),
         InvalidInputError, "Omega repeats a task daily"),
        (lambda m: m.schedules.update(PLANTS, {"cadence": {"type": "once", "at": "2026-02-01T00:00:00Z"}}, NOW),
         InvalidInputError, "in the future"),
        (lambda m: m.schedules.update(PLANTS, {"goal": "   "}, NOW), InvalidInputError, "needs a description"),
        (lambda m: m.schedules.update(PLANTS, {"name": "Plants"}, NOW), InvalidInputError, "no name of their own"),
        (lambda m: m.schedules.update("no-such-task", {"goal": "x"}, NOW), NotFoundError, "no task"),
    ],
)  # fmt: skip
def test_what_omega_never_does_is_one_line_and_writes_nothing(omega, call, error, message):
    before = digest(omega)
    with pytest.raises(error, match=message):
        run(omega, call)
    assert digest(omega) == before


def test_read_only_refuses(omega):
    before = digest(omega)
    with pytest.raises(ReadOnlyError, match="enable editing"):
        run(omega, lambda m: m.schedules.pause(PLANTS), read_only=True)
    assert digest(omega) == before


def test_the_command_line_edits_and_cancels_a_task(omega, capsys):
    doc = run_json(capsys, "--db", str(omega), "schedules", "update", BRIEFING, "--goal", "Briefing", "--cron",
                   "15 6 * * *")  # fmt: skip
    assert doc["goal"] == "Briefing" and doc["cadence"] == {
        "expression": "15 6 * * *",
        "timezone": "UTC",
        "type": "cron",
    }
    assert rows(omega, TASK, (BRIEFING,))[0][2:] == ("daily", "pending")
    assert run_json(capsys, "--db", str(omega), "schedules", "pause", BRIEFING)["status"] == "disabled"
    assert rows(omega, TASK, (BRIEFING,))[0][3] == "cancelled"
    before = digest(omega)
    for argv in (("schedules", "delete", PLANTS), ("schedules", "update", PLANTS), ("schedules", "update", PLANTS,
                 "--every", "3600")):  # fmt: skip
        code, out, err = cli(capsys, "--db", str(omega), *argv)
        assert_one_error_line(code, out, err, "nothing")
    assert digest(omega) == before
