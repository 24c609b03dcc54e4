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
