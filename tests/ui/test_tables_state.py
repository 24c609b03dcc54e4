"""The Tables panel's state without Qt (ui/tables_state.py): the tables, the chosen one's rows a page at a time,
the title; a page asked for before another choice is never shown; a refresh keeps what was loaded."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from oxmem_gui.core.api import open_memory
from oxmem_gui.ui.tables_state import NO_TABLE, NO_TABLES, TablesState, table_label


@pytest.fixture
def big(tmp_path):
    """An unknown SQLite file: ``big`` with 450 rows, ``small`` with 1, and a view."""
    import sqlite3

    path = tmp_path / "any.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE big (n INTEGER, word TEXT)")
        conn.executemany("INSERT INTO big VALUES (?, ?)", [(i, f"w{i}") for i in range(450)])
        conn.execute("CREATE TABLE small (x TEXT)")
        conn.execute("INSERT INTO small VALUES ('only')")
        conn.execute("CREATE VIEW evens AS SELECT n FROM big WHERE n % 2 = 0")
    return path


def run(path, steps):
    async def go():
        async with await open_memory(path) as memory:
            seen: list[str] = []
            state = TablesState(changed=seen.append)
            return await steps(memory, state, seen), state

    return asyncio.run(go())


def test_the_first_table_is_chosen_and_read_a_page_at_a_time(big):
    async def steps(memory, state, seen):
        await state.reload(memory)
        first = (state.current, len(state.rows), state.more, state.title)
        await state.load_more(memory)
        await state.load_more(memory)
        after = (len(state.rows), state.more, state.title, state.rows[-1])
        await state.load_more(memory)  # nothing more: nothing read
        return first, after, list(seen)

    (first, after, seen), state = run(big, steps)
    assert [table_label(t) for t in state.tables] == [
        "big  (table, 450 rows)",
        "evens  (view, 225 rows)",
        "small  (table, 1 row)",
    ]
    assert first == ("big", 200, True, "big: rows 1–200 (more to load)")
    assert after == (450, False, "big: rows 1–450", (449, "w449"))
    assert seen == ["tables", "rows", "rows", "rows", "rows"]  # loading…, then each page
    assert state.columns == ["n", "word"]


@pytest.mark.parametrize(
    "module", ["oxmem_gui.ui.tables_state", "oxmem_gui.ui.notes.state", "oxmem_gui.ui.search.state"]
)
def test_the_panels_states_import_no_qt(module):
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_a_page_asked_for_before_another_choice_is_dropped(big):
    async def steps(memory, state, seen):
        await state.reload(memory)
        await asyncio.gather(state.choose(memory, "small"), state.choose(memory, "evens"))
        return state.current, state.rows[:2], state.title

    (current, rows, title), _ = run(big, steps)
    assert (current, rows, title) == ("evens", [(0,), (2,)], "evens: rows 1–200 (more to load)")


def test_a_refresh_keeps_the_table_and_the_rows_loaded(big):
    async def steps(memory, state, seen):
        await state.reload(memory)
        await state.choose(memory, "big")
        await state.load_more(memory)
        seen.clear()
        await state.reload(memory, keep=True)
        kept = (state.current, len(state.rows), list(seen))
        await state.reload(memory, keep=False)
        return kept, (state.current, len(state.rows))

    (kept, fresh), _ = run(big, steps)
    assert kept == ("big", 400, ["tables", "kept"])
    assert fresh == ("big", 200)


def test_filtering_names_and_choosing_no_table(big):
    async def steps(memory, state, seen):
        await state.reload(memory)
        names = (state.names("B"), state.names("  EV "), state.names("zzz"))
        await state.choose(memory, None)
        return names, (state.current, state.rows, state.more, state.title)

    (names, none), _ = run(big, steps)
    assert names == (["big"], ["evens"], [])
    assert none == (None, [], False, NO_TABLE)


def test_a_file_without_tables_says_so(tmp_path):
    import sqlite3

    path = tmp_path / "bare.sqlite"
    sqlite3.connect(path).execute("PRAGMA user_version = 1").connection.commit()

    async def steps(memory, state, seen):
        await state.reload(memory)
        return state.current, state.title, list(seen)

    assert run(path, steps)[0] == (None, NO_TABLES, ["tables", "rows"])
