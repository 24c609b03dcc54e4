"""The user's folders (core/folders.py): the platform's, unless an environment variable names another; none is
created by asking where it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxmem_gui.core import folders


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder of the test's own, XDG variables pointing nowhere else, and no oxmem variable set."""
    for name in ("OXMEM_DB", "OXMEM_BACKUP_DIR", "OXMEM_MODEL_DIR", "OXMEM_CONFIG_DIR", "OXMEM_LOG_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_the_platforms_folders_by_default(home):
    assert folders.data_dir() == home / ".local/share/oxmem"
    assert folders.cache_dir() == home / ".cache/oxmem"
    assert folders.config_dir() == home / ".config/oxmem"
    assert folders.log_dir() == home / ".local/state/oxmem/log"
    assert folders.default_db_path() == home / ".local/share/oxmem/memory.db"
    assert folders.backups_dir() == home / ".local/share/oxmem/backups"
    assert folders.model_dir() == home / ".local/share/oxmem/models/all-MiniLM-L6-v2"
    assert list(home.iterdir()) == []  # asking creates nothing


def test_each_variable_names_its_own_folder_with_a_tilde_expanded(home, monkeypatch):
    monkeypatch.setenv("OXMEM_DB", "~/agents/memory.db")
    monkeypatch.setenv("OXMEM_BACKUP_DIR", "/srv/backups")
    monkeypatch.setenv("OXMEM_MODEL_DIR", "~/models/minilm")
    monkeypatch.setenv("OXMEM_CONFIG_DIR", "/etc/oxmem")
    monkeypatch.setenv("OXMEM_LOG_DIR", "~/logs")
    assert folders.default_db_path() == home / "agents/memory.db"
    assert folders.backups_dir() == Path("/srv/backups")
    assert folders.model_dir() == home / "models/minilm"
    assert folders.config_dir() == Path("/etc/oxmem")
    assert folders.log_dir() == home / "logs"
    assert folders.data_dir() == home / ".local/share/oxmem"  # the others stay where they were


def test_an_empty_variable_is_as_if_unset(home, monkeypatch):
    monkeypatch.setenv("OXMEM_DB", "")
    monkeypatch.setenv("OXMEM_LOG_DIR", "")
    assert folders.default_db_path() == home / ".local/share/oxmem/memory.db"
    assert folders.log_dir() == home / ".local/state/oxmem/log"
