"""The ZEKE reader: memories as notes per scope and ZEKE's hybrid recall reproduced (its eviction preview:
test_zeke_eviction.py).

Expected values are computed here from the raw rows (plain apsw, FTS5's bm25, numpy cosine) following
FORMATS.md §C, or written out by hand from the fixture's facts (tests/core/formats/fixtures.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

import apsw
import numpy as np
import pytest

from oxmem_gui.core import InvalidInputError, ReadOnlyError
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.embeddings.model_files import MODEL_NAME
from oxmem_gui.core.formats.zeke import OPENAI_MODEL, ZekeReader
from oxmem_gui.core.memory import detect, inspect_database, open_memory

from .fixtures import ZEKE_EXPIRED, ZEKE_IDS, ZEKE_NOW, ZEKE_SCOPES, make_zeke

NAMES = {v: k for k, v in ZEKE_IDS.items()}
NOW_TEXT = "2026-03-01T12:00:00.000000+00:00"


def run(coro):
    return asyncio.run(coro)


def names(ids):
    return [NAMES.get(i, i) for i in ids]


async def opened(path: Path) -> ZekeReader:
    reader = await open_memory(path)
    assert isinstance(reader, ZekeReader)
    reader._now = lambda: ZEKE_NOW  # the fixture's fixed "now" (naive UTC)
    return reader


def raw(path: Path, sql: str, args=()) -> list[tuple]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def write(path: Path, sql: str, args=()) -> None:
    """Change a fixture copy as ZEKE would (plain SQL; the FTS triggers follow)."""
    conn = apsw.Connection(str(path))
    try:
        with conn:
            conn.execute(sql, args)
    finally:
        conn.close()


def vector_of(path: Path, name: str) -> np.ndarray:
    (blob,) = raw(path, "SELECT embedding FROM memories WHERE id = ?", (ZEKE_IDS[name],))[0]
    return np.frombuffer(blob, dtype="<f4").astype(np.float64)


def expected_hybrid(path: Path, prefix: str, query: str, k: int, q: np.ndarray | None) -> list[tuple]:
    """ZEKE's search from FORMATS.md §C, independently: (id, score, match_type, bm25|None, cosine|None)."""
    words = ["".join(c for c in w if c.isalnum() or c in "-_") for w in query.split()]
    expression = " OR ".join(f'"{w}"' for w in words if w)
    fts = []
    if expression:
        fts = raw(
            path,
            "SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.scope LIKE ? ORDER BY 2 LIMIT ?",
            (expression, prefix + "%", k * 2),
        )
    vec = []
    if q is not None:
        for mid, blob in raw(
            path, "SELECT id, embedding FROM memories WHERE scope LIKE ? AND embedding IS NOT NULL", (prefix + "%",)
        ):
            v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
            vec.append((mid, float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))))
        vec.sort(key=lambda x: -x[1])
        vec = vec[: k * 2]
    out: dict[str, list] = {}
    for mid, bm25 in fts:
        out[mid] = [0.4 / (1 + abs(bm25)), "fts", bm25, None]
    for mid, cos in vec:
        if mid in out:
            out[mid][0] += 0.6 * cos
            out[mid][1] = "hybrid"
            out[mid][3] = cos
        else:
            out[mid] = [0.6 * cos, "vector", None, cos]
    ranked = sorted(out.items(), key=lambda kv: -kv[1][0])[:k]
    return [(mid, *vals) for mid, vals in ranked]


@pytest.fixture
def zeke(tmp_path) -> Path:
    return make_zeke(tmp_path / "memory.db")


# -- detection and notes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "model"), [("1536", OPENAI_MODEL), ("384", MODEL_NAME)])
def test_detects_and_lists_memories_per_scope(tmp_path, variant, model):
    path = make_zeke(tmp_path / "memory.db", variant)
    assert run(detect(path)) == "zeke"

    async def go():
        async with await opened(path) as reader:
            caps = reader.capabilities
            assert (caps.has_sessions, caps.has_notes, caps.has_schedules, caps.has_search) == (
                False,
                True,
                False,
                True,
            )
            assert (caps.notes_label, caps.group_label, caps.has_eviction) == ("Memories", "Scope", True)
            assert caps.refusal("notes") is None and caps.refusal("sessions") == ZekeReader.REASON  # memories
            assert await reader.note_users() == sorted(ZEKE_SCOPES)
            return (
                await reader.list_notes("task:inbox"),
                await reader.list_notes("persona:zeke"),
                await reader.note_tags("task:inbox"),
                await reader.get_note("notes", ZEKE_IDS["n-bike"]),
                await reader.sessions_page(),
                await reader.info(),
            )

    task, persona, tags, bike, sessions, info = run(go())
    # newest first by updated_at (= last_accessed_at, else created_at)
    assert names(n.note_id for n in task) == ["t-lunch", "t-newsletter", "t-invoice", "t-passport", "t-invoice-old"]
    lunch = task[0]
    assert (lunch.user, lunch.content, lunch.tags) == (
        "task:inbox",
        "Answer Priya's lunch invitation for Thursday.",
        ["email", "social"],
    )
    assert (lunch.created_at, lunch.updated_at) == (
        "2026-03-01T08:30:15.551002+00:00",
        "2026-03-01T11:02:00.400000+00:00",
    )
    assert lunch.sequence == 10  # its rowid
    newsletter = task[1]  # never accessed, NULL tags, a time without microseconds
    assert newsletter.tags == []
    assert newsletter.created_at == newsletter.updated_at == "2026-03-01T09:00:00.000000+00:00"
    assert newsletter.details == {
        "ttl_seconds": 3600,
        "expires_at": "2026-03-01T10:00:00.000000+00:00",
        "expired": True,
        "last_accessed_at": None,
        "embedding_dims": int(variant),
    }
    assert tags == [("email", 3), ("finance", 2), ("social", 1), ("travel", 1)]
    assert names(n.note_id for n in persona) == ["p-timezone", "p-name", "p-style", "p-family", "p-allergy", "p-coffee"]
    assert persona[0].tags == []  # NULL
    assert bike.details["embedding_dims"] == "none" and bike.details["ttl_seconds"] is None
    assert bike.details["expires_at"] is None and bike.details["expired"] is False
    assert sessions == []

    assert info.format == "zeke" and info.journal_mode == "delete"
    assert info.markers == [
        "no migration table (ZEKE keeps none)",
        "journal mode delete",
        "persona: 6 rows",
        "task: 5 rows",
        "ops: 5 rows",
        "calendar: 5 rows",
        "notes 5 rows",
        "other scopes: 0 rows",
    ]
    assert [(e.model, e.dimensions, e.rows) for e in info.embeddings] == [
        (model, int(variant), 23),
        ("none (NULL: embedding failed when stored)", 0, 3),
    ]
    assert run(inspect_database(path)).format == "zeke"


def test_ttl_expiry_shown_at_the_fixture_now(zeke):
    async def go():
        async with await opened(zeke) as reader:
            return [n for scope in await reader.note_users() for n in await reader.list_notes(scope)]

    notes = run(go())
    assert len(notes) == 26
    assert sorted(names(n.note_id for n in notes if n.details["expired"])) == sorted(ZEKE_EXPIRED)
    by_name = {NAMES[n.note_id]: n for n in notes}
    dentist = by_name["c-dentist"].details  # 3 days: expires at 18:00 on the fixture's day, still live at 12:00
    assert (dentist["expires_at"], dentist["expired"]) == ("2026-03-01T18:00:00.000500+00:00", False)
    assert by_name["o-certs"].details["expires_at"] == "2026-03-01T11:50:00.000300+00:00"
    assert by_name["t-invoice"].details["ttl_seconds"] == 7776000
    assert all(n.details["expires_at"] is None for n in notes if n.user in ("persona:zeke", "notes"))


def test_unreadable_tags_are_flagged_not_fatal(zeke):
    write(zeke, "UPDATE memories SET tags = '[\"email\", ' WHERE id = ?", (ZEKE_IDS["t-invoice"],))

    q = vector_of(zeke, "t-invoice")

    async def go():
        async with await opened(zeke) as reader:
            note = await reader.get_note("task:inbox", ZEKE_IDS["t-invoice"])
            broken = await reader.search("zeke", "task:", "invoices", 3, options=SearchOptions(query_embedding=q))
            other = await reader.search("zeke", "ops:", "deploy", 3, options=SearchOptions(query_embedding=q))
            return note, broken, other

    note, broken, other = run(go())
    assert note.tags == []
    assert note.details["tags_error"].startswith("unreadable tags JSON")
    # ZEKE's _row_to_item raises on that row: its keyword search returns nothing, its vector search is dropped
    assert broken.hits == [] and broken.legs["fts"].candidates == broken.legs["vector"].candidates == 0
    assert [c for c, _ in broken.vector_errors] == [ZEKE_IDS["t-invoice"]]
    assert sum("cannot be loaded by ZEKE" in s for s in broken.steps) == 2
    assert len(other.hits) == 3 and other.vector_errors == []


# -- ZEKE's hybrid ----------------------------------------------------------------------------------------------


def _check_hits(result, expected):
    assert [h.chunk_id for h in result.hits] == [e[0] for e in expected]
    for h, (_mid, score, kind, bm25, cos) in zip(result.hits, expected, strict=True):
        assert h.score == pytest.approx(score, abs=1e-6)
        assert h.metadata["match_type"] == kind
        assert h.session_id == h.metadata["scope"]
        if bm25 is None:
            assert (h.fts_raw, h.fts_score, h.fts_rank) == (None, 0.0, None)
        else:
            assert h.fts_raw == pytest.approx(bm25, abs=1e-6)
            assert h.fts_score == pytest.approx(1 / (1 + abs(bm25)), abs=1e-6)
        if cos is None:
            assert (h.vector_raw, h.vector_score, h.vector_rank) == (None, 0.0, None)
        else:
            assert h.vector_raw == pytest.approx(cos, abs=1e-6)
            assert h.vector_score == pytest.approx(cos, abs=1e-6)
        assert any(n.startswith(f"match_type {kind}") for n in h.notes)


@pytest.mark.parametrize(
    ("prefix", "query", "k", "kinds"),
    [
        ("persona:", "Dana prefers coffee", 3, {"hybrid"}),
        ("persona:zeke", "penicillin allergy?", 4, {"fts", "vector"}),
        ("", "deploy invoice", 5, {"fts", "hybrid", "vector"}),
    ],
)
def test_hybrid_reproduces_zeke(zeke, prefix, query, k, kinds):
    q = vector_of(zeke, "p-style") + 0.5 * vector_of(zeke, "p-family") + 0.3 * vector_of(zeke, "o-hotfix")
    q = q / np.linalg.norm(q)
    expected = expected_hybrid(zeke, prefix, query, k, q)

    async def go():
        async with await opened(zeke) as reader:
            return await reader.search("zeke", prefix, query, k, options=SearchOptions(query_embedding=q.tolist()))

    result = run(go())
    assert result.retriever == "zeke" and result.session_id == prefix and result.top_k == k
    assert result.models == [OPENAI_MODEL] and result.skipped_models == {}
    _check_hits(result, expected)
    assert {h.metadata["match_type"] for h in result.hits} == kinds
    assert (result.vector_weight, result.fts_weight) == (0.6, 0.4)
    assert any("LOWER fts score" in s for s in result.steps)
    assert any("never write" in s for s in result.steps)


def test_a_large_scope_is_ranked_as_zeke_ranks_it(tmp_path):
    """Hundreds of memories in a scope (more than k×2, so the float32 pass over the cached matrix chooses): it keeps
    every memory near the k×2-th best and scores those again in float64 (ZEKE's own arithmetic), so the hits, their
    order and their cosines are the independent float64 computation's."""
    path = make_zeke(tmp_path / "memory.db", extra_per_scope={"persona": 600})
    rng = np.random.default_rng(11)
    q = vector_of(path, "p-style") + 0.2 * rng.standard_normal(1536) / np.sqrt(1536)
    assert raw(path, "SELECT count(*) FROM memories WHERE scope LIKE 'persona%'")[0][0] > 600

    async def go():
        async with await opened(path) as reader:
            return await reader.search(
                "zeke", "persona", "zzz-nothing-matches", 8, options=SearchOptions(query_embedding=q.tolist())
            )

    result = run(go())
    expected = expected_hybrid(path, "persona", "zzz-nothing-matches", 8, q)
    _check_hits(result, expected)
    assert result.legs["vector"].candidates == 16


def test_hybrid_on_the_384_variant_uses_oxmems_minilm_name(tmp_path):
    path = make_zeke(tmp_path / "memory.db", "384")
    q = vector_of(path, "n-recipe")
    expected = expected_hybrid(path, "notes", "shakshuka eggs", 2, q)

    async def go():
        async with await opened(path) as reader:
            return await reader.search_notes("notes", "shakshuka eggs", 2, options=SearchOptions(query_embedding=q))

    hits = run(go())
    assert [h.note_id for h in hits] == [e[0] for e in expected]
    assert names(h.note_id for h in hits)[0] == "n-recipe"
    assert hits[0].score == pytest.approx(expected[0][1], abs=1e-6)
    assert hits[0].tags == ["recipes", "food"] and hits[0].hit.embedding_model == MODEL_NAME


def test_better_keyword_match_scores_lower_and_fts_only_without_the_model(zeke):
    """No query vector and OpenAI's model cannot be run: the FTS part only, as ZEKE does when embedding fails."""

    async def go():
        async with await opened(zeke) as reader:
            return await reader.search("zeke", "ops:", "deploy hotfix", 3)

    result = run(go())
    assert result.skipped_models.keys() == {OPENAI_MODEL}
    assert result.models == [] and result.legs["vector"].candidates == 0
    assert result.fts_expression == '"deploy" OR "hotfix"'
    fts = raw(
        zeke,
        "SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
        "WHERE memories_fts MATCH '\"deploy\" OR \"hotfix\"' AND m.scope LIKE 'ops:%' ORDER BY 2 LIMIT 6",
    )
    assert len(fts) == 5 and names(i for i, _ in fts)[0] == "o-hotfix"  # FTS5's best match: most negative bm25
    best_id, best_bm25 = fts[0]
    assert result.legs["fts"].candidates == 5 and result.legs["fts"].min == pytest.approx(best_bm25)
    # ZEKE's 1/(1+|bm25|) turns the order around: the best keyword match gets the lowest score
    pool = {h.chunk_id: h for h in result.pool}
    assert pool[best_id].fts_score == pytest.approx(1 / (1 + abs(best_bm25)), abs=1e-6)
    assert pool[best_id].fts_score == min(h.fts_score for h in result.pool)
    assert [h.chunk_id for h in result.pool] == [i for i, _ in reversed(fts)]
    assert best_id not in [h.chunk_id for h in result.hits]
    expected = sorted(((i, 0.4 / (1 + abs(b)), "fts", b, None) for i, b in fts), key=lambda e: -e[1])[:3]
    _check_hits(result, expected)
    assert any("more negative bm25" in n for n in pool[best_id].notes)


def test_vector_of_other_dimensions_goes_to_vector_errors(zeke):
    odd = "11111111-2222-4333-8444-555555555555"
    blob = np.full(384, 0.05, dtype="<f4").tobytes()
    write(
        zeke,
        "INSERT INTO memories (id, text, scope, tags, created_at, embedding) VALUES (?, ?, ?, NULL, ?, ?)",
        (odd, "Dana likes a quiet desk.", "persona:zeke", "2026-02-01T10:00:00.000001", blob),
    )
    q = vector_of(zeke, "p-name")

    async def go():
        async with await opened(zeke) as reader:
            return await reader.search("zeke", "persona:", "quiet", 3, options=SearchOptions(query_embedding=q))

    result = run(go())
    assert [c for c, _ in result.vector_errors] == [odd]
    assert "0.0" in result.vector_errors[0][1]
    (hit,) = [h for h in result.pool if h.chunk_id == odd]
    # ZEKE's cosine_similarity gives 0.0 for vectors of different lengths; the word "quiet" matches it
    assert hit.vector_raw == 0.0 and hit.metadata["match_type"] == "hybrid"
    assert names(h.chunk_id for h in result.hits)[0] == "p-name"


def test_no_words_leaves_the_fts_leg_empty(zeke):
    q = vector_of(zeke, "c-review")

    async def go():
        async with await opened(zeke) as reader:
            return await reader.search("zeke", "calendar:", "?! ...", 2, options=SearchOptions(query_embedding=q))

    result = run(go())
    assert result.fts_expression is None and result.legs["fts"].candidates == 0
    assert names(h.chunk_id for h in result.hits)[0] == "c-review"
    assert all(h.metadata["match_type"] == "vector" for h in result.hits)
    assert result.hits[0].score == pytest.approx(0.6, abs=1e-6)


def test_scope_prefix_is_literal_and_case_insensitive_like_zeke(zeke):
    for mid, scope in (("a", "task:a_b"), ("b", "task:axb")):
        write(
            zeke,
            "INSERT INTO memories (id, text, scope, created_at) VALUES (?, 'marmalade order', ?, ?)",
            (mid, scope, "2026-02-01T10:00:00"),
        )

    async def go():
        async with await opened(zeke) as reader:
            literal = await reader.search(
                "zeke", "task:a_", "marmalade", 5, options=SearchOptions(query_embedding=[0.0] * 1536)
            )
            upper = await reader.search(
                "zeke", "TASK:", "marmalade", 5, options=SearchOptions(query_embedding=[0.0] * 1536)
            )
            return literal, upper

    literal, upper = run(go())
    assert [h.chunk_id for h in literal.hits if h.fts_raw is not None] == ["a"]
    assert sorted(h.chunk_id for h in upper.hits if h.fts_raw is not None) == ["a", "b"]


def test_searching_never_updates_last_accessed_at(zeke):
    before = raw(zeke, "SELECT id, last_accessed_at FROM memories ORDER BY rowid")
    q = vector_of(zeke, "p-style")

    async def go():
        async with await opened(zeke) as reader:
            await reader.search("zeke", "persona:", "Dana prefers", 3, options=SearchOptions(query_embedding=q))
            await reader.search("zeke", "", "deploy", 8)
            await reader.search_notes("notes", "book", 2, options=SearchOptions(query_embedding=q))

    run(go())
    assert raw(zeke, "SELECT id, last_accessed_at FROM memories ORDER BY rowid") == before


# -- read-only ---------------------------------------------------------------------------------------------------


def test_writes_are_refused(zeke):
    """Read-only as opened; its memories are editable once editing is enabled (``test_zeke_edits.py``), nothing
    else ever."""

    async def go():
        async with await opened(zeke) as reader:
            with pytest.raises(ReadOnlyError, match="enable editing"):
                await reader.save_note("notes", "new memory", ["x"])
            with pytest.raises(ReadOnlyError, match="enable editing"):
                await reader.delete_note("notes", ZEKE_IDS["n-bike"])
            with pytest.raises(ReadOnlyError):
                await reader.store("s", None, {"role": "user", "content": "hi"})
            with pytest.raises(ReadOnlyError):
                await reader.schedules.create("u", "goal", {"type": "interval", "every_secs": 60})

    run(go())
    assert raw(zeke, "SELECT count(*) FROM memories") == [(26,)]


def _fingerprint(path: Path) -> dict[str, tuple[str, int] | None]:
    out = {}
    for suffix in ("", "-journal", "-wal", "-shm"):
        p = Path(f"{path}{suffix}")
        out[suffix] = (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) if p.exists() else None
    return out


def test_reading_everything_never_writes(zeke):
    before = _fingerprint(zeke)
    assert before["-journal"] is None and before["-wal"] is None
    q = vector_of(zeke, "p-style")

    async def go():
        async with await opened(zeke) as reader:
            await reader.info()
            await reader.tables()
            await reader.table_page("memories")
            await reader.table_page("memories_fts")
            await reader.data_version()
            await reader.sessions_page()
            await reader.list_sessions()
            for scope in await reader.note_users():
                await reader.note_tags(scope)
                for note in await reader.list_notes(scope, contains="a"):
                    await reader.get_note(scope, note.note_id)
            await reader.search("zeke", "", "Dana deploy", 8, options=SearchOptions(query_embedding=q))
            await reader.search("zeke", "persona:", "Dana", 8)
            await reader.search_notes("notes", "book", 3, options=SearchOptions(query_embedding=q))
            await reader.eviction_preview()
            await reader.eviction_preview(ZEKE_NOW, scope_caps={"task": 1}, global_cap=3)
            await reader.schedules.search()
            with pytest.raises(InvalidInputError):
                await reader.hybrid_query("persona:zeke", "Dana")
            return json.dumps(reader.capabilities.refusals)

    run(go())
    assert _fingerprint(zeke) == before


def test_memories_page_in_sql_as_the_whole_list_orders_them(tmp_path):
    """A scope's memories are read a page at a time (LIMIT past the last one shown): at 200,000 memories the first
    page takes 35 ms instead of listing the scope's 4.7 s (bench_formats). Pages of every size join up into the
    whole list; a page after a memory deleted since continues from its time; a filter pages the filtered list."""
    path = make_zeke(tmp_path / "memory.db", "384", extra_per_scope={"persona": 23})
    # ties: two memories last accessed at the same time (the rowid orders them), one never accessed
    persona = [r for (r,) in raw(path, "SELECT rowid FROM memories WHERE scope = 'persona' ORDER BY rowid")]
    tie = "UPDATE memories SET last_accessed_at = '2026-02-20T10:00:00' WHERE rowid IN (?, ?)"
    write(path, tie, (persona[2], persona[9]))
    write(path, f"UPDATE memories SET last_accessed_at = NULL WHERE rowid = {persona[4]}")

    async def go():
        reader = await opened(path)
        try:
            whole = await reader.list_notes("persona")
            paged = {}
            for limit in (1, 4, 50):
                got, after = [], None
                while page := await reader.notes_page("persona", after, limit):
                    assert len(page) <= limit
                    got += page
                    after = (page[-1].updated_at, page[-1].sequence)
                paged[limit] = got
            first = await reader.notes_page("persona", None, 5)
            write(path, "DELETE FROM memories WHERE rowid = ?", (first[-1].sequence,))
            past_deleted = await reader.notes_page("persona", (first[-1].updated_at, first[-1].sequence), 3)
            filtered = await reader.notes_page("persona", None, 2, contains="filler")
            return whole, paged, first, past_deleted, filtered, await reader.list_notes("persona")
        finally:
            await reader.aclose()

    whole, paged, first, past_deleted, filtered, after_delete = run(go())
    assert len(whole) == 23 and all(paged[n] == whole for n in paged)
    tied = [n.sequence for n in whole if n.updated_at == "2026-02-20T10:00:00.000000+00:00"]
    assert tied == [persona[9], persona[2]]
    assert [n.updated_at for n in whole] == sorted((n.updated_at for n in whole), reverse=True)
    assert past_deleted == after_delete[4:7]
    assert filtered == [n for n in whole if "filler" in n.content.casefold()][:2] and len(filtered) == 2
