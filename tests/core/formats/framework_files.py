"""What the tests of the frameworks' files share: a read through oxmem, another program's writes, a file's digest."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from oxmem_gui.core.api import open_memory


def read(path: Path, fn: Callable[[Any], Awaitable[Any]]) -> Any:
    """``fn(memory)`` on the file opened read-only, as the inspector opens it."""

    async def go() -> Any:
        async with await open_memory(path, embedding="deterministic") as memory:
            return await fn(memory)

    return asyncio.run(go())


def another_program(path: Path, *statements: str | tuple[str, tuple[Any, ...]]) -> None:
    """``statements`` (SQL, or SQL and its arguments) run and committed by another program: sqlite3, whose
    connections leave foreign keys off, as every program but the framework's own may."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        for statement in statements:
            sql, args = (statement, ()) if isinstance(statement, str) else statement
            conn.execute(sql, args)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def searched_from_every_door(path: Path, session: str, word: str) -> None:
    """The command line's searches of ``session`` and of every session, each as text and as JSON, and the
    inspector's line of the legs: each finds ``word`` (it crashed on the keyword searches of Agno, LangGraph's
    checkpoints and the OpenAI Agents SDK, whose legs have no raw range)."""
    import io
    import json

    from oxmem_gui.cli import main
    from oxmem_gui.ui.search.state import legs_line

    for scope in ([session], ["--all"]):
        for form in ([], ["--json"]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["--db", str(path), "search", *scope, word, *form])
            assert code == 0 and word.casefold() in out.getvalue().casefold(), (scope, form, err.getvalue())
            if form:
                assert json.loads(out.getvalue())["hits"]
    result = read(path, lambda m: m.search("oxmem-keywords", session, word, 5))
    assert result.hits and "FTS: " in legs_line(result)
