"""The commands on a store's sessions and events: ``init``, ``demo``, ``import-jsonl``, ``reindex`` and
``model``, run in-process as a user would type them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli._support import run, run_json


def test_init_then_global_options_before_or_after(capsys, db):
    assert run_json(capsys, "--db", db, "init") == {"db": db, "applied": ["0001_initial"], "unknown": []}
    code, out, _ = run(capsys, "init", "--db", db)
    assert (code, out) == (0, f"{db}: up to date\n")
    assert run(capsys, "--json", "--db", db, "sessions")[1] == "[]\n"


def test_demo_has_sessions_notes_and_a_summary(capsys, db):
    counts = run_json(capsys, "--db", db, "demo")
    runs = counts.pop("runs")
    assert counts == {"sessions": 6, "events": 50, "notes": 9, "summaries": 1, "schedules": 7}
    schedules = run_json(capsys, "--db", db, "schedules", "list")
    assert sorted(s["status"] for s in schedules) == ["active"] * 4 + ["completed", "disabled", "paused"]
    per_schedule = [
        len(run_json(capsys, "--db", db, "schedules", "runs", s["schedule_id"], "--limit", "1000")) for s in schedules
    ]
    assert sum(per_schedule) == runs
    sessions = run_json(capsys, "--db", db, "sessions")
    assert {s["session_id"] for s in sessions} >= {"telegram:alice:lisbon-trip", "memory:alice", "memory:bob"}
    lisbon = next(s for s in sessions if s["session_id"] == "telegram:alice:lisbon-trip")
    assert (lisbon["last_sequence"], lisbon["event_count"]) == (15, 15)
    notes = run_json(capsys, "--db", db, "notes", "list", "alice", "--tag", "travel")
    assert len(notes) == 3 and all("travel" in n["tags"] for n in notes)
    summary = run_json(capsys, "--db", db, "summary", "telegram:alice:lisbon-trip")
    assert summary["epoch"] == 1 and summary["summary"].startswith("Recent condensed turns:\n- [1] system:")


def test_import_jsonl(capsys, db, tmp_path):
    lines = [
        {"session_id": "imp", "sequence": 1, "payload": {"role": "user", "content": "hello"}},
        {"session_id": "imp", "sequence": 2, "payload": "a bare string"},
        {"session_id": "imp", "sequence": 3, "payload": {"role": "assistant", "content": "hi"}},
    ]
    f = tmp_path / "events.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    doc = run_json(capsys, "--db", db, "import-jsonl", str(f))
    assert doc == {
        "stored": 3,
        "skipped": 0,
        "batches": 1,
        "not_indexed": [{"session_id": "imp", "sequence": 2, "reason": "payload is a JSON str, not a message object"}],
    }


def test_sequence_conflict_in_import_writes_nothing(capsys, db, tmp_path):
    f = tmp_path / "e.jsonl"
    f.write_text(
        '{"session_id": "s", "sequence": 2, "payload": {"role": "user", "content": "a"}}\n'
        '{"session_id": "s", "sequence": 1, "payload": {"role": "user", "content": "b"}}\n'
    )
    code, _, err = run(capsys, "--db", db, "import-jsonl", str(f))
    assert (code, err) == (
        2,
        "oxmem: error: line 2: sequence 1 of session 's' is not greater than 2 (line 1); nothing was imported\n",
    )
    assert not Path(db).exists()  # the store the command would have created is not left behind


def test_model_status_and_reindex(capsys, db):
    from tests.semantic import model_dir_or_skip

    folder = model_dir_or_skip()
    status = run_json(capsys, "model")
    assert status["model"] == "sentence-transformers/all-MiniLM-L6-v2" and status["verified"] is True
    assert status["path"] == str(folder) and status["license"] == "Apache-2.0"
    run(capsys, "--db", db, "demo")  # deterministic (the CLI tests' default)
    total = len(run_json(capsys, "--db", db, "search", "telegram:alice:tomatoes", "x", "--top-k", "50")["hits"])
    assert total == 4
    done = run_json(capsys, "--db", db, "reindex", "--session", "telegram:alice:tomatoes", "--model", "semantic")
    assert done == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "reembedded": 4,
        "remaining": 0,
        "sessions": ["telegram:alice:tomatoes"],
    }
    doc = run_json(
        capsys,
        "--db",
        db,
        "--embedding",
        "semantic",
        "search",
        "telegram:alice:tomatoes",
        "how often should I apply the treatment",
        "--top-k",
        "1",
        "--vector-weight",
        "1",
    )
    assert doc["models"] == ["sentence-transformers/all-MiniLM-L6-v2"]
    assert doc["hits"][0]["text"].startswith("A copper fungicide slows it; apply every 7–10 days")
    again = run_json(capsys, "--db", db, "reindex", "--session", "telegram:alice:tomatoes", "--model", "semantic")
    assert again["reembedded"] == 0
    code, _, err = run(capsys, "--db", db, "reindex", "--model", "nope")
    assert code == 2 and err.startswith("oxmem: error: no embedding backend for model 'nope' here (available: ")


def test_forget_turn_deletes_an_sdk_turn_and_every_other_format_says_why_not(capsys, tmp_path):
    import pytest

    pytest.importorskip("agents", reason="the OpenAI Agents SDK writes these files (a test dependency)")
    from tests.cli._support import assert_one_error_line
    from tests.core.formats.test_openai_agents import TWO_TURNS, sdk_items, write

    sdk = tmp_path / "conversations.db"
    write(sdk, {"weather": TWO_TURNS})
    assert run_json(capsys, "--db", str(sdk), "--no-backup", "forget-turn", "weather", "7") == {
        "session": "weather",
        "deleted": [5, 6, 7, 8],
    }
    assert sdk_items(sdk, "weather") == TWO_TURNS[:4]
    assert_one_error_line(*run(capsys, "--db", str(sdk), "forget-turn", "weather", "7"), "no item 7")
    store = tmp_path / "memory.db"
    assert run(capsys, "--db", str(store), "demo")[0] == 0
    assert_one_error_line(
        *run(capsys, "--db", str(store), "forget-turn", "telegram:alice:lisbon-trip", "1"),
        "oxmem's store deletes whole sessions, not single turns",
    )
