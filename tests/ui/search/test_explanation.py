"""The selected hit in words and two rankings compared (ui/search/explanation.py), on real results of a demo
store: where a hit is, the pane's lines with the query's terms marked, plain stories shown as typed, and the
comparison's lines."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from oxmem_gui.core.api import SearchOptions, explain, open_memory
from oxmem_gui.ui.search.explanation import ExplanationView, compare_text, where
from tests.ui.conftest import write_demo

LISBON = "telegram:alice:lisbon-trip"
QUERY = "quiet hotel in Alfama"
ALFAMA = "Alfama, something quiet, under 150 a night."
BOOKED = "Booked easyJet EZY7Q2K, seat 14C both ways. Shall I look for a hotel in Alfama or Baixa?"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The demo's Lisbon trip searched for QUERY (top 4) with the defaults, with FTS alone, and for "seat"."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"

    async def make():
        await write_demo(path)
        async with await open_memory(path, embedding="deterministic") as memory:
            fts_only = SearchOptions.of({"vector_weight": 0.0, "fts_weight": 1.0})
            return (
                await memory.search("oxmem", LISBON, QUERY, 4),
                await memory.search("oxmem", LISBON, QUERY, 4, fts_only),
                await memory.search("oxmem", LISBON, "seat", 4),
            )

    return asyncio.run(make())


def test_where_names_the_session_its_sequences_and_the_chunk(results):
    hit = results[0].hits[3]
    chunk = "chunk:telegram:alice:lisbon-trip:11:0:b2ac8017a9796bc8"
    assert hit.chunk_id == chunk
    assert where(hit, "session", "User") == f"Session {LISBON} · sequence 11 · chunk {chunk}"
    spanning = dataclasses.replace(hit, sequence_end=13)
    assert where(spanning, "session", "User") == f"Session {LISBON} · sequences 11–13 · chunk {chunk}"
    unplaced = dataclasses.replace(hit, sequence_start=None, sequence_end=None)
    assert where(unplaced, None, "User") == f"Session {LISBON} · chunk {chunk}"
    assert where(hit, "notes", "Fact group") == f"Fact group {LISBON} · chunk {chunk}"  # a notes group, no sequence


def test_the_pane_shows_the_rank_the_place_the_whole_text_and_the_derivation(results, qtbot):
    result = results[0]
    hit = result.hits[3]
    view = ExplanationView()
    qtbot.addWidget(view)
    place = where(hit, "notes", "<Memory> & co")  # escaped, not read as markup
    view.show_hit(result, hit, place)
    first, _, rest = explain(result, hit).partition("\n")
    assert first == "Rank 4 of 4 — score 0.487454"
    assert (
        view.toPlainText() == f"{first}\n<Memory> & co {LISBON} · chunk {hit.chunk_id}\n{ALFAMA}\n{rest.strip(chr(10))}"
    )
    assert 'FTS expression (terms mode): "quiet" OR "hotel" OR "in" OR "Alfama"' in view.toPlainText()


def test_the_query_terms_in_the_hits_text_are_bold_on_yellow(results, qtbot):
    result = results[0]
    view = ExplanationView()
    qtbot.addWidget(view)
    view.show_hit(result, result.hits[3], "here")
    marked, block = [], view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            background = fragment.charFormat().background()
            if background.style() == Qt.BrushStyle.SolidPattern and background.color() == QColor("#ffe58a"):
                marked.append((fragment.text(), fragment.charFormat().fontWeight()))
            it += 1
        block = block.next()
    assert marked == [("Alfama", 700), ("quiet", 700)]


def test_a_story_is_shown_as_typed_markup_and_all(qtbot):
    view = ExplanationView()
    qtbot.addWidget(view)
    story = "cut at <b>rank 9</b> & below\n  indented line"
    view.show_text(story)
    assert view.toPlainText() == story
    assert view.toolTip() == "The selected hit: where it is, its whole text, and how its score was made"


def test_comparing_with_the_defaults_lists_every_move(results):
    defaults, fts_only, _ = results
    assert compare_text(defaults, fts_only, pinned=False).splitlines() == [
        "A: vector 0.7 / FTS 0.3, terms mode, top 4, deterministic-hash-v1 (the default settings)",
        "B: vector 0 / FTS 1, terms mode, top 4, deterministic-hash-v1",
        "",
        f"      ↑3      4 → 1  {ALFAMA}",
        f"       =      2 → 2  {BOOKED}",
        '      ↓2      1 → 3  {"results": [{"name": "Casa do Castelo", "price_eur": 132, "quiet": true, '
        '"rating": 9.1}, ',  # a hit's text: its first 90 characters
        "     new      — → 4  Casa do Castelo (€132/night, rated 9.1) is on a quiet lane below the castle; "
        "Alfama Patio ",
        " dropped      3 → —  You are Ada, Alice's travel and scheduling assistant. Be concise.",
    ]


def test_comparing_pinned_results_of_another_query_says_what_each_searched(results):
    defaults, _, seat = results
    lines = compare_text(defaults, seat, pinned=True).splitlines()
    assert lines[0] == "A: vector 0.7 / FTS 0.3, terms mode, top 4, deterministic-hash-v1"
    assert lines[3] == f"(A searched {QUERY!r} in {LISBON}; B searched 'seat' in {LISBON})"
    assert [line.split()[0] for line in lines[4:]] == ["new"] * 4 + ["dropped"] * 4
    same = compare_text(defaults, defaults, pinned=True).splitlines()
    assert [line.split()[:4] for line in same[3:]] == [["=", str(r), "→", str(r)] for r in range(1, 5)]
