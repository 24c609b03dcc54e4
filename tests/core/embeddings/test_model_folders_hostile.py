"""The agents' model folders attacked: bad values, bad files, special files, huge sparse files, a tokenizer the
``tokenizers`` library panics on, a hub snapshot whose files are no longer the cache's links or whose ``refs/main``
points outside it. Each case ends in one line — an :class:`EmbeddingError`, the folder refused, or the model used
and said verified/unverified — never a traceback or a hang, and reading never changes a file of the folder.

Every case that could hang or exhaust memory runs in a child process, with a timeout and a 6 GiB address space.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from oxmem_gui.core.embeddings import local_models
from oxmem_gui.core.embeddings.bert_onnx import read_safetensors
from oxmem_gui.core.embeddings.local_models import Model2VecBackend, OnnxBertBackend, find
from oxmem_gui.core.embeddings.model_files import locate_model, sha256_file
from oxmem_gui.core.errors import EmbeddingError
from tests.core.embeddings.models_on_disk import (
    REVISION,
    fingerprint,
    huge_file,
    make_bert_onnx,
    make_model2vec,
    make_tokenizer_panic,
    to_hub,
)
from tests.semantic import model_dir_or_skip

ROOT = Path(__file__).resolve().parents[3]
M2V = "minishlab/potion-base-8M"
BERT = "oxmem-tests/tiny-bert"
HUB_VERIFIED_M2V = "verified: 5 files match the hub cache's SHA-256/SHA-1 records"
SECONDS = 60

#: the child: find the model, build its backend, embed one text; print what it said as one JSON line
CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    from oxmem_gui.core.embeddings import local_models
    from oxmem_gui.core.errors import EmbeddingError
    spec = json.loads(sys.argv[1])
    local_models.set_model_paths(spec["paths"])
    try:
        vectors = local_models.backend(spec["name"]).embed(["alice prefers the window seats"])
        print(json.dumps({"used": local_models.find(spec["name"]).verified, "shape": list(vectors.shape)}))
    except EmbeddingError as exc:
        print(json.dumps({"said": str(exc)}))
    """
)


def run_child(tmp_path: Path, hub: Path, name: str, paths: dict[str, str]) -> dict[str, object]:
    """The child's answer; a hang, a crash or a traceback fails the test."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "FASTEMBED_CACHE_PATH")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(
        HF_HUB_CACHE=str(hub),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        TMPDIR=str(tmp_path / "tmp"),
        PYTHONPATH=str(ROOT),
        RUST_BACKTRACE="0",
    )
    spec = json.dumps({"name": name, "paths": paths})
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, spec],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading the model folder hung for more than {SECONDS} s")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, (done.returncode, done.stderr)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    return dict(json.loads(lines[0]))


# -- the cases: each builds a folder and says what the one line must be -------------------------------------------

Case = Callable[[Path, Path], tuple[dict[str, str], str, dict[str, object]]]


def _mine(tmp_path: Path) -> Path:
    return make_model2vec(tmp_path / "mine")


def _hidden_dim(raw: str, shown: str) -> Case:
    def case(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
        mine = _mine(tmp_path)
        (mine / "config.json").write_text('{"normalize": true, "hidden_dim": ' + raw + "}", encoding="utf-8")
        said = f"cannot load {M2V} from {mine}: config.json: hidden_dim is {shown}, not a whole number from 1 to 65536"
        return {M2V: str(mine)}, M2V, {"said": said}

    return case


def _hidden_dim_not_the_tables(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _mine(tmp_path)
    (mine / "config.json").write_text('{"normalize": true, "hidden_dim": 8}', encoding="utf-8")
    said = (
        f"cannot load {M2V} from {mine}: config.json gives hidden_dim 8, but the embeddings of model.safetensors "
        "have 16 values each"
    )
    return {M2V: str(mine)}, M2V, {"said": said}


def _weights(content: Callable[[Path], bytes | Path], problem: Callable[[Path], str]) -> Case:
    def case(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
        mine = _mine(tmp_path)
        target = mine / "model.safetensors"
        made = content(tmp_path)
        target.unlink()
        if isinstance(made, Path):
            target.symlink_to(made)
        else:
            target.write_bytes(made)
        return {M2V: str(mine)}, M2V, {"said": f"cannot load {M2V} from {mine}: {problem(tmp_path)}"}

    return case


NOTES = b"the bakery opens at seven; alice prefers the window seats\n" * 4


def _notes(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_bytes(NOTES)
    return tmp_path / "notes.txt"


def _without_embeddings(tmp_path: Path) -> bytes:
    from safetensors.numpy import save

    return save({"vectors": np.zeros((38, 16), dtype=np.float32)})


def _fifo_config(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _mine(tmp_path)
    (mine / "config.json").unlink()
    os.mkfifo(mine / "config.json")
    return {M2V: str(mine)}, M2V, {"said": f"--model-path {M2V}={mine}: config.json is a FIFO, not a regular file"}


def _huge(name: str, said: Callable[[Path], str]) -> Case:
    def case(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
        mine = _mine(tmp_path)
        (mine / name).unlink()
        (mine / name).symlink_to(huge_file(tmp_path / "outside" / "huge"))
        return {M2V: str(mine)}, M2V, {"said": said(mine)}

    return case


def _panicking_tokenizer(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _mine(tmp_path)
    make_tokenizer_panic(mine / "tokenizer.json")
    said = (
        f"cannot load {M2V} from {mine}: tokenizer.json cannot be read by the tokenizers library "
        '(Precompiled: Error("Cannot parse precompiled_charsmap", line: 0, column: 0))'
    )
    return {M2V: str(mine)}, M2V, {"said": said}


def _in_hub(tmp_path: Path, hub: Path) -> Path:
    return to_hub(make_model2vec(tmp_path / "made"), hub, M2V)


def _plain_file_of_changed_weights(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    snap = _in_hub(tmp_path, hub)
    link = snap / "model.safetensors"
    data = bytearray(link.read_bytes())
    data[-1] ^= 0x40  # a changed weight
    link.unlink()
    link.write_bytes(bytes(data))
    said = (
        f"{M2V} found in {hub} but not used: model.safetensors is a plain file, not the hub cache's link to a blob, "
        "so nothing records what it should hold"
    )
    return {}, M2V, {"said": said}


def _refs_outside(absolute: bool) -> Case:
    def case(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
        snap = _in_hub(tmp_path, hub)
        evil = make_model2vec(tmp_path / "evil", seed=7)
        named = str(evil) if absolute else "../../../evil"
        assert (snap.parent / named).resolve() == evil.resolve()
        (snap.parent.parent / "refs" / "main").write_text(named)
        said = f"{M2V} found in {hub} but not used: its refs/main names {json.dumps(named)}, not one of its snapshots"
        return {}, M2V, {"said": said}

    return case


def _link_outside_blobs(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    snap = _in_hub(tmp_path, hub)
    link = snap / "model.safetensors"
    blob = link.resolve()
    elsewhere = tmp_path / "elsewhere" / blob.name  # the right content under the right name, outside the cache
    elsewhere.parent.mkdir()
    shutil.copy(blob, elsewhere)
    link.unlink()
    link.symlink_to(elsewhere)
    said = f"{M2V} found in {hub} but not used: model.safetensors links outside the repository's blobs/ folder"
    return {}, M2V, {"said": said}


def _fifo_blob(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    snap = _in_hub(tmp_path, hub)
    blob = (snap / "config.json").resolve()
    blob.unlink()
    os.mkfifo(blob)
    return {}, M2V, {"said": f"{M2V} found in {hub} but not used: config.json is a FIFO, not a regular file"}


def _huge_blob(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    snap = _in_hub(tmp_path, hub)
    link = snap / "tokenizer.json"
    blob = huge_file(snap.parent.parent / "blobs" / ("f" * 64))
    link.unlink()
    link.symlink_to(os.path.relpath(blob, link.parent))
    said = f"{M2V} found in {hub} but not used: tokenizer.json is 64 GiB, larger than the 64 MiB a tokenizer may be"
    return {}, M2V, {"said": said}


def _bert(tmp_path: Path) -> Path:
    return make_bert_onnx(tmp_path / "bert", model_dir_or_skip())


def _bert_hidden_size(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _bert(tmp_path)
    config = json.loads((mine / "config.json").read_text())
    (mine / "config.json").write_text(json.dumps({**config, "hidden_size": "abc"}))
    said = f'cannot load {BERT} from {mine}: config.json: hidden_size is "abc", not a whole number from 1 to 65536'
    return {BERT: str(mine)}, BERT, {"said": said}


def _bert_fifo_tokenizer(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _bert(tmp_path)
    (mine / "tokenizer.json").unlink()
    os.mkfifo(mine / "tokenizer.json")
    return (
        {BERT: str(mine)},
        BERT,
        {"said": f"cannot load {BERT} from {mine}: tokenizer.json is a FIFO, not a regular file"},
    )


def _bert_huge_onnx(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    mine = _bert(tmp_path)
    (mine / "model.onnx").unlink()
    (mine / "model.onnx").symlink_to(huge_file(tmp_path / "outside" / "huge"))
    said = f"cannot load {BERT} from {mine}: model.onnx is 64 GiB, larger than the 2 GiB a weights file may be"
    return {BERT: str(mine)}, BERT, {"said": said}


def _bert_plain_file_in_hub(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    snap = to_hub(_bert(tmp_path), hub, BERT)
    link = snap / "model.onnx"
    data = link.read_bytes()
    link.unlink()
    link.write_bytes(data)  # the same bytes, but no record of them
    said = (
        f"{BERT} found in {hub} but not used: model.onnx is a plain file, not the hub cache's link to a blob, "
        "so nothing records what it should hold"
    )
    return {}, BERT, {"said": said}


def _sound_hub_model2vec(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    _in_hub(tmp_path, hub)
    return {}, M2V, {"used": HUB_VERIFIED_M2V, "shape": [1, 16]}


def _sound_hub_bert(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    to_hub(_bert(tmp_path), hub, BERT)
    return {}, BERT, {"used": "verified: 7 files match the hub cache's SHA-256/SHA-1 records", "shape": [1, 32]}


def _sound_by_hand(tmp_path: Path, hub: Path) -> tuple[dict[str, str], str, dict[str, object]]:
    return {M2V: str(_mine(tmp_path))}, M2V, {"used": "unverified: a folder given by hand", "shape": [1, 16]}


CASES: dict[str, Case] = {
    "hidden_dim is text": _hidden_dim('"abc"', '"abc"'),
    "hidden_dim is negative": _hidden_dim("-5", "-5"),
    "hidden_dim is 1e999": _hidden_dim("1e999", "Infinity"),
    "hidden_dim is huge": _hidden_dim("18446744073709551616", "18446744073709551616"),
    "hidden_dim is a bool": _hidden_dim("true", "true"),
    "hidden_dim is not the table's": _hidden_dim_not_the_tables,
    "safetensors header length 2^62": _weights(
        lambda _: struct.pack("<Q", 1 << 62) + b"{}",
        lambda _: (
            "model.safetensors is not a safetensors file: its header length 4611686018427387904 exceeds "
            "the file's size (10 bytes)"
        ),
    ),
    "safetensors is a link to a text file": _weights(
        _notes,
        lambda _: (
            f"model.safetensors is not a safetensors file: its header length "
            f"{int.from_bytes(NOTES[:8], 'little')} exceeds the file's size ({len(NOTES)} bytes)"
        ),
    ),
    "safetensors without embeddings": _weights(
        _without_embeddings, lambda _: 'model.safetensors has no "embeddings" tensor'
    ),
    "tokenizer makes tokenizers panic": _panicking_tokenizer,
    "config.json is a FIFO": _fifo_config,
    "config.json links to a 64 GiB file": _huge(
        "config.json",
        lambda mine: f"--model-path {M2V}={mine}: config.json is 64 GiB, larger than the 4 MiB a JSON file may be",
    ),
    "tokenizer.json links to a 64 GiB file": _huge(
        "tokenizer.json",
        lambda mine: (
            f"cannot load {M2V} from {mine}: tokenizer.json is 64 GiB, larger than the 64 MiB a tokenizer may be"
        ),
    ),
    "hub: a plain file of changed weights": _plain_file_of_changed_weights,
    "hub: refs/main names a relative path outside": _refs_outside(absolute=False),
    "hub: refs/main names an absolute path": _refs_outside(absolute=True),
    "hub: a link outside the blobs": _link_outside_blobs,
    "hub: a blob that is a FIFO": _fifo_blob,
    "hub: a blob of 64 GiB": _huge_blob,
    "bert: hidden_size is text": _bert_hidden_size,
    "bert: tokenizer.json is a FIFO": _bert_fifo_tokenizer,
    "bert: model.onnx links to a 64 GiB file": _bert_huge_onnx,
    "bert hub: a plain model.onnx": _bert_plain_file_in_hub,
    "sound: hub model2vec": _sound_hub_model2vec,
    "sound: hub bert": _sound_hub_bert,
    "sound: by hand": _sound_by_hand,
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_hostile_model_folder_ends_in_one_line_and_is_left_as_it_was(tmp_path, case):
    hub = tmp_path / "hub"
    hub.mkdir()
    paths, name, expected = CASES[case](tmp_path, hub)
    before = fingerprint(tmp_path)
    answer = run_child(tmp_path, hub, name, paths)
    assert answer == expected
    if "said" in answer:
        said = str(answer["said"])
        assert "\n" not in said and len(said) < 400
    after = fingerprint(tmp_path)
    after.pop(str(tmp_path / "tmp"), None)
    assert after == before


# -- verified at every load, from what is read -------------------------------------------------------------------


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def test_a_blob_changed_after_the_model_was_found_is_refused_when_it_is_loaded(hub, tmp_path):
    """The verification is of the bytes each load reads, not a check made once per process when found."""
    snap = _in_hub(tmp_path, hub)
    found = find(M2V)
    assert not isinstance(found, str) and found.verified == HUB_VERIFIED_M2V
    blob = (snap / "model.safetensors").resolve()
    _flip_last_byte(blob)
    assert find(M2V) is found  # still what was found, but what is loaded is checked again
    with pytest.raises(EmbeddingError) as caught:
        Model2VecBackend(found).embed(["alice"])
    assert str(caught.value) == (
        f"cannot load {M2V} from {snap}: model.safetensors does not match the hub cache's record of it "
        f"({blob.name[:12]}…)"
    )


def test_an_onnx_blob_changed_after_the_model_was_found_is_refused_when_it_is_loaded(hub, tmp_path):
    snap = to_hub(_bert(tmp_path), hub, BERT)
    found = find(BERT)
    assert not isinstance(found, str), found
    backend = OnnxBertBackend(found)
    blob = (snap / "model.onnx").resolve()
    _flip_last_byte(blob)
    with pytest.raises(EmbeddingError) as caught:
        backend.embed(["alice"])
    assert str(caught.value) == (
        f"cannot load {BERT} from {snap}: model.onnx does not match the hub cache's record of it ({blob.name[:12]}…)"
    )


def test_a_revision_named_by_refs_must_be_a_folder_of_the_snapshots(hub, tmp_path):
    """A plain revision name whose snapshot is a link to a folder elsewhere is refused too; a missing one is
    not found (the newest snapshot is not taken in its place: refs/main says which revision the agent uses)."""
    snap = _in_hub(tmp_path, hub)
    elsewhere = tmp_path / "elsewhere"
    snap.rename(elsewhere)
    (snap.parent / REVISION).symlink_to(elsewhere)
    said = find(M2V)
    assert (
        said
        == f"{M2V} found in {hub} but not used: its refs/main names {json.dumps(REVISION)}, not one of its snapshots"
    )


# -- the reading shared by the modules ---------------------------------------------------------------------------


def _safetensors(dtype: object, shape: object, offsets: object, body: bytes) -> bytes:
    header = json.dumps({"w": {"dtype": dtype, "shape": shape, "data_offsets": offsets}}).encode()
    return struct.pack("<Q", len(header)) + header + body


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\x01\x00", "is not a safetensors file: it is 2 bytes long"),
        (struct.pack("<Q", 5) + b"nope!", "is not a safetensors file: its header is not JSON"),
        (struct.pack("<Q", 2) + b"[]", "is not a safetensors file: its header is not a JSON object"),
        (_safetensors("F32", [4], [0, 16], bytes(8)), 'is not a safetensors file: tensor "w" lies outside the file'),
        (
            _safetensors("F32", [3], [0, 16], bytes(16)),
            'is not a safetensors file: tensor "w" has 16 bytes for 3 values of F32',
        ),
        (
            _safetensors("BF16", [8], [0, 16], bytes(16)),
            'is not a safetensors file oxmem reads: tensor "w" is of type "BF16"',
        ),
        (
            _safetensors("F32", [-4], [0, 16], bytes(16)),
            'is not a safetensors file: tensor "w" has no valid shape, dtype and data_offsets',
        ),
        (
            _safetensors("F32", [4], "0-16", bytes(16)),
            'is not a safetensors file: tensor "w" has no valid shape, dtype and data_offsets',
        ),
    ],
    ids=[
        "short",
        "header not json",
        "header a list",
        "beyond the end",
        "wrong size",
        "bf16",
        "negative shape",
        "offsets",
    ],
)
def test_a_bad_safetensors_file_is_one_line(tmp_path, data, problem):
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    with pytest.raises(EmbeddingError) as caught:
        read_safetensors(path)
    assert str(caught.value) == f"{path} {problem}"


def test_hashing_a_fifo_or_a_folder_is_refused_at_once(tmp_path):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from oxmem_gui.core.embeddings.model_files import sha256_file
        from oxmem_gui.core.errors import EmbeddingError
        try:
            sha256_file(Path({str(fifo)!r}))
        except EmbeddingError as exc:
            print(exc)
        """
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hashing a FIFO hung for more than {SECONDS} s")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{fifo} is a FIFO, not a regular file\n", "")
    with pytest.raises(EmbeddingError) as folder:
        sha256_file(tmp_path)
    assert str(folder.value) == f"{tmp_path} is a folder, not a regular file"


def test_a_semantic_model_folder_with_a_huge_tokenizer_is_refused_before_it_is_read(tmp_path):
    from tests.core.embeddings.test_model_files import fastembed_folder

    folder = fastembed_folder(tmp_path / "own", manifest=False)
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.json").symlink_to(huge_file(tmp_path / "huge"))
    location = locate_model(folder)
    assert location.path is None
    assert (
        location.reason == f"model folder {folder}: tokenizer.json is 64 GiB, larger than the 64 MiB a tokenizer may be"
    )


def test_control_characters_of_a_path_are_escaped_in_the_line(hub, tmp_path):
    mine = make_model2vec(tmp_path / "mine\x1b]0;owned\x07")
    (mine / "config.json").write_text('{"hidden_dim": "abc"}')
    local_models.set_model_paths({M2V: mine})
    with pytest.raises(EmbeddingError) as caught:
        local_models.backend(M2V)
    said = str(caught.value)
    assert "\x1b" not in said and "\x07" not in said
    assert said == (
        f'cannot load {M2V} from {tmp_path}/mine\\x1b]0;owned\\x07: config.json: hidden_dim is "abc", '
        "not a whole number from 1 to 65536"
    )


# -- what the command line says -----------------------------------------------------------------------------------


def test_the_command_line_refuses_a_semantic_model_folder_with_a_huge_tokenizer_in_one_line(capsys, tmp_path):
    from tests.cli._support import run
    from tests.core.embeddings.test_model_files import fastembed_folder

    folder = fastembed_folder(tmp_path / "own", manifest=False)
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.json").symlink_to(huge_file(tmp_path / "huge"))
    db = str(tmp_path / "memory.db")
    assert run(capsys, "--db", db, "--embedding", "deterministic", "demo")[0] == 0
    code, out, err = run(capsys, "--db", db, "--embedding", "semantic", "--model-path", str(folder), "sessions")
    assert (code, out) == (2, "")
    assert err == (
        f"oxmem: error: model folder {folder}: tokenizer.json is 64 GiB, larger than the 64 MiB a tokenizer may be\n"
    )


def test_the_command_line_skips_the_vectors_of_an_agent_model_folder_with_a_fifo_in_one_line(tmp_path, loop):
    """``oxmem search`` with ``--model-path NAME=DIR`` whose ``config.json`` is a FIFO: the search does not hang
    and says in one line why the vectors of that model were left out (the words still rank); exit 0, as for any
    model that is not here."""
    from oxmem_gui.core.embeddings.local_models import LocalModel
    from tests.conftest import open_sync, user

    agent = Model2VecBackend(LocalModel(M2V, "model2vec", make_model2vec(tmp_path / "good"), M2V, "unverified"))
    db = tmp_path / "memory.db"
    store = open_sync(loop, db, embedding=agent)
    for i, text in enumerate(["Alice prefers the window seats", "the bakery opens at seven"], 1):
        store.store("s", i, user(text))
    store.aclose()
    bad = make_model2vec(tmp_path / "bad")
    (bad / "config.json").unlink()
    os.mkfifo(bad / "config.json")
    before = fingerprint(bad)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "FASTEMBED_CACHE_PATH", "OXMEM_DB")}
    (tmp_path / "hub").mkdir()
    env.update(
        HF_HUB_CACHE=str(tmp_path / "hub"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        OXMEM_CONFIG_DIR=str(tmp_path / "config"),
        PYTHONPATH=str(ROOT),
    )
    argv = ["--db", str(db), "--embedding", "deterministic", "--model-path", f"{M2V}={bad}", "search", "s", "window"]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "oxmem_gui.cli", *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"oxmem search hung for more than {SECONDS} s")
    assert (done.returncode, done.stderr) == (0, "")
    said = [line for line in done.stdout.splitlines() if M2V in line]
    assert said == [f"skipped vectors of {M2V}: --model-path {M2V}={bad}: config.json is a FIFO, not a regular file"]
    assert "Alice prefers the window seats" in done.stdout
    assert fingerprint(bad) == before
