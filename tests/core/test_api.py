"""The facade the front ends import (core/api.py): exactly the names of ``__all__``, each the very object of the module
that defines it, no Qt loaded with it, and a few of its re-exported contracts as a front end uses them."""

from __future__ import annotations

import ast
import asyncio
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from oxmem_gui.core import api


def _imports() -> list[tuple[str, str, str]]:
    """``(module, name, exported as)`` of every ``from .x import name [as alias]`` in api.py."""
    found = []
    for node in ast.parse(Path(api.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            module = "oxmem_gui.core" + ("." + node.module if node.module else "")
            found += [(module, a.name, a.asname or a.name) for a in node.names]
    return found


def test_a_star_import_gives_exactly_the_names_of_all():
    namespace: dict = {}
    exec("from oxmem_gui.core.api import *", namespace)  # noqa: S102 - the import a front end may write
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(api.__all__)
    assert len(api.__all__) == len(set(api.__all__))  # no name twice


def test_every_export_is_the_defining_modules_own_object_and_nothing_else_is_imported():
    imported = _imports()
    assert sorted(alias for _, _, alias in imported) == sorted(api.__all__)
    for module, name, alias in imported:
        assert getattr(api, alias) is getattr(importlib.import_module(module), name), alias
    renamed = {alias: (module.rsplit(".", 1)[1], name) for module, name, alias in imported if alias != name}
    assert renamed == {
        "TABLE_MAX_PAGE": ("table_browser", "MAX_PAGE"),
        "SEARCH_DEFAULTS": ("options", "DEFAULTS"),
        "BROWSE_PAGE": ("browse", "PAGE"),
        "SQL_LIMIT": ("sql_console", "DEFAULT_LIMIT"),
        "SQL_SECONDS": ("sql_console", "DEFAULT_SECONDS"),
    }


def test_importing_the_facade_loads_no_qt_and_no_front_end():
    code = (
        "import sys, oxmem_gui.core.api\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync')"
        " or m.startswith(('oxmem_gui.ui', 'oxmem_gui.cli', 'oxmem_gui.app'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


def test_a_new_store_opened_through_the_facade_is_described_and_is_not_remote(tmp_path):
    path = tmp_path / "m.db"

    async def go():
        async with await api.open_memory(path, read_only=False, embedding="deterministic") as memory:
            info = await api.describe_memory(memory)
            with pytest.raises(api.InvalidInputError) as refused:
                await api.refresh_remote(memory)
            return type(memory), memory.format, memory.read_only, info.format, info.path, str(refused.value)

    kind, fmt, read_only, info_format, info_path, refusal = asyncio.run(go())
    assert (kind, fmt, read_only) == (api.MemoryStore, "oxmem", False)
    assert fmt in api.NATIVE_FORMATS and (info_format, info_path) == ("oxmem", str(path))
    assert refusal == "m.db is not a snapshot of a remote database"


def test_the_facades_errors_catch_what_opening_and_writing_raise(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just words " * 10)
    with pytest.raises(api.StoreOpenError) as not_sqlite:
        asyncio.run(api.open_memory(text, embedding="deterministic"))
    assert str(not_sqlite.value) == f"{text} is not a SQLite database"

    async def write_read_only():
        async with await api.open_memory(tmp_path / "m.db", read_only=False, embedding="deterministic"):
            pass
        async with await api.open_memory(tmp_path / "m.db", embedding="deterministic") as memory:
            await memory.save_note("alice", "hello")

    with pytest.raises(api.ReadOnlyError) as read_only:
        asyncio.run(write_read_only())
    assert str(read_only.value) == f"{tmp_path / 'm.db'} is open read-only; enable editing to change it"
    assert all(issubclass(e, api.OxmemError) for e in (api.StoreOpenError, api.ReadOnlyError, api.KeyRequiredError))
