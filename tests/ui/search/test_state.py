"""The Search panel's state without Qt (ui/search/state.py): a search asked and its baseline computed once, a
result that arrives after a newer search is dropped, what the hits shown answer, More like this, and the lines the
panel says about a result and a *Why not…?* story."""

from __future__ import annotations

import asyncio

import pytest

from oxmem_gui.core.api import SEARCH_DEFAULTS, AllSessions, SearchOptions, open_memory
from oxmem_gui.ui.search.state import SearchState, legs_line, model_line, story_line
from tests.ui.conftest import write_demo

LISBON = "telegram:alice:lisbon-trip"
QUERY = "which seat on the flight"
REQUEST = ("tuned", LISBON, QUERY, 3)
HYBRID = ("oxmem", LISBON, QUERY, 3)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    asyncio.run(write_demo(path))
    return path


def run(path, steps):
    async def go():
        async with await open_memory(path, embedding="deterministic") as memory:
            return await steps(memory, {r.name: r for r in memory.retrievers()})

    return asyncio.run(go())


def test_a_search_arrives_with_its_baseline_computed_once(demo):
    state = SearchState()
    tuned = SearchOptions.of({"vector_weight": 0.2, "fts_weight": 0.8})

    async def steps(m, rankings):
        asked = state.ask(rankings["oxmem"], LISBON, QUERY, 3, tuned, HYBRID)
        result, baseline = await state.search(m, asked)
        assert state.arrived(asked, result, baseline)
        again = state.ask(rankings["oxmem"], LISBON, QUERY, 3, tuned, HYBRID)
        second = await state.search(m, again)
        defaults = await m.search("oxmem", LISBON, QUERY, 3)
        return result, baseline, second, defaults

    result, baseline, second, defaults = run(demo, steps)
    assert result.vector_weight == 0.2 and baseline.vector_weight == 0.7
    assert [h.chunk_id for h in baseline.hits] == [h.chunk_id for h in defaults.hits]
    assert second[1] is baseline  # kept: not searched again
    assert (state.base, state.baseline, state.shown, state.scope) == (result, baseline, HYBRID, "session")
    assert state.status(HYBRID) == f"3 hits for “{QUERY}” in {LISBON}"
    assert not state.stale(HYBRID) and state.stale(("oxmem", LISBON, QUERY, 5))
    assert state.status(("oxmem", LISBON, QUERY, 5)).endswith(
        " — not what the controls now say: press Search (or Enter in the query) to update"
    )


def test_a_result_that_arrives_after_a_newer_search_is_dropped(demo):
    state = SearchState()

    async def steps(m, rankings):
        first = state.ask(rankings["tuned"], LISBON, QUERY, 3, SEARCH_DEFAULTS, REQUEST)
        state.ask(rankings["tuned"], LISBON, "hotel", 3, SEARCH_DEFAULTS, ("tuned", LISBON, "hotel", 3))
        old = await state.search(m, first)
        return state.arrived(first, *old), old

    kept, (result, baseline) = run(demo, steps)
    assert kept is False and state.base is None and state.shown is None
    assert state.baselines == {("tuned", LISBON, QUERY, 3): result} and result is baseline  # (asked with the defaults)


def test_all_sessions_is_searched_as_one_and_named_in_the_status(demo):
    state = SearchState(many={"(all sessions)": AllSessions()})

    async def steps(m, rankings):
        asked = state.ask(rankings["tuned"], "(all sessions)", "hotel", 4, SEARCH_DEFAULTS, ("all",))
        assert state.arrived(asked, *(await state.search(m, asked)))
        return asked

    asked = run(demo, steps)
    assert asked.scope == AllSessions() and asked.shown_scope == "(all sessions)"
    assert state.status(("all",)) == "4 hits for “hotel” in (all sessions)"
    assert len({h.session_id for h in state.base.hits}) > 1


def test_more_like_this_lasts_while_the_query_holds_the_examples_words(demo):
    state = SearchState()

    async def steps(m, rankings):
        hit = (await m.search("tuned", LISBON, QUERY, 3)).hits[0]
        state.like = await m.example(hit.chunk_id)
        by_example = state.ask(rankings["tuned"], LISBON, state.like.text, 3, SEARCH_DEFAULTS, ("like",))
        result = await state.search(m, by_example)
        assert state.arrived(by_example, *result)
        typed = state.ask(rankings["tuned"], LISBON, "something else", 3, SEARCH_DEFAULTS, ("typed",))
        return hit, by_example, result, typed

    hit, by_example, (result, baseline), typed = run(demo, steps)
    assert by_example.like is not None and by_example.like.item_id == hit.chunk_id
    assert result is baseline and result.hits[0].chunk_id == hit.chunk_id  # its own vector: itself first
    assert f"— more like {hit.chunk_id}: its stored vector is the query's" in state.status(("like",))
    assert typed.like is None and state.like is None


def test_the_lines_about_a_result_and_a_story(demo):
    async def steps(m, rankings):
        result = await m.search("tuned", LISBON, QUERY, 3)
        story = await m.why_not("tuned", LISBON, QUERY, "5", 3)
        recalled = await m.why_not("tuned", LISBON, QUERY, str(result.hits[0].sequence_start), 3)
        return result, story, recalled

    result, story, recalled = run(demo, steps)
    line = model_line(result, [2, 3])
    assert line.startswith("model: deterministic") and " — dropped from the defaults' top 3: #2, #3" in line
    legs = legs_line(result)
    assert legs.startswith("FTS expression: <code>") and "vector: " in legs and "FTS: " in legs
    assert story_line(story).startswith("Not recalled: Outranked within the top 3: #11 with ")
    assert story_line(story).endswith(" — would bring it back: top 12 (now 3)")
    assert story_line(recalled) == "Recalled"


def test_another_file_forgets_the_results():
    state = SearchState(shown=REQUEST, scope="session", scope_kind=("session", True))
    state.baselines[("tuned", LISBON, QUERY, 3)] = object()
    state.forget()
    assert (state.result, state.shown, state.scope, state.scope_kind, state.baselines) == (None, None, None, None, {})
    assert state.status(REQUEST) == ""
