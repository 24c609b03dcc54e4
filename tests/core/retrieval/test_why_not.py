"""Why not this one? For each step that can cut a memory, a hand-made session where that step cuts it: the story
names the step with its numbers, and a suggested change, applied, puts the memory in the top k."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.errors import NotFoundError
from oxmem_gui.core.retrieval.hybrid import CANDIDATE_FACTOR, order_key
from oxmem_gui.core.retrieval.vectors import Candidate, candidate_key
from tests.conftest import TableEmbedding, open_sync, user

QUERY_VECTOR = [1.0, 0.0, 0.0, 0.0]


def at(cosine: float) -> list[float]:
    """A unit vector at ``cosine`` from the query's."""
    return [cosine, math.sqrt(max(0.0, 1 - cosine * cosine)), 0.0, 0.0]


@pytest.fixture
def table():
    return {}


@pytest.fixture
def store(tmp_path, loop, table):
    s = open_sync(loop, tmp_path / "m.db", embedding=TableEmbedding(table, default=at(0.0)))
    yield s
    s.aclose()


def why(store, target, query="hotel booking", k=3, ranking="oxmem", session="s", **options):
    return store.why_not(
        ranking, session, query, target, k, options=SearchOptions(query_embedding=QUERY_VECTOR, **options)
    )


def rank_with(store, story, change, ranking="oxmem", session="s", **options):
    """The target's rank in the top k once ``change`` is applied (None: still not there)."""
    k, query = story.top_k, story.query
    if change.control == "top_k":
        k = change.value
    elif change.control == "query":
        query = change.value
    elif change.control == "vector_weight":
        options.update(vector_weight=change.value, fts_weight=round(1 - change.value, 2))
    elif change.control == "tags":
        options["tags"] = change.value
    elif change.control == "fts_mode":
        options["fts_mode"] = change.value
    vector = QUERY_VECTOR if query == story.query else None
    result = store.search(ranking, session, query, k, options=SearchOptions(query_embedding=vector, **options))
    return next((h.rank for h in result.hits if h.chunk_id == story.chunk_id), None)


def test_outranked_names_the_hits_above_and_the_gap_and_a_weight_brings_it_back(store, table):
    table.update({"hotel booking done": at(0.9), "booking for the hotel": at(0.85), "a quiet hotel": at(0.8)})
    table["hotel booking, hotel booking"] = at(0.1)  # the best keyword match, far by vector
    store.store_many([("s", i, user(t)) for i, t in enumerate(table, 1)])
    story = why(store, "4", k=2)
    assert not story.recalled and story.reason == "outranked"
    result = story.result
    assert story.rank == 4 and story.of == len(result.ranking) == 4
    assert [c for _, c, _ in story.above] == [h.chunk_id for h in result.hits]
    assert story.short_by == pytest.approx(result.hits[-1].score - story.score)
    assert story.cut.startswith(f"outranked within the top 2: #4 with {story.score:.6f}")
    vector, fts = story.legs["vector"], story.legs["fts"]
    assert (vector.rank, vector.of, vector.candidate, vector.normalized) == (4, 4, True, 0.0)
    assert (fts.rank, fts.of, fts.normalized) == (1, 4, 1.0)
    first = story.changes[0]
    assert first.control == "vector_weight" and first.value < 0.7  # the weight nearest 0.7 that does it
    assert [c.control for c in story.changes][:2] == ["vector_weight", "top_k"]
    for change in story.changes:
        assert rank_with(store, story, change) == change.rank


def test_not_a_candidate_of_either_leg_gives_the_cosine_the_cut_off_and_the_absent_words(store, table):
    for i in range(20):
        table[f"hotel booking number {i}"] = at(0.5 + i / 100)
    table["we talked about the weather"] = at(0.1)
    store.store_many([("s", i, user(t)) for i, t in enumerate(table, 1)])
    story = why(store, "21", k=2, ranking="tuned")
    assert story.reason == "not-a-candidate" and story.rank is None
    vector, fts = story.legs["vector"], story.legs["fts"]
    assert (vector.rank, vector.of, vector.candidate) == (21, 21, False)
    assert vector.cutoff == pytest.approx(0.5 + 12 / 100, abs=1e-6)  # the 8th candidate of 2 × 4
    assert fts.raw is None and fts.words == "no match: none of hote*, booki* is in its text"
    assert story.cut.startswith("neither leg took it as a candidate: vector: cosine 0.1")
    top = next(c for c in story.changes if c.control == "top_k")
    # its vector rank 21 needs top 6 (6 × 4 candidates) to be a candidate; there it ranks #21, and top 21 takes it
    assert (top.value, top.rank) == (21, 21) and rank_with(store, story, top, ranking="tuned") == 21
    added = next(c for c in story.changes if c.control == "query")
    assert added.value == "hotel booking weather" and rank_with(store, story, added, ranking="tuned") == added.rank


def test_stopwords_a_profile_dropped_are_named(store, table):
    store.store_many([("s", 1, user("the plan")), ("s", 2, user("hotel booking"))])
    story = why(store, "1", query="what is the hotel", k=1, ranking="tuned")
    assert story.legs["fts"].words == (
        "no match: none of hote* is in its text (stopwords dropped from the query: what, is, the)"
    )


def test_phrase_mode_needs_the_words_in_a_row(store):
    store.store_many([("s", 1, user("booking the hotel")), ("s", 2, user("a hotel booking"))])
    story = why(store, "1", k=1, ranking="oxydra")
    assert story.legs["fts"].words == (
        "phrase mode needs «hotel booking» in a row; its text has the words, but not in that order"
    )
    other = why(store, "1", query="hotel room", k=1, ranking="oxydra")
    assert other.legs["fts"].words.endswith("its text lacks room")


def test_a_tag_filter_is_named_with_the_memorys_tags(store, table):
    table["hotel booking"] = at(0.9)
    wanted = store.save_note("ann", "hotel booking", ["work"])
    store.save_note("ann", "hotel booking again", ["travel"])
    for filler in ("the weather", "a garden", "an invoice"):  # so that "hotel" and "booking" are rare words
        store.save_note("ann", filler, ["travel"])
    story = why(store, wanted.note_id, k=1, session="memory:ann", tags=["travel"])
    assert story.reason == "tag-filter"
    assert story.cut == "the tag filter (any of travel) left it out: its tags are work"
    assert [(c.control, c.value) for c in story.changes] == [("tags", [])]
    assert rank_with(store, story, story.changes[0], session="memory:ann") == story.changes[0].rank == 1


def test_another_session_and_another_users_note(store):
    store.store("a", 1, user("hotel booking"))
    store.store("b", 1, user("hotel booking"))
    chunk = store.sql("SELECT chunk_id FROM chunks WHERE session_id = 'a'")[0][0]
    story = why(store, chunk, session="b")
    assert (story.reason, story.cut) == ("other-session", "it is in session 'a', not in 'b'")
    note = store.save_note("ann", "hotel booking in Alfama", [])
    store.save_note("bob", "flight booking", [])
    story = why(store, note.note_id, session="memory:bob")
    assert story.cut == "it is 'ann''s note, not 'bob''s"


def test_an_event_never_chunked_and_one_merged_by_dedup(store):
    store.store_many([("s", 1, user("hotel booking")), ("s", 2, user("")), ("s", 3, user("hotel booking"))])
    story = why(store, "2")
    assert (story.reason, story.chunk_id) == ("not-chunked", None)
    assert story.cut == "the event at sequence 2 was never chunked: payload has no text to index"
    merged = why(store, "#3", k=1)
    first = store.sql("SELECT chunk_id FROM chunks WHERE sequence_start = 1")[0][0]
    assert merged.chunk_id == first and merged.recalled and merged.changes == []
    assert merged.notes == [
        f"merged by dedup: the same text was first stored at sequence 1, as chunk {first}; that chunk stands for "
        "this event"
    ]


def test_a_vector_of_another_model(store):
    store.store_many([("s", 1, user("the plan")), ("s", 2, user("hotel booking"))])
    store.exec_sql("UPDATE chunks_vec SET embedding_model = 'other-model' WHERE chunk_id IN "
                   "(SELECT chunk_id FROM chunks WHERE sequence_start = 1)")  # fmt: skip
    story = why(store, "1", k=1)
    assert story.legs["vector"].words == "its vector is of other-model, which the query was not embedded for"


def test_superseded_by_a_newer_statement(store, table):
    old, new = "Ana plays for Porto", "Ana now plays for Benfica"
    table.update({old: at(0.95), new: at(0.8)})
    store.store_many([("s", 1, user(old)), ("s", 2, user(new))])
    story = why(store, "1", query="Which team does Ana play for?", k=1, ranking="tuned")
    assert story.reason == "superseded" and story.rank == 2
    assert story.cut.startswith("superseded: the newer statement at sequence 2 restates it")


def test_recalled_and_unknown_targets(store):
    store.store_many([("s", 1, user("hotel booking"))])
    story = why(store, "1")
    assert story.recalled and story.rank == 1 and story.cut == "" and story.changes == []
    with pytest.raises(NotFoundError, match="no event at sequence 9 in session 's'"):
        why(store, "9")
    with pytest.raises(NotFoundError, match="no chunk, event or note 'chunk:nope' in this file"):
        why(store, "chunk:nope")


WORDS = "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly".split()


def _brute_force(store, query_vector, query, k):
    """contract §6 from scratch: every chunk's cosine (the matrix's own arithmetic) and −bm25 (FTS5 over every
    match), each leg's best ``k × 4`` in leg order, min–max, 0.7/0.3, contract order."""
    rows = store.sql("SELECT c.chunk_id, c.sequence_start, c.sequence_end, v.embedding_blob FROM chunks c "
                     "JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.session_id = 's'")  # fmt: skip
    matrix = np.array([np.frombuffer(r[3], dtype="<f4") for r in rows])
    inv = 1.0 / np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    q = np.asarray(query_vector, dtype=np.float32)
    cosines = (matrix @ q) * inv.astype(np.float32) / np.float32(np.linalg.norm(q))
    vec = [Candidate(r[0], float(c), r[1], r[2]) for r, c in zip(rows, cosines, strict=True)]
    expression = " OR ".join(f'"{w}"' for w in query.split())
    matches = store.sql(
        "SELECT c.chunk_id, -bm25(chunks_fts), c.sequence_start, c.sequence_end FROM chunks_fts f "
        "JOIN chunks c ON c.rowid = f.rowid WHERE chunks_fts MATCH ? AND c.session_id = 's'",
        (expression,),
    )
    fts = [Candidate(*r) for r in matches]
    legs = {}
    for name, cands in (("vector", vec), ("fts", fts)):
        ordered = sorted(cands, key=candidate_key)
        taken = ordered[: k * CANDIDATE_FACTOR]
        lo, hi = (min(c.raw for c in taken), max(c.raw for c in taken)) if taken else (0, 0)
        norm = {c.chunk_id: 1.0 if hi - lo <= 1e-6 else (c.raw - lo) / (hi - lo) for c in taken}
        ranks = {c.chunk_id: 1 + sum(o.raw > c.raw for o in cands) for c in cands}
        legs[name] = (norm, ranks, {c.chunk_id: c for c in cands})
    pool = set(legs["vector"][0]) | set(legs["fts"][0])

    class H:  # what order_key reads
        def __init__(self, cid):
            c = legs["vector"][2][cid]
            self.chunk_id, self.sequence_start, self.sequence_end = cid, c.sequence_start, c.sequence_end

    scores = {cid: 0.7 * legs["vector"][0].get(cid, 0.0) + 0.3 * legs["fts"][0].get(cid, 0.0) for cid in pool}
    order = sorted(pool, key=lambda cid: order_key(scores[cid], H(cid)))
    return order, legs


def test_the_reported_ranks_equal_a_ranking_of_every_candidate_on_300_targets(tmp_path, loop):
    rng = random.Random(28)
    store = open_sync(loop, tmp_path / "r.db")  # deterministic embeddings
    try:
        texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7))) for _ in range(120)]
        store.store_many([("s", i, user(t)) for i, t in enumerate(texts, 1)])
        checked = 0
        for _ in range(10):
            query, k = " ".join(rng.sample(WORDS, 2)), rng.randint(1, 6)
            vector = [rng.gauss(0, 1) for _ in range(store.backend.dimensions)]
            order, legs = _brute_force(store, vector, query, k)
            ids = [r[0] for r in store.sql("SELECT chunk_id FROM chunks WHERE session_id = 's'")]
            for cid in rng.sample(ids, 30):
                story = store.why_not(
                    "oxmem", "s", query, cid, k, options=SearchOptions(query_embedding=vector), suggest=False
                )
                expected = order.index(cid) + 1 if cid in order else None
                assert (story.rank, story.of) == (expected, len(order)), (query, k, cid)
                assert story.recalled == (expected is not None and expected <= k)
                assert story.legs["vector"].rank == legs["vector"][1][cid]
                assert story.legs["fts"].rank == legs["fts"][1].get(cid)
                checked += 1
        assert checked == 300
    finally:
        store.aclose()


def test_the_story_follows_another_process_writing(tmp_path, loop):
    """A real second process appends turns; after each commit the reader's story (its caches followed) equals a
    fresh store's, number for number."""
    from tests.core.retrieval.test_caches import Writer

    rng = random.Random(5)
    path = tmp_path / "memory.db"
    seeded = open_sync(loop, path)
    seeded.store_many([("s", i, user(" ".join(rng.sample(WORDS, 4)))) for i in range(1, 25)])
    seeded.aclose()
    reader = open_sync(loop, path, read_only=True)
    writer = Writer(path)

    def numbers(story):
        legs = {n: (leg.raw, leg.rank, leg.of, leg.candidate) for n, leg in story.legs.items()}
        return story.rank, story.of, story.reason, legs, [(c.control, c.value, c.rank) for c in story.changes]

    try:
        for sequence in range(25, 35):
            writer(op="store", session="s", sequence=sequence, text=" ".join(rng.sample(WORDS, 4)))
            fresh = open_sync(loop, path, read_only=True)
            try:
                for target in ("3", str(sequence)):
                    got = reader.why_not("tuned", "s", "quiet hotel window", target, 3)
                    want = fresh.why_not("tuned", "s", "quiet hotel window", target, 3)
                    assert numbers(got) == numbers(want), (sequence, target)
                    assert got.legs["vector"].of == sequence  # the new turn is in the snapshot
            finally:
                fresh.aclose()
    finally:
        writer.close()
        reader.aclose()
