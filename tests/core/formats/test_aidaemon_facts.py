"""Editing aidaemon's facts and clearing its sessions (``core/formats/aidaemon_facts.py``, ``aidaemon_sessions.py``)
on files built from aidaemon's own schema strings (``upstream/aidaemon``, commit 39a1955), plaintext, legacy and
SQLCipher-encrypted: each edit keeps the agent's invariants (one active version per key, history rows, integrity,
foreign keys), a change the agent made meanwhile — in a real second process, with aidaemon's own SQL — is a
conflict and is kept, bad input writes nothing, and no plaintext of an encrypted file is ever left on disk."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError
from oxmem_gui.core.embeddings.backends import choose_backend
from oxmem_gui.core.errors import EmbeddingError, KeyRequiredError, ReadOnlyError
from oxmem_gui.core.formats import base
from oxmem_gui.core.formats.aidaemon_facts import canonical_key, embedding_text
from oxmem_gui.core.memory import open_memory
from tests.core.formats import fixtures as fx
from tests.semantic import model_dir_or_skip

TG = "telegram:123456789"
#: aidaemon's own statements (facts.rs at 39a1955): upsert_fact's supersede (line 480) and insert (line 489),
#: bump_fact_recall (line 72)
SUPERSEDE = "UPDATE facts SET superseded_at = ? WHERE id = ?"
INSERT = (
    "INSERT INTO facts (category, key, value, source, created_at, updated_at, recall_count, channel_id, privacy, "
    "embedding) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)"
)
RECALL = "UPDATE facts SET recall_count = recall_count + 1, last_recalled_at = ? WHERE id IN (?)"
NOW = "2026-11-24T09:00:00.000000001+00:00"
#: what aidaemon reads: get_facts (facts.rs line 757) and backfill_fact_embeddings (mod.rs line 462)
ACTIVE = "SELECT id, value FROM facts WHERE category = 'user' AND key = ? AND superseded_at IS NULL"
BACKFILL = "SELECT id, category, key, value FROM facts WHERE embedding IS NULL AND superseded_at IS NULL"


@pytest.fixture
def current(tmp_path: Path) -> Path:
    return fx.make_aidaemon(tmp_path / "aidaemon.db")


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    return fx.make_aidaemon(tmp_path / "aidaemon.db", "legacy")


def rows(path: Path, sql: str, args: tuple = (), key: str | None = None) -> list[tuple]:
    """Read ``path`` in a second process (sqlite3, or sqlcipher3 with ``key``): never a handle here."""
    code = (
        "import sys, json\n"
        "key = sys.argv[3] or None\n"
        "if key:\n    import sqlcipher3 as lib\nelse:\n    import sqlite3 as lib\n"
        "conn = lib.connect(sys.argv[1])\n"
        "if key: conn.execute(f\"PRAGMA key = '{key}'\")\n"
        "print(json.dumps(conn.execute(sys.argv[2], json.loads(sys.argv[4])).fetchall()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), sql, key or "", json.dumps(list(args))],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return [tuple(r) for r in json.loads(done.stdout)]


def the_agent(path: Path, *statements: tuple[str, tuple], key: str | None = None) -> None:
    """aidaemon writing to its file from another process, in one transaction, foreign keys on."""
    code = (
        "import sys, json\n"
        "key = sys.argv[2] or None\n"
        "if key:\n    import sqlcipher3 as lib\nelse:\n    import sqlite3 as lib\n"
        "conn = lib.connect(sys.argv[1], isolation_level=None)\n"
        "if key: conn.execute(f\"PRAGMA key = '{key}'\")\n"
        "conn.execute('PRAGMA foreign_keys = ON'); conn.execute('BEGIN IMMEDIATE')\n"
        "for sql, args in json.loads(sys.argv[3]): conn.execute(sql, args)\n"
        "conn.execute('COMMIT'); conn.close()\n"
    )
    payload = json.dumps([[sql, list(args)] for sql, args in statements])
    subprocess.run([sys.executable, "-c", code, str(path), key or "", payload], check=True, timeout=60)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(path: Path, fn, read_only: bool = False, key: str | None = None):
    async def go():
        async with await open_memory(path, read_only=read_only, key=key, embedding="deterministic") as m:
            return await fn(m)

    return asyncio.run(go())


def invariants(path: Path, key: str | None = None) -> None:
    """What aidaemon relies on: the file is sound, one active version per (category, key), no foreign key broken."""
    assert rows(path, "PRAGMA integrity_check", key=key) == [("ok",)]
    assert rows(path, "PRAGMA foreign_key_check", key=key) == []
    assert rows(
        path,
        "SELECT count(*) FROM (SELECT 1 FROM facts WHERE superseded_at IS NULL GROUP BY category, key "
        "HAVING count(*) > 1)",
        key=key,
    ) == [(0,)]


# -- editing a fact: a new version, history kept ------------------------------------------------------------


def test_an_edit_supersedes_the_loaded_version_and_inserts_the_new_one(current):
    model_dir_or_skip()

    async def edit(m):
        (tz,) = [n for n in await m.list_notes("user") if n.details["key"] == "timezone"]
        return tz, await m.update_note("user", tz.note_id, "timezone: Asia/Tokyo", expected=tz)

    loaded, new = run(current, edit)
    assert (loaded.note_id, new.note_id, new.content) == ("fact:3", "fact:8", "timezone: Asia/Tokyo")
    assert [h["value"] for h in new.details["history"]] == ["Europe/Berlin", "America/New_York", "Europe/London"]
    assert rows(current, ACTIVE, ("timezone",)) == [(8, "Asia/Tokyo")]
    old = rows(current, "SELECT superseded_at IS NOT NULL, value FROM facts WHERE id = 3")
    assert old == [(1, "Europe/Berlin")]
    fresh = rows(current, "SELECT source, recall_count, privacy, channel_id, length(embedding) FROM facts WHERE id = 8")
    assert fresh == [("user", 0, "global", None, 1536)]
    # aidaemon's vector of build_fact_embedding_text, from the same model
    text = embedding_text("user", "timezone", "Asia/Tokyo")
    assert text == "user - timezone: Asia/Tokyo. The user's timezone is Asia/Tokyo."
    (hexed,) = rows(current, "SELECT hex(embedding) FROM facts WHERE id = 8")[0]
    stored = np.frombuffer(bytes.fromhex(hexed), dtype="<f4")
    expected = choose_backend("semantic").backend.embed([text])[0]
    assert np.allclose(stored, expected, atol=1e-6) and abs(float(np.linalg.norm(stored)) - 1) < 1e-4
    invariants(current)


def test_without_the_model_the_new_version_waits_for_aidaemons_backfill(current, monkeypatch):
    def missing(*args, **kwargs):
        raise EmbeddingError("the semantic model is not installed")

    monkeypatch.setattr(base, "choose_backend", missing)
    unembedded = rows(current, BACKFILL)
    new = run(current, lambda m: m.update_note("user", "fact:3", "timezone: Asia/Tokyo"))
    assert new.details["embedded"] is False
    assert rows(current, "SELECT embedding IS NULL FROM facts WHERE id = 8") == [(1,)]
    # aidaemon's startup backfill embeds this row next; the superseded one it no longer looks at
    assert sorted(rows(current, BACKFILL)) == sorted([*unembedded, (8, "user", "timezone", "Asia/Tokyo")])
    assert (3, "user", "timezone", "Europe/Berlin") not in unembedded
    invariants(current)


def test_the_same_text_writes_nothing(current):
    before = digest(current)
    note = run(current, lambda m: m.get_note("user", "fact:3"))
    again = run(current, lambda m: m.update_note("user", "fact:3", " timezone :  Europe/Berlin ", expected=note))
    assert again.note_id == "fact:3" and digest(current) == before


def test_a_rename_onto_an_active_key_is_refused(current):
    before = digest(current)
    for text in ("name: Sam", "Name: Sam", "NAME : Sam"):  # exactly, and as aidaemon's canonical key
        with pytest.raises(InvalidInputError, match="user already has a fact 'name'"):
            run(current, lambda m, t=text: m.update_note("user", "fact:3", t))
    with pytest.raises(InvalidInputError, match="already has a fact 'timezone'"):
        run(current, lambda m: m.save_note("user", "TimeZone: UTC"))
    assert digest(current) == before
    assert canonical_key(" Dog-Name ") == "dog_name" and canonical_key("ümlaut key") == "mlaut_key"


def test_delete_supersedes_and_keeps_the_history(current):
    run(current, lambda m: m.delete_notes("user", ["fact:3"]))
    assert rows(current, ACTIVE, ("timezone",)) == []
    assert rows(current, "SELECT count(*) FROM facts WHERE key = 'timezone' AND superseded_at IS NOT NULL") == [(3,)]
    assert [n.details["key"] for n in run(current, lambda m: m.list_notes("user"))] == ["name"]
    invariants(current)


def test_a_new_fact_is_inserted_as_aidaemon_does(current):
    note = run(current, lambda m: m.save_note("user", "diet: vegetarian"))
    assert note.note_id == "fact:8" and note.user == "user"
    assert rows(current, "SELECT category, key, value, source, superseded_at FROM facts WHERE id = 8") == [
        ("user", "diet", "vegetarian", "user", None)
    ]
    invariants(current)


def test_undo_writes_the_old_value_back_as_one_more_version(current):
    async def edit_then_undo(m):
        tz = await m.get_note("user", "fact:3")
        new = await m.update_note("user", "fact:3", "zone: Asia/Tokyo", expected=tz)  # a rename, too
        back = await m.restore_notes([tz], expected={tz.note_id: None, new.note_id: new})
        return back, await m.list_notes("user")

    back, notes = run(current, edit_then_undo)
    assert [n.content for n in back] == ["timezone: Europe/Berlin"] and back[0].note_id == "fact:9"
    assert sorted(n.content for n in notes) == ["name: Sam", "timezone: Europe/Berlin"]
    assert rows(current, "SELECT id, key, value, superseded_at IS NOT NULL FROM facts WHERE id >= 8") == [
        (8, "zone", "Asia/Tokyo", 1),
        (9, "timezone", "Europe/Berlin", 0),
    ]
    invariants(current)


# -- the agent meanwhile -----------------------------------------------------------------------------------------


def test_the_agent_superseding_meanwhile_is_a_conflict_and_is_kept(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(
            current,
            (SUPERSEDE, (NOW, 3)),
            (INSERT, ("user", "timezone", "Asia/Seoul", "agent", NOW, NOW, None, "global", None)),
        )
        with pytest.raises(ConflictError) as info:
            await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=loaded)
        return info.value

    error = run(current, scenario)
    assert "changed by another program" in str(error) and "Asia/Seoul" in str(error)
    assert error.current.note_id == "fact:8" and error.current.content == "timezone: Asia/Seoul"
    assert rows(current, ACTIVE, ("timezone",)) == [(8, "Asia/Seoul")]
    assert rows(current, "SELECT count(*) FROM facts") == [(8,)]


def test_the_agent_forgetting_meanwhile_is_a_conflict(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:4")
        the_agent(current, (SUPERSEDE, (NOW, 4)))
        with pytest.raises(ConflictError, match="deleted by another program") as info:
            await m.delete_notes("user", ["fact:4"], expected=[loaded])
        return info.value.current

    assert run(current, scenario) is None
    assert rows(current, "SELECT superseded_at FROM facts WHERE id = 4") == [(NOW,)]


def test_the_agent_recalling_a_fact_is_no_conflict(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(current, (RECALL, (NOW, 3)))
        return await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=loaded)

    assert run(current, scenario).content == "timezone: Asia/Tokyo"
    assert rows(current, "SELECT recall_count FROM facts WHERE id = 3") == [(3,)]


# -- bad input, read-only, episodes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.update_note("user", "fact:3", "timezone:"), "written 'key: value'"),
        (lambda m: m.update_note("user", "fact:3", "   "), "key: value"),
        (lambda m: m.save_note("user", "x: y", ["tag"]), "aidaemon's facts have no tags"),
        (lambda m: m.update_note("user", "fact:1", "timezone: UTC"), "no active fact 'fact:1'"),
        (lambda m: m.update_note("user", "fact:99", "timezone: UTC"), "no active fact 'fact:99'"),
        (lambda m: m.delete_notes("user", ["note-1"]), "named fact:<id>"),
        (lambda m: m.save_note("episodes", "x: y"), "episodes only from its own consolidation"),
        (lambda m: m.delete_notes("episodes", ["episode:1"]), "episodes only from its own consolidation"),
        (lambda m: m.forget("no-such-session"), "no session 'no-such-session'"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(current, call, message):
    before = digest(current)
    with pytest.raises((InvalidInputError, NotFoundError), match=message):
        run(current, call)
    assert digest(current) == before


def test_read_only_refuses_and_a_read_only_folder_too(current, tmp_path):
    before = digest(current)
    with pytest.raises(ReadOnlyError, match="enable editing"):
        run(current, lambda m: m.update_note("user", "fact:3", "timezone: UTC"), read_only=True)
    current.chmod(0o400)
    try:
        if os.geteuid() != 0:  # root writes a 0400 file anyway; the refusal is then SQLite's, tested elsewhere
            with pytest.raises(ReadOnlyError, match="read-only"):
                run(current, lambda m: m.update_note("user", "fact:3", "timezone: UTC"))
    finally:
        current.chmod(0o600)
    assert digest(current) == before


# -- clearing a session (aidaemon's /clear) -------------------------------------------------------------------------


def test_forget_clears_events_and_the_summary_and_keeps_episodes_and_facts(current):
    the_agent(
        current,
        (
            "INSERT INTO conversation_summaries (session_id, summary, message_count, last_message_id, updated_at) "
            "VALUES (?, 's', 3, '3', ?)",
            (TG, NOW),
        ),
    )
    facts = rows(current, "SELECT id, key, value, superseded_at FROM facts")
    run(current, lambda m: m.forget(TG))
    assert rows(current, "SELECT count(*) FROM events WHERE session_id = ?", (TG,)) == [(0,)]
    assert rows(current, "SELECT count(*) FROM conversation_summaries") == [(0,)]
    assert rows(current, "SELECT count(*) FROM events") == [(10,)]
    assert rows(current, "SELECT count(*) FROM episodes WHERE session_id = ?", (TG,)) == [(1,)]
    assert rows(current, "SELECT id, key, value, superseded_at FROM facts") == facts
    assert TG not in [s.session_id for s in run(current, lambda m: m.sessions_page())]
    invariants(current)


def test_legacy_facts_are_edited_in_place_and_messages_cleared(legacy):
    note = run(legacy, lambda m: m.update_note("user", "fact:1", "name: Sam R."))
    assert note.note_id == "fact:1" and note.details["history"] == []
    assert rows(legacy, "SELECT key, value, source FROM facts WHERE id = 1") == [("name", "Sam R.", "user")]
    run(legacy, lambda m: m.delete_notes("user", ["fact:2"]))
    assert rows(legacy, "SELECT count(*) FROM facts WHERE id = 2") == [(0,)]
    (session,) = {r[0] for r in rows(legacy, "SELECT session_id FROM messages")}
    run(legacy, lambda m: m.forget(session))
    assert rows(legacy, "SELECT count(*) FROM messages") == [(0,)]
    assert rows(legacy, "SELECT count(*) FROM (SELECT 1 FROM facts GROUP BY category, key HAVING count(*) > 1)") == [
        (0,)
    ]
    assert rows(legacy, "PRAGMA integrity_check") == [("ok",)]


# -- encrypted: edits go into the encrypted file itself (sqlcipher3 is a test dependency) ---------------------------


@pytest.fixture
def encrypted(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    return fx.make_encrypted_aidaemon(folder / "aidaemon.db")


def test_an_encrypted_file_is_edited_in_place_with_its_key(encrypted, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    listing = sorted(os.listdir(encrypted.parent))

    async def edits(m):
        tz = await m.get_note("user", "fact:3")
        new = await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=tz)
        listed = [r.session_id for r in await m.sessions_page()]
        await m.forget(TG)
        assert TG in listed and [r.session_id for r in await m.sessions_page()] == [s for s in listed if s != TG]
        return new, await m.list_notes("user")

    new, notes = run(encrypted, edits, key=fx.AIDAEMON_KEY)
    assert new.note_id == "fact:8" and "timezone: Asia/Tokyo" in [n.content for n in notes]  # the snapshot follows
    assert not encrypted.read_bytes().startswith(b"SQLite format 3")
    assert rows(encrypted, ACTIVE, ("timezone",), key=fx.AIDAEMON_KEY) == [(8, "Asia/Tokyo")]
    assert rows(encrypted, "SELECT count(*) FROM events WHERE session_id = ?", (TG,), key=fx.AIDAEMON_KEY) == [(0,)]
    invariants(encrypted, key=fx.AIDAEMON_KEY)
    assert sorted(os.listdir(encrypted.parent)) == listing  # no plaintext copy or sidecar left beside it
    assert os.listdir(tmp_path / "tmp") == []
    assert (encrypted.stat().st_mode & 0o777) == 0o600


def test_an_encrypted_backup_stays_encrypted_under_the_same_key(encrypted, tmp_path):
    backup = run(encrypted, lambda m: m.backup_to(tmp_path / "backups" / "a.db"), read_only=True, key=fx.AIDAEMON_KEY)
    assert not backup.read_bytes().startswith(b"SQLite format 3") and (backup.stat().st_mode & 0o777) == 0o600
    assert rows(backup, "SELECT count(*) FROM facts", key=fx.AIDAEMON_KEY) == [(7,)]


def test_an_encrypted_conflict_and_a_wrong_key_write_nothing(encrypted):
    with pytest.raises(KeyRequiredError, match="wrong key"):
        run(encrypted, lambda m: m.update_note("user", "fact:3", "timezone: UTC"), key="0" * 64)

    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(encrypted, (SUPERSEDE, (NOW, 3)), key=fx.AIDAEMON_KEY)
        with pytest.raises(ConflictError, match="deleted by another program"):
            await m.update_note("user", "fact:3", "timezone: UTC", expected=loaded)

    run(encrypted, scenario, key=fx.AIDAEMON_KEY)
    assert rows(encrypted, "SELECT count(*), max(id) FROM facts", key=fx.AIDAEMON_KEY) == [(7, 7)]
    assert rows(encrypted, ACTIVE, ("timezone",), key=fx.AIDAEMON_KEY) == []


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
        (lambda m: m.schedules.create("u", "g", {"type": "once", "at": "2027-01-01T00:00:00Z"}), ReadOnlyError,
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
                           (NOW, "2026-11-25T08:00:00+00:00", NOW, "task-briefing")))  # fmt: skip
        with pytest.raises(ConflictError) as info:
            await m.schedules.delete("task-briefing", expected=loaded)
        return info.value.current

    theirs = run(legacy, scenario)
    assert theirs.next_run_at == "2026-11-25T08:00:00.000000+00:00"
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
                          (NOW, "2026-11-25T08:00:00+01:00", NOW, "sched-morning")))  # fmt: skip
        with pytest.raises(ConflictError):
            await m.schedules.pause("sched-morning", expected=loaded)

    run(goals, scenario)
    assert rows(goals, "SELECT is_paused FROM goal_schedules WHERE id = 'sched-morning'") == [(0,)]
