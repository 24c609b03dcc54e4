"""Access to the semantic model for tests: present in CI (``./run test`` installs it), maybe not elsewhere."""

import os

import pytest

from oxmem_gui.core.embeddings.model_files import locate_model


def model_dir_or_skip():
    location = locate_model()
    if location.path is None:
        if os.environ.get("OXMEM_REQUIRE_MODEL"):
            pytest.fail(f"the semantic model is required here: {location.reason}")
        pytest.skip(location.reason)
    return location.path
