from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.formats.fixtures import make_oxydra_agent
from tests.remote_server import TursoServer, fill_oxydra


@pytest.fixture(scope="module")
def oxydra_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local Oxydra memory whose rows the server gets (the agent's schema, before its libSQL index)."""
    return make_oxydra_agent(tmp_path_factory.mktemp("oxydra") / "oxydra.db")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TursoServer]:
    """An empty tursodb server of this test's own, stopped by pid afterwards."""
    s = TursoServer(tmp_path)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def oxydra_server(server: TursoServer, oxydra_file: Path) -> TursoServer:
    """The server holding the Oxydra memory of ``oxydra_file``."""
    fill_oxydra(server, oxydra_file)
    return server


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"
