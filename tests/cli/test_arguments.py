"""Bad input through the ``oxmem`` command line: undecodable bytes, hostile JSON Lines, numbers beyond 64 bits,
cron and zones that cannot work, rows another program wrote badly, and text that would drive a terminal.

The contract under test: an error is exit status 2 with exactly one line ``oxmem: error: …`` on stderr, nothing
on stdout, no traceback, and nothing written — the store's bytes, its mtime, the files beside it and its row
counts are compared before and after. Output never carries a raw ESC, BEL, C1 control or U+202E.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from tests.cli._support import (
    RAW_CONTROL,
    assert_one_error_line,
    build_demo,
    fingerprint,
    run,
    run_json,
    run_quiet,
    snapshot,
)
from tests.processes import signals_as_at_a_terminal

REPO = Path(__file__).resolve().parents[2]
LISBON = "telegram:alice:lisbon-trip"
#: what Python makes of the byte 0xff in a command line: a lone surrogate
BAD = "ho\udcfftel"
BAD_BYTE_MESSAGE = "is not valid UTF-8 text (byte 0xff at character 3)"
BIG = str(2**64)
HUGE = "9" * 5000
INT64_MAX = str(2**63 - 1)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return build_demo(tmp_path_factory.mktemp("bad-input-template"))


@pytest.fixture(scope="module")
def schedule_ids(template) -> dict[str, str]:
    code, out, err = run_quiet("--db", str(template), "--json", "schedules", "list")
    assert code == 0, err
    return {s["name"]: s["schedule_id"] for s in json.loads(out)}


@pytest.fixture
def db(template, tmp_path) -> Path:
    """A fresh copy of the demo store, alone in its folder (so the folder listing is part of the fingerprint)."""
    folder = tmp_path / "store"
    folder.mkdir()
    path = folder / "memory.db"
    shutil.copy(template, path)
    return path


def refused(capsys, db: Path, argv, *fragments: str) -> str:
    """Run ``oxmem --db DB *argv``; it must fail with one error line holding ``fragments`` and change nothing."""
    before = snapshot(db)
    code, out, err = run(capsys, "--db", str(db), *argv)
    assert_one_error_line(code, out, err, *fragments)
    assert snapshot(db) == before
    return err


# -- text that is not valid UTF-8 ------------------------------------------------------------------------

TEXT_ARGUMENTS = [
    (["events", BAD], "session"),
    (["search", BAD, "hotel"], "session"),
    (["search", LISBON, BAD], "query"),
    (["search", LISBON, "hotel", "--tag", BAD], "--tag"),
    (["summary", BAD], "session"),
    (["context", BAD], "session"),
    (["forget", BAD], "session"),
    (["reindex", "--session", BAD], "--session"),
    (["reindex", "--model", BAD], "--model"),
    (["notes", "list", BAD], "user"),
    (["notes", "list", "alice", "--tag", BAD], "--tag"),
    (["notes", "list", "alice", "--contains", BAD], "--contains"),
    (["notes", "add", BAD, "text"], "user"),
    (["notes", "add", "alice", BAD], "text"),
    (["notes", "add", "alice", "text", "--tag", BAD], "--tag"),
    (["notes", "update", "alice", BAD, "text"], "note_id"),
    (["notes", "update", "alice", "note-1", BAD], "text"),
    (["notes", "delete", "alice", BAD], "note_id"),
    (["notes", "search", BAD, "query"], "user"),
    (["notes", "search", "alice", BAD], "query"),
    (["schedules", "list", "--user", BAD], "--user"),
    (["schedules", "list", "--name", BAD], "--name"),
    (["schedules", "add", "--user", BAD, "--goal", "g", "--every", "3600"], "--user"),
    (["schedules", "add", "--user", "u", "--goal", BAD, "--every", "3600"], "--goal"),
    (["schedules", "add", "--user", "u", "--goal", "g", "--name", BAD, "--every", "3600"], "--name"),
    (["schedules", "add", "--user", "u", "--goal", "g", "--cron", BAD], "--cron"),
    (["schedules", "add", "--user", "u", "--goal", "g", "--cron", "0 8 * * *", "--tz", BAD], "--tz"),
    (["schedules", "add", "--user", "u", "--goal", "g", "--at", BAD], "--at"),
    (["schedules", "next", BAD], "schedule_id"),
    (["schedules", "runs", BAD], "schedule_id"),
    (["schedules", "pause", BAD], "schedule_id"),
    (["schedules", "resume", BAD], "schedule_id"),
    (["schedules", "delete", BAD], "schedule_id"),
]


def _text_id(argv, name):
    words = argv[:2] if argv[0] in ("notes", "schedules") else argv[:1]
    return f"{' '.join(words)} {name}"


@pytest.mark.parametrize(("argv", "name"), TEXT_ARGUMENTS, ids=[_text_id(a, n) for a, n in TEXT_ARGUMENTS])
def test_undecodable_byte_in_a_text_argument(capsys, db, argv, name):
    err = refused(capsys, db, argv, f"argument {name}: {BAD_BYTE_MESSAGE}")
    assert "\udcff" not in err  # the message names the byte; it does not echo the undecodable text


@pytest.mark.parametrize(
    "argv",
    [
        ["notes", "add", "alice", "a\ud800b"],
        ["schedules", "add", "--user", "u", "--goal", "g", "--cron", "0 8 * * *", "--tz", "a\ud800b"],
        ["search", LISBON, "a\ud800b"],
    ],
)
def test_lone_surrogate_in_an_argument(capsys, db, argv):
    refused(capsys, db, argv, "is not valid UTF-8 text ('\\ud800' at character 2)")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["events", b"ho\xfftel"], "session"),
        (["search", LISBON, b"ho\xfftel"], "query"),
        (["notes", "add", "alice", b"ho\xfftel"], "text"),
    ],
)
def test_raw_bytes_in_a_real_command_line(db, argv, name):
    before = snapshot(db)
    done = oxmem_process("--db", str(db), *argv)
    assert (done.returncode, done.stdout) == (2, b""), done.stderr
    assert done.stderr.startswith(b"oxmem: error: ") and done.stderr.count(b"\n") == 1, done.stderr
    assert f"argument {name}: {BAD_BYTE_MESSAGE}".encode() in done.stderr
    assert snapshot(db) == before


def oxmem_process(*argv: str | bytes) -> subprocess.CompletedProcess:
    """``oxmem`` as a real process: its argv are bytes, and its streams are the interpreter's own (stderr
    escapes what it cannot encode; stdout is strict UTF-8, as under a UTF-8 desktop locale)."""
    env = {**os.environ, "OXMEM_EMBEDDING": "deterministic", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "oxmem_gui.cli", *argv], capture_output=True, cwd=REPO, env=env, timeout=120
    )


def test_store_path_with_an_undecodable_byte(capsys, db):
    """A file name is bytes on POSIX: a store whose name holds 0xff is an ordinary file and must open."""
    odd = db.parent / os.fsdecode(b"ho\xfftel.db")
    shutil.copy(db, odd)
    code, out, err = run(capsys, "--db", str(odd), "--json", "sessions")
    assert (code, err) == (0, ""), err
    assert len(json.loads(out)) == 6
    fresh = db.parent / os.fsdecode(b"new\xff.db")
    code, _, err = run(capsys, "--db", str(fresh), "init")
    assert (code, err) == (0, "") and fresh.exists()


def test_jsonl_file_name_with_an_undecodable_byte(capsys, db, tmp_path):
    jsonl = tmp_path / os.fsdecode(b"ev\xffents.jsonl")
    jsonl.write_bytes(GOOD_LINE)
    assert run_json(capsys, "--db", str(db), "import-jsonl", str(jsonl))["stored"] == 1
    before = snapshot(db)
    done = oxmem_process("--db", str(db), "import-jsonl", bytes(tmp_path) + b"/gone\xff.jsonl")
    assert (done.returncode, done.stdout) == (2, b""), done.stderr
    assert done.stderr.count(b"\n") == 1 and done.stderr.endswith(b"gone\\udcff.jsonl does not exist\n"), done.stderr
    assert snapshot(db) == before


# -- JSON Lines that cannot be stored --------------------------------------------------------------------

GOOD_LINE = b'{"session_id": "imported", "sequence": 1, "payload": {"role": "user", "content": "hello"}}\n'


def _line(session: bytes = b'"imported"', sequence: bytes = b"2", payload: bytes = b'{"role": "user"}') -> bytes:
    return b'{"session_id": ' + session + b', "sequence": ' + sequence + b', "payload": ' + payload + b"}\n"


JSONL_CASES = {
    "lone surrogate in payload": (
        _line(payload=b'{"role": "user", "content": "a\\ud800b"}'),
        "line 2: payload is not valid UTF-8 text (character",
    ),
    "lone surrogate in a key": (_line(payload=b'{"\\udcff": 1}'), "line 2: payload is not valid UTF-8"),
    "lone surrogate in session": (_line(session=b'"s\\udcff"'), "line 2: session id is not valid UTF-8 text"),
    "invalid UTF-8 bytes": (_line(payload=b'{"content": "ho\xfftel"}'), "is not UTF-8 text (line 2, byte "),
    "sequence 2**64": (_line(sequence=b"18446744073709551616"), "line 2: sequence must be between"),
    "sequence 2**63": (_line(sequence=b"9223372036854775808"), "line 2: sequence must be between"),
    "sequence of 5,000 digits": (_line(sequence=b"9" * 5000), "line 2: a number has too many digits"),
    "5,000-digit integer in payload": (
        _line(payload=b'{"n": ' + b"9" * 5000 + b"}"),
        "line 2: a number has too many digits (at most 4,300)",
    ),
    "arrays nested 100,000 deep": (
        _line(payload=b"[" * 100_000 + b"]" * 100_000),
        "line 2: JSON nested more than 256 levels deep",
    ),
    "objects nested 100,000 deep": (
        _line(payload=b'{"a": ' * 100_000 + b"1" + b"}" * 100_000),
        "line 2: JSON nested more than 256 levels deep",
    ),
    "NaN": (_line(payload=b'{"x": NaN}'), "line 2: NaN is not valid JSON"),
    "Infinity": (_line(payload=b'{"x": Infinity}'), "line 2: Infinity is not valid JSON"),
    "-Infinity": (_line(payload=b'{"x": -Infinity}'), "line 2: -Infinity is not valid JSON"),
    "1e999 overflows to infinity": (_line(payload=b'{"x": 1e999}'), "line 2: payload holds NaN or Infinity"),
    "an array line": (b"[1, 2]\n", "line 2: expected an object with session_id, sequence and payload"),
    "a string line": (b'"hello"\n', "line 2: expected an object with session_id, sequence and payload"),
    "a null line": (b"null\n", "line 2: expected an object with session_id, sequence and payload"),
    "missing sequence and payload": (b'{"session_id": "imported"}\n', "line 2: missing sequence, payload"),
    "empty object": (b"{}\n", "line 2: missing session_id, sequence, payload"),
    "sequence is a string": (_line(sequence=b'"two"'), "line 2: sequence must be an integer"),
    "sequence is true": (_line(sequence=b"true"), "line 2: sequence must be an integer"),
    "sequence is 2.0": (_line(sequence=b"2.0"), "line 2: sequence must be an integer"),
    "session is a number": (_line(session=b"5"), "line 2: session id must be a non-empty string"),
    "not JSON": (b"{oops\n", "line 2: not valid JSON"),
    "line cut short": (b'{"session_id": "imported", "seq', "line 2: not valid JSON"),
    "blank lines still count": (b"\n   \n" + _line(payload=b'{"x": NaN}'), "line 4: NaN is not valid JSON"),
}


def _write_jsonl(folder: Path, bad_line: bytes) -> Path:
    path = folder / "events.jsonl"
    path.write_bytes(GOOD_LINE + bad_line)
    return path


@pytest.mark.parametrize(("bad_line", "message"), JSONL_CASES.values(), ids=JSONL_CASES.keys())
def test_import_of_a_bad_line_writes_nothing(capsys, db, tmp_path, bad_line, message):
    jsonl = _write_jsonl(tmp_path, bad_line)
    err = refused(capsys, db, ["import-jsonl", str(jsonl)], message)
    assert len(err) < 300  # a 5,000-digit number or a 100,000-deep array is named, not printed


@pytest.mark.parametrize(("bad_line", "message"), JSONL_CASES.values(), ids=JSONL_CASES.keys())
def test_import_of_a_bad_line_into_a_new_store(capsys, tmp_path, bad_line, message):
    jsonl = _write_jsonl(tmp_path, bad_line)
    store = tmp_path / "new" / "memory.db"
    code, out, err = run(capsys, "--db", str(store), "import-jsonl", str(jsonl))
    assert_one_error_line(code, out, err, message)
    # the store file is created (and migrated) when the command opens it, before the JSONL file is read; whether
    # or not that is kept, no event of the file may be in it
    assert not store.exists() or run_json(capsys, "--db", str(store), "sessions") == []


# -- numbers beyond 64 bits ------------------------------------------------------------------------------

NUMBER_OPTIONS = [
    (["search", LISBON, "hotel", "--top-k"], "--top-k", "1,000"),
    (["notes", "search", "alice", "hotel", "--top-k"], "--top-k", "1,000"),
    (["events", LISBON, "--limit"], "--limit", "9,223,372,036,854,775,807"),
    (["schedules", "list", "--limit"], "--limit", "9,223,372,036,854,775,807"),
    (["schedules", "runs", "{schedule}", "--limit"], "--limit", "9,223,372,036,854,775,807"),
    (["schedules", "next", "{schedule}", "--count"], "--count", "1,000"),
    (["context", LISBON, "--budget"], "--budget", "9,223,372,036,854,775,807"),
    (["schedules", "add", "--user", "u", "--goal", "g", "--every"], "--every", "9,223,372,036,854,775,807"),
]
NUMBER_IDS = [f"{a[0]} {n}" for a, n, _ in NUMBER_OPTIONS]


def _fill(argv, schedule_ids):
    return [a.replace("{schedule}", schedule_ids["Morning briefing"]) for a in argv]


@pytest.mark.parametrize(("argv", "option", "high"), NUMBER_OPTIONS, ids=NUMBER_IDS)
def test_number_beyond_64_bits(capsys, db, schedule_ids, argv, option, high):
    refused(
        capsys, db, [*_fill(argv, schedule_ids), BIG], f"argument {option}: must be between 1 and {high}, got {BIG}"
    )


@pytest.mark.parametrize(("argv", "option", "high"), NUMBER_OPTIONS, ids=NUMBER_IDS)
def test_number_of_5000_digits_is_named_not_printed(capsys, db, schedule_ids, argv, option, high):
    err = refused(
        capsys,
        db,
        [*_fill(argv, schedule_ids), HUGE],
        f"argument {option}: must be between 1 and ",
        "a number of 5,000 digits",
    )
    assert len(err) < 300 and "9" * 30 not in err


@pytest.mark.parametrize(("argv", "option", "high"), NUMBER_OPTIONS, ids=NUMBER_IDS)
def test_number_below_one(capsys, db, schedule_ids, argv, option, high):
    refused(capsys, db, [*_fill(argv, schedule_ids), "-1"], f"argument {option}: must be between 1 and {high}, got -1")


def test_count_is_capped_at_1000(capsys, db, schedule_ids):
    sid = schedule_ids["Morning briefing"]
    refused(capsys, db, ["schedules", "next", sid, "--count", "1001"], "must be between 1 and 1,000, got 1001")
    code, out, err = run(capsys, "--db", str(db), "schedules", "next", sid, "--count", "1000")
    assert (code, err) == (0, "") and len(out.splitlines()) == 1000


@pytest.mark.parametrize(
    "argv",
    [
        ["events", LISBON, "--limit", INT64_MAX],
        ["schedules", "list", "--limit", INT64_MAX],
        ["context", LISBON, "--budget", INT64_MAX],
    ],
)
def test_largest_64_bit_limits_are_accepted(capsys, db, argv):
    before = snapshot(db)
    code, out, err = run(capsys, "--db", str(db), *argv)
    assert (code, err) == (0, "") and out
    assert snapshot(db) == before


@pytest.mark.parametrize(
    ("every", "message"),
    [
        (INT64_MAX, "interval of 9,223,372,036,854,775,807 seconds is longer than the maximum of 10 years"),
        ("315576001", "interval of 315,576,001 seconds is longer than the maximum of 10 years (315,576,000 seconds)"),
        ("59", "interval of 59 seconds is below the minimum of 60"),
        ("1e3", "argument --every: '1e3' is not a whole number"),
    ],
)
def test_interval_out_of_range(capsys, db, every, message):
    refused(capsys, db, ["schedules", "add", "--user", "u", "--goal", "g", "--every", every], message)


def test_ten_year_interval_cannot_list_1000_fires(capsys, db):
    made = run_json(capsys, "--db", str(db), "schedules", "add", "--user", "u", "--goal", "g", "--every", "315576000")
    refused(
        capsys,
        db,
        ["schedules", "next", made["schedule_id"], "--count", "1000"],
        "the next run would be after the year 9999",
    )


# -- cron, zones and one-shot times ----------------------------------------------------------------------

ADD = ["schedules", "add", "--user", "cron-user", "--goal", "g"]


@pytest.mark.parametrize(
    ("expression", "tz", "why"),
    [
        ("0 0 31 2 *", "UTC", "February has no day 31"),
        ("0 0 30 2 *", "UTC", "February has no day 30"),
        ("0 0 31 4,6,9,11 *", "UTC", "April, June, September and November have no day 31"),
        ("0 0 30 2 *", "Asia/Kolkata", "February has no day 30"),
    ],
)
def test_cron_that_never_fires(capsys, db, expression, tz, why):
    refused(capsys, db, [*ADD, "--cron", expression, "--tz", tz], f"cron expression '{expression}' never fires: {why}")


@pytest.mark.parametrize(
    ("expression", "words", "hours", "minutes"),
    [
        (
            "0 22-2 * * *",
            "every day at 00:00, 01:00, 02:00, 22:00 and 23:00 UTC",
            {"22", "23", "00", "01", "02"},
            {"00"},
        ),
        ("*/45 * * * *", "at minutes 0 and 45 of every hour", None, {"00", "45"}),
    ],
)
def test_cron_described_as_it_fires(capsys, db, expression, words, hours, minutes):
    code, out, err = run(capsys, "--db", str(db), *ADD, "--cron", expression)
    assert (code, err) == (0, "") and words in out
    code, out, err = run(capsys, "--db", str(db), "schedules", "list", "--user", "cron-user")
    assert (code, err) == (0, "")
    (row,) = out.splitlines()[1:]
    assert words in row and "⚠" not in row
    (doc,) = run_json(capsys, "--db", str(db), "schedules", "list", "--user", "cron-user")
    assert doc["problem"] is None
    fires = run_json(capsys, "--db", str(db), "schedules", "next", doc["schedule_id"], "--count", "12")["next"]
    assert len(fires) == 12, fires
    assert {t[14:16] for t in fires} == minutes, fires  # 2037-11-22T22:00:00.000000+00:00
    assert hours is None or {t[11:13] for t in fires} == hours, fires


@pytest.mark.parametrize(
    ("tz", "message"),
    [
        ("Europe", "'Europe' is a region, not a time zone: name a zone in it (e.g. Europe/…)"),
        ("America", "'America' is a region, not a time zone: name a zone in it (e.g. America/…)"),
        ("Mars/Base", "unknown time zone 'Mars/Base'"),
        ("../../../etc/passwd", "unknown time zone '../../../etc/passwd'"),
        ("/etc/localtime", "unknown time zone '/etc/localtime'"),
        ("", "time zone is empty"),
        ("x" * 5000, "(5,000 characters; zone names are short)"),
    ],
    ids=["Europe", "America", "Mars", "relative path", "absolute path", "empty", "5000 chars"],
)
def test_zone_that_is_no_zone(capsys, db, tz, message):
    err = refused(capsys, db, [*ADD, "--cron", "0 8 * * *", "--tz", tz], message)
    assert len(err) < 300


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("9999-12-31T23:59:59-05:00", "'9999-12-31T23:59:59-05:00' is outside the years 1970 to 9998"),
        ("0001-01-01T00:00:00Z", "'0001-01-01T00:00:00Z' is outside the years 1970 to 9998"),
        ("2030-01-01T00:00:00", "'2030-01-01T00:00:00' has no time zone offset (add Z or +HH:MM)"),
        ("x" * 5000, "is not an RFC 3339 time"),
    ],
    ids=["year 10000 in UTC", "year 1", "no offset", "5000 chars"],
)
def test_one_shot_time_out_of_range(capsys, db, at, message):
    err = refused(capsys, db, [*ADD, "--at", at], message)
    assert len(err) < 300


def test_cron_of_5000_characters(capsys, db):
    err = refused(capsys, db, [*ADD, "--cron", "x" * 5000], "expected 5 fields")
    assert len(err) < 300


# -- schedule rows another program wrote -----------------------------------------------------------------

FOREIGN_COLUMNS = (
    "schedule_id, user_id, name, goal, cadence_json, notification_policy, status, created_at, updated_at, next_run_at"
)
STAMP = "2037-01-01T00:00:00.000000+00:00"
FOREIGN_ROWS = {
    "foreign-zone": (
        '{"type":"cron","expression":"0 8 * * *","timezone":"Mars/Base"}',
        "active",
        "2037-01-02T08:00:00.000000+00:00",
        "cadence: unknown time zone 'Mars/Base'",
    ),
    "foreign-cron": (
        '{"type":"cron","expression":"0 0 31 2 *","timezone":"UTC"}',
        "active",
        None,
        "cadence: cron expression '0 0 31 2 *' never fires: February has no day 31",
    ),
    "foreign-next": (
        '{"type":"interval","every_secs":3600}',
        "active",
        "garbage",
        "next run at 'garbage' is not an RFC 3339 time",
    ),
    "foreign-json": ("not json at all", "active", None, "cadence: cadence is not valid JSON"),
    "foreign-status": ('{"type":"interval","every_secs":3600}', "exploded", None, "unknown status 'exploded'"),
}


@pytest.fixture
def foreign(db) -> Path:
    conn = apsw.Connection(str(db))
    for sid, (cadence, status, next_run, _) in FOREIGN_ROWS.items():
        conn.execute(
            f"INSERT INTO schedules ({FOREIGN_COLUMNS}) VALUES (?, 'foreign', ?, 'goal', ?, 'always', ?, ?, ?, ?)",
            (sid, sid, cadence, status, STAMP, STAMP, next_run),
        )
    conn.close()
    return db


def test_foreign_rows_are_listed_flagged(capsys, foreign):
    before = snapshot(foreign)
    code, out, err = run(capsys, "--db", str(foreign), "schedules", "list")
    assert (code, err) == (0, "")
    rows = out.splitlines()[1:]
    assert len(rows) == 7 + len(FOREIGN_ROWS)
    for sid in FOREIGN_ROWS:
        (line,) = [r for r in rows if r.startswith(sid + " ")]
        assert "⚠" in line, line
    assert sum("⚠" in r for r in rows) == len(FOREIGN_ROWS)
    docs = run_json(capsys, "--db", str(foreign), "schedules", "list")
    problems = {d["schedule_id"]: d["problem"] for d in docs}
    for sid, (*_, problem) in FOREIGN_ROWS.items():
        assert problems.pop(sid).startswith(problem)
    assert set(problems.values()) == {None}  # the demo's own rows
    code, out, _ = run(capsys, "--db", str(foreign), "check")
    assert code == 0 and "5 rows cannot be used as they are" in out
    assert snapshot(foreign) == before


@pytest.mark.parametrize(
    ("sid", "message"),
    [
        ("foreign-zone", "unknown time zone 'Mars/Base'"),
        ("foreign-cron", "cron expression '0 0 31 2 *' never fires: February has no day 31"),
        ("foreign-json", "cadence is not valid JSON"),
    ],
)
def test_next_of_a_foreign_row_with_a_broken_cadence(capsys, foreign, sid, message):
    refused(capsys, foreign, ["schedules", "next", sid], message)


@pytest.mark.parametrize("sid", ["foreign-next", "foreign-status"])
def test_next_of_a_foreign_row_with_a_usable_cadence(capsys, foreign, sid):
    """The fires are computed from now and the cadence; a garbage stored next run or status does not matter."""
    before = snapshot(foreign)
    assert len(run_json(capsys, "--db", str(foreign), "schedules", "next", sid)["next"]) == 5
    assert snapshot(foreign) == before


def test_resume_of_a_foreign_row_with_a_bad_zone_writes_nothing(capsys, foreign):
    assert run_json(capsys, "--db", str(foreign), "schedules", "pause", "foreign-zone")["status"] == "paused"
    refused(capsys, foreign, ["schedules", "resume", "foreign-zone"], "unknown time zone 'Mars/Base'")


# -- text that would drive a terminal --------------------------------------------------------------------

EVIL_SESSION = "evil\x1b]0;pwned\x07:chat"
EVIL_CONTENT = "red \x1b[31mALERT\x1b[0m \u202eevil\u202c csi\x9b2J bell\x07 end"
EVIL_USER = "mallory\x1b[1m"
EVIL_NOTE = "note \x1b[31mALERT\x1b[0m \u202eoverride"
EVIL_SCHEDULE = "sched\x1b[2J"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "memory.db"
    events = [
        {"session_id": EVIL_SESSION, "sequence": 1, "payload": {"role": "user", "content": EVIL_CONTENT}},
        {"session_id": EVIL_SESSION, "sequence": 2, "payload": "bare \x1b[31m string"},
        {"session_id": EVIL_SESSION, "sequence": 3, "payload": {"role": "assistant", "content": "ALERT \u202e again"}},
    ]
    jsonl = folder / "evil.jsonl"
    jsonl.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    for argv in (["import-jsonl", str(jsonl)], ["notes", "add", EVIL_USER, EVIL_NOTE, "--tag", "t\x1b"]):
        code, out, err = run_quiet("--db", str(db), "--embedding", "deterministic", *argv)
        assert code == 0, err
        assert not RAW_CONTROL.search(out + err), out + err
    conn = apsw.Connection(str(db))
    conn.execute(
        f"INSERT INTO schedules ({FOREIGN_COLUMNS}) VALUES (?, ?, ?, 'goal', ?, 'always', 'active', ?, ?, ?)",
        (EVIL_SCHEDULE, EVIL_USER, "name\x9b\u202e", '{"type":"interval","every_secs":3600}', STAMP, STAMP, STAMP),
    )
    conn.close()
    return db


TERMINAL_COMMANDS = {
    # name: (argv, what the table shows, a stored string the JSON document must hold exactly)
    "sessions": (["sessions"], "evil\\x1b]0;pwned\\x07:chat", EVIL_SESSION),
    "events": (["events", EVIL_SESSION], "red \\x1b[31mALERT\\x1b[0m \\u202eevil", EVIL_CONTENT),
    "search": (["search", EVIL_SESSION, "ALERT"], "red \\x1b[31mALERT", EVIL_CONTENT),
    "context": (["context", EVIL_SESSION], "red \\x1b[31mALERT", EVIL_CONTENT),
    "notes list": (["notes", "list", EVIL_USER], "note \\x1b[31mALERT\\x1b[0m \\u202eoverride", EVIL_NOTE),
    "notes search": (["notes", "search", EVIL_USER, "ALERT"], "note \\x1b[31mALERT", EVIL_NOTE),
    "schedules list": (["schedules", "list"], "sched\\x1b[2J", EVIL_SCHEDULE),
}


@pytest.mark.parametrize(("argv", "escaped", "original"), TERMINAL_COMMANDS.values(), ids=TERMINAL_COMMANDS.keys())
def test_control_characters_are_escaped_in_tables(capsys, hostile, argv, escaped, original):
    code, out, err = run(capsys, "--db", str(hostile), *argv)
    assert (code, err) == (0, "")
    assert not RAW_CONTROL.search(out), repr(out)
    assert escaped in out, out


def _json_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


@pytest.mark.parametrize(("argv", "escaped", "original"), TERMINAL_COMMANDS.values(), ids=TERMINAL_COMMANDS.keys())
def test_control_characters_are_escaped_in_json(capsys, hostile, argv, escaped, original):
    code, out, err = run(capsys, "--db", str(hostile), *argv, "--json")
    assert (code, err) == (0, "")
    assert not RAW_CONTROL.search(out), repr(out)
    # the document round-trips to the stored text, control characters and all
    assert original in set(_json_strings(json.loads(out)))
    assert "\\u001b" in out


def test_json_round_trips_exactly(capsys, hostile):
    db = str(hostile)
    assert EVIL_SESSION in {s["session_id"] for s in run_json(capsys, "--db", db, "sessions")}
    events = run_json(capsys, "--db", db, "events", EVIL_SESSION)
    assert events[0]["payload"] == {"role": "user", "content": EVIL_CONTENT}
    (note,) = run_json(capsys, "--db", db, "notes", "list", EVIL_USER)
    assert note["content"] == EVIL_NOTE and note["user"] == EVIL_USER
    (row,) = run_json(capsys, "--db", db, "schedules", "list", "--user", EVIL_USER)
    assert (row["schedule_id"], row["name"]) == (EVIL_SCHEDULE, "name\x9b\u202e")
    items = run_json(capsys, "--db", db, "context", EVIL_SESSION)["items"]
    assert items[0]["text"] == EVIL_CONTENT


@pytest.mark.parametrize(
    "argv",
    [
        ["events", "nope\x1b]0;pwned\x07"],
        ["search", "nope\x1b[31m", "x"],
        ["notes", "delete", "alice", "note\x1b[2J\u202e"],
        ["schedules", "pause", "s\x9b\x1b"],
    ],
)
def test_control_characters_are_escaped_in_errors(capsys, hostile, argv):
    before = snapshot(hostile)
    code, out, err = run(capsys, "--db", str(hostile), *argv)
    assert_one_error_line(code, out, err)
    assert not RAW_CONTROL.search(err), repr(err)
    assert "\\x1b" in err
    assert snapshot(hostile) == before


def test_init_escapes_versions_written_by_another_program(capsys, db):
    conn = apsw.Connection(str(db))
    conn.execute("INSERT INTO memory_migrations (version) VALUES (?)", ("0002_\x1b]0;pwned\x07",))
    conn.close()
    code, out, err = run(capsys, "--db", str(db), "init")
    assert (code, err) == (0, "")
    assert "0002_\\x1b]0;pwned\\x07" in out
    assert not RAW_CONTROL.search(out), repr(out)
    code, out, _ = run(capsys, "--db", str(db), "check")
    assert code == 0 and not RAW_CONTROL.search(out), repr(out)


# -- text that starts with "-" ---------------------------------------------------------------------------


def test_text_starting_with_a_dash_needs_double_dash(capsys, db):
    refused(
        capsys,
        db,
        ["search", LISBON, "-hotel"],
        "'-hotel' is not an option of oxmem search; to pass text that starts with '-', put -- before it: "
        "oxmem search … -- -hotel",
    )
    code, out, err = run(capsys, "--db", str(db), "search", LISBON, "--", "-hotel")
    assert (code, err) == (0, "") and out.startswith("query '-hotel'")
    # the stray token is named, not an option of the command given before it
    refused(capsys, db, ["search", LISBON, "seat", "--why", "5", "-k", "3"], "'-k' is not an option of oxmem; to "
            "pass text that starts with '-', put -- before it: oxmem … -- -k")  # fmt: skip
    code, out, err = run(capsys, "--db", str(db), "notes", "search", "alice", "--", "-x")
    assert (code, err) == (0, "") and out.startswith("score")
    refused(capsys, db, ["notes", "add", "alice", "-x"], "put -- before it: oxmem notes add … -- -x")
    code, out, err = run(capsys, "--db", str(db), "--json", "notes", "add", "alice", "--", "-x")
    assert (code, err) == (0, "")
    nid = json.loads(out)["note_id"]
    assert [
        n["content"] for n in run_json(capsys, "--db", str(db), "notes", "list", "alice") if n["note_id"] == nid
    ] == ["-x"]


def test_negative_number_is_text_not_an_option(capsys, db):
    code, out, err = run(capsys, "--db", str(db), "search", LISBON, "-5")
    assert (code, err) == (0, "") and out.startswith("query '-5'")


# -- --wait ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wait", "message"),
    [
        ("-1", "argument --wait: must be a number of seconds from 0 to 86400, got '-1'"),
        ("86401", "argument --wait: must be a number of seconds from 0 to 86400, got '86401'"),
        ("nan", "argument --wait: must be a number of seconds from 0 to 86400, got 'nan'"),
        ("inf", "argument --wait: must be a number of seconds from 0 to 86400, got 'inf'"),
        ("abc", "argument --wait: must be a number of seconds from 0 to 86400, got 'abc'"),
    ],
)
@pytest.mark.parametrize(
    "argv", [["sessions"], ["notes", "add", "alice", "text"], ["check"]], ids=["read", "write", "check"]
)
def test_wait_out_of_range(capsys, db, wait, message, argv):
    refused(capsys, db, ["--wait", wait, *argv], message)


@pytest.mark.parametrize("kind", ["fifo", "symlink-loop", "device"])
@pytest.mark.parametrize(
    "argv", [("info",), ("check",), ("init",), ("sessions",), ("notes", "add", "u", "x")], ids=lambda a: " ".join(a)
)
def test_a_path_that_is_no_regular_file_is_one_line_never_a_hang(capsys, tmp_path, kind, argv):
    """A FIFO used to block the first read forever, a symlink loop gave a traceback; a device is no database."""
    if kind == "fifo":
        path = tmp_path / "f.db"
        os.mkfifo(path)
        expected = "is a FIFO, not a regular file: nothing to open"
    elif kind == "symlink-loop":
        path, other = tmp_path / "a.db", tmp_path / "b.db"
        path.symlink_to(other)
        other.symlink_to(path)
        expected = "is a loop of symbolic links, not a database file"
    else:
        path = Path("/dev/null")
        expected = "is a device, not a regular file: nothing to open"
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, "--db", str(path), *argv)
    assert_one_error_line(code, out, err, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def _cli(argv: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    code = "import sys; from oxmem_gui.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *argv], env={**os.environ, **(env or {})}, timeout=120,
                          **kwargs)  # fmt: skip


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_any_output_encoding_prints_instead_of_a_traceback(tmp_path, encoding):
    db = str(build_demo(tmp_path / "demo"))
    env = {"PYTHONIOENCODING": encoding, "OXMEM_EMBEDDING": "deterministic"}
    table = _cli(["--db", db, "schedules", "list"], env, capture_output=True)
    assert (table.returncode, table.stderr) == (0, b""), table.stderr
    assert b"\\u" in table.stdout or table.stdout.isascii()  # what the encoding lacks is written \\uXXXX
    doc = _cli(["--db", db, "--json", "schedules", "list"], env, capture_output=True)
    assert doc.returncode == 0 and len(json.loads(doc.stdout)) >= 1  # still valid JSON


def test_output_to_a_full_disk_is_one_line_and_a_closed_pipe_is_quiet(tmp_path):
    db = str(build_demo(tmp_path / "demo"))
    with open("/dev/full", "wb") as full:
        done = _cli(["--db", db, "sessions"], {"OXMEM_EMBEDDING": "deterministic"}, stdout=full,
                    stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert done.returncode == 2 and done.stderr == (
        "oxmem: error: the output could not be written (No space left on device); any change the command made is "
        "saved\n"
    )
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = _cli(["--db", db, "events", "telegram:alice:lisbon-trip"], {"OXMEM_EMBEDDING": "deterministic"},
                stdout=reader.stdin, stderr=subprocess.PIPE, text=True)  # fmt: skip
    reader.stdin.close()
    reader.wait()
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"], ["events", "telegram:alice:lisbon-trip"], ["schedules", "list"], ["notes", "list", "alice"],
        ["search", "lisbon"], ["tables"], ["sql", "SELECT 1"], ["info"], ["check"], ["backup", "copy.db"],
        ["notes", "add", "alice", "written unseen"], ["--json", "sessions"],
    ],
)  # fmt: skip
def test_a_closed_stdout_is_one_line_and_changes_nothing(tmp_path, argv):
    """``oxmem … >&-``: the interpreter gives no stdout at all; refused before anything runs (a write would
    otherwise be made unseen), one line on stderr, exit 2; with stderr closed too, silence and exit 2."""
    if "faketime" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("libfaketime opens a file as each process starts, which takes the closed descriptor 1")
    db = build_demo(tmp_path / "demo")
    before = fingerprint(db)
    env = {"OXMEM_EMBEDDING": "deterministic"}
    closed = _cli(["--db", str(db), *argv], env, cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                  preexec_fn=lambda: os.close(1))  # fmt: skip
    assert (closed.returncode, closed.stderr) == (
        2, "oxmem: error: the output cannot be written (standard output is closed); nothing was done\n"
    )  # fmt: skip
    both = _cli(["--db", str(db), *argv], env, cwd=tmp_path, preexec_fn=lambda: (os.close(1), os.close(2)))
    assert both.returncode == 2
    assert fingerprint(db) == before and not (tmp_path / "copy.db").exists()


def test_ctrl_c_during_an_import_says_what_was_stored_and_a_rerun_resumes(tmp_path):
    """An import commits in batches: an interrupt keeps the finished ones (it used to say nothing was written)."""
    import signal
    import time

    lines = tmp_path / "big.jsonl"
    with lines.open("w") as fh:
        for i in range(1, 60_001):
            payload = {"role": "user", "content": f"line {i} about trains and timetables"}
            fh.write(json.dumps({"session_id": "big", "sequence": i, "payload": payload}) + "\n")
    db = tmp_path / "big.db"
    env = {**os.environ, "OXMEM_EMBEDDING": "deterministic"}
    code = "import sys; from oxmem_gui.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", code, "--db", str(db), "import-jsonl", str(lines)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=signals_as_at_a_terminal)  # fmt: skip

    def stored() -> int:
        """The events committed so far (0 before the file has its tables); a busy moment of the writer is
        waited out, not read as nothing stored, so the interrupt comes while the import runs."""
        try:
            conn = apsw.Connection(f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            try:
                conn.set_busy_timeout(5000)
                return conn.execute("SELECT count(*) FROM conversation_events").fetchall()[0][0]
            finally:
                conn.close()
        except apsw.Error:
            return 0

    deadline = time.monotonic() + 120
    while stored() < 500 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    kept = stored()
    assert proc.returncode == 130 and 500 <= kept < 60_000 and kept % 500 == 0, (proc.returncode, kept, err)
    assert err.endswith(
        "oxmem: interrupted; the batches of 500 events that finished are stored, whole; run the same command again "
        "to resume (it skips what is stored)\n"
    ), err
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert stored() == 60_000


@pytest.mark.parametrize("token", ["-hotel", "-help", "-vanilla"])
def test_text_that_starts_like_a_short_flag_is_refused_with_the_hint_on_every_python(capsys, tmp_path, token):
    """Python 3.13's argparse reads ``-hotel`` as ``-h`` + ``otel`` and prints the help with exit 0; oxmem refuses
    it first, the same on every version."""
    db = str(build_demo(tmp_path / "demo"))
    code, out, err = run(capsys, "--db", db, "search", "telegram:alice:lisbon-trip", token)
    assert_one_error_line(
        code,
        out,
        err,
        f"{token!r} is not an option of oxmem search; to pass text that starts with '-', put -- "
        f"before it: oxmem search … -- {token}",
    )


def test_a_vector_stored_as_text_or_of_the_wrong_length_is_flagged_by_check_and_left_out_of_search(capsys, tmp_path):
    """TEXT in ``embedding_blob`` crashed search (TypeError) and check called the file healthy."""
    db = build_demo(tmp_path / "demo")
    conn = apsw.Connection(str(db))
    text_chunk = conn.execute(
        "SELECT c.chunk_id FROM chunks c WHERE c.session_id = 'telegram:alice:lisbon-trip' ORDER BY c.rowid LIMIT 1"
    ).fetchall()[0][0]
    short_chunk = conn.execute("SELECT chunk_id FROM chunks WHERE session_id = 'memory:bob' LIMIT 1").fetchall()[0][0]
    conn.execute("UPDATE chunks_vec SET embedding_blob = 'oops' WHERE chunk_id = ?", (text_chunk,))
    conn.execute("UPDATE chunks_vec SET embedding_blob = x'00112233' WHERE chunk_id = ?", (short_chunk,))
    conn.close()
    code, out, err = run(capsys, "--db", str(db), "check")
    (line,) = [x for x in out.splitlines() if x.split()[:2] == ["problem", "vectors"]]
    assert code == 1 and "2 vectors cannot be read (left out of search)" in line, out
    assert f"{text_chunk} (stored as text)" in line and f"{short_chunk} (4 bytes where" in line
    code, out, err = run(capsys, "--db", str(db), "search", "telegram:alice:lisbon-trip", "hotel")
    assert code == 0 and "Traceback" not in err
    assert f"left out: 1 stored vectors cannot be read — {text_chunk}: vector stored as str, not bytes" in out
    doc = run_json(capsys, "--db", str(db), "search", "telegram:alice:lisbon-trip", "hotel")
    assert doc["vector_errors"] == [{"chunk_id": text_chunk, "error": "vector stored as str, not bytes"}]
