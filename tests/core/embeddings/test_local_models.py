"""The agent's own embedding model, found in the Hugging Face hub cache layout where its library keeps it (never
downloaded), verified against the cache's own content addresses, and run as that library runs it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oxmem_gui.core.embeddings import local_models
from oxmem_gui.core.embeddings.local_models import Model2VecBackend, OnnxBertBackend, find
from tests.conftest import open_sync, user
from tests.core.embeddings.models_on_disk import make_bert_onnx, make_model2vec, to_hub
from tests.semantic import model_dir_or_skip

QUERIES = ["Alice prefers the window seats", "museum pass costs euros", "zzz nothing known", ""]


def test_a_model2vec_model_in_the_hub_cache_embeds_as_the_model2vec_package_does(hub, tmp_path):
    from model2vec import StaticModel

    snap = to_hub(make_model2vec(tmp_path / "made"), hub, "minishlab/potion-base-8M")
    found = find("minishlab/potion-base-8M")
    assert not isinstance(found, str), found
    assert (found.folder, found.kind) == (snap, "model2vec")
    assert found.verified == "verified: 5 files match the hub cache's SHA-256/SHA-1 records"
    ours = Model2VecBackend(found).embed(QUERIES)
    theirs = StaticModel.from_pretrained(str(tmp_path / "made")).encode(QUERIES)
    assert ours.shape == (4, 16) and np.allclose(ours, theirs, atol=1e-6)
    assert np.linalg.norm(ours[0]) == pytest.approx(1.0, abs=1e-6) and not ours[2].any()  # unknown words: zeros


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_a_bert_onnx_model_pools_and_normalizes_as_its_files_say(hub, tmp_path, pooling):
    """Checked against onnxruntime run by hand on the same folder, pooled as ``1_Pooling/config.json`` says."""
    import onnxruntime
    from tokenizers import Tokenizer

    made = make_bert_onnx(tmp_path / "made", model_dir_or_skip(), pooling)
    to_hub(made, hub, "oxmem-tests/tiny-bert")
    found = find("oxmem-tests/tiny-bert")
    assert not isinstance(found, str) and found.kind == "bert-onnx", found
    backend = OnnxBertBackend(found)
    assert (backend.pooling, backend.normalize, backend.dimensions) == (pooling, True, 32)
    ours = backend.embed(QUERIES[:3])
    tokenizer = Tokenizer.from_file(str(made / "tokenizer.json"))
    session = onnxruntime.InferenceSession(str(made / "model.onnx"))
    for text, vector in zip(QUERIES[:3], ours, strict=True):
        enc = tokenizer.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        states, weights = hidden[0][0], mask[0][:, None]  # (the tokenizer file pads: padding is masked out)
        pooled = states[0] if pooling == "cls" else (states * weights).sum(axis=0) / weights.sum()
        assert np.allclose(vector, pooled / np.linalg.norm(pooled), atol=1e-5)


def test_a_file_of_such_vectors_is_searched_with_the_agents_model(hub, tmp_path, loop):
    """A store whose chunks the agent embedded with its model2vec model: a search from a process that has only
    the deterministic backend finds the model in the cache and ranks with it; the scores are the cosines."""
    snap = to_hub(make_model2vec(tmp_path / "made"), hub, "minishlab/potion-base-8M")
    agent_model = Model2VecBackend(find("minishlab/potion-base-8M"))
    path = tmp_path / "memory.db"
    s = open_sync(loop, path, embedding=agent_model)
    texts = ["Alice prefers the window seats", "the bakery opens at seven", "the museum pass costs euros"]
    for i, text in enumerate(texts, 1):
        s.store("s", i, user(text))
    s.aclose()
    local_models.set_model_paths({})  # a new process: nothing found yet
    s = open_sync(loop, path, embedding="deterministic")
    result = s.hybrid_query("s", "window seats for alice", 3)
    s.aclose()
    assert result.models == ["minishlab/potion-base-8M"] and result.skipped_models == {}
    query = agent_model.embed(["window seats for alice"])[0]
    best = [h for h in result.hits if h.text == texts[0]][0]
    stored = agent_model.embed([texts[0]])[0]
    assert best.vector_raw == pytest.approx(float(np.dot(query, stored)), abs=1e-5)
    assert snap.is_dir()


def test_a_changed_file_in_the_cache_is_refused_and_a_missing_model_says_where_oxmem_looked(hub, tmp_path):
    snap = to_hub(make_model2vec(tmp_path / "made"), hub, "minishlab/potion-base-8M")
    blob = (snap / "model.safetensors").resolve()
    data = bytearray(blob.read_bytes())
    data[-1] ^= 1
    blob.write_bytes(bytes(data))
    said = find("minishlab/potion-base-8M")
    assert said == f"minishlab/potion-base-8M found in {hub} but not used: model.safetensors does not match the " \
                   f"hub cache's record of it ({blob.name[:12]}…)"  # fmt: skip
    missing = find("minishlab/potion-base-32M")
    assert isinstance(missing, str)
    assert missing.startswith(f"the vectors were made by minishlab/potion-base-32M, which is not on this machine "
                              f"(looked for minishlab/potion-base-32M in {hub}, ")  # fmt: skip
    assert missing.endswith("--model-path minishlab/potion-base-32M=DIR names another folder)")
    assert str(tmp_path / "tmp" / "fastembed_cache") in missing and "\n" not in missing


def test_a_folder_given_by_hand_is_used_and_said_unverified(hub, tmp_path):
    made = make_model2vec(tmp_path / "mine")
    local_models.set_model_paths({"minishlab/potion-base-32M": made})
    found = find("minishlab/potion-base-32M")
    assert not isinstance(found, str)
    assert (found.folder, found.verified) == (made, "unverified: a folder given by hand")
    assert json.loads((made / "config.json").read_text())["normalize"] is True
    local_models.set_model_paths({"minishlab/potion-base-32M": tmp_path / "nowhere"})
    assert find("minishlab/potion-base-32M") == (
        f"--model-path minishlab/potion-base-32M={tmp_path / 'nowhere'}: no model2vec or ONNX model there"
    )
    assert isinstance(Path(made), Path)
