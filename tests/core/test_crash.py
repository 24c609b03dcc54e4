"""Crash safety: real writer processes killed with SIGKILL at seeded random moments, the store audited after each.

Two writers, each ``python -m tests.agent`` in its own process:

* an **import** of a JSON Lines file (several interleaved sessions, some events of several chunks, some payloads
  that are not messages) in batches of :data:`BATCH` events, killed either early (while it validates and plans)
  or after a seeded number of newly committed events plus a little jitter (mid-import, between or inside a
  batch's transaction);
* **note edits**: notes of about 300 words (three chunks) saved and rewritten in a loop, killed at a seeded delay.

After every kill the store is opened read-only and audited (:func:`audit_store`): SQLite's integrity check and
``oxmem check`` find no problem, every note has its full set of chunks and exactly one event, every session
of the import holds a contiguous prefix of the file's events with the file's payloads (and the store as a whole
a prefix of the file in file order, a whole number of batches), and chunks, FTS rows and vectors agree. After
the kills the import is run again to completion: it skips what was stored and stores the rest, exactly the file.

A third test damages a store by hand and checks that the audit sees each kind of damage. The same rounds (and a
third kind, both writers killed on one store) drive ``bench/bench_soak.py``'s longer SIGKILL loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from oxmem_gui.core.check import OK, check_store
from oxmem_gui.core.store.events import prepare_event
from oxmem_gui.core.store.jsonl import Record, read_jsonl
from tests.conftest import open_sync
from tests.processes import agent_report, start_agent

SEED = 1234
BATCH = 50
KILLS = 8
CATEGORIES = ("integrity", "half notes", "sequence gaps", "index sync")
#: ``oxmem check``'s checks, by the category of this audit a finding other than ok counts in
CHECK_CATEGORY = {"index sync": "index sync", "vectors": "index sync", "sequences": "sequence gaps"}
WORDS = (
    "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly lisbon "
    "castle breakfast vegetarian copper schedule budget token summary session memory agent"
).split()


@dataclass
class ImportFile:
    path: Path
    records: list[Record]
    #: chunks each record's event gets (computed once: the audit compares against it after every kill)
    chunks: list[int]

    def __len__(self) -> int:
        return len(self.records)


def write_import_file(path: Path, sessions: int, per_session: int, seed: int = SEED) -> ImportFile:
    """A JSON Lines file of ``sessions × per_session`` events, the sessions interleaved line by line; every
    7th event is long (three chunks), every 50th is not a message (stored, not indexed). Unique texts, so no
    chunk is shared (deduplicated) between events."""
    rng = random.Random(seed)
    lines = []
    for seq in range(1, per_session + 1):
        for s in range(sessions):
            sid = f"import:{s}"
            if seq % 50 == 0:
                payload: object = {"kind": "metric", "value": seq, "session": s}
            else:
                words = rng.choices(WORDS, k=260 if seq % 7 == 0 else rng.randint(8, 20))
                payload = {"role": ("user", "assistant")[seq % 2], "content": f"{sid} event {seq} " + " ".join(words)}
            lines.append(json.dumps({"session_id": sid, "sequence": seq, "payload": payload}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = read_jsonl(path)
    return ImportFile(path, records, [len(prepare_event(*r[:3]).chunks) for r in records])


def _ro(db: Path) -> apsw.Connection:
    return apsw.Connection(f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def stored_events(db: Path) -> int:
    conn = _ro(db)
    try:
        return conn.execute("SELECT count(*) FROM conversation_events WHERE session_id LIKE 'import:%'").fetchall()[0][
            0
        ]
    finally:
        conn.close()


def audit_store(
    db: Path, source: ImportFile | None = None, batch: int | None = None, complete: bool = False
) -> dict[str, list[str]]:
    """Every problem found in the store, by category (all lists empty: the store is whole). ``source``: the
    import file — its sessions must hold a prefix of it (``complete``: all of it), ``batch``: whole batches."""
    problems: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    report = asyncio.run(check_store(db))
    for f in report.findings:
        if f.level != OK:
            problems[CHECK_CATEGORY.get(f.check, "integrity")].append(f"oxmem check {f.check}: {f.detail}")
    if not any(f.check == "index sync" and f.level == OK for f in report.findings):
        problems["index sync"].append(f"no ok index sync finding: {report.findings}")
    conn = _ro(db)
    try:
        conn.execute("BEGIN")  # one snapshot for every query below
        _audit_integrity(conn, problems)
        _audit_index(conn, problems)
        _audit_notes(conn, problems)
        if source is not None:
            _audit_import(conn, source, batch, complete, problems)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return problems


def _audit_integrity(conn: apsw.Connection, problems: dict[str, list[str]]) -> None:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    if rows != ["ok"]:
        problems["integrity"].append(f"integrity_check: {rows[:5]}")


def _audit_index(conn: apsw.Connection, problems: dict[str, list[str]]) -> None:
    chunks, fts, vectors = (
        conn.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ("chunks", "chunks_fts", "chunks_vec")
    )
    if not chunks == fts == vectors:
        problems["index sync"].append(f"chunks {chunks} / FTS rows {fts} / vectors {vectors}")
    orphans = conn.execute(
        "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM conversation_events e "
        "WHERE e.session_id = c.session_id AND e.sequence = c.sequence_start)"
    ).fetchall()[0][0]
    if orphans:
        problems["index sync"].append(f"{orphans} chunks without their event")


def _audit_notes(conn: apsw.Connection, problems: dict[str, list[str]]) -> None:
    """Every note: exactly one event carries its id; its chunks are chunk_count many, indexes 0..n-1, all of
    that event, and exactly the chunks of that event's content."""
    half = problems["half notes"]
    chunks: dict[tuple[str, str], list[tuple[int, int, int, str]]] = defaultdict(list)
    for sid, note_id, index, count, start, text in conn.execute(
        "SELECT session_id, json_extract(metadata_json, '$.note_id'), json_extract(metadata_json, '$.chunk_index'), "
        "json_extract(metadata_json, '$.chunk_count'), sequence_start, chunk_text FROM chunks "
        "WHERE json_extract(metadata_json, '$.note_id') IS NOT NULL"
    ):
        chunks[(sid, note_id)].append((index, count, start, text))
    events: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for sid, seq, payload in conn.execute(
        "SELECT session_id, sequence, payload_json FROM conversation_events WHERE session_id LIKE 'memory:%'"
    ):
        tool_call_id = json.loads(payload).get("tool_call_id")
        events[(sid, tool_call_id)].append((seq, payload))
    for key in sorted(set(chunks) | set(events)):
        sid, note_id = key
        evs, parts = events.get(key, []), sorted(chunks.get(key, []))
        if len(evs) != 1:
            half.append(f"{note_id}: {len(evs)} events carry it (with {len(parts)} chunks)")
            continue
        seq, payload = evs[0]
        want = [c.text for c in prepare_event(sid, None, json.loads(payload)).chunks]
        counts = {c for _, c, _, _ in parts}
        if counts != {len(parts)} or [p[0] for p in parts] != list(range(len(parts))):
            half.append(f"{note_id}: chunk_count {sorted(counts)} but chunk indexes {[p[0] for p in parts]}")
        elif {p[2] for p in parts} != {seq}:
            half.append(f"{note_id}: chunks of events {sorted({p[2] for p in parts})}, its event is {seq}")
        elif [p[3] for p in parts] != want:
            half.append(f"{note_id}: chunk texts are not those of the note's content ({len(parts)} vs {len(want)})")


def _audit_import(
    conn: apsw.Connection,
    source: ImportFile,
    batch: int | None,
    complete: bool,
    problems: dict[str, list[str]],
) -> None:
    gaps = problems["sequence gaps"]
    records = source.records
    by_session: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_session[r.session_id].append(r)
    stored: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for sid, seq, payload in conn.execute(
        "SELECT session_id, sequence, payload_json FROM conversation_events "
        "WHERE session_id NOT LIKE 'memory:%' ORDER BY session_id, sequence"
    ):
        stored[sid].append((seq, payload))
    for sid in sorted(set(stored) - set(by_session)):
        gaps.append(f"session {sid!r} is not in the file")
    prefix: set[tuple[str, int]] = set()
    for sid, want in by_session.items():
        have = stored.get(sid, [])
        if [s for s, _ in have] != [r.sequence for r in want[: len(have)]]:
            gaps.append(f"{sid}: sequences {_runs([s for s, _ in have])} are not a prefix of the file's")
            continue
        if complete and len(have) != len(want):
            gaps.append(f"{sid}: {len(have)} of {len(want)} events after the import completed")
        bad = [r.sequence for (_, p), r in zip(have, want, strict=False) if json.loads(p) != r.payload]
        if bad:
            gaps.append(f"{sid}: payloads of sequences {bad[:5]} differ from the file's")
        prefix |= {(sid, s) for s, _ in have}
    n = len(prefix)
    if prefix != {(r.session_id, r.sequence) for r in records[:n]}:
        gaps.append(f"the {n} stored events are not the file's first {n}")
    if batch and n % batch and n != len(records):
        gaps.append(f"{n} events stored: a partial batch of {batch}")
    # chunks of each stored event: all of them (they are unique, so none was shared with another event)
    chunk_counts = Counter(
        (sid, seq)
        for sid, seq in conn.execute(
            "SELECT session_id, sequence_start FROM chunks WHERE session_id NOT LIKE 'memory:%'"
        )
    )
    wrong = [
        (r.session_id, r.sequence)
        for r, want in zip(records[:n], source.chunks, strict=False)
        if chunk_counts.get((r.session_id, r.sequence), 0) != want
    ]
    if wrong:
        problems["index sync"].append(f"{len(wrong)} imported events lack chunks or have extra ones: {wrong[:3]}")


def _runs(seqs: list[int]) -> str:
    return f"{seqs[:3]}…{seqs[-3:]} ({len(seqs)})" if len(seqs) > 6 else str(seqs)


@dataclass
class CrashRound:
    """What one round of kills did and found."""

    kills: int = 0
    #: runs that ended on their own before the kill (an import that completed first); not counted as kills
    finished: int = 0
    problems: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CATEGORIES})
    #: imported events in the store after each kill (committed batches survive: never decreasing)
    stored_after_kill: list[int] = field(default_factory=list)
    #: the import run again to completion: {"stored", "skipped"}
    resumed: dict | None = None
    audits: int = 0

    def add(self, found: dict[str, list[str]], when: str) -> None:
        self.audits += 1
        for category, items in found.items():
            self.problems[category] += [f"after {when}: {item}" for item in items]

    @property
    def problem_count(self) -> int:
        return sum(len(v) for v in self.problems.values())


def _kill(proc: subprocess.Popen) -> bool:
    """SIGKILL the process if it still runs (True); else check that it ended cleanly (False)."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        if proc.returncode == -signal.SIGKILL:
            return True
    report = agent_report(proc)  # it ended on its own: without a traceback or an error
    assert "error" not in report, report
    return False


def _wait_for_events(db: Path, proc: subprocess.Popen, target: int) -> None:
    conn = _ro(db)
    try:
        sql = "SELECT count(*) FROM conversation_events WHERE session_id LIKE 'import:%'"
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if conn.execute(sql).fetchall()[0][0] >= target:
                return
            time.sleep(0.002)
    finally:
        conn.close()


def crash_round(
    tmp: Path,
    db: Path,
    rng: random.Random,
    kills: int,
    mode: str,
    source: ImportFile | None = None,
    batch: int = BATCH,
) -> CrashRound:
    """``kills`` SIGKILLs of an import (``mode`` "import"), of note edits ("notes") or of both at once on the
    same store ("both"), the store audited after each; an import is then run again to completion."""
    result = CrashRound()
    importing, editing = mode in ("import", "both"), mode in ("notes", "both")
    total = len(source or ())
    attempt = 0
    while result.kills < kills:
        attempt += 1
        assert attempt <= 3 * kills, f"only {result.kills} of {kills} kills landed in {attempt - 1} runs"
        procs = []
        stored = stored_events(db) if importing and db.exists() else 0
        if importing:
            assert source is not None
            procs.append(start_agent(db, "import", str(source.path), str(batch), ready=tmp / f"ready-i{attempt}"))
        if editing:
            procs.append(
                start_agent(db, "notes", "crash", "--seconds", "60", ready=tmp / f"ready-n{attempt}"),
            )
        # the moment, drawn the same way every time (so a seed gives the same draws on any machine)
        mid, batches, jitter, early, edit = rng.random(), rng.randint(1, 12), rng.random(), rng.random(), rng.random()
        if importing and stored < total - 5 * batch and mid < 0.75:
            # mid-import: after a seeded number of newly committed batches, plus a little jitter
            _wait_for_events(db, procs[0], min(stored + batches * batch, total - 5 * batch))
            time.sleep(0.03 * jitter)
        else:  # early: reading, validating and planning the file; or the note loop at a random moment
            time.sleep(0.15 * early if importing else 0.02 + 0.6 * edit)
        landed = [_kill(p) for p in procs]
        if any(landed):
            result.kills += 1
        else:
            result.finished += 1
        result.add(audit_store(db, source, batch), f"kill {attempt} ({mode})")
        if importing:
            now = stored_events(db)
            if now < stored:
                result.problems["sequence gaps"].append(f"after kill {attempt}: {now} events stored, {stored} before")
            result.stored_after_kill.append(now)
    if importing:
        before = stored_events(db)
        proc = start_agent(db, "import", str(source.path), str(batch))
        result.resumed = agent_report(proc)
        if result.resumed.get("skipped") != before or result.resumed.get("stored", 0) + before != total:
            result.problems["sequence gaps"].append(f"resume after {before} stored of {total}: {result.resumed}")
        result.add(audit_store(db, source, batch, complete=True), "the completed import")
    return result


def assert_clean(result: CrashRound, kills: int) -> None:
    assert result.kills == kills
    assert {c: v for c, v in result.problems.items() if v} == {}


def test_sigkill_during_import_loses_nothing_committed_and_resumes(tmp_path):
    rng = random.Random(SEED)
    source = write_import_file(tmp_path / "events.jsonl", sessions=5, per_session=800)
    db = tmp_path / "memory.db"
    result = crash_round(tmp_path, db, rng, KILLS, "import", source)
    assert_clean(result, KILLS)
    assert result.stored_after_kill == sorted(result.stored_after_kill)  # committed batches survive every kill
    assert any(0 < n < len(source) for n in result.stored_after_kill)  # some kills landed mid-import
    assert result.resumed["stored"] + result.resumed["skipped"] == len(source)
    assert stored_events(db) == len(source)


def test_sigkill_during_note_edits_leaves_whole_notes(tmp_path):
    rng = random.Random(SEED)
    db = tmp_path / "memory.db"
    result = crash_round(tmp_path, db, rng, KILLS, "notes")
    assert_clean(result, KILLS)
    conn = _ro(db)
    notes = conn.execute(
        "SELECT count(*), sum(json_extract(metadata_json, '$.chunk_count') > 1) FROM chunks WHERE "
        "json_extract(metadata_json, '$.chunk_index') = 0 AND json_extract(metadata_json, '$.note_id') IS NOT NULL"
    ).fetchall()[0]
    conn.close()
    assert notes[0] >= KILLS and notes[1] >= KILLS  # every run's first note was committed; long notes, 3 chunks


def test_the_audit_sees_half_notes_gaps_and_missing_index_rows(tmp_path, loop):
    """The audit itself: damage written by hand is found, each kind in its category."""
    source = write_import_file(tmp_path / "events.jsonl", sessions=2, per_session=30)
    db = tmp_path / "memory.db"
    store = open_sync(loop, db)
    store.import_events(source.records)
    note = store.save_note("u", "note " + "word " * 300)
    assert audit_store(db, source, complete=True) == {c: [] for c in CATEGORIES}
    store.exec_sql(
        "DELETE FROM chunks WHERE json_extract(metadata_json, '$.note_id') = ? "
        "AND json_extract(metadata_json, '$.chunk_index') = 1",
        (note.note_id,),
    )
    store.exec_sql("DELETE FROM conversation_events WHERE session_id = 'import:1' AND sequence = 3")
    store.exec_sql("DELETE FROM chunks_vec WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE sequence_start = 5)")
    store.aclose()
    found = audit_store(db, source)
    assert [c for c in CATEGORIES if found[c]] == ["half notes", "sequence gaps", "index sync"]
    assert "chunk_count [3] but chunk indexes [0, 2]" in found["half notes"][0]
