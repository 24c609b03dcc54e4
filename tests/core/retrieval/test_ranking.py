"""The tuned ranking profile: its keywords, its neighbour step, its numbers, and the default chosen per file and
session."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.memory import choose_ranking, default_ranking
from oxmem_gui.core.retrieval import hybrid as retrieval
from oxmem_gui.core.retrieval import ranking_choice
from oxmem_gui.core.retrieval.bm25 import Bm25Index
from oxmem_gui.core.retrieval.explain import explain
from oxmem_gui.core.retrieval.ranking import TUNED, keyword_terms, with_neighbours
from oxmem_gui.core.retrieval.stopwords import content_terms
from tests.conftest import open_sync, user


@pytest.fixture(autouse=True)
def config_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(tmp_path / "config"))


def test_keywords_drop_stopwords_and_search_long_words_as_prefixes():
    assert keyword_terms("When did Caroline paint a sunrise in 2022?", TUNED) == (
        ["Caroli*", "pain*", "sunri*", "2022"],
        ["When", "did", "a", "in"],
    )
    assert keyword_terms("what is it", TUNED) == (["what*", "is", "it"], [])  # only stopwords: all kept
    assert keyword_terms("no café", TUNED) == (["no", "café*"], [])  # "no" carries meaning
    assert content_terms(["The", "THE", "hotel"]) == (["hotel"], ["The", "THE"])
    assert keyword_terms("ok Lisbon", replace(TUNED, prefixes=False)) == (["ok", "Lisbon"], [])


def _hit(chunk: str, seq: int, score: float) -> retrieval.Hit:
    return retrieval.Hit(0, chunk, "s", chunk, score, 0.0, 0.0, None, None, None, None, seq, seq, None, None)


def test_neighbour_step_adds_the_best_adjacent_turn():
    pool = [_hit("a", 10, 0.9), _hit("b", 11, 0.2), _hit("c", 12, 0.5), _hit("d", 20, 0.6), _hit("e", 9, 0.1)]
    ranked = with_neighbours(pool, 0.5, 5)
    got = {h.chunk_id: (h.rank, round(h.score, 6), round(h.context_score, 6), h.context_sequence) for h in ranked}
    assert got == {
        "a": (1, 1.0, 0.1, 11),  # 0.9 + 0.5 × max(seq 9: 0.1, seq 11: 0.2)
        "b": (2, 0.65, 0.45, 10),  # 0.2 + 0.5 × max(0.9, 0.5)
        "d": (3, 0.6, 0.0, None),  # no neighbour among the candidates
        "c": (4, 0.6, 0.1, 11),  # tied with d at 0.6: the older turn ranks after
        "e": (5, 0.55, 0.45, 10),
    }
    assert [h.chunk_id for h in with_neighbours(pool, 0.0, 2)] == ["a", "d"]


@pytest.fixture
def chat(tmp_path, loop):
    s = open_sync(loop, tmp_path / "chat.db", embedding="deterministic")
    turns = [
        "Caroline: I went to the LGBTQ support group yesterday",
        "Melanie: That sounds powerful, how was it?",
        "Caroline: It was so inspiring, the transgender stories moved me",
        "Melanie: I painted a sunrise by the lake last year",
        "Caroline: Your painting is lovely",
        "Melanie: Thanks! The kids loved the trip to the museum",
    ]
    s.store_many([("chat", i, user(t)) for i, t in enumerate(turns, 1)])
    yield s
    s.aclose()


def test_tuned_scores_are_the_weighted_legs_plus_the_neighbour(chat):
    result = chat.search("tuned", "chat", "When did Melanie paint a sunrise?", 6)
    assert result.retriever == "tuned" and result.fts_mode == "keywords"
    assert result.fts_expression == '"Melan"* OR "pain"* OR "sunri"*'
    assert result.dropped_terms == ["When", "did", "a"]
    assert result.profile == {
        "name": "tuned",
        "label": "oxmem tuned",
        "vector_weight": 0.2,
        "fts_weight": 0.8,
        "drop_stopwords": True,
        "prefixes": True,
        "neighbour_weight": 0.3,
        "update_overlap": 0.5,
    }
    weighted = {h.sequence_start: 0.2 * h.vector_score + 0.8 * h.fts_score for h in result.pool}
    for h in result.hits:
        lent = max((weighted.get(h.sequence_start + d, 0.0) for d in (-1, 1)), default=0.0)
        assert h.update_of is None  # no two turns here restate one another
        assert h.score == pytest.approx(0.2 * h.vector_score + 0.8 * h.fts_score + 0.3 * lent, abs=1e-12)
        assert h.context_score == pytest.approx(0.3 * lent, abs=1e-12)
    # "paint"* found "painted" and "painting"; the sunrise turn has both words
    assert result.hits[0].text == "Melanie: I painted a sunrise by the lake last year"
    assert {h.sequence_start for h in result.hits if h.fts_raw is not None} == {2, 4, 5, 6}
    lines = explain(result, result.hits[0]).splitlines()
    assert lines[3].startswith("weighted = 0.2 × ")
    assert lines[4].startswith("neighbour context: the turn at sequence ")
    assert lines[5] == "update: restates no older candidate of its session → + 0"
    assert lines[6] == f"score = {result.hits[0].score - result.hits[0].context_score:.6f} + " + (
        f"{result.hits[0].context_score:.6f} = {result.hits[0].score:.6f}"
    )
    assert "stopwords dropped from the query: When, did, a" in lines


def test_spec_hybrid_is_untouched_by_the_profile(chat):
    exact = chat.search("oxmem", "chat", "When did Melanie paint a sunrise?", 6)
    assert exact.retriever == "oxmem" and exact.profile == {} and exact.dropped_terms == []
    assert exact.fts_expression == '"When" OR "did" OR "Melanie" OR "paint" OR "a" OR "sunrise"'
    for h in exact.hits:
        assert h.score == 0.7 * h.vector_score + 0.3 * h.fts_score and h.context_score == 0.0


def test_tags_filter_the_tuned_profile(chat):
    chat.save_note("u", "Melanie paints sunrises on weekends", ["hobby"])
    chat.save_note("u", "Melanie's sunrise painting sold", ["sales"])
    hits = chat.search("tuned", "memory:u", "Melanie paintings", 5, options=SearchOptions(tags=["sales"])).hits
    assert [h.text for h in hits] == ["Melanie's sunrise painting sold"]


def test_prefix_terms_score_as_fts5_does(tmp_path, loop):
    rng = random.Random(3)
    words = ["paint", "painted", "painting", "painter", "pain", "sunrise", "sun", "lake", "laker", "lakes"]
    s = open_sync(loop, tmp_path / "p.db", embedding="deterministic")
    s.store_many([("p", i, user(" ".join(rng.choices(words, k=rng.randint(2, 12))))) for i in range(1, 400)])
    index = Bm25Index(min_rows=0)

    def compare(c):
        for terms in (["pain*"], ["pain*", "lake"], ["sunri*", "lake*", "pain*"], ["laker*"], ["zzz*"]):
            expression = " OR ".join(retrieval._quoted(t) for t in terms)
            for limit in (1, 8, 50):
                fast = retrieval._fts_leg(c, "p", expression, limit, "1", [], index, terms)
                slow = retrieval._fts_leg(c, "p", expression, limit, "1", [])
                assert [(x.chunk_id, x.raw) for x in fast] == [(x.chunk_id, x.raw) for x in slow], (terms, limit)
        return index._postings.keys()

    assert "pain*" in s.inner._db.call(compare)
    s.aclose()


def test_the_default_is_chosen_per_file_and_session(chat, tmp_path):
    assert chat.loop.run_until_complete(default_ranking(chat.inner, "chat"))[0].name == "tuned"
    chat.loop.run_until_complete(choose_ranking(chat.inner, "oxydra"))
    chat.loop.run_until_complete(choose_ranking(chat.inner, "oxmem", "chat"))
    found = {
        s: (r.name, why)
        for s in ("chat", "other")
        for r, why in [chat.loop.run_until_complete(default_ranking(chat.inner, s))]
    }
    assert found == {"chat": ("oxmem", "session"), "other": ("oxydra", "file")}
    saved = json.loads((tmp_path / "config" / "rankings.json").read_text())
    assert saved == {str((tmp_path / "chat.db").resolve()): {"*": "oxydra", "chat": "oxmem"}}
    chat.loop.run_until_complete(choose_ranking(chat.inner, None, "chat"))
    assert chat.loop.run_until_complete(default_ranking(chat.inner, "chat"))[1] == "file"
    with pytest.raises(retrieval.InvalidInputError, match="no ranking 'nope' for this file"):
        chat.loop.run_until_complete(choose_ranking(chat.inner, "nope"))


def test_a_damaged_or_stale_choice_is_ignored(chat, tmp_path):
    path = ranking_choice.config_file()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert chat.loop.run_until_complete(default_ranking(chat.inner, "chat"))[1] == "built-in"
    path.write_text(json.dumps({str((tmp_path / "chat.db").resolve()): {"*": "retired-profile"}}))
    assert chat.loop.run_until_complete(default_ranking(chat.inner, "chat"))[0].name == "tuned"


def test_a_choice_that_cannot_be_saved_is_one_clear_error(chat, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(blocker / "oxmem"))
    with pytest.raises(ranking_choice.OxmemError, match=r"cannot save the default ranking in .*rankings\.json: "):
        chat.loop.run_until_complete(choose_ranking(chat.inner, "oxmem"))
    assert chat.loop.run_until_complete(default_ranking(chat.inner, "chat"))[1] == "built-in"


def test_exports_carry_the_profile_and_the_neighbour_step(chat):
    from oxmem_gui.core.retrieval.evaluation import result_rows, results_json

    result = chat.search("tuned", "chat", "When did Melanie paint a sunrise?", 3)
    doc = json.loads(results_json(result))
    assert (doc["retriever"], doc["dropped_terms"], doc["profile"]["neighbour_weight"]) == (
        "tuned",
        ["When", "did", "a"],
        0.3,
    )
    rows = result_rows(result)
    assert [(r["context_score"], r["context_sequence"]) for r in rows] == [
        (h.context_score, h.context_sequence) for h in result.hits
    ]
    assert rows[0]["score"] == pytest.approx(
        rows[0]["vector_contribution"] + rows[0]["fts_contribution"] + rows[0]["context_score"]
    )


def test_metrics_measure_a_fixed_ranking_as_it_runs(chat):
    from oxmem_gui.core.retrieval.evaluation import evaluate_settings
    from oxmem_gui.core.retrieval.judgments import JudgedQuery
    from oxmem_gui.core.retrieval.metrics import evaluate

    tuned = chat.search("tuned", "chat", "Melanie painting", 3)
    grades = {tuned.hits[1].chunk_id: 2}
    judged = [JudgedQuery("chat", "Melanie painting", grades), JudgedQuery("gone", "x", {"c": 1})]
    ev = chat.loop.run_until_complete(
        evaluate_settings(chat.inner, judged, top_k=3, k=3, vector_weight=0.4, fts_mode="terms", ranking="tuned")
    )
    assert ev.failed == ["gone: 'x': no session 'gone' in this store"]  # said once, not per mode
    assert ev.current == evaluate({"0": [h.chunk_id for h in tuned.hits]}, {"0": grades}, 3)
    assert ev.current.mrr == 0.5 and len(ev.sweep) == 22  # the hybrid's sweep, to compare with
