"""``--limit``, ``--after`` and ``--offset`` of ``oxmem sessions``, ``events`` and ``notes list``: every page of
every format, followed by the ``more: --after CURSOR`` line it prints, gives exactly the reader's whole list in
order (no row twice, none missing); the commands read through the page methods only (the whole-list methods made
to raise); bad values are one line, exit 2."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest

from oxmem_gui.cli import paging
from oxmem_gui.core.api import Event, open_memory
from oxmem_gui.core.formats.base import ForeignReader
from oxmem_gui.core.memory_store import MemoryStore
from oxmem_gui.core.store.browse import SessionStats
from tests.cli._support import assert_one_error_line, build_demo, run
from tests.core.formats.fixtures import AIDAEMON_KEY, write_all

LISBON = "telegram:alice:lisbon-trip"
#: the fixtures' formats read here (the rest of write_all: no sessions and no notes, or not a database)
FORMATS = ("omega", "omega-old", "zeke", "aidaemon", "aidaemon-legacy", "aidaemon-encrypted", "oxydra", "oxydra-agent")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("paging")
    found = {k: v for k, v in write_all(folder / "formats").items() if k in FORMATS}
    found["demo"] = build_demo(folder / "demo")
    try:  # the frameworks' files, written by the frameworks themselves (test dependencies)
        from tests.core.formats import test_openai_agents as sdk

        found["openai-agents"] = folder / "sdk.db"
        sdk.write(found["openai-agents"], {"weather": sdk.WEATHER, "hello": sdk.HELLO, "more": sdk.WEATHER * 2})
    except pytest.skip.Exception:
        pass
    try:
        from tests.core.formats import test_agno as agno

        found["agno"] = folder / "agno.db"
        agno.write(found["agno"])
    except pytest.skip.Exception:
        pass
    return found


def _key(name: str) -> list[str]:
    return ["--key", AIDAEMON_KEY] if name == "aidaemon-encrypted" else []


def whole(path: Path, name: str) -> dict:
    """What the reader's whole-list methods give: every session (with its counts), every session's events and
    every group's notes, as the JSON the commands print."""

    async def read() -> dict:
        key = AIDAEMON_KEY if name == "aidaemon-encrypted" else None
        async with await open_memory(path, key=key, read_only=True, embedding="deterministic") as m:
            caps = m.capabilities
            sessions = await m.list_sessions() if caps.has_sessions else []
            events = {s.session_id: await m.recall(s.session_id) for s in sessions}
            groups = await m.note_users() if caps.has_notes else []
            notes = {g: await m.list_notes(g) for g in groups}
            return {"sessions": sessions, "events": events, "notes": notes}

    found = asyncio.run(read())
    return json.loads(json.dumps(found, default=lambda o: o.__dict__))


def pages(capsys, name: str, path: Path, argv: list[str], first: list[str], limit: int) -> list[list[dict]]:
    """Every page of ``argv`` (``--json``), from ``first``'s options on, each next one with the ``--after`` its
    ``more:`` line gives; the pages' rows."""
    out_pages, options = [], first
    for _ in range(10_000):
        code, out, err = run(capsys, "--db", str(path), *_key(name), "--json", *argv, *options, "--limit", str(limit))
        assert code == 0, err
        out_pages.append(json.loads(out))
        err = _said(err)
        lines = [line for line in err.splitlines() if line.startswith("more: ")]
        assert err == "".join(f"{line}\n" for line in lines), err  # the more: line, nothing else
        if not lines:
            return out_pages
        assert len(out_pages[-1]) == limit  # a page is full when more follow
        options = shlex.split(lines[0].removeprefix("more: "))
        assert options[0] == "--after" and len(options) == 2
    raise AssertionError("the pages never ended")


def _said(err: str) -> str:
    """Standard error without the notices of opening a file (an encrypted file's decrypted snapshot)."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("oxmem: notice: "))


def _seen(rows: list[dict], field: str) -> None:
    keys = [r[field] for r in rows]
    assert len(keys) == len(set(keys)), "a row twice"


# -- every page of every format is the whole list ---------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 3])
def test_sessions_pages_are_the_whole_list_in_order(capsys, files, limit):
    for name, path in files.items():
        expected = whole(path, name)["sessions"]
        if not expected:
            continue
        for first in ([], ["--offset", "0"]):
            rows = [r for page in pages(capsys, name, path, ["sessions"], first, limit) for r in page]
            _seen(rows, "session_id")
            assert rows == [{k: v for k, v in s.items() if k != "agent_identity"} for s in expected], name


@pytest.mark.parametrize("limit", [2, 5])
def test_events_pages_from_the_first_are_the_whole_session(capsys, files, limit):
    for name, path in files.items():
        for session, expected in whole(path, name)["events"].items():
            found = pages(capsys, name, path, ["events", session], ["--offset", "0"], limit)
            rows = [r for page in found for r in page]
            _seen(rows, "sequence")
            assert rows == expected, (name, session)


@pytest.mark.parametrize("limit", [1, 3])
def test_notes_pages_are_the_whole_list_in_order(capsys, files, limit):
    checked = set()
    for name, path in files.items():
        for group, expected in whole(path, name)["notes"].items():
            rows = [r for page in pages(capsys, name, path, ["notes", "list", group], [], limit) for r in page]
            _seen(rows, "note_id")
            assert rows == expected, (name, group)
            checked.add(name)
    assert {"demo", "omega", "zeke", "aidaemon", "oxydra"} <= checked


def test_the_newest_events_are_the_tail_of_every_session(capsys, files):
    for name, path in files.items():
        for session, expected in whole(path, name)["events"].items():
            for limit in (1, 2, 3, 7):
                code, out, err = run(capsys, "--db", str(path), *_key(name), "--json", "events", session, "--limit",
                                     str(limit))  # fmt: skip
                assert code == 0, err
                assert json.loads(out) == expected[-limit:], (name, session, limit)
                earlier = len(expected) - limit
                said = f"earlier: {earlier:,} events; from the first: --offset 0\n" if earlier > 0 else ""
                assert _said(err) == said


# -- concrete pages of the demo store and of Omega's fixture ---------------------------------------------------


def test_demo_pages_and_their_cursors(capsys, files):
    db = str(files["demo"])

    def events(*options: str) -> tuple[list[int], str]:
        code, out, err = run(capsys, "--db", db, "--json", "events", LISBON, *options)
        assert code == 0, err
        return [e["sequence"] for e in json.loads(out)], err

    assert events("--limit", "4") == ([12, 13, 14, 15], "earlier: 11 events; from the first: --offset 0\n")
    assert events() == (list(range(1, 16)), "")  # the default page holds a small session whole, as before
    assert events("--offset", "0", "--limit", "4") == ([1, 2, 3, 4], "more: --after 4\n")
    assert events("--after", "4", "--limit", "4") == ([5, 6, 7, 8], "more: --after 8\n")
    assert events("--after", "11", "--limit", "4") == ([12, 13, 14, 15], "")  # the last page: no more: line
    assert events("--after", "4", "--offset", "2", "--limit", "3") == ([7, 8, 9], "more: --after 9\n")
    assert events("--offset", "13", "--limit", "4") == ([14, 15], "")
    assert events("--offset", "99") == ([], "")
    assert events("--after", "15") == ([], "")

    code, out, err = run(capsys, "--db", db, "--json", "sessions", "--limit", "2")
    first = json.loads(out)
    assert code == 0 and [s["session_id"] for s in first] == ["cli:alice:invoice-rounding", "memory:alice"]
    assert (first[1]["last_sequence"], first[1]["event_count"]) == (12, 6)
    updated = first[1]["updated_at"]
    assert err == f"""more: --after '["{updated}","memory:alice"]'\n"""
    code, out, err = run(capsys, "--db", db, "sessions", "--after", f'["{updated}","memory:alice"]', "--limit", "2")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [
        "session", "memory:bob", "slack:bob:weekly-metrics"
    ]  # fmt: skip
    assert err == f"""more: --after '["{updated}","slack:bob:weekly-metrics"]'\n"""
    code, out, err = run(capsys, "--db", db, "sessions", "--offset", "4")
    assert (code, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()[1:]] == [LISBON, "telegram:alice:tomatoes"]

    code, out, err = run(capsys, "--db", db, "--json", "notes", "list", "alice", "--limit", "2")
    two = json.loads(out)
    assert code == 0 and len(two) == 2
    cursor = [two[1]["updated_at"], two[1]["sequence"]]
    assert err == f"more: --after {shlex.quote(json.dumps(cursor, separators=(',', ':')))}\n"
    code, out, err = run(capsys, "--db", db, "--json", "notes", "list", "alice", "--after", json.dumps(cursor))
    rest = json.loads(out)
    assert (code, err, len(rest)) == (0, "", 4)
    assert not {n["note_id"] for n in two} & {n["note_id"] for n in rest}
    code, out, err = run(capsys, "--db", db, "--json", "notes", "list", "alice", "--tag", "travel", "--limit", "1")
    assert code == 0 and len(json.loads(out)) == 1 and err.startswith("more: --after ")


def test_omega_pages_of_a_conversation(capsys, files):
    omega = str(files["omega"])
    code, out, err = run(capsys, "--db", omega, "--json", "sessions", "--limit", "1")
    (first,) = json.loads(out)
    assert code == 0 and err.startswith("more: --after '[") and first["session_id"] in err
    session = first["session_id"]
    code, out, _ = run(capsys, "--db", omega, "--json", "events", session, "--limit", "1000000")
    sequences = [e["sequence"] for e in json.loads(out)]
    assert len(sequences) >= 2
    code, out, err = run(capsys, "--db", omega, "--json", "events", session, "--offset", "0", "--limit", "1")
    assert [e["sequence"] for e in json.loads(out)] == sequences[:1] and err == f"more: --after {sequences[0]}\n"
    code, out, err = run(capsys, "--db", omega, "--json", "events", session, "--after", str(sequences[0]))
    assert [e["sequence"] for e in json.loads(out)] == sequences[1:] and err == ""


# -- the newest events of sparse sequences, found by reading pages ---------------------------------------------


class _Pages:
    """A memory whose one session has the given sequences, read only a page at a time."""

    def __init__(self, sequences: list[int]) -> None:
        self.sequences, self.reads = sorted(sequences), 0

    async def events_page(self, session_id: str, after: int | None = None, limit: int = 200) -> list[Event]:
        self.reads += 1
        kept = [s for s in self.sequences if after is None or s > after][:limit]
        return [Event(s, "", {}) for s in kept]

    async def session_stats(self, ids: list[str]) -> dict[str, SessionStats]:
        return {i: SessionStats(len(self.sequences), self.sequences[-1] if self.sequences else None, 0) for i in ids}


@pytest.mark.parametrize(
    "sequences",
    [
        list(range(10)),
        [0, 1, 2, 1000, 5000, 5001, 10**12],
        [-(2**63), -5, 3, 2**62, 2**63 - 1],
        list(range(0, 2_000_000, 1000)) + list(range(2_000_000, 2_000_050)),
        [7],
        [],
    ],
    ids=["dense", "sparse", "int64-extremes", "dense-tail-after-sparse", "one", "none"],
)
def test_newest_events_of_any_sequences(sequences):
    for limit in sorted({1, 2, 3, 5, 49, 50, 51, len(sequences), len(sequences) + 1} - {0}):
        memory = _Pages(sequences)
        found, earlier = asyncio.run(paging.newest_events(memory, "s", limit))  # type: ignore[arg-type]
        assert [e.sequence for e in found] == sorted(sequences)[-limit:], limit
        assert earlier == max(len(sequences) - limit, 0)
        assert memory.reads <= 3 + 2 * 64  # pages, never a read of the whole session


def test_dense_sequences_take_three_page_reads():
    memory = _Pages(list(range(1_000_000)))
    found, earlier = asyncio.run(paging.newest_events(memory, "s", 200))  # type: ignore[arg-type]
    assert ([e.sequence for e in found][:2], len(found), earlier) == ([999_800, 999_801], 200, 999_800)
    assert memory.reads == 2  # the first page (more than 200), then the tail placed by the count


# -- the whole-list methods are never called ---------------------------------------------------------------------


def test_the_commands_never_read_the_whole_list(capsys, files, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a whole-list method was called")

    names = ("demo", "omega", "zeke", "aidaemon", "aidaemon-legacy", "oxydra")
    lists = {name: whole(files[name], name) for name in names}
    for cls in (MemoryStore, ForeignReader):
        for method in ("list_sessions", "recall", "list_notes"):
            monkeypatch.setattr(cls, method, refuse)
    for name in names:
        path, ran = str(files[name]), 0
        if lists[name]["sessions"]:
            for argv in ([], ["--limit", "1"], ["--limit", "1", "--offset", "1"]):
                code, _, err = run(capsys, "--db", path, "sessions", *argv)
                assert code == 0, (name, argv, err)
                ran += 1
        for session in list(lists[name]["events"])[:3]:
            for argv in ([], ["--limit", "1"], ["--offset", "1", "--limit", "2"], ["--after", "0"]):
                code, _, err = run(capsys, "--db", path, "events", session, *argv)
                assert code == 0, (name, argv, err)
                ran += 1
        for group in list(lists[name]["notes"])[:3]:
            for argv in ([], ["--limit", "1"], ["--offset", "2"], ["--contains", "e", "--limit", "1"]):
                code, _, err = run(capsys, "--db", path, "notes", "list", group, *argv)
                assert code == 0, (name, argv, err)
                ran += 1
        assert ran >= 4, name


# -- bad values --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["sessions", "--limit", "0"], "argument --limit: must be between 1 and"),
        (["sessions", "--limit", "two"], "argument --limit: 'two' is not a whole number"),
        (["sessions", "--offset", "-1"], "argument --offset: must be between 0 and"),
        (["sessions", "--after", "memory:alice"], "argument --after: 'memory:alice' is not a cursor"),
        (["sessions", "--after", '["2026-11-20", 3]'], '["UPDATED_AT","SESSION_ID"]'),
        (["events", LISBON, "--limit", "-3"], "argument --limit: must be between 1 and"),
        (["events", LISBON, "--after", "x"], "argument --after: 'x' is not a whole number"),
        (["events", LISBON, "--after", "1.5"], "argument --after: '1.5' is not a whole number"),
        (["events", LISBON, "--after", str(2**63)], "argument --after: must be between"),
        (["events", LISBON, "--offset", "x"], "argument --offset: 'x' is not a whole number"),
        (["notes", "list", "alice", "--after", "12"], "argument --after: '12' is not a cursor"),
        (["notes", "list", "alice", "--after", '["2026", "12"]'], '["UPDATED_AT",SEQUENCE]'),
        (["notes", "list", "alice", "--after", '["2026", true]'], "is not a cursor"),
        (["notes", "list", "alice", "--after", f'["2026", {2**64}]'], "is not a cursor"),
        (["notes", "list", "alice", "--limit", "0"], "argument --limit: must be between 1 and"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(capsys, files, argv, fragment):
    code, out, err = run(capsys, "--db", str(files["demo"]), *argv)
    assert_one_error_line(code, out, err, fragment)
