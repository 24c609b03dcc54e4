"""Imports beside a live agent: checked first (nothing written on a bad line), committed in batches, resumable."""

from __future__ import annotations

import threading

import apsw
import pytest

from oxmem_gui.core import OperationCancelled, SequenceError
from oxmem_gui.core.store.jsonl import Record
from tests.conftest import user


def records(n, session="imp", start=1):
    return [Record(session, i, user(f"message {i}"), i - start + 1) for i in range(start, start + n)]


def sequences(store, session="imp"):
    return [
        r[0] for r in store.sql("SELECT sequence FROM conversation_events WHERE session_id = ? ORDER BY 1", (session,))
    ]


def test_batches_of_bounded_size_and_progress(store):
    seen = []
    result = store.import_events(
        records(1200), batch_events=500, progress=lambda done, total: seen.append((done, total))
    )
    assert (result.stored, result.skipped, result.batches) == (1200, 0, 3)
    assert seen == [(0, 1200), (500, 1200), (1000, 1200), (1200, 1200)]
    assert sequences(store) == list(range(1, 1201))
    assert store.sql("SELECT count(*) FROM chunks_fts") == store.sql("SELECT count(*) FROM chunks_vec") == [(1200,)]


def test_a_second_run_resumes_after_what_is_stored(store):
    store.import_events(records(700), batch_events=500)  # an interrupted run got this far
    result = store.import_events(records(1200), batch_events=500)
    assert (result.stored, result.skipped, result.batches) == (500, 700, 1)
    assert sequences(store) == list(range(1, 1201))
    again = store.import_events(records(1200))
    assert (again.stored, again.skipped, again.batches) == (0, 1200, 0)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            [Record("new", 1, user("a"), 1), Record("new", 3, user("b"), 2), Record("new", 2, user("c"), 3)],
            r"^line 3: sequence 2 of session 'new' is not greater than 3 \(line 2\); nothing was imported$",
        ),
        (
            [Record("imp", 1, user("changed text"), 7)],
            r"^line 7: sequence 1 of session 'imp' is not greater than its last stored sequence 5 "
            r"\(and differs from the stored event\); nothing was imported$",
        ),
        (
            [
                Record("other", 1, user("fine"), 1),
                Record("imp", 6, {"role": "user", "content": "x", "n": float("nan")}, 2),
            ],
            r"^line 2: payload holds NaN or Infinity, which JSON cannot represent$",
        ),
        (  # a None sequence after stored ones was a TypeError
            [Record("imp", None, user("no sequence"), 3)],
            r"^line 3: an imported event needs its sequence \(a resumed import finds what is stored by it\); "
            r"nothing was imported$",
        ),
    ],
)
def test_a_bad_record_writes_nothing(store, bad, message):
    store.import_events(records(5))
    before = store.sql("SELECT count(*) FROM conversation_events")
    with pytest.raises(Exception, match=message) as caught:
        store.import_events(bad, batch_events=1)
    assert type(caught.value).__name__ in ("SequenceError", "InvalidInputError")
    assert store.sql("SELECT count(*) FROM conversation_events") == before
    assert [s.session_id for s in store.list_sessions()] == ["imp"]


def test_cancel_keeps_whole_batches_and_says_how_to_resume(store):
    stop = threading.Event()

    def progress(done, total):
        if done >= 500:
            stop.set()

    with pytest.raises(OperationCancelled) as caught:
        store.import_events(records(1200), batch_events=500, progress=progress, stop=stop)
    assert str(caught.value) == "cancelled after storing 500 of 1,200 events; import the same file again to resume"
    assert sequences(store) == list(range(1, 501))
    assert store.import_events(records(1200)).stored == 700


def test_the_agent_writing_the_same_session_between_batches_stops_the_import(store, tmp_path):
    agent = apsw.Connection(str(store.path))  # another connection: SQLite sees another program
    calls = []

    def progress(done, total):
        calls.append(done)
        if done == 2:  # after the first batch: the agent stores its own next event of that session
            agent.execute(
                "INSERT INTO conversation_events (session_id, sequence, payload_json) VALUES ('imp', 3, '{}')"
            )

    with pytest.raises(SequenceError) as caught:
        store.import_events(records(4), batch_events=2, progress=progress)
    assert str(caught.value) == (
        "sequence 3 of session 'imp' is not greater than its last sequence 3: another program wrote it during the "
        "import; stored 2 of 4 events; import the same file again to resume"
    )
    assert sequences(store) == [1, 2, 3] and calls == [0, 2]
    agent.close()
