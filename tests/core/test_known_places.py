"""The agents' memory files at their usual places: found where each agent keeps it, said what each is (an
encrypted, a non-SQLite, an empty file too), and looked at without changing a byte or leaving a file beside it."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from oxmem_gui.core.known_places import Found, find_known, human_size, known_places, probe
from tests.core.formats import fixtures as fx


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A home folder and a working directory of their own; no oxmem store, no $MEMORY_DB or $MEM0_DIR."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for name in ("OXMEM_DB", "MEMORY_DB", "MEM0_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(cwd)
    return home, cwd


def state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its sha256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def test_nothing_found_when_no_agent_left_a_file(machine):
    home, cwd = machine
    assert find_known() == []
    assert {
        str(p.relative_to(home.parent)) for p in (pl.path for pl in known_places()) if home.parent in p.parents
    } >= {
        "work/.oxydra/memory.db",
        "home/.omega/data/memory.db",
        "home/.omega/memory.db",
        "work/data/memory.db",
        "work/aidaemon.db",
        "home/.aidaemon/aidaemon.db",
        "home/.mem0/history.db",
        "home/.local/share/oxmem/memory.db",
    }
    assert state(home.parent) == {}  # looking made no file and no folder
    assert sorted(p.name for p in home.parent.rglob("*")) == ["home", "work"]


def test_each_agents_file_is_found_at_its_place_and_said_what_it_is(machine, monkeypatch):
    home, cwd = machine
    fx.make_omega(home / ".omega" / "data" / "memory.db")
    fx.make_zeke(cwd / "data" / "memory.db")
    fx.make_oxydra(cwd / ".oxydra" / "memory.db")
    fx.make_not_sqlite(cwd / "aidaemon.db")
    fx.make_empty(home / ".mem0" / "history.db")
    (home / ".omega" / "memory.db").mkdir()  # a folder where a file was expected: not listed
    found = find_known()
    assert [(f.agent, f.path, f.format, f.what) for f in found] == [
        ("Oxydra", cwd / ".oxydra" / "memory.db", "oxydra", "Oxydra memory"),
        ("Omega", home / ".omega" / "data" / "memory.db", "omega", "Omega memory"),
        ("ZEKE", cwd / "data" / "memory.db", "zeke", "ZEKE memory"),
        ("aidaemon", cwd / "aidaemon.db", "not-sqlite", "not a SQLite file"),
        ("mem0", home / ".mem0" / "history.db", "empty", "an empty file"),
    ]
    omega = found[1]
    assert (
        omega.size_bytes == omega.path.stat().st_size
        and omega.summary == f"Omega memory, {human_size(omega.size_bytes)}"
    )
    assert omega.where == "~/.omega/data/memory.db"


def test_the_environment_names_zekes_file_and_oxmems_own_store(machine, monkeypatch, tmp_path):
    home, _ = machine
    zeke = fx.make_zeke(tmp_path / "elsewhere" / "zeke.db")
    ours = tmp_path / "ours.db"
    sqlite3.connect(ours).execute("CREATE TABLE t (x)").connection.close()
    monkeypatch.setenv("MEMORY_DB", str(zeke))
    monkeypatch.setenv("OXMEM_DB", str(ours))
    found = find_known()
    assert [(f.agent, f.where, f.format) for f in found] == [
        ("ZEKE", "$MEMORY_DB", "zeke"),
        ("oxmem", "oxmem's own store", "sqlite-unknown"),
    ]
    monkeypatch.setenv("OXMEM_DB", str(zeke))  # one file reached from two places is listed once
    assert [f.agent for f in find_known()] == ["ZEKE"]


def test_an_encrypted_file_is_listed_as_needing_a_key(machine):
    pytest.importorskip("sqlcipher3")
    _, cwd = machine
    fx.make_encrypted_aidaemon(cwd / "aidaemon.db")
    assert [(f.agent, f.format, f.what) for f in find_known()] == [("aidaemon", "encrypted", "encrypted (needs a key)")]


def test_looking_changes_no_byte_and_leaves_no_file_beside_it(machine):
    """A WAL file no program has open, and one an agent has open (its -wal and -shm beside it): the probe reads
    both as they are — same bytes, same files in the folder."""
    home, cwd = machine
    resting = fx.make_omega(home / ".omega" / "data" / "memory.db")
    busy = fx.make_zeke(cwd / "data" / "memory.db")
    agent = sqlite3.connect(busy, isolation_level=None)
    agent.execute("PRAGMA journal_mode = WAL")
    agent.execute("UPDATE memories SET text = text || '.' WHERE rowid = 1")  # pending in the -wal
    try:
        before = state(home.parent)
        assert "work/data/memory.db-wal" in before and "home/.omega/data/memory.db-wal" not in before
        found = find_known()
        assert [f.format for f in found] == ["omega", "zeke"]
        assert [probe(resting), probe(busy)] == [("omega", "Omega memory"), ("zeke", "ZEKE memory")]
        assert state(home.parent) == before
    finally:
        agent.close()


def test_sizes_read_plainly():
    assert [human_size(n) for n in (0, 1, 1023, 1024, 49_152, 3_355_443, 1_610_612_736)] == [
        "0 bytes",
        "1 byte",
        "1023 bytes",
        "1.0 KB",
        "48 KB",
        "3.2 MB",
        "1.5 GB",
    ]
    assert Found("Omega", Path("m.db"), "~", "omega", "Omega memory", 2048).summary == "Omega memory, 2.0 KB"
