"""More like this (``--like ID``): a memory's own stored vector as the query of the vector leg — exact and offline
for every model, OpenAI's included — with its words as the keyword part unless others are given."""

from __future__ import annotations

import apsw
import numpy as np

from tests.cli._support import assert_one_error_line, build_demo, run, run_json
from tests.core.formats import fixtures as fx

PERSONA_COFFEE = "00000000-0000-4e4e-8000-000000000003"  # a ZEKE memory of the fixture, 1536 values


def test_a_zeke_memory_finds_its_neighbours_by_its_openai_vector_offline(capsys, tmp_path):
    path = fx.make_zeke(tmp_path / "zeke.db")
    doc = run_json(capsys, "--db", str(path), "search", "persona", "--like", PERSONA_COFFEE, "--top-k", "4")
    assert doc["like"] == PERSONA_COFFEE and doc["models"] == ["text-embedding-3-small"]
    assert doc["skipped_models"] == {}
    top = doc["hits"][0]
    assert top["chunk_id"] == PERSONA_COFFEE and abs(top["vector_raw"] - 1.0) < 1e-6
    conn = apsw.Connection(str(path))
    rows = conn.execute("SELECT id, embedding FROM memories WHERE scope LIKE 'persona%' AND embedding IS NOT NULL")
    vectors = {mid: np.frombuffer(blob, dtype="<f4").astype(np.float64) for mid, blob in rows}
    mine = vectors[PERSONA_COFFEE]
    for hit in doc["hits"]:
        if hit["vector_raw"] is not None:  # each cosine is the stored vectors' own
            other = vectors[hit["chunk_id"]]
            cosine = float(mine @ other / (np.linalg.norm(mine) * np.linalg.norm(other)))
            assert abs(hit["vector_raw"] - cosine) < 1e-6


def test_a_note_is_searched_by_its_own_vector_and_other_words_may_be_the_keyword_part(capsys, tmp_path):
    db = build_demo(tmp_path / "demo")
    notes = run_json(capsys, "--db", str(db), "notes", "list", "alice")
    veggie = next(n["note_id"] for n in notes if n["content"].startswith("Alice is vegetarian"))
    code, out, err = run(capsys, "--db", str(db), "notes", "search", "alice", "--like", veggie, "--top-k", "3")
    assert code == 0 and out.splitlines()[1].split()[1] == veggie
    assert err.startswith("oxmem: notice: query by example: the stored vector of chunk:memory:alice:")
    hits = run_json(capsys, "--db", str(db), "notes", "search", "alice", "aisle seats", "--like", veggie)
    by_note = {h["note_id"]: h["hit"] for h in hits}
    assert abs(by_note[veggie]["vector_raw"] - 1.0) < 1e-6  # its own vector, whatever the words
    assert by_note[veggie]["fts_raw"] is None  # "aisle seats" is not in its words


def test_like_refuses_what_has_no_vector_in_one_line(capsys, tmp_path):
    db = build_demo(tmp_path / "demo")
    assert_one_error_line(*run(capsys, "--db", str(db), "notes", "search", "alice", "--like", "nope"),
                          "no stored vector for 'nope': give a chunk id or a note id that has one")  # fmt: skip
    assert_one_error_line(*run(capsys, "--db", str(db), "notes", "search", "alice"),
                          "give the QUERY to search for (or --like ID: more like that memory)")  # fmt: skip
    omega = fx.make_omega(tmp_path / "omega.db")
    senders = run_json(capsys, "--db", str(omega), "sessions")
    code, out, err = run(capsys, "--db", str(omega), "search", senders[0]["session_id"], "--like", "1")
    assert_one_error_line(code, out, err, "Omega memory files keep no vectors to search by example")
