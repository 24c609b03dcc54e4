"""LangGraph's ``SqliteStore`` (``core/formats/langgraph_store.py``) on files written by LangGraph's own code
(``langgraph-checkpoint-sqlite`` with ``sqlite-vec``; oxmem's deterministic model is LangGraph's ``embed`` function
and oxmem's query model, so both sides embed alike): every item shown as ``store.get`` reads it back, LangGraph's
vector search reproduced — the same items in the same order with the same scores, for each ``distance_type`` —,
the hazards flagged, and the file left as it was."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from datetime import datetime, timezone

import numpy as np
import pytest

from oxmem_gui.core.api import (
    ConflictError,
    InvalidInputError,
    ReadOnlyError,
    check_store,
    note_cursor,
    open_memory,
)
from oxmem_gui.core.embeddings.backends import DeterministicEmbedding
from oxmem_gui.core.formats.langgraph_store import (
    LANGGRAPH_SCORE,
    SCORE_SQL,
    distance_array,
    distances,
    search_sql,
    search_where,
)
from oxmem_gui.core.formats.times import parse_when
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.core.formats.framework_files import another_program, digest, read

lg_sqlite = pytest.importorskip("langgraph.store.sqlite", reason="LangGraph's own SqliteStore writes these files")
sqlite_vec = pytest.importorskip("sqlite_vec", reason="LangGraph's vector search runs in sqlite-vec")

DIMS = 64
ITEMS = {
    ("users", "alice"): {
        "tea": {"text": "likes green tea in the morning", "tags": ["drinks", "morning"]},
        "city": {"text": "lives in Lisbon near the river", "tags": ["home"]},
        "job": {"text": "works as a nurse on night shifts", "tags": ["work", "night", "hospital", "shifts"]},
        "pet": {"text": "has a cat called Miso", "tags": ["cat"]},
    },
    ("users", "alice", "work"): {
        "desk": {"text": "prefers a standing desk", "tags": ["office"]},
    },
    ("users", "bob"): {
        "coffee": {"text": "drinks black coffee", "tags": ["drinks", "bitter"]},
        "sport": {"text": "plays tennis on Sundays", "tags": ["tennis"]},
    },
    ("userset",): {
        "other": {"text": "a namespace that only starts like users", "tags": []},
    },
    ("docs",): {
        "py": {"text": "Python tutorial for beginners", "n": 3, "tags": ["python", "tutorial"]},
        "ts": {"text": "TypeScript guide", "n": 1, "tags": ["typescript"]},
    },
}
QUERIES = ["green tea", "where does she live", "night work at the hospital", "drinks", "cat"]


def embed(texts):
    return DeterministicEmbedding().embed(list(texts)).tolist()


def connect(path):
    """A connection LangGraph can load sqlite-vec into (this Python's sqlite3 may be built without extension
    loading: pysqlite3 then)."""
    try:
        import pysqlite3.dbapi2 as driver  # type: ignore[import-not-found]
    except ImportError:
        driver = sqlite3
    conn = driver.connect(str(path), check_same_thread=False, isolation_level=None)
    if not hasattr(conn, "enable_load_extension"):
        conn.close()
        pytest.skip("this Python's sqlite3 cannot load extensions (sqlite-vec): install pysqlite3-binary")
    return conn


@contextlib.contextmanager
def langgraph(path, **index):
    conn = connect(path)
    config = {"dims": DIMS, "embed": embed, **index}
    try:
        store = lg_sqlite.SqliteStore(conn, index=config)
        store.setup()
        yield store
    finally:
        conn.close()


def write(path, items=ITEMS, **index):
    with langgraph(path, **index) as store:
        for namespace, values in items.items():
            for key, value in values.items():
                store.put(namespace, key, value)


def ranked(items) -> list[tuple[str, str, float | None]]:
    return [(".".join(i.namespace), i.key, i.score) for i in items]


def oxmem_ranked(result) -> list[tuple[str, str, float | None]]:
    return [(h.session_id, h.chunk_id, h.metadata["score"]) for h in result.hits]


def assert_same_ranking(ours, theirs):
    assert [(ns, key) for ns, key, _ in ours] == [(ns, key) for ns, key, _ in theirs]
    for (_, _, mine), (_, _, lg) in zip(ours, theirs, strict=True):
        assert (mine is None) == (lg is None)
        if mine is not None:
            assert mine == pytest.approx(lg, abs=1e-6)


@pytest.fixture
def lg_file(tmp_path):
    path = tmp_path / "store.sqlite"
    write(path, text_fields=["text", "tags[*]"])
    return path


def test_every_item_is_shown_as_langgraph_reads_it_back(lg_file):
    async def everything(m):
        groups = await m.note_users()
        return m.format, m.capabilities, groups, {g: await m.list_notes(g) for g in groups}

    fmt, caps, groups, notes = read(lg_file, everything)
    assert fmt == "langgraph-store" and caps.label == "LangGraph store"
    assert (caps.has_sessions, caps.has_schedules, caps.note_tags, caps.has_notes) == (False, False, False, True)
    assert groups == sorted(".".join(ns) for ns in ITEMS)
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        for namespace, values in ITEMS.items():
            shown = {n.note_id: n for n in notes[".".join(namespace)]}
            assert set(shown) == set(values)
            listed = {i.key for i in store.search(namespace, limit=100) if i.namespace == namespace}
            assert listed == set(values)
            for key in values:
                item = store.get(namespace, key)
                note = shown[key]
                assert json.loads(note.content) == item.value == values[key]
                assert note.content == json.dumps(values[key], ensure_ascii=False)
                assert parse_when(note.created_at) == item.created_at.replace(tzinfo=timezone.utc)
                assert parse_when(note.updated_at) == item.updated_at.replace(tzinfo=timezone.utc)
                assert note.details["namespace"] == list(namespace)
                assert note.tags == [] and "problems" not in note.details
                fields = sorted(v["field"] for v in note.details["vectors"])
                tags = values[key]["tags"]
                expected = ["text"] + (["tags[*]"] if len(tags) == 1 else [f"tags[*].{i}" for i in range(len(tags))])
                assert fields == sorted(expected)


@pytest.mark.parametrize("distance_type", ["cosine", "l2", "inner_product"])
def test_the_vector_search_is_langgraphs_own_same_order_and_scores(tmp_path, distance_type):
    path = tmp_path / f"{distance_type}.sqlite"
    write(path, text_fields=["text", "tags[*]"], distance_type=distance_type)
    name = {"cosine": "langgraph", "l2": "langgraph-l2", "inner_product": "langgraph-inner-product"}[distance_type]
    cases = [(scope, q, k) for scope in ("users", "users.alice", "docs", "") for q in QUERIES for k in (1, 3, 5, 20)]

    async def ours(m):
        out = []
        for scope, q, k in cases:
            out.append(await m.search(name, scope or ALL_SESSIONS, q, k))
        return out

    results = read(path, ours)
    with langgraph(path, text_fields=["text", "tags[*]"], distance_type=distance_type) as store:
        for (scope, q, k), result in zip(cases, results, strict=True):
            prefix = tuple(scope.split(".")) if scope else ()
            theirs = ranked(store.search(prefix, query=q, limit=k))
            assert_same_ranking(oxmem_ranked(result), theirs)
            assert result.retriever == name and result.models == ["deterministic-hash-v1"]
    steps = " ".join(results[0].steps)
    assert "tags[*].0" in steps and "text" in steps and "LIMIT 2×k = 2 vector rows" in steps
    if distance_type == "l2":
        assert "FARTHEST vectors come first" in steps
        scores = [h.score for h in results[-1].hits]
        assert scores == sorted(scores, reverse=True)  # largest distance first, as LangGraph orders them
    if distance_type == "inner_product":
        assert "negated Manhattan distance, not an inner product" in steps


def test_rows_are_limited_before_one_per_item_is_kept_so_fewer_items_come_back(lg_file):
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        store.put(("echoes",), "many", {"text": "echo", "tags": ["echo", "echo", "echo"]})
        store.put(("echoes",), "alpha", {"text": "alpha", "tags": ["first"]})
        store.put(("echoes",), "beta", {"text": "beta", "tags": ["second"]})
    result = read(lg_file, lambda m: m.search("langgraph", "echoes", "echo", 2))
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        theirs = ranked(store.search(("echoes",), query="echo", limit=2))
        every = ranked(store.search(("echoes",), query="echo", limit=100))
    assert_same_ranking(oxmem_ranked(result), theirs)
    # 'many' has four vector rows of the query's own text: they are the best 2×2 rows, and one item comes back
    assert [key for _, key, _ in theirs] == ["many"] and len(every) == 3
    assert theirs[0][2] == pytest.approx(1.0)
    assert any("fewer than k = 2: the 4 vector rows held only 1 item" in s for s in result.steps)
    (many,) = result.hits
    assert any("4 of the 4 vector rows taken are this item's (LIMIT before de-duplication)" in n for n in many.notes)
    assert many.notes[0].startswith("best field ")
    assert "vec_distance_cosine = 0 → score 1 − d = 1" in many.notes[0]


def test_the_documented_fields_key_is_ignored_the_whole_value_is_embedded(tmp_path):
    path = tmp_path / "fields.sqlite"
    write(path, fields=["text"])  # as SqliteStore's own docstring configures it
    notes = read(path, lambda m: m.list_notes("docs"))
    assert {v["field"] for n in notes for v in n.details["vectors"]} == {"$"}
    result = read(path, lambda m: m.search("langgraph", "users", "tea", 4))
    with langgraph(path, fields=["text"]) as store:
        assert_same_ranking(oxmem_ranked(result), ranked(store.search(("users",), query="tea", limit=4)))
    assert any("fields embedded here (store_vectors.field_name): $ — SqliteStore embeds index['text_fields']" in s
               for s in result.steps)  # fmt: skip


def test_filters_are_langgraphs_even_where_they_match_nothing(lg_file):
    filters = [
        {"n": 3},
        {"n": {"$gt": 1}},
        {"text": "TypeScript guide"},
        {"tags": ["typescript"]},
        {"tags": {"$eq": ["typescript"]}},  # bound as bytes by LangGraph: matches nothing
        {"n": {"$ne": 3}},
    ]

    async def ours(m):
        method = m.RANKINGS["langgraph"]
        return [await m.read(lambda conn, f=f: method(m, conn, "docs", "guide", 5, filter=f)) for f in filters]

    results = read(lg_file, ours)
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        for f, result in zip(filters, results, strict=True):
            assert_same_ranking(oxmem_ranked(result), ranked(store.search(("docs",), query="guide", limit=5, filter=f)))
    assert [len(r.hits) for r in results] == [1, 1, 1, 1, 0, 1]


def test_hazards_are_flagged_and_the_search_still_matches_langgraph(lg_file):
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        store.put(("users", "bob"), "secret", {"text": "never indexed"}, index=False)
        store.put(("docs",), "old", {"text": "to be deleted", "tags": []})
        store.delete(("docs",), "old")
        time.sleep(1.1)  # the next put's CURRENT_TIMESTAMP is a later second than the vector rows it leaves behind
        store.put(("users", "alice"), "job", {"text": "retired", "tags": ["garden"]})

    async def everything(m):
        return (await m.list_notes("users.alice"), await m.list_notes("users.bob"), await m.info(),
                await m.search("langgraph", "users", "hospital shifts", 10))  # fmt: skip

    alice, bob, info, result = read(lg_file, everything)
    job = next(n for n in alice if n.note_id == "job")
    (stale,) = job.details["problems"]
    assert stale.startswith("vector rows older than the value (written before its last put): tags[*].0, tags[*].1")
    assert [v["field"] for v in job.details["vectors"] if v["stale"]] == [f"tags[*].{i}" for i in range(4)]
    secret = next(n for n in bob if n.note_id == "secret")
    assert secret.details["problems"] == [
        "no vector row (put with index=False, or written without an index): LangGraph's vector search never "
        "returns this item"
    ]
    assert any(m.startswith("1 vector row of deleted items") for m in info.markers)
    assert any("1 item without a vector row" in m for m in info.markers)
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        theirs = ranked(store.search(("users",), query="hospital shifts", limit=10))
    assert_same_ranking(oxmem_ranked(result), theirs)
    assert any(
        s.startswith("left out: 1 item of the scope with no vector row (users.bob/secret)") for s in result.steps
    )
    assert any("older than their item's value" in s for s in result.steps)
    hit = next(h for h in result.hits if h.chunk_id == "job")  # still found by the tags it no longer has
    assert json.loads(hit.text) == {"text": "retired", "tags": ["garden"]}
    if hit.metadata["field"].startswith("tags[*]."):
        assert any("before the value was last written" in n for n in hit.notes)
    report = asyncio.run(check_store(lg_file))
    (fk,) = [f for f in report.findings if f.check == "foreign keys"]
    assert (fk.level, fk.detail) == (  # the deleted item's vector row, as LangGraph leaves it
        "ok",
        "no other row points at a missing parent; 1 vector row of deleted items, as LangGraph's delete leaves them "
        "(foreign keys are off); its search's join leaves them out",
    )


def test_a_value_that_is_not_json_is_flagged_and_a_search_returning_it_fails_as_in_langgraph(lg_file):
    another_program(lg_file, "UPDATE store SET value = '{broken' WHERE prefix = 'docs' AND key = 'ts'")
    notes = read(lg_file, lambda m: m.list_notes("docs"))
    ts = next(n for n in notes if n.note_id == "ts")
    assert ts.content == "⚠ unreadable row: {broken"
    assert "LangGraph's get of it, and any search returning it, raise" in ts.details["problems"][0]
    result = read(lg_file, lambda m: m.search("langgraph", "docs", "TypeScript guide", 5))
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        with pytest.raises(ValueError):  # orjson.JSONDecodeError
            store.get(("docs",), "ts")
        with pytest.raises(ValueError):
            store.search(("docs",), query="TypeScript guide", limit=5)
    assert result.hits == [] and any("LangGraph's search raises on it" in s for s in result.steps)


def test_a_vector_of_other_dimensions_makes_langgraphs_search_fail_and_oxmems_say_so(lg_file):
    another_program(
        lg_file, "UPDATE store_vectors SET embedding = zeroblob(12) WHERE key = 'py' AND field_name = 'text'"
    )
    result = read(lg_file, lambda m: m.search("langgraph", "docs", "guide", 5))
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        with pytest.raises(Exception, match="dimension mistmatch"):
            store.search(("docs",), query="guide", limit=5)
        fine = ranked(store.search(("users",), query="guide", limit=5))
    assert result.hits == []
    assert any(
        s.startswith("LangGraph's search raises here (sqlite-vec: Vector dimension mistmatch") for s in result.steps
    )
    assert_same_ranking(oxmem_ranked(read(lg_file, lambda m: m.search("langgraph", "users", "guide", 5))), fine)
    notes = read(lg_file, lambda m: m.list_notes("docs"))
    py = next(n for n in notes if n.note_id == "py")
    assert any("vectors of other dimensions than most (64): text (3)" in p for p in py.details["problems"])


def test_ttl_is_shown_and_expiry_judged_at_the_readers_clock(tmp_path):
    path = tmp_path / "ttl.sqlite"
    with langgraph(path) as store:
        store.put(("users", "carol"), "note", {"text": "temporary"}, ttl=30)

    def at(when):
        async def go(m):
            m._now = lambda: when
            return (await m.list_notes("users.carol"))[0]

        return go

    early = read(path, at(datetime(2000, 1, 1, tzinfo=timezone.utc)))
    late = read(path, at(datetime(9000, 1, 1, tzinfo=timezone.utc)))
    assert early.details["ttl_minutes"] == 30 and early.details["expires_at"]
    assert (early.details["expired"], late.details["expired"]) == (False, True)
    assert "still return it until its TTL sweeper deletes it" in late.details["expired_note"]


def test_reads_change_no_byte_and_edits_need_editing_enabled(lg_file):
    before = digest(lg_file)

    async def everything(m):
        await m.info()
        for g in await m.note_users():
            await m.list_notes(g)
        await m.search("langgraph", "users", "tea", 5)
        await m.search_notes("users.alice", "tea", 3)
        with pytest.raises(ReadOnlyError, match="open read-only"):
            await m.save_note("users.alice", "{}")
        with pytest.raises(ReadOnlyError, match="open read-only"):
            await m.delete_note("users.alice", "tea")
        return m.capabilities.refusals

    refusals = read(lg_file, everything)
    assert set(refusals) >= {"sessions", "events"} and "notes" not in refusals
    asyncio.run(check_store(lg_file))
    assert digest(lg_file) == before


def edit(path, fn):
    async def go():
        async with await open_memory(path, read_only=False, embedding="deterministic") as memory:
            return await fn(memory)

    return asyncio.run(go())


def test_items_are_put_and_deleted_as_langgraph_writes_them_without_their_vectors(lg_file):
    """An edit is LangGraph's put without the vectors (said first: they are the program's to make), read back by
    LangGraph's own get; its vector search no longer returns the item rather than finding it by its old text; a
    new item is put with a fresh key; a deletion takes its vector rows too; an item changed since it was loaded is
    not overwritten."""
    notice = read(lg_file, lambda m: m.vector_notice())
    assert notice.startswith("the item is saved without its vectors")
    tea = read(lg_file, lambda m: m.get_note("users.alice", "tea"))

    async def edits(m):
        changed = await m.update_note("users.alice", "tea", '{"text": "likes black tea", "tags": []}', expected=tea)
        added = await m.save_note("users.bob", '{"text": "has a dog"}')
        await m.delete_note("users.alice", "pet")
        with pytest.raises(InvalidInputError, match="a JSON object"):
            await m.save_note("users.bob", "[1, 2]")
        with pytest.raises(ConflictError, match="changed by another program"):
            await m.update_note("users.alice", "tea", '{"text": "mine"}', expected=tea)
        return changed, added

    changed, added = edit(lg_file, edits)
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        assert store.get(("users", "alice"), "tea").value == {"text": "likes black tea", "tags": []}
        assert store.get(("users", "bob"), added.note_id).value == {"text": "has a dog"}
        assert store.get(("users", "alice"), "pet") is None
        found = [i.key for i in store.search(("users", "alice"), query="likes green tea in the morning", limit=10)]
    assert "tea" not in found and {"city", "job"} <= set(found)
    with contextlib.closing(sqlite3.connect(lg_file)) as conn:
        rows = conn.execute("SELECT prefix, key FROM store_vectors WHERE key IN ('tea', 'pet')").fetchall()
    assert rows == []
    assert changed.content == '{"text": "likes black tea", "tags": []}'


def test_undo_puts_an_item_back_with_its_times(lg_file):
    before = read(lg_file, lambda m: m.get_note("users.alice", "city"))

    async def delete_then_undo(m):
        await m.delete_note("users.alice", "city", expected=before)
        return await m.restore_notes([before], expected={"city": None})

    (restored,) = edit(lg_file, delete_then_undo)
    assert (restored.content, restored.created_at, restored.updated_at) == (
        before.content,
        before.created_at,
        before.updated_at,
    )
    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        assert store.get(("users", "alice"), "city").value == json.loads(before.content)


def test_a_plain_store_without_an_index_is_found_and_listed(tmp_path):
    path = tmp_path / "plain.sqlite"
    conn = connect(path)
    try:
        store = lg_sqlite.SqliteStore(conn)
        store.setup()
        store.put(("a", "b"), "k", {"x": 1})
    finally:
        conn.close()
    notes = read(path, lambda m: m.list_notes("a.b"))
    assert [(n.note_id, json.loads(n.content)) for n in notes] == [("k", {"x": 1})]
    result = read(path, lambda m: m.search("langgraph", "a", "x", 3))
    conn = connect(path)
    try:
        theirs = ranked(lg_sqlite.SqliteStore(conn).search(("a",), query="x", limit=3))
    finally:
        conn.close()
    assert_same_ranking(oxmem_ranked(result), theirs)
    assert theirs == [("a.b", "k", None)] and any("ignores the query" in s for s in result.steps)


def test_another_programs_table_named_store_is_not_taken_for_langgraphs(tmp_path):
    path = tmp_path / "store.sqlite"
    another_program(path, "CREATE TABLE store (id INTEGER PRIMARY KEY, name TEXT, value TEXT)")
    assert read(path, lambda m: asyncio.sleep(0, m.format)) == "sqlite-unknown"


# -- paging, caching, ties ----------------------------------------------------------------------------------------


async def every_page(m, group, size):
    """The namespace's items read ``size`` at a time, each page after the last item of the one before."""
    got, after = [], None
    while True:
        page = await m.notes_page(group, after, size)
        got += page
        if len(page) < size:
            return got
        after = note_cursor(page[-1])


def test_pages_of_any_size_joined_are_the_whole_list_newest_first_whatever_the_times_look_like(tmp_path):
    path = tmp_path / "pages.sqlite"
    write(path, {("big",): {f"k{i:03d}": {"text": f"item {i}"} for i in range(40)}, ("other",): {"x": {"text": "x"}}})
    another_program(
        path,
        "UPDATE store SET updated_at = '2026-03-01 00:00:00' WHERE key >= 'k022'",
        "UPDATE store SET updated_at = '2026-01-02 03:04:05' WHERE key < 'k010'",  # ties: the newer row first
        "UPDATE store SET updated_at = '2026-01-02T03:04:06Z' WHERE key BETWEEN 'k010' AND 'k013'",
        "UPDATE store SET updated_at = '2026-01-02 05:04:05.250+02:00' WHERE key BETWEEN 'k014' AND 'k016'",
        "UPDATE store SET updated_at = '2025-12-31 23:59:59.999999' WHERE key = 'k017'",
        "UPDATE store SET updated_at = 'yesterday' WHERE key IN ('k018', 'k019')",  # no time: last
        "UPDATE store SET updated_at = NULL WHERE key = 'k020'",
        "UPDATE store SET updated_at = 1767323045 WHERE key = 'k021'",
        "UPDATE store SET updated_at = '2027-06-01 12:00:00' WHERE key = 'x'",  # another namespace: not listed
    )

    async def pages(m):
        whole = await m.list_notes("big")
        joined = {size: await every_page(m, "big", size) for size in (1, 2, 3, 7, 39, 40, 200)}
        one = [await m.get_note("big", n.note_id) for n in whole]
        assert await m.notes_page("no such namespace") == []
        return whole, joined, one

    whole, joined, one = read(path, pages)
    assert len(whole) == 40 and one == whole
    for size, got in joined.items():
        assert got == whole, size
    times = [parse_when(n.updated_at) for n in whole]
    timed = [t for t in times if t is not None]
    assert times[: len(timed)] == timed == sorted(timed, reverse=True)  # newest first, the times not read last
    assert [n.note_id for n in whole[len(timed) :]] == ["k021", "k020", "k019", "k018"]  # the newer row first
    expected = (
        [f"k{i:03d}" for i in range(39, 21, -1)]  # 2026-03-01, all alike: the newer row first
        + ["k013", "k012", "k011", "k010"]  # 03:04:06Z
        + ["k016", "k015", "k014"]  # 05:04:05.25+02:00 = 03:04:05.25 UTC
        + [f"k{i:03d}" for i in range(9, -1, -1)]  # 03:04:05
        + ["k017", "k021", "k020", "k019", "k018"]  # 2025, then what is no time
    )
    assert [n.note_id for n in whole] == expected


def test_the_next_page_goes_on_from_the_last_item_shown_even_deleted_or_put_again(tmp_path):
    path = tmp_path / "cursor.sqlite"
    write(path, {("big",): {f"k{i:02d}": {"text": f"item {i}"} for i in range(15)}})
    another_program(path, "UPDATE store SET updated_at = datetime('2001-01-01', '+' || rowid || ' minutes')")

    async def go(m):
        whole = await m.list_notes("big")
        first = await m.notes_page("big", None, 5)
        another_program(path, f"DELETE FROM store WHERE key = '{first[-1].note_id}'")
        second = await m.notes_page("big", note_cursor(first[-1]), 5)
        with langgraph(path) as store:  # a put replaces the row: another rowid, a newer time
            store.put(("big",), second[-1].note_id, {"text": "put again"})
        third = await m.notes_page("big", note_cursor(second[-1]), 5)
        return whole, first, second, third, await m.list_notes("big")

    whole, first, second, third, now = read(path, go)
    assert [n.note_id for n in first + second + third] == [n.note_id for n in whole]
    assert now[0].note_id == second[-1].note_id and json.loads(now[0].content) == {"text": "put again"}
    assert first[-1].note_id not in {n.note_id for n in now}


def test_searches_and_pages_see_what_another_program_wrote_between_them(lg_file):
    query = "plays chess on Mondays"

    def theirs(prefix, distance_type):
        with langgraph(lg_file, text_fields=["text", "tags[*]"], distance_type=distance_type) as store:
            return ranked(store.search(prefix, query=query, limit=4))

    async def go(m):
        out = []
        for change in (
            None,
            lambda: write(
                lg_file,
                {("users", "carol"): {"chess": {"text": query, "tags": ["chess"]}}},
                text_fields=["text", "tags[*]"],
            ),  # fmt: skip
            lambda: another_program(lg_file, "UPDATE store_vectors SET embedding = zeroblob(256) WHERE key = 'chess'"),
            lambda: another_program(lg_file, "DELETE FROM store WHERE key = 'chess'"),
        ):
            if change is not None:
                change()
            for scope, prefix in (("users", ("users",)), (ALL_SESSIONS, ())):
                for name, distance_type in (("langgraph", "cosine"), ("langgraph-l2", "l2")):
                    result = await m.search(name, scope, query, 4)
                    out.append((oxmem_ranked(result), theirs(prefix, distance_type)))
            out.append(([n.note_id for n in await m.notes_page("users.carol")], None))
        return out

    results = read(lg_file, go)
    for ours, lg in results:
        if lg is not None:
            assert_same_ranking(ours, lg)
    carol = [ours for ours, lg in results if lg is None]
    assert carol == [[], ["chess"], ["chess"], []]
    found = [ours[0][1] if ours else None for ours, lg in results if lg is not None][::2]  # cosine: best first
    assert found[2:4] == ["chess", "chess"] and "chess" not in found[:2] + found[-2:]


TIE_WORDS = ["apple", "river", "stone"]
TIES = {
    ("ties", "a"): {f"a{i}": {"text": TIE_WORDS[i % 3], "tags": [TIE_WORDS[(i + 1) % 3], TIE_WORDS[i % 3]]}
                    for i in range(9)},
    ("ties", "b"): {f"b{i}": {"text": TIE_WORDS[i % 3], "tags": [TIE_WORDS[i % 3]]} for i in range(6)},
    ("ties",): {"same": {"text": "apple", "tags": ["apple", "apple"]}},
    ("elsewhere",): {"e": {"text": "apple", "tags": []}},
}  # fmt: skip


def langgraph_sql(path, config, prefix, query, k):
    """LangGraph's own search SQL run by sqlite-vec on LangGraph's connection, each row with the field it came from:
    the items it keeps (no limit on items) and the vector rows it takes (its ``scored`` rows, materialized as the
    search materializes them)."""
    metric = config["distance_type"]
    where, args = search_where(prefix, None)
    optional = {"expires_at": "s.expires_at", "ttl_minutes": "s.ttl_minutes"}
    search, scored = (
        q.replace(SCORE_SQL[metric], LANGGRAPH_SCORE[metric]) for q in search_sql(metric, where, optional)
    )
    scored = scored.replace("WITH scored AS (", "WITH scored AS MATERIALIZED (")
    vector = sqlite_vec.serialize_float32(embed([query])[0])
    with langgraph(path, **config) as store:
        kept = store.conn.execute(search, (vector, *args, 2 * k, -1, 0)).fetchall()
        taken = store.conn.execute(scored, (vector, *args, 2 * k)).fetchall()
    return [tuple(r) for r in kept], [tuple(r) for r in taken]


@pytest.mark.parametrize("distance_type", ["cosine", "l2", "inner_product"])
def test_equal_scores_come_in_langgraphs_own_order_as_its_sql_over_the_whole_scope_gives_them(tmp_path, distance_type):
    """Many vector rows of the same text (equal scores, at the 2k-th place too) and zero vectors (a NULL cosine):
    the search, run on the rows it takes, gives LangGraph's items and scores, and every hit — best field, the other
    rows taken, notes — as LangGraph's own SQL run by sqlite-vec over every row of the scope gives them; so does
    that SQL run here over every row (what oxmem does if it cannot read the order the rows are scored in)."""
    path = tmp_path / "ties.sqlite"
    config = {"text_fields": ["text", "tags[*]"], "distance_type": distance_type}
    write(path, TIES, **config)
    another_program(path, "UPDATE store_vectors SET embedding = zeroblob(256) WHERE key IN ('b2', 'b5') "
                          "OR (key = 'a1' AND field_name = 'text')")  # fmt: skip
    name = {"cosine": "langgraph", "l2": "langgraph-l2", "inner_product": "langgraph-inner-product"}[distance_type]
    cases = [
        (scope, q, k)
        for scope in ("ties", "ties.a", "")
        for q in ["apple", "river", "apple river", "nothing alike"]
        for k in (1, 2, 3, 4, 6, 40)
    ]
    truth = {case: langgraph_sql(path, config, *case) for case in cases}

    def run(how):
        async def go(m):
            out = []
            for scope, q, k in cases:
                if how == "langgraph":
                    m._search_rows = lambda *args, rows=truth[scope, q, k]: rows
                elif how == "whole scope":
                    m._scan = lambda *args: None
                out.append(await m.search(name, scope or ALL_SESSIONS, q, k))
            return out

        return read(path, go)

    def shown(result):
        return [(h.session_id, h.chunk_id, h.text, h.metadata, h.notes, h.rank) for h in result.hits]

    fast, theirs, whole = run("fast"), run("langgraph"), run("whole scope")
    with langgraph(path, **config) as store:
        for (scope, q, k), ours, lg, slow in zip(cases, fast, theirs, whole, strict=True):
            prefix = tuple(scope.split(".")) if scope else ()
            assert_same_ranking(oxmem_ranked(ours), ranked(store.search(prefix, query=q, limit=k)))
            assert shown(ours) == shown(lg), (scope, q, k)
            assert ours.steps == lg.steps and ours.legs == lg.legs
            # over every row: the same items, fields and scores (its rows taken read by a query of their own)
            assert [h.metadata for h in ours.hits] == [h.metadata for h in slow.hits]
    if distance_type == "cosine":
        assert any(h.metadata["score"] is None for r in fast for h in r.hits)  # a zero vector's NULL, placed last
    assert any(len({h.score for h in r.hits}) < len(r.hits) for r in fast)  # ties among the hits


def old_distances(metric, matrix, query):
    """oxmem's arithmetic as it was (cumulative sums along each row)."""
    m = np.asarray(matrix, dtype=np.float32)
    q = np.asarray(query, dtype=np.float32)
    with np.errstate(all="ignore"):
        if metric == "l2":
            t = m - q
            out = np.sqrt(np.cumsum(t * t, axis=1, dtype=np.float32)[:, -1].astype(np.float64)).astype(np.float32)
        elif metric == "inner_product":
            out = np.cumsum(np.abs(m.astype(np.float64) - q.astype(np.float64)), axis=1)[:, -1]
        else:
            dot = np.cumsum(m * q, axis=1, dtype=np.float32)[:, -1].astype(np.float64)
            mags = np.cumsum(m * m, axis=1, dtype=np.float32)[:, -1].astype(np.float64)
            qmag = float(np.cumsum(q * q, dtype=np.float32)[-1])
            out = (1.0 - dot / (np.sqrt(mags) * np.sqrt(qmag))).astype(np.float32)
    return out.astype(np.float64)


@pytest.mark.parametrize("metric", ["cosine", "l2", "inner_product"])
def test_the_distances_column_by_column_are_bit_for_bit_the_sums_in_order(metric):
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((300, 64)).astype(np.float32) * np.float32(1e3)
    matrix[5] = 0.0  # a zero vector: NaN cosine
    matrix[6] = matrix[7]
    query = rng.standard_normal(64).astype(np.float32)
    expected = old_distances(metric, matrix, query)
    got = distance_array(metric, np.ascontiguousarray(matrix.T), query)
    assert np.array_equal(got, expected, equal_nan=True)
    assert distances(metric, matrix, query) == [None if np.isnan(v) else v for v in expected.tolist()]


def test_check_is_healthy_after_langgraphs_own_delete(lg_file, capsys):
    """LangGraph's ``store.delete`` leaves the item's vector rows behind (its connection has foreign keys off): that
    is how LangGraph leaves its file, and ``check`` said it was broken (exit 1). It is a note, not a problem."""
    from tests.cli._support import run as cli

    with langgraph(lg_file, text_fields=["text", "tags[*]"]) as store:
        store.delete(("docs",), "py")
    code, out, err = cli(capsys, "--db", str(lg_file), "check")
    assert code == 0, out + err
    assert "foreign keys  no other row points at a missing parent; 3 vector rows of deleted items" in out
