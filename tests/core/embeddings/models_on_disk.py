"""Tiny models made by the tests, laid out as the Hugging Face hub cache keeps downloads (``models--ORG--NAME``
with ``blobs/``, ``snapshots/REVISION/`` links and ``refs/main``): a model2vec static model and a BERT-style ONNX
model with its sentence-transformers pooling files; and what the hostile-folder tests need: a huge sparse file,
a tokenizer file the ``tokenizers`` library panics on, a fingerprint of a folder to show a read changed nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np

REVISION = "0123456789abcdef0123456789abcdef01234567"
WORDS = (
    "the a an of to in on at is was trip lisbon berlin flat move key blue pot alice bob prefers window aisle seats "
    "note number about train tickets museum pass costs euros bakery opens seven"
).split()


def to_hub(folder: Path, hub: Path, repo: str) -> Path:
    """Copy ``folder`` into ``hub`` as the hub cache stores ``repo``; the snapshot folder."""
    base = hub / ("models--" + repo.replace("/", "--"))
    snap = base / "snapshots" / REVISION
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if len(data) > 1024:  # a large file is stored by its SHA-256 (LFS), a small one by its git blob SHA-1
            name = hashlib.sha256(data).hexdigest()
        else:
            name = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
        blob = base / "blobs" / name
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snap / path.relative_to(folder)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / "main").write_text(REVISION)
    return snap


def make_model2vec(folder: Path, dims: int = 16, seed: int = 0) -> Path:
    """A model2vec static model of a small word-level vocabulary, saved by the ``model2vec`` package."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {"[UNK]": 0, "[PAD]": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.random.default_rng(seed).standard_normal((len(vocab), dims)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True).save_pretrained(str(folder))
    return folder


def make_bert_onnx(folder: Path, tokenizer_from: Path, pooling: str = "cls", seed: int = 0) -> Path:
    """A 2-layer BERT of hidden size 32 with random weights as ``model.onnx`` (:mod:`...bert_onnx`), the
    tokenizer files of ``tokenizer_from``, and the sentence-transformers files declaring ``pooling`` and a
    Normalize module."""
    import onnx

    from oxmem_gui.core.embeddings.bert_onnx import build_bert_onnx

    vocab = json.loads((tokenizer_from / "config.json").read_text())["vocab_size"]
    config = {
        "model_type": "bert", "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
        "intermediate_size": 64, "vocab_size": vocab, "max_position_embeddings": 512, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
    }  # fmt: skip
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    weights = {
        "embeddings.word_embeddings.weight": w(vocab, 32),
        "embeddings.position_embeddings.weight": w(512, 32),
        "embeddings.token_type_embeddings.weight": w(2, 32),
        "embeddings.LayerNorm.weight": 1 + w(32),
        "embeddings.LayerNorm.bias": w(32),
    }
    for i in range(2):
        p = f"encoder.layer.{i}"
        for name, (rows, cols) in {
            "attention.self.query": (32, 32), "attention.self.key": (32, 32), "attention.self.value": (32, 32),
            "attention.output.dense": (32, 32), "intermediate.dense": (64, 32), "output.dense": (32, 64),
        }.items():  # fmt: skip
            weights[f"{p}.{name}.weight"], weights[f"{p}.{name}.bias"] = w(rows, cols), w(rows)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[f"{p}.{norm}.weight"], weights[f"{p}.{norm}.bias"] = 1 + w(32), w(32)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(build_bert_onnx(weights, config), str(folder / "model.onnx"))
    (folder / "config.json").write_text(json.dumps(config))
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(tokenizer_from / name, folder / name)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": 32,
                "pooling_mode_cls_token": pooling == "cls",
                "pooling_mode_mean_tokens": pooling == "mean",
            }
        )  # fmt: skip
    )
    modules = [
        {"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"}
        for i, (path, kind) in enumerate([("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Normalize", "Normalize")])
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    return folder


#: the size of the sparse files that stand for a huge download (nothing of it is on the disk)
HUGE = 64 << 30


def huge_file(path: Path) -> Path:
    """A sparse file of :data:`HUGE` bytes (zeros, no disk space): what a whole-file read would never finish."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(HUGE)
    return path


def fingerprint(*roots: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``roots`` (links not followed): a link's target, a FIFO's kind and time, a file's size,
    modification time and SHA-256 (a file of more than 64 MiB — a sparse one — by size and time only, unread)."""
    seen: dict[str, tuple[object, ...]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in sorted([*dirs, *files]):
                path = Path(folder) / name
                st = path.lstat()
                if path.is_symlink():
                    seen[str(path)] = ("link", os.readlink(path))
                elif stat.S_ISREG(st.st_mode):
                    digest = hashlib.sha256(path.read_bytes()).hexdigest() if st.st_size <= 64 << 20 else None
                    seen[str(path)] = ("file", st.st_size, st.st_mtime_ns, digest)
                elif stat.S_ISFIFO(st.st_mode):
                    seen[str(path)] = ("fifo", st.st_mtime_ns)
                else:
                    seen[str(path)] = ("folder",)
    return seen


def make_tokenizer_panic(tokenizer: Path) -> Path:
    """Give the tokenizer file a normalizer whose data the ``tokenizers`` library panics on while parsing it (a
    Rust panic: ``pyo3_runtime.PanicException``, a ``BaseException``)."""
    spec = json.loads(tokenizer.read_text(encoding="utf-8"))
    spec["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": "AQA="}
    tokenizer.write_text(json.dumps(spec), encoding="utf-8")
    return tokenizer
