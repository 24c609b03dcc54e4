import pytest


@pytest.fixture(autouse=True)
def deterministic_by_default(monkeypatch):
    """CLI tests check exact numbers with the dependency-free backend unless they ask for another."""
    monkeypatch.setenv("OXMEM_EMBEDDING", "deterministic")


@pytest.fixture
def db(tmp_path):
    """The path of a store that does not exist yet."""
    return str(tmp_path / "memory.db")
