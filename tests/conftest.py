"""Shared fixtures: a temporary store driven synchronously through the async API."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Sequence

import numpy as np
import pytest

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.memory_store import ScheduleStore

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: the slow groups, by where their tests are (a path, or a path and test name): ``pytest -m "not slow"`` is the fast
#: set a developer runs while working; CI and ``./run test`` run everything
SLOW_GROUPS = {
    "crash": ("tests/core/test_crash.py",),
    "packaging": (
        "tests/test_packaging.py::test_wheel_runs_from_outside_the_checkout",
        "tests/test_packaging.py::test_wheel_without_extras_is_the_library_and_the_command_line_without_qt",
        "tests/test_packaging.py::test_pyinstaller_app_starts_and_draws_the_demo",
        "tests/test_system_libs.py",
    ),
    "server": ("tests/core/remote/", "tests/cli/test_remote.py", "tests/ui/test_remote_dialog.py"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--order",
        default="given",
        help="the order the tests run in: given (the files' order), reversed, or shuffled:SEED (any integer) — "
        "no test may depend on it (docs/reliability.md)",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    order = config.getoption("--order")
    return None if order == "given" else f"tests run in {order} order"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: in one of the slow groups (crash, packaging, server)")
    config.addinivalue_line("markers", "crash: kills a real process mid-write, many times over")
    config.addinivalue_line("markers", "packaging: builds a wheel or the desktop app, or runs the install scripts")
    config.addinivalue_line("markers", "server: talks to the real libSQL server (tursodb)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = item.nodeid
        for group, places in SLOW_GROUPS.items():
            if any(where.startswith(place) for place in places):
                item.add_marker(group)
                item.add_marker("slow")
    order = config.getoption("--order")
    if order == "reversed":
        items.reverse()
    elif order.startswith("shuffled:") and order[9:].lstrip("-").isdigit():
        random.Random(int(order[9:])).shuffle(items)
    elif order != "given":
        raise pytest.UsageError(f"--order {order!r}: given, reversed or shuffled:SEED (an integer)")


@pytest.fixture(autouse=True, scope="session")
def logs_in_tmp(tmp_path_factory):
    """The programs' log file, settings, backups and kept caches go to the test run's folder, never the user's."""
    folder = tmp_path_factory.mktemp("log")
    os.environ["OXMEM_LOG_DIR"] = str(folder)
    os.environ["OXMEM_CONFIG_DIR"] = str(tmp_path_factory.mktemp("config"))  # the default rankings chosen
    os.environ["OXMEM_BACKUP_DIR"] = str(tmp_path_factory.mktemp("backups"))  # what the command line's edits back up
    os.environ["OXMEM_CACHE_DIR"] = str(tmp_path_factory.mktemp("caches"))  # the search caches kept between opens
    # the rest of the cache folder (reads' notes, query vectors, libSQL deletions), for every process a test starts
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    return folder


class SyncStore:
    """Calls the async :class:`MemoryStore` methods to completion on a private event loop."""

    def __init__(self, store: MemoryStore, loop: asyncio.AbstractEventLoop) -> None:
        self.inner = store
        self.loop = loop

    def __getattr__(self, name: str):
        attr = getattr(self.inner, name)
        if isinstance(attr, ScheduleStore):  # store.schedules.create(...) is synchronous too
            return SyncStore(attr, self.loop)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            result = attr(*args, **kwargs)
            return self.loop.run_until_complete(result) if asyncio.iscoroutine(result) else result

        return call

    def sql(self, query: str, args: Sequence = ()) -> list[tuple]:
        """Run a read query on the store's own connection (on its worker thread)."""
        return self.inner._db.call(lambda conn: conn.execute(query, args).fetchall())

    def exec_sql(self, statement: str, args: Sequence = ()) -> None:
        """Write with plain SQL, as another program would (bypassing the core's pipeline)."""
        self.inner._db.call(lambda conn: conn.execute(statement, args))


class TableEmbedding:
    """A test backend whose vectors are chosen by hand, so cosine scores can be derived on paper."""

    def __init__(self, table: dict[str, Sequence[float]], default: Sequence[float], model_name: str = "table-3d"):
        self.model_name = model_name
        self.table = table
        self.default = default
        self.dimensions = len(default)

    def embed(self, texts):
        return np.array([self.table.get(t, self.default) for t in texts], dtype=np.float32)


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def open_sync(loop, path, **kwargs) -> SyncStore:
    kwargs.setdefault("embedding", "deterministic")
    return SyncStore(loop.run_until_complete(MemoryStore.open(path, **kwargs)), loop)


@pytest.fixture
def store(tmp_path, loop):
    s = open_sync(loop, tmp_path / "memory.db")
    yield s
    s.aclose()


def user(text: str) -> dict:
    return {"role": "user", "content": text}
