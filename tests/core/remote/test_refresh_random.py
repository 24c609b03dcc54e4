"""A refresh trusts no clock and no format: against the real libSQL server (tursodb), a writer whose clock is behind,
ahead or in another format, rows changed with the same length and without ``updated_at``, deletes and re-inserts
under reused rowids — after every refresh the copy equals a fresh pull, row for row.

Run twice: with the memory's tables small (each read whole at a refresh, every byte compared) and with every table
treated as a large one (bucket summaries, new rows, a check window of 3 rows). In the second, what a summary cannot
see — a cell rewritten in place with its type and size kept — may stay until the window passes it, and nothing
else may differ: after every refresh each differing row is one the writer so rewrote, and once the window has gone
round the table the copy equals the pull again."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import datetime, timedelta
from typing import Any

import pytest

from oxmem_gui.core.memory import open_remote, refresh_remote
from oxmem_gui.core.remote import PullReport, snapshot
from tests.core.remote.test_snapshot import pull_rows, rows_of
from tests.remote_server import TursoServer

#: the writer's clock: a fixed time, moved behind and ahead of it and written in other formats — never the test
#: machine's clock, which a refresh must not need anyway
BASE = datetime(2026, 6, 1, 12, 0, 0)
ROUNDS = 8


def stamp(rng: random.Random) -> Any:
    """A time as agents with skewed clocks and other habits write it."""
    at = BASE + timedelta(minutes=rng.randint(-3 * 24 * 60, 24 * 60))  # up to three days behind, a day ahead
    return rng.choice(
        [at.strftime("%Y-%m-%d %H:%M:%S"), at.strftime("%Y-%m-%dT%H:%M:%SZ"), at.isoformat(), int(at.timestamp())]
    )


def one_letter_changed(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text))
    return text[:i] + ("Q" if text[i] != "Q" else "R") + text[i + 1 :]


class Writer:
    """The agent, writing to the server: what it changed in place with type and size kept is remembered."""

    def __init__(self, server: TursoServer, rng: random.Random) -> None:
        self.server, self.rng = server, rng
        self.in_place: set[tuple[str, int]] = set()
        self.sequence = 10_000

    def value(self, sql: str, args: list[Any] | None = None) -> list[Any]:
        return [c.get("value", c.get("base64")) for c in self.server.execute(sql, args or [])[0]]

    def rowids(self, table: str) -> list[int]:
        return [int(r[0]["value"]) for r in self.server.execute(f"SELECT rowid FROM {table}")]

    def append_events(self) -> None:
        session = self.value("SELECT session_id FROM sessions ORDER BY random() LIMIT 1")[0]
        for _ in range(self.rng.randint(1, 5)):
            self.sequence += 1
            self.server.execute(
                "INSERT INTO conversation_events (session_id, sequence, payload_json, created_at) VALUES (?, ?, ?, ?)",
                [session, self.sequence, json.dumps({"role": "user", "content": f"e{self.sequence}"}), stamp(self.rng)],
            )

    def stamp_a_session(self) -> None:  # a time behind, ahead or in another format: nothing else changes
        rowid = self.rng.choice(self.rowids("sessions"))
        self.server.execute("UPDATE sessions SET updated_at = ? WHERE rowid = ?", [stamp(self.rng), rowid])

    def same_length_text(self) -> None:  # no updated_at touched
        rowid = self.rng.choice(self.rowids("chunks"))
        (text,) = self.value("SELECT chunk_text FROM chunks WHERE rowid = ?", [rowid])
        self.server.execute(
            "UPDATE chunks SET chunk_text = ? WHERE rowid = ?", [one_letter_changed(text, self.rng), rowid]
        )
        self.in_place.add(("chunks", rowid))

    def same_length_vector(self) -> None:  # re-embedded in place
        rowid = self.rng.choice(self.rowids("chunks_vec"))
        (size,) = self.value("SELECT length(embedding_blob) FROM chunks_vec WHERE rowid = ?", [rowid])
        blob = self.rng.randbytes(int(size))
        self.server.execute("UPDATE chunks_vec SET embedding_blob = ? WHERE rowid = ?", [blob, rowid])
        self.in_place.add(("chunks_vec", rowid))

    def same_length_state(self) -> None:
        rowid = self.rng.choice(self.rowids("session_state"))
        (text,) = self.value("SELECT state_json FROM session_state WHERE rowid = ?", [rowid])
        self.server.execute(
            "UPDATE session_state SET state_json = ? WHERE rowid = ?", [one_letter_changed(text, self.rng), rowid]
        )
        self.in_place.add(("session_state", rowid))

    def reinsert_under_its_rowid(self) -> None:  # deleted, and another chunk takes the same rowid
        rowid = self.rng.choice(self.rowids("chunks"))
        row = self.value("SELECT chunk_id, session_id, chunk_text, content_hash FROM chunks WHERE rowid = ?", [rowid])
        self.server.execute("DELETE FROM chunks WHERE rowid = ?", [rowid])
        self.server.execute(
            "INSERT INTO chunks (rowid, chunk_id, session_id, chunk_text, content_hash, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [rowid, row[0] + ":again", row[1], "re-chunked: " + row[2], row[3], stamp(self.rng), stamp(self.rng)],
        )

    def delete_an_event(self) -> None:
        rowids = self.rowids("conversation_events")
        if len(rowids) > 5:
            self.server.execute("DELETE FROM conversation_events WHERE rowid = ?", [self.rng.choice(rowids)])

    def count_a_failure(self) -> None:  # an integer changed in place
        rowid = self.rng.choice(self.rowids("schedules"))
        self.server.execute(
            "UPDATE schedules SET consecutive_failures = consecutive_failures + ? WHERE rowid = ?",
            [self.rng.randint(1, 3), rowid],
        )

    def round(self) -> None:
        moves = [
            self.append_events,
            self.stamp_a_session,
            self.same_length_text,
            self.same_length_vector,
            self.same_length_state,
            self.reinsert_under_its_rowid,
            self.delete_an_event,
            self.count_a_failure,
        ]
        for move in self.rng.sample(moves, self.rng.randint(3, len(moves))):
            move()


def differing(copy: dict[str, list[tuple]], fresh: dict[str, list[tuple]]) -> set[tuple[str, int]]:
    """(table, rowid) of every row that is not the same in both (``chunks_fts`` counted as its chunk's)."""
    out = set()
    for table in copy.keys() | fresh.keys():
        mine, theirs = set(copy.get(table, [])), set(fresh.get(table, []))
        for row in mine ^ theirs:
            out.add(("chunks" if table == "chunks_fts" else table, row[0]))
    return out


@pytest.mark.parametrize("size", ["small tables", "every table large"])
def test_after_every_refresh_the_copy_equals_a_fresh_pull(oxydra_server, cache, tmp_path, monkeypatch, size):
    if size == "every table large":
        monkeypatch.setattr(snapshot, "SMALL_TABLE", 0)
        monkeypatch.setattr(snapshot, "CHECK_BYTES", 1)
        monkeypatch.setattr(snapshot, "CHECK_MIN_ROWS", 3)
    writer = Writer(oxydra_server, random.Random(41))
    seen: dict[str, int] = {}

    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:

            async def refresh() -> PullReport:
                report = await refresh_remote(memory)
                for table, count in report.changed.items():
                    seen[table] = seen.get(table, 0) + count
                return report

            for n in range(ROUNDS):
                writer.round()
                report = await refresh()
                fresh = await pull_rows(oxydra_server, tmp_path / f"fresh-{n}")
                left = differing(rows_of(memory.remote.path), fresh)
                if size == "small tables":
                    assert left == set(), n
                    assert report.unchecked == {}
                    continue
                assert left <= writer.in_place, (n, left - writer.in_place)
                unchecked = sum(report.unchecked.values())
                assert unchecked > 0
                assert memory.remote.summary().endswith(
                    f"; {unchecked:,} rows compared by size, type, number and time only (the byte check goes on)"
                )
                # the check window goes round every table: then nothing is left
                for _ in range(1 + max(len(rows) for rows in fresh.values()) // 3):
                    await refresh()
                assert differing(rows_of(memory.remote.path), fresh) == set(), n
                writer.in_place.clear()
                # the copy's summaries, kept by the refreshes, are the server's: nothing to read again
                quiet = await refresh()
                assert quiet.requests == 1 and set(quiet.changed.values()) == {0}, quiet

    asyncio.run(go())
    assert {t for t, count in seen.items() if count} >= {
        "conversation_events",
        "sessions",
        "chunks",
        "chunks_vec",
        "session_state",
        "schedules",
    }
