"""aidaemon's scheduled tasks paused, resumed and deleted the way its own tools do
(``core/formats/aidaemon_tasks.py``): legacy ``scheduled_tasks`` and v0.9+ goal schedules, with what the tool
never does refused and a task the agent ran meanwhile kept as a conflict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError
from oxmem_gui.core.errors import ReadOnlyError
from tests.core.formats.aidaemon_files import (
    NOW,
    TG,
    digest,
    invariants,
    rows,
    run,
    the_agent,
)

# -- legacy scheduled tasks: pause, resume, delete (its scheduler tool at 672743d) ------------------------------


def test_legacy_tasks_are_paused_resumed_and_deleted_as_aidaemons_tool_does(legacy, capsys):
    from datetime import datetime, timezone

    from tests.cli._support import run_json

    task = "SELECT is_paused, next_run_at FROM scheduled_tasks WHERE id = ?"
    assert run_json(capsys, "--db", str(legacy), "schedules", "pause", "task-briefing")["status"] == "paused"
    assert rows(legacy, task, ("task-briefing",))[0][0] == 1
    resumed = run_json(capsys, "--db", str(legacy), "schedules", "resume", "weekly-report")
    (paused, nxt) = rows(legacy, task, ("weekly-report",))[0]
    when = datetime.fromisoformat(nxt)
    assert paused == 0 and when > datetime.now(timezone.utc) and when.weekday() == 4 and when.hour == 17
    assert resumed["next_run_at"] == when.isoformat(timespec="microseconds")
    assert run_json(capsys, "--db", str(legacy), "schedules", "delete", "task-ci") == {"deleted": "task-ci", "runs": 0}
    assert rows(legacy, "SELECT id FROM scheduled_tasks ORDER BY id") == [
        ("remind-passport",),
        ("task-briefing",),
        ("weekly-report",),
    ]
    assert rows(legacy, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m.schedules.update("task-ci", {"goal": "another prompt"}), InvalidInputError, "only pause"),
        (lambda m: m.schedules.update("task-ci", {"cadence": {"type": "cron", "expression": "0 7 * * *"}}),
         InvalidInputError, "only pause"),
        (lambda m: m.schedules.create("u", "g", {"type": "once", "at": "2038-01-01T00:00:00Z"}), ReadOnlyError,
         "creates its scheduled tasks"),
        (lambda m: m.schedules.delete("no-such-task"), NotFoundError, "no scheduled task"),
    ],
)  # fmt: skip
def test_what_aidaemons_tool_never_does_to_a_task_writes_nothing(legacy, call, error, message):
    before = digest(legacy)
    with pytest.raises(error, match=message):
        run(legacy, call)
    assert digest(legacy) == before


def test_a_task_the_agent_ran_meanwhile_is_a_conflict_and_is_kept(legacy):
    async def scenario(m):
        loaded = await m.schedules.get("task-briefing")
        the_agent(legacy, ("UPDATE scheduled_tasks SET last_run_at = ?, next_run_at = ?, updated_at = ? WHERE id = ?",
                           (NOW, "2037-11-25T08:00:00+00:00", NOW, "task-briefing")))  # fmt: skip
        with pytest.raises(ConflictError) as info:
            await m.schedules.delete("task-briefing", expected=loaded)
        return info.value.current

    theirs = run(legacy, scenario)
    assert theirs.next_run_at == "2037-11-25T08:00:00.000000+00:00"
    assert rows(legacy, "SELECT count(*) FROM scheduled_tasks WHERE id = 'task-briefing'") == [(1,)]


# -- v0.9+ goal schedules: pause, resume, cancel one (manage_memories at 39a1955) ----------------------------------

#: aidaemon's own inserts (src/state/sqlite/goals.rs: create_goal lines 19–25, create_goal_schedule 706–709)
GOAL_INSERT = (
    "INSERT INTO goals (id, description, domain, goal_type, status, priority, conditions, context, resources, "
    "budget_per_check, budget_daily, tokens_used_today, tokens_used_day, last_useful_action, created_at, updated_at, "
    "completed_at, parent_goal_id, session_id, notified_at, notification_attempts, dispatch_failures, progress_notes, "
    "source_episode_id, legacy_int_id) VALUES (?, ?, 'orchestration', 'continuous', 'active', 'medium', NULL, NULL, "
    "NULL, NULL, NULL, 0, '1970-01-01', NULL, ?, ?, NULL, NULL, ?, NULL, 0, 0, NULL, NULL, NULL)"
)
SCHEDULE_INSERT = (
    "INSERT INTO goal_schedules (id, goal_id, cron_expr, tz, original_schedule, fire_policy, is_one_shot, is_paused, "
    "last_run_at, next_run_at, created_at, updated_at) VALUES (?, ?, ?, 'local', ?, 'coalesce', 0, 0, NULL, ?, ?, ?)"
)


@pytest.fixture
def goals(current: Path) -> Path:
    the_agent(
        current,
        (GOAL_INSERT, ("goal-digest", "Send me a digest of new CI failures", NOW, NOW, TG)),
        (SCHEDULE_INSERT, ("sched-morning", "goal-digest", "0 0 8 * * *", "every morning at 8", NOW, NOW, NOW)),
        (SCHEDULE_INSERT, ("sched-evening", "goal-digest", "0 0 18 * * *", "and at 6 pm", NOW, NOW, NOW)),
    )
    return current


def test_goal_schedules_are_shown_and_paused_resumed_and_cancelled_as_aidaemon_does(goals, monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")

    async def work(m):
        listed = await m.schedules.search()
        morning = await m.schedules.get("sched-morning")
        paused = await m.schedules.pause("sched-morning", expected=morning)
        resumed = await m.schedules.resume("sched-morning", expected=paused)
        removed = await m.schedules.delete("sched-evening", expected=await m.schedules.get("sched-evening"))
        return listed, morning, paused, resumed, removed, m.capabilities

    listed, morning, paused, resumed, removed, caps = run(goals, work)
    assert caps.has_schedules and sorted(s.schedule_id for s in listed) == ["sched-evening", "sched-morning"]
    assert (morning.goal, morning.user_id, morning.status) == ("Send me a digest of new CI failures", TG, "active")
    assert json.loads(morning.cadence_json) == {"expression": "0 8 * * *", "timezone": "Europe/Berlin", "type": "cron"}
    assert "seconds field '0' dropped" in morning.note and "tz 'local'" in morning.note
    assert (paused.status, resumed.status, removed) == ("paused", "active", 0)
    state = rows(goals, "SELECT id, is_paused, next_run_at FROM goal_schedules ORDER BY id")
    assert state == [("sched-morning", 0, NOW)]  # resuming one schedule keeps its next run, as the tool does
    assert rows(goals, "SELECT status FROM goals") == [("active",)]  # the goal itself is left as it is
    invariants(goals)


def test_a_goal_schedule_the_agent_fired_meanwhile_is_a_conflict(goals):
    async def scenario(m):
        loaded = await m.schedules.get("sched-morning")
        the_agent(goals, ("UPDATE goal_schedules SET last_run_at = ?, next_run_at = ?, updated_at = ? WHERE id = ?",
                          (NOW, "2037-11-25T08:00:00+01:00", NOW, "sched-morning")))  # fmt: skip
        with pytest.raises(ConflictError):
            await m.schedules.pause("sched-morning", expected=loaded)

    run(goals, scenario)
    assert rows(goals, "SELECT is_paused FROM goal_schedules WHERE id = 'sched-morning'") == [(0,)]
