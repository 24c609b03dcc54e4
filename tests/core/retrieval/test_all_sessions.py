"""A search over all sessions: one ranking over every session's chunks, as if they were one session's."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace

import pytest

from oxmem_gui.core.errors import NotFoundError
from oxmem_gui.core.retrieval.ranking import TUNED
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS, AllSessions
from tests.conftest import open_sync, user

WORDS = "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly".split()
QUERIES = ["hotel seat", "quiet garden window", "invoice", "weekly metrics rounding", "flight aisle booking"]
RANKINGS = ["oxmem", "tuned", "oxydra"]


def _numbers(result) -> tuple:
    legs = tuple(sorted((name, leg.candidates, leg.min, leg.max, leg.collapsed) for name, leg in result.legs.items()))
    hits = tuple(
        (h.rank, h.chunk_id, h.score, h.vector_raw, h.fts_raw, h.vector_rank, h.fts_rank, h.context_score)
        for h in result.hits
    )
    return legs, hits


def _fill(store, sessions: list[str], seed: int = 5) -> None:
    """15 turns per session; each session's sequence numbers 100 past the previous one's, so that no turn of one
    session is a neighbour (one sequence number away) of another's when their chunks are moved into one session."""
    rng = random.Random(seed)
    for n, sid in enumerate(sessions):
        turns = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7))) for _ in range(15)]
        store.store_many([(sid, 100 * n + i, user(text)) for i, text in enumerate(turns, 1)])


@pytest.mark.parametrize("ranking", RANKINGS)
def test_on_a_file_of_one_session_all_sessions_is_that_sessions_ranking(store, ranking):
    _fill(store, ["only"])
    for query in QUERIES:
        for top_k in (1, 3, 10):
            every = store.search(ranking, ALL_SESSIONS, query, top_k)
            one = store.search(ranking, "only", query, top_k)
            assert every.hits and _numbers(every) == _numbers(one), (query, top_k)
            assert every.session_id is None and one.session_id == "only"


def _spread_search(store, ranking, scope, query):
    """The tuned profile's update step compares statements of one session only (test_updates.py), so moving chunks
    into one session changes it by design: this comparison runs the profile without it."""
    if ranking == "tuned":
        return store.profile_query(replace(TUNED, update_overlap=0.0), scope, query, 10)
    return store.search(ranking, scope, query, 10)


@pytest.mark.parametrize("ranking", RANKINGS)
def test_all_sessions_ranks_as_if_every_chunk_were_in_one_session(tmp_path, loop, ranking):
    """The same chunks, spread over three sessions in one file and moved into one session in a copy (session ids
    of the same length, so each FTS row keeps its length): every number of every hit is equal, and each hit of
    the spread file names the session it is in."""
    path = tmp_path / "spread.db"
    spread = open_sync(loop, path)
    _fill(spread, ["s-a", "s-b", "s-c"])
    spread.aclose()
    shutil.copy(path, tmp_path / "merged.db")
    merged = open_sync(loop, tmp_path / "merged.db")
    merged.exec_sql("INSERT INTO sessions (session_id) VALUES ('s-z')")
    merged.exec_sql("UPDATE chunks SET session_id = 's-z'")
    spread = open_sync(loop, path, read_only=True)
    try:
        owner = dict(spread.sql("SELECT chunk_id, session_id FROM chunks"))
        sessions_seen = set()
        for query in QUERIES:
            got = _spread_search(spread, ranking, ALL_SESSIONS, query)
            want = _spread_search(merged, ranking, "s-z", query)
            assert len(got.hits) == 10 and _numbers(got) == _numbers(want), query
            assert all(h.session_id == owner[h.chunk_id] for h in got.hits)
            sessions_seen |= {h.session_id for h in got.hits}
        assert sessions_seen == {"s-a", "s-b", "s-c"}
    finally:
        spread.aclose()
        merged.aclose()


def test_a_prefix_scope_searches_only_its_sessions_and_tags_filter_across_them(store):
    for user_id, text in (("ann", "hotel in alfama"), ("bob", "hotel near the airport"), ("bob", "garden seat")):
        store.save_note(user_id, text, ["travel"] if "hotel" in text else [])
    store.store("chat", 1, user("the hotel booking is done"))
    notes = store.hybrid_query(AllSessions("memory:"), "hotel", top_k=10, vector_weight=0.0, fts_weight=1.0)
    assert sorted((h.session_id, h.text) for h in notes.hits) == [
        ("memory:ann", "hotel in alfama"),
        ("memory:bob", "garden seat"),
        ("memory:bob", "hotel near the airport"),
    ]
    assert [h.fts_raw is not None for h in notes.hits] == [True, True, False]
    tagged = store.hybrid_query(ALL_SESSIONS, "hotel", top_k=10, tags=["travel"])
    assert sorted(h.session_id for h in tagged.hits) == ["memory:ann", "memory:bob"]
    every = store.hybrid_query(ALL_SESSIONS, "hotel", top_k=10, vector_weight=0.0, fts_weight=1.0)
    assert sorted(h.session_id for h in every.hits if h.fts_raw is not None) == ["chat", "memory:ann", "memory:bob"]


def test_a_write_of_this_process_reaches_the_all_sessions_ranking(store):
    _fill(store, ["a", "b"])

    def matched() -> list[tuple[str, str]]:
        result = store.hybrid_query(ALL_SESSIONS, "zebra", top_k=3, vector_weight=0.0, fts_weight=1.0)
        return [(h.session_id, h.text) for h in result.hits if h.fts_raw is not None]

    assert matched() == []
    store.store("c", 1, user("a zebra crossing"))
    assert matched() == [("c", "a zebra crossing")]
    store.forget("c")
    assert matched() == []


def test_the_neighbour_step_takes_neighbours_from_the_hits_own_session(store):
    """Two sessions with the same sequence numbers: the tuned profile's neighbour context of a turn comes from the
    turn before or after it in its own session, never from the other session's turn of that number (which
    scores higher here)."""
    store.store_many([("a", 1, user("tomato garden")), ("a", 2, user("quiet invoice"))])
    store.store_many([("b", 1, user("weekly metrics")), ("b", 2, user("quiet flight"))])
    result = store.search("tuned", ALL_SESSIONS, "tomato garden quiet", 4)
    weights = result.profile["vector_weight"], result.profile["fts_weight"]
    weighted = {h.text: weights[0] * h.vector_score + weights[1] * h.fts_score for h in result.pool}
    assert weighted["tomato garden"] > weighted["weekly metrics"]
    invoice = next(h for h in result.hits if h.text == "quiet invoice")
    flight = next(h for h in result.hits if h.text == "quiet flight")
    assert invoice.context_sequence == 1 and invoice.context_score == pytest.approx(0.3 * weighted["tomato garden"])
    assert flight.context_sequence == 1 and flight.context_score == pytest.approx(0.3 * weighted["weekly metrics"])


def test_one_session_that_does_not_exist_is_still_refused(store):
    _fill(store, ["a"])
    with pytest.raises(NotFoundError, match="no session 'nope'"):
        store.hybrid_query("nope", "hotel")
