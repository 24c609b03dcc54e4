"""The scheduler store: every write transactional, run bookkeeping, pruning, cascades."""

from datetime import datetime, timedelta, timezone

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError

NOW = datetime(2037, 11, 22, 2, 30, tzinfo=timezone.utc)
CRON = {"type": "cron", "expression": "0 8 * * *", "timezone": "Asia/Kolkata"}


def at(minutes):
    return NOW + timedelta(minutes=minutes)


@pytest.fixture
def sched(store):
    return store, store.inner.schedules


def run(store, coro):
    return store.loop.run_until_complete(coro)


def test_create_stores_exact_json_and_next_run(sched):
    store, s = sched
    made = run(store, s.create("alice", "Morning briefing", CRON, name="brief", now=NOW))
    assert made.cadence_json == '{"expression":"0 8 * * *","timezone":"Asia/Kolkata","type":"cron"}'
    assert (made.status, made.next_run_at, made.consecutive_failures) == (
        "active",
        "2037-11-23T02:30:00.000000+00:00",
        0,
    )
    assert made.created_at == made.updated_at == "2037-11-22T02:30:00.000000+00:00"
    assert run(store, s.get(made.schedule_id)) == made


def test_create_rejects_bad_input_and_writes_nothing(sched):
    store, s = sched
    cases = [
        (("alice", "g", {"type": "once", "at": "2037-01-01T00:00:00Z"}), "is in the past"),
        (("alice", "g", {"type": "interval", "every_secs": 10}), "below the minimum of 60"),
        (("alice", "", CRON), "goal must be a non-empty string"),
        (("alice", "g", {"type": "cron", "expression": "0 8 * * *", "timezone": "Nowhere/Land"}), "unknown time zone"),
    ]
    for args, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            run(store, s.create(*args, now=NOW))
    with pytest.raises(InvalidInputError, match="notification policy must be one of always, conditional, never"):
        run(store, s.create("alice", "g", CRON, notification_policy="loud", now=NOW))
    assert store.sql("SELECT count(*) FROM schedules") == [(0,)]


def test_pause_clears_and_resume_recomputes_from_now(sched):
    store, s = sched
    made = run(store, s.create("alice", "hourly check", {"type": "interval", "every_secs": 3600}, now=NOW))
    assert made.next_run_at == "2037-11-22T03:30:00.000000+00:00"
    paused = run(store, s.update(made.schedule_id, {"status": "paused"}, now=at(10)))
    assert (paused.status, paused.next_run_at) == ("paused", None)
    resumed = run(store, s.update(made.schedule_id, {"status": "active"}, now=at(120)))
    assert (resumed.status, resumed.next_run_at) == ("active", "2037-11-22T05:30:00.000000+00:00")
    edited = run(store, s.update(made.schedule_id, {"cadence": {"type": "interval", "every_secs": 600}}, now=at(121)))
    assert edited.next_run_at == "2037-11-22T04:41:00.000000+00:00"
    assert edited.cadence_json == '{"every_secs":600,"type":"interval"}'
    with pytest.raises(InvalidInputError, match="cannot change color"):
        run(store, s.update(made.schedule_id, {"color": "red"}))


def test_search_count_and_filters(sched):
    store, s = sched
    a = run(store, s.create("alice", "brief", CRON, name="Morning 100%_brief", now=NOW))
    b = run(store, s.create("alice", "watch", {"type": "interval", "every_secs": 3600}, name="inbox", now=at(1)))
    c = run(store, s.create("bob", "kpis", CRON, name="weekly kpis", now=at(2)))
    run(store, s.pause(b.schedule_id))
    assert [x.schedule_id for x in run(store, s.search())] == [c.schedule_id, b.schedule_id, a.schedule_id]
    assert [x.schedule_id for x in run(store, s.search(user_id="alice", status="active"))] == [a.schedule_id]
    assert [x.schedule_id for x in run(store, s.search(cadence_type="interval"))] == [b.schedule_id]
    assert [x.schedule_id for x in run(store, s.search(name_contains="100%_"))] == [a.schedule_id]
    assert run(store, s.search(name_contains="%")) == [run(store, s.get(a.schedule_id))]
    assert [x.schedule_id for x in run(store, s.search(limit=1, offset=1))] == [b.schedule_id]
    assert run(store, s.count(user_id="alice")) == 2 and run(store, s.count(status="paused")) == 1


def test_due_is_ordered_by_next_run(sched):
    store, s = sched
    late = run(store, s.create("u", "late", {"type": "interval", "every_secs": 7200}, now=NOW))
    soon = run(store, s.create("u", "soon", {"type": "interval", "every_secs": 600}, now=NOW))
    run(store, s.create("u", "future", {"type": "interval", "every_secs": 86400}, now=NOW))
    paused = run(store, s.create("u", "paused", {"type": "interval", "every_secs": 60}, now=NOW))
    run(store, s.pause(paused.schedule_id))
    assert [x.schedule_id for x in run(store, s.due(now=at(180)))] == [soon.schedule_id, late.schedule_id]
    assert run(store, s.due(now=at(5))) == []


def test_consecutive_failures_count_and_reset(sched):
    store, s = sched
    made = run(store, s.create("u", "job", {"type": "interval", "every_secs": 3600}, now=NOW))
    sid = made.schedule_id
    for i, status in enumerate(["failed", "failed", "cancelled", "failed", "success"]):
        r, after = run(
            store,
            s.record_run(
                sid, started_at=at(60 * i), finished_at=at(60 * i + 1), status=status, output_summary=f"run {i}"
            ),
        )
        assert r.status == status
        assert after.consecutive_failures == [1, 2, 0, 1, 0][i]
        assert after.last_run_status == status and after.last_run_at == r.finished_at
        assert after.next_run_at == (at(60 * i + 1) + timedelta(hours=1)).isoformat(timespec="microseconds")
    assert [r.output_summary for r in run(store, s.runs(sid))] == [f"run {i}" for i in (4, 3, 2, 1, 0)]


def test_repeated_failures_disable_and_one_shots_complete(sched):
    store, s = sched
    flaky = run(store, s.create("u", "flaky", {"type": "interval", "every_secs": 600}, now=NOW))
    for i in range(5):
        _, after = run(store, s.record_run(flaky.schedule_id, started_at=at(i), finished_at=at(i), status="failed"))
    assert (after.status, after.next_run_at, after.consecutive_failures) == ("disabled", None, 5)
    once = run(store, s.create("u", "remind", {"type": "once", "at": "2037-11-23T09:00:00Z"}, now=NOW))
    _, done = run(store, s.record_run(once.schedule_id, started_at=at(1), finished_at=at(2), status="success"))
    assert (done.status, done.next_run_at) == ("completed", None)
    with pytest.raises(InvalidInputError, match="the one-shot time has passed"):
        run(store, s.update(once.schedule_id, {"status": "active"}, now=datetime(2037, 11, 24, tzinfo=timezone.utc)))


def test_record_run_is_one_transaction(sched):
    store, s = sched
    made = run(store, s.create("u", "job", CRON, now=NOW))
    with pytest.raises(InvalidInputError, match="run status must be one of success, failed, cancelled"):
        run(store, s.record_run(made.schedule_id, started_at=at(1), finished_at=at(2), status="ok"))
    with pytest.raises(NotFoundError, match="no schedule 'missing'"):
        run(store, s.record_run("missing", started_at=at(1), finished_at=at(2), status="success"))
    store.exec_sql("UPDATE schedules SET cadence_json = 'not json' WHERE schedule_id = ?", (made.schedule_id,))
    with pytest.raises(InvalidInputError, match="cadence is not valid JSON"):
        run(store, s.record_run(made.schedule_id, started_at=at(1), finished_at=at(2), status="success"))
    assert store.sql("SELECT count(*) FROM schedule_runs") == [(0,)]
    assert store.sql("SELECT last_run_status FROM schedules") == [(None,)]


def test_prune_keeps_the_newest_and_delete_cascades(sched):
    store, s = sched
    a = run(store, s.create("u", "a", {"type": "interval", "every_secs": 600}, now=NOW))
    b = run(store, s.create("u", "b", {"type": "interval", "every_secs": 600}, now=NOW))
    for i in range(5):
        run(
            store,
            s.record_run(
                a.schedule_id,
                started_at=at(10 * i),
                finished_at=at(10 * i + 1),
                status="success",
                output_summary=f"a{i}",
            ),
        )
    run(store, s.record_run(b.schedule_id, started_at=at(0), finished_at=at(1), status="success"))
    assert run(store, s.prune_run_history(2)) == 3
    assert [r.output_summary for r in run(store, s.runs(a.schedule_id))] == ["a4", "a3"]
    assert len(run(store, s.runs(b.schedule_id))) == 1
    assert run(store, s.delete(a.schedule_id)) == 2
    assert store.sql("SELECT count(*) FROM schedule_runs WHERE schedule_id = ?", (a.schedule_id,)) == [(0,)]
    with pytest.raises(NotFoundError):
        run(store, s.get(a.schedule_id))
    with pytest.raises(NotFoundError):
        run(store, s.delete(a.schedule_id))
