"""Notes a page at a time in SQL (store/notes.notes_page, readers' _filtered_after): every page chain gives exactly
the list list_notes gives, in its order, whatever the filters, ties of updated_at included."""

from __future__ import annotations

import asyncio
import random
import sqlite3

import pytest

from oxmem_gui.core.memory import open_memory
from oxmem_gui.core.store import notes as notes_api
from tests.core.formats import fixtures

WORDS = ["Straße", "strasse", "café", "CAFÉ", "tea", "train", "Kreuzberg", "flat", "ΣΊΣΥΦΟΣ", "σίσυφος"]
TAGS = ["travel", "food", "work", "home"]


def chain(fetch, size):
    """Every page, each after the last note of the one before."""
    out, after = [], None
    while True:
        page = fetch(after, size)
        out += page
        if len(page) < size:
            return out
        after = notes_api.note_cursor(page[-1])


@pytest.fixture
def many(store, monkeypatch):
    """60 notes, their times from a clock the test sets: a third share one updated_at (ties broken by sequence)."""
    rng = random.Random(7)
    times = iter([f"2026-03-{1 + (i % 20):02d}T10:00:00.000000+00:00" for i in range(500)])
    monkeypatch.setattr(notes_api, "utc_now_text", lambda: next(times))
    for i in range(60):
        words = " ".join(rng.sample(WORDS, 3))
        store.save_note("u", f"note {i}: {words}", rng.sample(TAGS, rng.randint(0, 2)))
    store.save_note("someone-else", "café tea", ["food"])
    return store


@pytest.mark.parametrize(
    "tags, mode, contains",
    [((), "any", None), (("food",), "any", None), (("food", "travel"), "all", None), ((), "any", "STRASSE"),
     (("work",), "any", "σίσυφος"), ((), "any", "no such words")],
)  # fmt: skip
@pytest.mark.parametrize("size", [1, 7, 60, 500])
def test_store_pages_chain_to_the_whole_list(many, tags, mode, contains, size):
    whole = many.list_notes("u", tags, mode, contains)
    pages = chain(lambda after, n: many.notes_page("u", after, n, tags, mode, contains), size)
    assert [n.note_id for n in pages] == [n.note_id for n in whole]
    assert pages == whole


def test_store_page_counts(many):
    assert len(many.list_notes("u")) == 60
    assert len(many.notes_page("u", None, 25)) == 25
    assert many.notes_page("u", None, 0) == []
    assert [n.content for n in many.notes_page("someone-else", None, 5)] == ["café tea"]


def test_a_page_after_a_deleted_note_goes_on_from_its_place(many):
    first = many.notes_page("u", None, 10)
    many.delete_note("u", first[-1].note_id)
    rest = many.notes_page("u", notes_api.note_cursor(first[-1]), 100)
    assert [n.note_id for n in first[:-1] + rest] == [n.note_id for n in many.list_notes("u")]


@pytest.mark.parametrize("name", ["omega", "omega-old"])
def test_omega_fact_pages_chain_to_the_whole_list_ties_included(tmp_path, name):
    """Omega writes times to the second: two facts of one second are paged in one order, the list's."""
    path = fixtures.make_omega(tmp_path / "omega.db", *(["old"] if name == "omega-old" else []))

    async def go():
        async with await open_memory(path, embedding="deterministic") as memory:
            out = []
            for group in await memory.note_users():
                whole = await memory.list_notes(group)
                for size in (1, 2, 5):
                    pages, after = [], None
                    while True:
                        page = await memory.notes_page(group, after, size)
                        pages += page
                        if len(page) < size:
                            break
                        after = notes_api.note_cursor(page[-1])
                    out.append((group, size, [n.note_id for n in whole], [n.note_id for n in pages]))
                text = await memory.notes_page(group, None, 2, (), "any", "a")
                wanted = [n.note_id for n in whole if "a" in n.content.casefold()][:2]
                out.append((group, "text", wanted, [n.note_id for n in text]))
            return out

    results = asyncio.run(go())
    assert results
    for group, size, whole, pages in results:
        assert whole and pages == whole, (group, size)


@pytest.mark.parametrize(
    "contains, tags", [("deploy", ()), ("DANA", ()), (None, ("deploy",)), (None, ("finance", "email")), ("zzz", ())]
)
def test_zeke_filtered_pages_chain_to_its_whole_list(tmp_path, contains, tags):
    path = fixtures.make_zeke(tmp_path / "zeke.db")

    async def go():
        async with await open_memory(path, embedding="deterministic") as memory:
            out = []
            for group in await memory.note_users():
                whole = await memory.list_notes(group, tags, "any", contains)
                pages = []
                after = None
                while True:
                    page = await memory.notes_page(group, after, 2, tags, "any", contains)
                    pages += page
                    if len(page) < 2:
                        break
                    after = notes_api.note_cursor(page[-1])
                out.append(([n.note_id for n in whole], [n.note_id for n in pages]))
            return out

    for whole, pages in asyncio.run(go()):
        assert pages == whole


def test_aidaemon_fact_pages_keep_its_order_across_time_formats_and_ties(tmp_path):
    """aidaemon's times come in several formats (and another program's in any): facts are listed newest first by
    the time they show — ties by the newest row, no time last — and every page chain gives that list, each fact
    with the history of its key."""
    path = fixtures.make_aidaemon(tmp_path / "aidaemon.db")
    extra = [
        ("k1", "2026-02-10 21:00:00"),  # the same second as build_server, another format
        ("k2", "2026-02-10T21:00:00Z"),
        ("k3", "1770757200"),  # digits: no time to aidaemon's columns of text times (listed last, as before)
        ("k4", "not a time"),  # no time: listed last
        ("k5", "yesterday"),
        ("k6", "2024-01-01 00:00:00"),
    ]
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO facts (category, key, value, created_at, updated_at) VALUES ('project', ?, 'v', ?, ?)",
            [(k, t, t) for k, t in extra],
        )

    async def go():
        async with await open_memory(path, embedding="deterministic") as memory:
            whole = await memory.list_notes("project")
            chains = []
            for size in (1, 2, 3, 100):
                pages, after = [], None
                while True:
                    page = await memory.notes_page("project", after, size)
                    pages += page
                    if len(page) < size:
                        break
                    after = notes_api.note_cursor(page[-1])
                chains.append(pages)
            user = await memory.notes_page("user", None, 1)
            return whole, chains, user

    whole, chains, user = asyncio.run(go())
    keys = [n.details["key"] for n in whole]
    assert keys == ["k2", "k1", "build_server", "k6", "k5", "k4", "k3"]  # the order before paging in SQL
    assert all([n.note_id for n in c] == [n.note_id for n in whole] for c in chains)
    # the history of the page's key comes with it: two superseded versions of timezone
    assert [(n.details["key"], [h["value"] for h in n.details["history"]]) for n in user] == [
        ("timezone", [v for (v,) in _values(path, "timezone")])
    ]


def _values(path, key):
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT value FROM facts WHERE key = ? AND superseded_at IS NOT NULL ORDER BY created_at DESC, id DESC",
            (key,),
        ).fetchall()
