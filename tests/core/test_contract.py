"""The typed contract (core/contract.py, through core/api.py): every memory open_memory returns answers it, each
of a format's retrievers has a registered ranking, and mypy holds every implementation to it."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oxmem_gui.core import api
from oxmem_gui.core.formats.base import ForeignReader
from tests.core.formats import fixtures

ROOT = Path(__file__).resolve().parents[2]

FORMATS = {
    "omega.db": ("omega", "OmegaReader"),
    "zeke.db": ("zeke", "ZekeReader"),
    "aidaemon.db": ("aidaemon", "AidaemonReader"),
    "aidaemon-legacy.db": ("aidaemon-legacy", "AidaemonReader"),
    "unknown.db": ("sqlite-unknown", "ForeignReader"),
    "oxydra.db": ("oxydra", "MemoryStore"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    fixtures.make_omega(folder / "omega.db")
    fixtures.make_zeke(folder / "zeke.db")
    fixtures.make_aidaemon(folder / "aidaemon.db")
    fixtures.make_aidaemon(folder / "aidaemon-legacy.db", "legacy")
    fixtures.make_unknown_sqlite(folder / "unknown.db")
    fixtures.make_oxydra(folder / "oxydra.db")
    return folder


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_memory_answers_the_contract(files, name):
    async def go():
        async with await api.open_memory(files / name, embedding="deterministic") as memory:
            return (
                memory.format,
                type(memory).__name__,
                [
                    isinstance(memory, p)
                    for p in (api.MemoryReader, api.NotesEditor, api.SessionsEditor, api.EventsEditor)
                ],
                isinstance(memory.schedules, api.ScheduleReader),
                [r.name for r in memory.retrievers()],
                sorted(getattr(type(memory), "RANKINGS", {})),
            )

    fmt, cls, protocols, schedules, retrievers, rankings = asyncio.run(go())
    assert (fmt, cls) == FORMATS[name]
    assert protocols == [True, True, True, True] and schedules
    if cls != "MemoryStore":  # a reader runs exactly the rankings it lists
        assert rankings == sorted(retrievers)


def test_rankings_are_registered_per_class_and_inherited():
    from oxmem_gui.core.formats.aidaemon import AidaemonReader
    from oxmem_gui.core.formats.omega import OmegaReader
    from oxmem_gui.core.formats.zeke import ZekeReader

    assert ForeignReader.RANKINGS == {}
    assert {c.__name__: sorted(c.RANKINGS) for c in (OmegaReader, ZekeReader, AidaemonReader)} == {
        "OmegaReader": ["omega-recall"],
        "ZekeReader": ["zeke"],
        "AidaemonReader": ["aidaemon"],
    }

    class Child(ZekeReader):
        @api_ranking("zeke-strict")
        def _strict(self, conn, scope, query, top_k, **options):
            raise AssertionError

    assert sorted(Child.RANKINGS) == ["zeke", "zeke-strict"] and sorted(ZekeReader.RANKINGS) == ["zeke"]


def api_ranking(name):
    from oxmem_gui.core.formats.base import ranking

    return ranking(name)


@pytest.mark.skipif(shutil.which("mypy", path=str(Path(sys.executable).parent)) is None, reason="mypy not installed")
def test_the_type_checker_holds_every_memory_to_the_contract(tmp_path):
    """mypy (configured in pyproject.toml) passes, and fails when a reader drifts from the contract."""
    mypy = str(Path(sys.executable).parent / "mypy")
    ok = subprocess.run([mypy, "--cache-dir", str(tmp_path / "cache")], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    drift = tmp_path / "drift.py"
    drift.write_text(
        "from oxmem_gui.core.contract import Memory\n"
        "from oxmem_gui.core.formats.zeke import ZekeReader\n\n\n"
        "class Drifted(ZekeReader):\n"
        "    async def get_note(self, user: str) -> None:  # type: ignore[override]\n"
        "        return None\n\n\n"
        "def conforms(memory: Drifted) -> Memory:\n"
        "    return memory\n"
    )
    bad = subprocess.run(
        [mypy, "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent", str(drift)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and 'got "Drifted", expected "Memory"' in bad.stdout, bad.stdout


@pytest.mark.parametrize("name", ["oxydra.db", "omega.db"])
def test_a_format_that_deletes_no_turn_gives_the_one_event_and_refuses(files, name):
    async def go():
        async with await api.open_memory(files / name, embedding="deterministic", read_only=False) as memory:
            session = (await memory.sessions_page(limit=1))[0].session_id
            event = (await memory.events_page(session, None, 1))[0]
            turn = await memory.turn(session, event.sequence)
            with pytest.raises(api.ReadOnlyError, match="nothing was changed"):
                await memory.delete_turn(session, event.sequence, expected=turn)
            with pytest.raises(api.NotFoundError):
                await memory.turn(session, 10**9)
            return turn == [event], memory.capabilities.refusal("turns")

    same, refusal = asyncio.run(go())
    assert same and refusal
