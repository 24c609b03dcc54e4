import pytest


@pytest.fixture(autouse=True)
def deterministic_by_default(monkeypatch):
    """CLI tests check exact numbers with the dependency-free backend unless they ask for another."""
    monkeypatch.setenv("OXMEM_EMBEDDING", "deterministic")
