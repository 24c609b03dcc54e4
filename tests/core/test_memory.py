"""Opening any file (core/memory.py): the reader open_memory returns by what the file holds, read-only unless asked,
missing, empty and non-SQLite files, ``detect``/``inspect_database``, and the default ranking chosen per file."""

from __future__ import annotations

import asyncio
import json

import pytest

from oxmem_gui.core.errors import InvalidInputError, ReadOnlyError, StoreOpenError
from oxmem_gui.core.formats.aidaemon import AidaemonReader
from oxmem_gui.core.formats.base import ForeignReader
from oxmem_gui.core.formats.omega import OmegaReader
from oxmem_gui.core.formats.zeke import ZekeReader
from oxmem_gui.core.memory import (
    choose_ranking,
    default_ranking,
    default_search,
    detect,
    inspect_database,
    open_memory,
)
from oxmem_gui.core.memory_store import MemoryStore
from tests.core.formats import fixtures as fx

MISSING_TABLES = "missing tables: sessions, conversation_events, session_state, chunks, chunks_vec, chunks_fts"


@pytest.fixture(autouse=True)
def config_in_tmp(tmp_path, monkeypatch):
    """The rankings chosen go to the test's own configuration folder."""
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config" / "rankings.json"


async def _opened(path, **options):
    """``(reader class, format, read_only)`` of ``path`` opened with ``options``, closed again."""
    async with await open_memory(path, embedding="deterministic", **options) as memory:
        return type(memory), memory.format, memory.read_only


def _new_store(path):
    asyncio.run(_opened(path, read_only=False))
    return path


def test_the_reader_is_chosen_by_what_the_file_holds_never_its_name(tmp_path):
    cases = [
        (fx.make_zeke, "memory.db", ZekeReader, "zeke"),
        (fx.make_omega, "zeke.db", OmegaReader, "omega"),
        (fx.make_aidaemon, "omega.sqlite", AidaemonReader, "aidaemon"),
        (fx.make_unknown_sqlite, "memory.db", ForeignReader, "sqlite-unknown"),
        (_new_store, "notes.txt", MemoryStore, "oxmem"),
    ]
    for i, (make, name, reader, fmt) in enumerate(cases):
        path = make(tmp_path / str(i) / name)
        assert asyncio.run(_opened(path)) == (reader, fmt, True), name
        assert asyncio.run(detect(path)) == fmt


def test_a_file_opens_read_only_unless_asked(tmp_path):
    path = _new_store(tmp_path / "m.db")

    async def write_by_default():
        async with await open_memory(path, embedding="deterministic") as memory:
            await memory.save_note("alice", "hello")

    with pytest.raises(ReadOnlyError) as refused:
        asyncio.run(write_by_default())
    assert str(refused.value) == f"{path} is open read-only; enable editing to change it"
    assert asyncio.run(_opened(path, read_only=False)) == (MemoryStore, "oxmem", False)


def test_a_missing_file_becomes_a_store_only_when_opened_to_write_with_create(tmp_path):
    absent = tmp_path / "absent.db"
    for options in ({}, {"read_only": False, "create": False}):
        with pytest.raises(StoreOpenError) as missing:
            asyncio.run(_opened(absent, **options))
        assert str(missing.value) == f"{absent} does not exist"
    assert list(tmp_path.iterdir()) == []
    assert asyncio.run(_opened(absent, read_only=False)) == (MemoryStore, "oxmem", False)
    assert [p.name for p in tmp_path.iterdir()] == ["absent.db"]


def test_an_empty_file_is_no_store_until_created_and_a_text_file_never_is(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(StoreOpenError) as read:
        asyncio.run(_opened(empty))
    assert str(read.value) == f"{empty} is not a memory store ({MISSING_TABLES})"
    with pytest.raises(StoreOpenError) as not_created:
        asyncio.run(_opened(empty, read_only=False, create=False))
    assert str(not_created.value) == f"{empty} is empty, not a memory store (`oxmem init` makes it one)"
    assert empty.stat().st_size == 0
    assert asyncio.run(_opened(empty, read_only=False)) == (MemoryStore, "oxmem", False)

    text = fx.make_not_sqlite(tmp_path / "memory.db")
    before = text.read_bytes()
    with pytest.raises(StoreOpenError) as not_sqlite:
        asyncio.run(_opened(text, read_only=False))
    assert str(not_sqlite.value) == f"{text} is not a SQLite database"
    assert text.read_bytes() == before


def test_inspect_database_describes_what_it_cannot_open_without_opening_it(tmp_path):
    empty = fx.make_empty(tmp_path / "empty.db")
    text = fx.make_not_sqlite(tmp_path / "notes.db")
    got = {
        p.name: (i.format, i.label, i.size_bytes, i.markers, i.tables)
        for p in (empty, text)
        for i in [asyncio.run(inspect_database(p))]
    }
    assert got == {
        "empty.db": (
            "sqlite-unknown",
            "SQLite database",
            0,
            ["an empty file: SQLite reads it as a database without tables (`oxmem init` makes it a store)"],
            [],
        ),
        "notes.db": (
            "not-sqlite",
            "not a SQLite database",
            text.stat().st_size,
            ["its first bytes are not SQLite's header: nothing to open"],
            [],
        ),
    }
    assert (asyncio.run(detect(empty)), asyncio.run(detect(text))) == ("sqlite-unknown", "not-sqlite")
    with pytest.raises(StoreOpenError) as absent:
        asyncio.run(inspect_database(tmp_path / "absent.db"))
    assert str(absent.value) == f"{tmp_path / 'absent.db'} does not exist"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db", "notes.db"]
    assert empty.stat().st_size == 0


def test_another_agents_file_defaults_to_its_own_ranking_or_says_it_has_none(tmp_path):
    async def default(path):
        async with await open_memory(path, embedding="deterministic") as memory:
            try:
                ranking, why, tuning = await default_search(memory, "any-session")
            except InvalidInputError as exc:
                return str(exc)
            assert (ranking, why) == await default_ranking(memory, "any-session")
            return ranking.name, why, tuning

    assert asyncio.run(default(fx.make_omega(tmp_path / "omega.db"))) == ("omega-recall", "built-in", {})
    assert asyncio.run(default(fx.make_aidaemon(tmp_path / "aidaemon.db"))) == ("aidaemon", "built-in", {})
    assert asyncio.run(default(fx.make_zeke(tmp_path / "zeke.db"))) == (
        "zeke.db (ZEKE memory) has no search over sessions"
    )
    assert asyncio.run(default(fx.make_unknown_sqlite(tmp_path / "recipes.db"))) == (
        "recipes.db (SQLite database) has no search over sessions"
    )


def test_tuning_is_chosen_only_with_a_tunable_ranking_and_only_when_valid(tmp_path, config_in_tmp):
    path = _new_store(tmp_path / "m.db")

    async def choose(*args):
        async with await open_memory(path, embedding="deterministic") as memory:
            try:
                await choose_ranking(memory, *args)
            except InvalidInputError as exc:
                return str(exc)
            found = [await default_search(memory, s) for s in ("chat", "other")]
            return [(r.name, why, tuning) for r, why, tuning in found]

    phrase = {"vector_weight": 0.25, "fts_mode": "phrase"}
    assert asyncio.run(choose("oxydra", "chat", phrase)) == (
        "ranking 'oxydra' is fixed: it is chosen without weights or mode"
    )
    assert asyncio.run(choose("oxmem", "chat", {"vector_weight": 1.5, "fts_mode": "terms"})) == (
        "tuning {'vector_weight': 1.5, 'fts_mode': 'terms'} is not a vector weight in [0, 1] and an FTS mode "
        "(terms, phrase)"
    )
    assert not config_in_tmp.exists()  # a refused choice saves nothing
    assert asyncio.run(choose("oxmem", "chat", phrase)) == [
        ("oxmem", "session", phrase),
        ("tuned", "built-in", {}),
    ]
    assert json.loads(config_in_tmp.read_text()) == {str(path.resolve()): {"chat": {"ranking": "oxmem", **phrase}}}
