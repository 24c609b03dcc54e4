"""What the tests of the embeddings share: an empty hub cache as the only place a model is looked for."""

from __future__ import annotations

import pytest

from oxmem_gui.core.embeddings import local_models


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub cache as the only place looked in (no model of this machine's is ever used)."""
    folder = tmp_path / "hub"
    folder.mkdir()
    for name in ("HF_HOME", "FASTEMBED_CACHE_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()  # the temporary folder (an ONNX model is loaded from a private copy there)
    monkeypatch.setattr(local_models.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path)
    local_models.set_model_paths({})
    yield folder
    local_models.set_model_paths({})
