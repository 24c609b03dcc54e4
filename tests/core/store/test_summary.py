import json

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError
from oxmem_gui.core.store.summary import SummaryConfig
from tests.conftest import user


def test_cas_applies_then_rejects_stale(store):
    store.store("s", 1, user("hello"))
    assert store.read_summary_state("s") is None
    first = store.write_summary_state("s", "greeted", 1, expected_epoch=0, metadata={"k": 1})
    assert (first.applied, first.epoch) == (True, 1)
    stale = store.write_summary_state("s", "stale write", 1, expected_epoch=0)
    assert (stale.applied, stale.epoch) == (False, 1)
    assert store.read_summary_state("s") == {
        "epoch": 1,
        "summary": "greeted",
        "upper_sequence": 1,
        "metadata": {"k": 1},
    }
    state = json.loads(store.sql("SELECT state_json FROM session_state")[0][0])
    assert state["last_sequence"] == 1


def test_cas_keeps_agent_keys_and_rejects_lower_upper(store):
    store.store("s", 1, user("a"))
    store.store("s", 2, user("b"))
    store.exec_sql("UPDATE session_state SET state_json = json_set(state_json, '$.agent_private', 'x')")
    assert store.write_summary_state("s", "up to 2", 2, 0).applied
    with pytest.raises(InvalidInputError, match="upper_sequence 1 is lower than the stored summary's 2"):
        store.write_summary_state("s", "older", 1, 1)
    state = json.loads(store.sql("SELECT state_json FROM session_state")[0][0])
    assert state["agent_private"] == "x" and state["summary_state"]["epoch"] == 1


def test_summary_of_unknown_session(store):
    with pytest.raises(NotFoundError):
        store.read_summary_state("nope")


def fill(store, n=6, size=80):
    for i in range(1, n + 1):
        store.store("s", i, user(f"{i:02d} " + "x" * (size - 3)))  # 80 chars = 20 tokens each


def test_summarize_not_triggered_below_ratio(store):
    fill(store)  # 120 tokens
    out = store.summarize("s", 200)  # trigger at 160
    assert (out.triggered, out.tokens_before) == (False, 120)
    assert store.read_summary_state("s") is None


def test_summarize_condenses_oldest_until_target(store):
    fill(store)  # 6 x 20 = 120 tokens
    out = store.summarize("s", 140, SummaryConfig(min_turns=4, trigger_ratio=0.8, target_ratio=0.5))
    # 120 > 112: triggered; target 70. Each condensed line adds "- [n] user: " + 80 chars to the summary,
    # so use only falls when lines are cut; here the summary grows as fast as messages leave: all but the
    # newest message end up condensed.
    assert out.triggered and out.condensed_sequences == [1, 2, 3, 4, 5]
    state = store.read_summary_state("s")
    assert state["epoch"] == 1 and state["upper_sequence"] == 5
    assert state["summary"].splitlines()[0] == "Recent condensed turns:"
    assert state["summary"].splitlines()[1] == "- [1] user: 01 " + "x" * 77
    assert state["metadata"] == {"condensed_messages": 5}


def test_summarize_cuts_long_texts_at_180(store):
    for i in range(1, 5):
        store.store("s", i, user(f"{i} " + "y" * 998))  # 250 tokens each
    out = store.summarize("s", 1000)  # 1000 > 800 triggers; target 500
    assert out.triggered and out.condensed_sequences == [1, 2, 3]
    line = store.read_summary_state("s")["summary"].splitlines()[1]
    assert line == "- [1] user: 1 " + "y" * 178
    assert out.tokens_after <= 500


def test_context_preview_statuses(store):
    fill(store)
    store.write_summary_state("s", "early talk", 2, 0)
    p = store.context_preview("s", 60)  # summary 9 + newest 20 + 20 = 49 fit; one more would be 69
    summary_tokens = len("Rolling session summary: early talk") // 4 + 1  # 35 chars -> 9 tokens
    assert (p.summary_message, p.summary_tokens) == ("Rolling session summary: early talk", summary_tokens)
    assert [(i.sequence, i.status) for i in p.items] == [
        (1, "summarized"),
        (2, "summarized"),
        (3, "dropped"),
        (4, "dropped"),
        (5, "included"),
        (6, "included"),
    ]
    assert p.used == summary_tokens + 40
