"""ZEKE's eviction previewed (``core/formats/zeke_eviction.py``): TTL expiry, per-scope caps and the persona cap as
ZEKE's own clean-up would apply them at a given time, ties broken by rowid, and default TTLs as a what-if. Expected
rows are written out by hand from the fixture's facts (tests/core/formats/fixtures.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from oxmem_gui.core import InvalidInputError
from tests.core.formats.test_zeke import NAMES, NOW_TEXT, names, opened, raw, run, write

from .fixtures import ZEKE_EXPIRED, ZEKE_IDS, ZEKE_NOW, make_zeke


@pytest.fixture
def zeke(tmp_path) -> Path:
    return make_zeke(tmp_path / "memory.db")


# -- eviction ---------------------------------------------------------------------------------------------------


def test_eviction_with_zeke_defaults_is_the_expired_rows(zeke):
    async def go():
        async with await opened(zeke) as reader:
            naive = await reader.eviction_preview(ZEKE_NOW)
            aware = await reader.eviction_preview(datetime(2026, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1))))
            edge = await reader.eviction_preview(ZEKE_NOW + timedelta(hours=6, microseconds=500))
            later = await reader.eviction_preview(ZEKE_NOW + timedelta(hours=6, microseconds=501))
            return naive, aware, edge, later

    naive, aware, edge, later = run(go())
    assert naive.now == aware.now == NOW_TEXT
    assert names(e.id for e in naive.items) == ZEKE_EXPIRED
    assert {e.rule for e in naive.items} == {"ttl"}
    assert [e.id for e in aware.items] == [e.id for e in naive.items]
    first = naive.items[0]
    assert (first.group, first.text, first.created_at, first.last_used_at) == (
        "task:inbox",
        "Reply to the accountant about the Q3 invoice.",
        "2025-11-02T14:22:10.482913+00:00",
        "2025-11-03T09:00:12.110000+00:00",
    )
    # c-dentist expires at 18:00:00.000500: kept at that instant (created_at + ttl < now is strict), gone 1 µs later
    assert "c-dentist" not in names(e.id for e in edge.items)
    assert names(e.id for e in later.items) == [
        "t-invoice-old",
        "t-newsletter",
        "o-rollback",
        "o-canary",
        "o-certs",
        "c-standup",
        "c-dentist",
        "c-moved",
    ]
    heads = ["ttl:", "cap persona: 5000:", "cap task: 10000:", "cap ops: 10000:", "cap calendar: 10000:"]
    heads += ["cap notes 10000:", "global cap 20000:"]
    assert [r[: len(h)] for r, h in zip(naive.rules, heads, strict=True)] == heads


def test_eviction_with_small_caps(zeke):
    async def go():
        async with await opened(zeke) as reader:
            return await reader.eviction_preview(
                ZEKE_NOW, scope_caps={"task": 2, "ops": 1, "calendar": 1, "notes": 3, "persona": 4}, global_cap=9
            )

    preview = run(go())
    assert [(NAMES[e.id], e.rule) for e in preview.items] == [
        *((name, "ttl") for name in ZEKE_EXPIRED),
        # LRU = COALESCE(last_accessed_at, created_at): p-coffee was never accessed, created 2025-10-11
        ("p-coffee", "cap persona: 4"),
        ("p-allergy", "cap persona: 4"),
        ("t-passport", "cap task: 2"),
        ("o-freeze", "cap ops: 1"),
        ("o-hotfix", "cap ops: 1"),
        ("c-offsite", "cap calendar: 1"),
        ("c-review", "cap calendar: 1"),
        ("n-book", "cap notes 3"),
        ("n-tax", "cap notes 3"),
        # 11 left: the two least recently used of all go
        ("n-bike", "global cap 9"),
        ("n-wifi", "global cap 9"),
    ]
    assert any(r.startswith("global cap 9:") for r in preview.rules)
    # nothing was deleted
    assert raw(zeke, "SELECT count(*) FROM memories") == [(26,)]


def test_eviction_persona_cap_with_default_caps(tmp_path):
    path = make_zeke(tmp_path / "memory.db", "384", extra_per_scope={"persona:zeke": 4995})

    async def go():
        async with await opened(path) as reader:
            return await reader.eviction_preview(ZEKE_NOW)

    preview = run(go())
    assert [(NAMES[e.id], e.rule) for e in preview.items] == [
        *((name, "ttl") for name in ZEKE_EXPIRED),
        ("p-coffee", "cap persona: 5000"),
    ]


def test_eviction_ties_break_by_rowid_and_default_ttls_are_a_what_if(zeke):
    old = "2025-01-01T00:00:00.000001"
    for mid in ("zz-first", "aa-second"):  # equal LRU time and created_at: the lower rowid goes first
        write(
            zeke,
            "INSERT INTO memories (id, text, scope, created_at, ttl_seconds) VALUES (?, 'tie', 'task:tie', ?, NULL)",
            (mid, old),
        )

    async def go():
        async with await opened(zeke) as reader:
            caps = await reader.eviction_preview(ZEKE_NOW, scope_caps={"task": 4})
            what_if = await reader.eviction_preview(ZEKE_NOW, default_ttls={"task": 90 * 86400})
            with pytest.raises(InvalidInputError):
                await reader.eviction_preview(ZEKE_NOW, scope_caps={"task": -1})
            with pytest.raises(InvalidInputError):
                await reader.eviction_preview(ZEKE_NOW, max_rows=3)
            return caps, what_if

    caps, what_if = run(go())
    # task left after TTL: t-invoice, t-lunch, t-passport, zz-first, aa-second → one beyond the cap of 4
    assert [(names([e.id])[0], e.rule) for e in caps.items][6:] == [("zz-first", "cap task: 4")]
    # NULL ttl_seconds never expires in ZEKE (defaults are applied when storing); default_ttls asks "what if"
    assert [e.id for e in caps.items if e.rule.endswith("ttl")] == [ZEKE_IDS[n] for n in ZEKE_EXPIRED]
    assert [(names([e.id])[0], e.rule) for e in what_if.items][6:] == [
        ("zz-first", "default ttl task:"),
        ("aa-second", "default ttl task:"),
    ]
