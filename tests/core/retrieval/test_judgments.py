"""Graded queries live in their own file (never the agent's), safely from many threads."""

import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.retrieval.judgments import JudgmentStore


def test_judgments_live_in_their_own_file(tmp_path, store):
    js = JudgmentStore(tmp_path / "inspector.db")
    db = store.path
    js.judge(db, "travel", "s", "apple pie", "chunk:1", 3)
    js.judge(db, "travel", "s", "apple pie", "chunk:2", 1)
    js.judge(db, "travel", "s", "apple pie", "chunk:2", 2)
    js.judge(db, "travel", "s", "banana", "chunk:4", 0)
    js.judge(db, "travel", "s", "apple pie", "chunk:9", None)
    assert js.sets(db) == ["travel"] and js.sets(tmp_path / "other.db") == []
    assert [(q.query, q.grades) for q in js.queries(db, "travel")] == [
        ("apple pie", {"chunk:1": 3, "chunk:2": 2}),
        ("banana", {"chunk:4": 0}),
    ]
    with pytest.raises(InvalidInputError, match="a grade is 0, 1, 2 or 3"):
        js.judge(db, "travel", "s", "q", "c", 4)
    assert store.sql("SELECT name FROM sqlite_master WHERE name LIKE '%judg%'") == []
    js.close()


def test_judgments_from_many_threads(tmp_path):
    import threading

    js = JudgmentStore(tmp_path / "inspector.db")

    def work(t):
        for i in range(50):
            js.judge("/db", "set", "s", f"q{t}", f"c{i}", i % 4)
            js.queries("/db", "set")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(len(q.grades) for q in js.queries("/db", "set")) == [50, 50, 50, 50]
    js.close()
