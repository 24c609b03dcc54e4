"""Fixtures of the format tests: aidaemon's files built from its own schema strings (``fixtures.make_aidaemon``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.formats import fixtures as fx


@pytest.fixture
def current(tmp_path: Path) -> Path:
    return fx.make_aidaemon(tmp_path / "aidaemon.db")


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    return fx.make_aidaemon(tmp_path / "legacy.db", "legacy")
