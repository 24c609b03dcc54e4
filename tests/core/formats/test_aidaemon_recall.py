"""aidaemon's legacy recall (``core/formats/aidaemon_recall.py``) reproduced exactly: recency, salience and relevance
over a session's messages or its episodes, each list worked out here from the raw rows with plain apsw + numpy, and
what it says without the agent's model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.embeddings.model_files import MODEL_NAME
from oxmem_gui.core.errors import EmbeddingError, NotFoundError
from oxmem_gui.core.formats import base
from tests.core.formats.test_aidaemon import SLACK, TG, f32, read, rows, unit, write

# -- the recall: recency, salience, relevance ---------------------------------------------------------------------


def _recall_fixture(path):
    """The legacy file plus ten newer messages (so the fixture's own rows leave the recency list), six old
    messages whose vectors lie near msg-07's, and an old salient row with an unreadable embedding. The query is
    near msg-07 and msg-08 (both legacy JSON arrays); msg-10 has a NULL embedding."""
    v7 = np.asarray(json.loads(rows(path, "SELECT embedding FROM messages WHERE id = 'msg-07'")[0][0]))
    v8 = np.asarray(json.loads(bytes(rows(path, "SELECT embedding FROM messages WHERE id = 'msg-08'")[0][0])))
    rng = np.random.default_rng(77)
    statements = []
    insert = (
        "INSERT INTO messages (id, session_id, role, content, created_at, importance, embedding) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    salient = {3: 0.95, 6: 0.8, 9: 0.81}
    for i in range(1, 11):
        vector = unit(v7) if i == 5 else unit(rng.standard_normal(384))
        statements.append(
            (
                insert,
                (f"new-{i:02d}", TG, "user", f"newer message {i}", f"2025-12-07T09:00:{i:02d}.000000001+00:00",
                 salient.get(i, 0.2), f32(vector)),
            )
        )  # fmt: skip
    for i in range(1, 7):
        vector = unit(unit(v7) + 0.35 * unit(rng.standard_normal(384)))
        statements.append(
            (insert, (f"old-{i}", TG, "assistant", f"old message {i}", f"2025-11-0{i} 12:00:00", 0.5, f32(vector)))
        )
    statements.append(
        (insert, ("msg-00", TG, "user", "very important, very old", "2025-11-01 00:00:00", 0.99, b"\x00junk"))
    )
    write(path, *statements)
    return unit(v7 + 0.9 * v8).astype(np.float32)


def _expected(path, session, query):
    """The three lists as aidaemon's SQL and Rust compute them, from the raw rows."""
    found = rows(
        path,
        "SELECT id, importance, embedding FROM messages WHERE session_id = ? ORDER BY created_at DESC, rowid DESC",
        (session,),
    )
    recency = [r[0] for r in found[:10]]
    salience = [r[0] for r in found if r[1] is not None and r[1] >= 0.8][:5]
    seen = set(recency) | set(salience)
    q = np.asarray(query, dtype=np.float64)
    cosines = {}
    for mid, _, blob in [r for r in found if r[2] is not None][:2000]:
        raw = blob if isinstance(blob, bytes) else blob.encode()
        if len(raw) == 1536:
            v = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif raw[:1] == b"[":
            v = np.asarray(json.loads(raw), dtype=np.float32).astype(np.float64)
        else:
            continue
        cosines[mid] = float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))
    passing = sorted([(m, c) for m, c in cosines.items() if m not in seen and c > 0.65], key=lambda mc: -mc[1])
    return recency, salience, passing[:5], cosines


def test_recall_three_lists(legacy):
    query = _recall_fixture(legacy)
    recency, salience, relevance, cosines = _expected(legacy, TG, query)
    assert recency == [f"new-{i:02d}" for i in range(10, 0, -1)]
    assert salience == ["new-09", "new-06", "new-03", "msg-11", "msg-03"]  # by time: msg-00 (0.99) is too old
    over = sorted(m for m, c in cosines.items() if c > 0.65)
    assert over == ["msg-07", "msg-08", "new-05", "old-1", "old-2", "old-3", "old-4", "old-5", "old-6"]
    assert [m for m, _ in relevance] == ["msg-07", "old-5", "old-6", "old-2", "old-4"]  # 8 unseen pass: 5 kept

    result = read(
        legacy,
        lambda m: m.search("aidaemon", TG, "rain in Berlin?", options=SearchOptions(query_embedding=query), top_k=3),
    )
    assert result.retriever == "aidaemon"
    assert result.lists == {"recency": recency, "salience": salience, "relevance": [m for m, _ in relevance]}
    merged = recency + ["msg-11", "msg-03"] + [m for m, _ in relevance]
    assert [h.chunk_id for h in result.hits] == merged  # top_k is not applied: the agent takes no limit
    assert [h.rank for h in result.hits] == list(range(1, 18))
    for k, (mid, cos) in enumerate(relevance, 1):
        h = result.hits[11 + k]
        assert h.chunk_id == mid
        assert (h.vector_raw, h.vector_rank, h.embedding_model) == (pytest.approx(cos, abs=1e-6), k, MODEL_NAME)
        assert h.vector_score == pytest.approx(cos, abs=1e-6)
        assert f"relevance: cosine {cos:.6f} > 0.65, " in " ".join(h.notes)
    assert all(h.vector_raw is None for h in result.hits[:12])
    assert all(h.score == 1.0 for h in result.hits)
    by_id = {h.chunk_id: h for h in result.hits}
    assert by_id["new-05"].metadata["cosine"] == pytest.approx(cosines["new-05"], abs=1e-6)
    assert cosines["new-05"] > 0.65  # highly similar, but already taken by recency
    assert "already taken by recency, so the relevance leg skipped it" in by_id["new-05"].notes[2]
    assert by_id["new-10"].notes[0].startswith("recency: 1st newest of 29 messages")
    assert by_id["msg-11"].notes[1] == "salience: importance 0.85 ≥ 0.8, the 4th newest of 6 important messages"
    assert by_id["msg-11"].notes[-1] == "merged: from salience"
    assert by_id["new-09"].notes[-1] == "merged: from recency (also in salience)"
    assert by_id["new-09"].sequence_start == rows(legacy, "SELECT rowid FROM messages WHERE id = 'new-09'")[0][0]
    assert dict(result.vector_errors).keys() == {"msg-00", "msg-10"}
    assert dict(result.vector_errors)["msg-10"] == "no embedding (NULL): embedding model not loaded: connection refused"
    assert dict(result.vector_errors)["msg-00"].startswith("unknown embedding encoding: 5 bytes")
    unseen = {m: c for m, c in cosines.items() if m not in set(recency) | set(salience)}
    leg = result.legs["vector"]
    assert (leg.candidates, leg.min, leg.max) == (
        len(unseen),
        pytest.approx(min(unseen.values()), abs=1e-6),
        pytest.approx(max(unseen.values()), abs=1e-6),
    )
    assert result.legs["salience"].candidates == 6 and result.legs["fts"].candidates == 0
    assert result.models == [MODEL_NAME] and result.skipped_models == {}
    assert result.steps[1].startswith("Salience: messages with importance ≥ 0.8, the 5 newest")
    pool = {h.chunk_id: h for h in result.pool}
    assert len(pool) == 29 and pool["msg-00"].notes[1].endswith("but not among the 5 newest important messages")

    same = read(legacy, lambda m: m.hybrid_query(TG, "rain in Berlin?", query_embedding=query))
    assert same.lists == result.lists and [h.chunk_id for h in same.hits] == merged


def test_recall_without_the_model(legacy, monkeypatch):
    _recall_fixture(legacy)

    def missing(*args, **kwargs):
        raise EmbeddingError("the semantic model is not installed")

    monkeypatch.setattr(base, "choose_backend", missing)
    result = read(legacy, lambda m: m.search("aidaemon", TG, "rain in Berlin?"))
    assert result.lists["relevance"] == [] and result.lists["salience"][0] == "new-09"
    assert len(result.lists["recency"]) == 10
    assert "the semantic model is not installed" in result.skipped_models[MODEL_NAME]
    assert result.models == [] and all(h.vector_raw is None for h in result.hits)
    assert result.steps[-1].startswith("Relevance left out:")


def test_recall_over_episodes(current):
    query = np.random.default_rng(3).standard_normal(384).astype(np.float32)
    result = read(
        current, lambda m: m.search("aidaemon", SLACK, "deploy freeze", options=SearchOptions(query_embedding=query))
    )
    assert result.steps[0].startswith("This session has no legacy messages")
    assert result.lists == {"recency": ["episode:2"], "salience": ["episode:2"], "relevance": []}
    (h,) = result.hits
    blob = rows(current, "SELECT embedding FROM episodes WHERE id = 2")[0][0]
    v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
    q = query.astype(np.float64)
    assert h.metadata["cosine"] == pytest.approx(float(v @ q / np.linalg.norm(v) / np.linalg.norm(q)), abs=1e-6)
    assert h.metadata["topics"] == ["deploy", "staging"] and h.sequence_start is None
    assert h.notes[1] == "salience: importance 0.85 ≥ 0.8, the 1st newest of 1 important episodes (already in recency)"
    with pytest.raises(NotFoundError):
        read(current, lambda m: m.search("aidaemon", "nobody", "x", options=SearchOptions(query_embedding=query)))
