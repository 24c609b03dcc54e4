"""The semantic backend: a real sentence-embedding model from local files, and what it does for retrieval."""

import json
import os

import numpy as np
import pytest

from oxmem_gui.core.embeddings.bert_onnx import read_safetensors, reference_last_hidden_state
from oxmem_gui.core.embeddings.model_files import MODEL_NAME, source_dir, verify_prepared
from oxmem_gui.core.embeddings.semantic import SemanticEmbedding
from tests.conftest import open_sync, user
from tests.semantic import model_dir_or_skip


@pytest.fixture(scope="module")
def semantic():
    return SemanticEmbedding(model_dir_or_skip())


def cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_prepared_model_verifies(semantic):
    verify_prepared(semantic.model_dir)
    manifest = json.loads((semantic.model_dir / "oxmem-model.json").read_text())
    assert manifest["model"] == MODEL_NAME and manifest["license"] == "Apache-2.0"
    assert json.loads((semantic.model_dir / "tokenizer_config.json").read_text())["model_max_length"] == 256


def test_onnx_graph_matches_an_independent_numpy_encoder(semantic):
    source = source_dir()
    if source is None:
        pytest.skip("the source package is not installed (a model folder of one's own is in use)")
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(semantic.model_dir / "tokenizer.json"))
    tok.enable_padding()
    enc = tok.encode_batch(["The cat sat on the mat.", "quarterly tax report"])
    ids = np.array([e.ids for e in enc])
    mask = np.array([e.attention_mask for e in enc], dtype=np.float64)
    hidden = reference_last_hidden_state(
        read_safetensors(source / "model.safetensors"), json.loads((source / "config.json").read_text()), ids, mask
    )
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    expected = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    got = semantic.embed(["The cat sat on the mat.", "quarterly tax report"])
    assert got.shape == (2, 384) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-5


def test_meaning(semantic):
    cat, kitten, tax = semantic.embed(["cat", "kitten", "quarterly tax report"])
    assert cos(cat, kitten) > cos(cat, tax) + 0.3
    assert np.linalg.norm(cat) == pytest.approx(1.0, abs=1e-5)


def test_store_uses_the_model_name_and_384_dimensions(tmp_path, loop, semantic):
    s = open_sync(loop, tmp_path / "m.db", embedding="semantic")
    assert s.backend.model_name == MODEL_NAME and s.backend_notice is None
    s.store("s", 1, user("The quick brown fox"))
    assert s.sql("SELECT embedding_model, length(embedding_blob) FROM chunks_vec") == [(MODEL_NAME, 384 * 4)]
    s.aclose()


def test_hybrid_query_finds_a_note_by_meaning_with_no_shared_words(tmp_path, loop, semantic):
    s = open_sync(loop, tmp_path / "m.db", embedding="semantic")
    cat = s.save_note("alice", "Alice adopted a little cat called Whiskers last spring.", ["pets"])
    s.save_note("alice", "The quarterly tax report is due at the end of April.", ["finance"])
    s.save_note("alice", "Water the tomatoes every morning in July.", ["garden"])
    hits = s.search_notes("alice", "kitten", 3)
    assert hits[0].note_id == cat.note_id
    assert hits[0].hit.fts_raw is None and hits[0].hit.vector_rank == 1
    assert hits[0].hit.embedding_model == MODEL_NAME
    s.aclose()


def test_mixed_model_store_searches_each_model_with_its_own_query_vector(tmp_path, loop, semantic):
    det = open_sync(loop, tmp_path / "m.db", embedding="deterministic")
    det.store("s", 1, user("The invoice total is rounded half up"))
    det.aclose()
    sem = open_sync(loop, tmp_path / "m.db", embedding="semantic")
    sem.store("s", 2, user("My kitten sleeps all day"))
    r = sem.hybrid_query("s", "cat", 4, vector_weight=1.0, fts_weight=0.0)
    assert r.models == ["deterministic-hash-v1", MODEL_NAME]
    assert {h.embedding_model for h in r.hits} == {"deterministic-hash-v1", MODEL_NAME}
    sem.aclose()


def test_reindex_to_semantic_is_resumable(tmp_path, loop, semantic):
    from oxmem_gui.core.embeddings.reindex import reindex

    s = open_sync(loop, tmp_path / "m.db", embedding="deterministic")
    for i in range(1, 8):
        s.store("s", i, user(f"message number {i} about cats"))
    stop_after_first = __import__("threading").Event()
    first = s.inner._db.call(reindex, semantic, None, lambda done, total: stop_after_first.set(), stop_after_first, 3)
    assert (first.reembedded, first.remaining, first.stopped) == (3, 4, True)
    rest = s.reindex(model="semantic")
    assert (rest.reembedded, rest.remaining, rest.model) == (4, 0, MODEL_NAME)
    assert s.sql("SELECT embedding_model, count(*) FROM chunks_vec GROUP BY 1") == [(MODEL_NAME, 7)]
    expected = semantic.embed(["message number 5 about cats"])[0]
    blob = s.sql("SELECT embedding_blob FROM chunks_vec v JOIN chunks c USING (chunk_id) WHERE sequence_start = 5")
    assert np.frombuffer(blob[0][0], dtype="<f4") == pytest.approx(expected, abs=1e-6)
    assert s.reindex(model="semantic").reembedded == 0
    s.aclose()


def test_onnx_runtime_telemetry_is_off(tmp_path):
    """onnxruntime's wheels upload usage events and keep a session file (``.ses``) in the temporary folder unless
    ``ORT_DISABLE_TELEMETRY`` is set before it loads; importing oxmem sets it, so embedding with the semantic
    model leaves nothing there (checked in a fresh process: onnxruntime reads the variable once)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env["TMPDIR"] = str(tmp_path)
    script = "import oxmem_gui, os, onnxruntime, fastembed; print(os.environ['ORT_DISABLE_TELEMETRY'])"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"
    assert os.listdir(tmp_path) == []  # onnxruntime 1.31 and 1.32 leave a '.ses' file there without it
