"""``oxmem search SESSION QUERY --why ID``: the story of a memory the ranking did not recall, for the store's
rankings and an agent's own (Omega's, whose filters and limit are named); an unknown id is one line, exit 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from oxmem_gui.core.retrieval import ranking_choice
from tests.cli._support import run, run_json
from tests.cli.test_search_all import cli, formats  # noqa: F401  (the fixture)

LISBON = "telegram:alice:lisbon-trip"
CONVERSATION = "0b7e2a10-5c1d-4c1a-8d01-000000000003"  # sender 4242's; Omega recalls from its other conversations


def message(n: int) -> str:
    return f"9d41f3c2-77a0-4b5e-a1c3-{n:012d}"


@pytest.fixture
def demo(capsys, tmp_path):
    db = str(tmp_path / "m.db")
    assert cli(capsys, "--db", db, "--embedding", "deterministic", "demo")[0] == 0
    return ("--db", db, "--embedding", "deterministic")


def test_the_story_in_lines_and_in_json(capsys, demo):
    code, out, err = cli(capsys, *demo, "search", LISBON, "which seat on the flight", "--why", "5", "--top-k", "3")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Why not 5? #11 of 13 candidates for 'which seat on the flight' (top 3, ranking tuned)"
    assert lines[2].startswith("recalled: no — outranked within the top 3: #11 with ")
    assert lines[3].startswith("vector leg: cosine -0.020383, rank 8 of 15; a candidate")
    assert lines[4] == (
        "fts leg: no match: none of seat*, flig* is in its text (stopwords dropped from the query: which, on, the)"
    )
    assert "would bring it back: top 12 (now 3) → rank 12" in lines
    code, out, _ = cli(capsys, *demo, "--json", "search", LISBON, "which seat on the flight", "--why", "5",
                       "--top-k", "3")  # fmt: skip
    doc = json.loads(out)
    assert (doc["rank"], doc["of"], doc["reason"], doc["recalled"]) == (11, 13, "outranked", False)
    assert [h["rank"] for h in doc["hits"]] == [1, 2, 3] and [a["rank"] for a in doc["above"]] == [1, 2, 3]
    assert doc["legs"]["vector"]["rank"] == 8 and doc["legs"]["fts"]["raw"] is None
    assert {"control": "top_k", "value": 12, "words": "top 12 (now 3)", "rank": 12} in doc["changes"]


def test_an_unknown_id_and_all_sessions_are_one_line_exit_2(capsys, demo):
    for target, said in (("nope", "no chunk, event or note 'nope' in this file"),
                         ("99", f"no event at sequence 99 in session '{LISBON}'")):  # fmt: skip
        code, out, err = cli(capsys, *demo, "search", LISBON, "seat", "--why", target)
        assert (code, out, err) == (2, "", f"oxmem: error: {said}\n")
    code, _, err = cli(capsys, *demo, "search", "--all", "seat", "--why", "5")
    assert code == 2 and err == "oxmem: error: --why explains a miss in one SESSION: give the session, not --all\n"


@pytest.mark.parametrize(
    ("n", "cut"),
    [
        (6, "Omega indexes only user messages (messages_fts holds no other): this is an assistant one"),
        (11, "Omega leaves out the conversation it recalls for: this message is in it"),
        (19, "it is sender 77's; Omega recalls only the same sender's (4242) other conversations"),
        (1, 'Omega\'s phrase "Lisbon" does not match it: the words are not in its text in that order'),
    ],
)
def test_omegas_own_filters_are_named(capsys, formats, n, cut):  # noqa: F811
    omega = formats["omega"]
    before = hashlib.sha256(omega.read_bytes()).hexdigest()
    code, out, err = cli(capsys, "--db", str(omega), "--json", "search", CONVERSATION, "Lisbon", "--why", message(n))
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["reason"], doc["cut"], doc["recalled"]) == ("not-ranked", cut, False)
    assert hashlib.sha256(omega.read_bytes()).hexdigest() == before  # read-only stays read-only


def test_omega_recalls_a_user_message_of_another_conversation(capsys, formats):  # noqa: F811
    code, out, err = cli(capsys, "--db", str(formats["omega"]), "search", CONVERSATION, "Lisbon", "--why", message(5))
    assert code == 0, err
    assert out.splitlines()[2] == "recalled: yes, at rank 1"
    code, _, err = cli(capsys, "--db", str(formats["omega"]), "search", CONVERSATION, "Lisbon", "--why", "nope")
    assert (code, err) == (2, "oxmem: error: no message 'nope' in this file\n")


def test_aidaemons_lists_say_why_a_message_was_left_out(capsys, formats):  # noqa: F811
    legacy = str(formats["aidaemon-legacy"])
    base = ("--db", legacy, "--json", "search", "telegram:123456789", "rain in Berlin?", "--top-k", "3")
    doc = json.loads(cli(capsys, *base, "--why", "msg-01")[1])
    assert doc["reason"] == "not-ranked" and doc["cut"].startswith(
        "aidaemon recall (recency, salience, relevance) did not take it: recency: 12th newest, not among the 10 newest"
    )
    assert json.loads(cli(capsys, *base, "--why", "msg-03")[1])["recalled"] is True
    code, _, err = cli(capsys, *base, "--why", "nope")
    assert (code, err) == (2, "oxmem: error: no message or episode 'nope' in session 'telegram:123456789'\n")


def test_zekes_scopes_and_unknown_memories(capsys, formats):  # noqa: F811
    zeke = str(formats["zeke"])
    memory = "00000000-0000-4e4e-8000-000000000002"  # in scope persona:zeke
    code, out, err = cli(capsys, "--db", zeke, "--json", "notes", "search", "task:", "Berlin", "--why", memory)
    assert code == 0, err
    assert json.loads(out)["cut"] == "it is in scope 'persona:zeke', which does not start with 'task:'"
    code, _, err = cli(capsys, "--db", zeke, "notes", "search", "persona:", "Berlin", "--why", "nope")
    assert (code, err) == (2, "oxmem: error: no memory 'nope' in this file\n")


def test_a_note_of_the_store(capsys, demo):
    code, out, err = cli(capsys, *demo, "--json", "notes", "search", "alice", "aisle seats", "--why", "nope")
    assert (code, err) == (2, "oxmem: error: no chunk, event or note 'nope' in this file\n")
    notes = json.loads(cli(capsys, *demo, "--json", "notes", "list", "alice")[1])
    target = notes[-1]["note_id"]
    code, out, err = cli(capsys, *demo, "--json", "notes", "search", "alice", "aisle seats", "--why", target)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["session_id"] == "memory:alice" and doc["retriever"] == "oxmem"
    assert doc["recalled"] == (doc["rank"] is not None and doc["rank"] <= 8)


def test_zekes_best_keyword_match_ranks_last_and_a_deeper_top_k_is_checked(capsys, formats):  # noqa: F811
    zeke = str(formats["zeke"])
    memory = "00000000-0000-4e4e-8000-000000000005"  # "Dana is allergic to penicillin.": the shortest, best BM25
    code, out, err = cli(capsys, "--db", zeke, "--json", "notes", "search", "persona:", "Dana", "--top-k", "2",
                         "--why", memory)  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    # its place among the candidates ZEKE takes at top 2 (k×2 per leg), not among every hit
    assert (doc["reason"], doc["rank"], doc["of"]) == ("outranked", 4, 4)
    assert doc["cut"] == ("outranked within the top 2: #4 of the 4 candidates ZEKE's hybrid recall takes at top 2 (#6 "
                          "when every hit is asked for)")  # fmt: skip
    assert any(
        "a better keyword match has a more negative bm25, so a lower fts score in ZEKE" in n for n in doc["notes"]
    )
    assert doc["changes"] == [{"control": "top_k", "value": 6, "words": "top 6 (now 2)", "rank": 6}]


def test_events_and_search_json(capsys, db):
    run(capsys, "--db", db, "demo")
    events = run_json(capsys, "--db", db, "events", "cli:alice:invoice-rounding", "--limit", "2")
    assert [e["sequence"] for e in events] == [12, 13]
    assert events[0]["payload"] == {"content": "48 passed in 1.88s", "role": "tool", "tool_call_id": "call_t2"}
    doc = run_json(
        capsys,
        "--db",
        db,
        "search",
        "cli:alice:invoice-rounding",
        "half up rounding",
        "--top-k",
        "3",
        "--ranking",
        "oxmem",
    )
    assert doc["fts_expression"] == '"half" OR "up" OR "rounding"'
    assert doc["legs"]["vector"]["candidates"] == 12 and doc["legs"]["fts"]["candidates"] == 7
    assert [h["rank"] for h in doc["hits"]] == [1, 2, 3]
    top = doc["hits"][0]
    assert top["score"] == pytest.approx(0.7 * top["vector_score"] + 0.3 * top["fts_score"], abs=1e-12)
    assert set(top) >= {"chunk_id", "vector_raw", "fts_raw", "vector_rank", "fts_rank", "metadata", "embedding_model"}


def test_search_defaults_to_the_tuned_profile_and_a_chosen_ranking(capsys, db):
    run(capsys, "--db", db, "demo")
    session = "cli:alice:invoice-rounding"
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding", "--top-k", "3")
    assert (doc["retriever"], doc["fts_mode"], doc["fts_expression"]) == ("tuned", "keywords", '"half"* OR "roundi"*')
    assert doc["dropped_terms"] == ["up"] and doc["profile"]["neighbour_weight"] == 0.3
    top = doc["hits"][0]
    assert top["score"] == pytest.approx(
        0.2 * top["vector_score"] + 0.8 * top["fts_score"] + top["context_score"] + top["update_score"]
    )
    # tuning options mean contract §6's tunable hybrid
    assert run_json(capsys, "--db", db, "search", session, "rounding", "--fts-weight", "1")["retriever"] == "oxmem"
    code, _, err = run(capsys, "--db", db, "search", session, "rounding", "--ranking", "tuned", "--fts-mode", "phrase")
    assert code == 2 and err.strip() == (
        "oxmem: error: ranking 'tuned' is a fixed profile: --fts-mode do not apply to it (--ranking oxmem is the "
        "tunable hybrid)"
    )
    run(capsys, "--db", db, "rankings", "--use", "oxydra", "--session", session)
    assert run_json(capsys, "--db", db, "search", session, "rounding")["retriever"] == "oxydra"
    assert run_json(capsys, "--db", db, "search", "memory:alice", "rounding")["retriever"] == "tuned"
    listed = run_json(capsys, "--db", db, "rankings", "--session", session)
    assert [(r["name"], r["default"]) for r in listed] == [("tuned", False), ("oxmem", False), ("oxydra", True)]
    code, out, _ = run(capsys, "--db", db, "rankings", "--reset", "--session", session)
    assert code == 0 and out.splitlines()[1].startswith("tuned *  session  no")
    assert out.splitlines()[-1] == (
        f"* the default for session '{session}' (built in; change it with oxmem rankings --use NAME)"
    )
    code, _, err = run(capsys, "--db", db, "rankings", "--use", "best")
    assert code == 2 and err.strip() == "oxmem: error: no ranking 'best' for this file (known: tuned, oxmem, oxydra)"


def test_a_default_chosen_with_its_tuning_in_the_gui_is_what_the_cli_searches_with(capsys, db):
    run(capsys, "--db", db, "demo")
    session = "cli:alice:invoice-rounding"
    ranking_choice.choose(Path(db), "oxmem", session, {"vector_weight": 0.25, "fts_mode": "phrase"})
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding")
    assert (doc["retriever"], doc["vector_weight"], doc["fts_weight"], doc["fts_mode"]) == (
        "oxmem",
        0.25,
        0.75,
        "phrase",
    )
    doc = run_json(capsys, "--db", db, "search", session, "half up rounding", "--vector-weight", "0.9")
    assert (doc["vector_weight"], doc["fts_mode"]) == (0.9, "terms")  # flags given: the chosen tuning is not used
    code, out, _ = run(capsys, "--db", db, "rankings", "--session", session)
    assert out.splitlines()[-1] == (
        f"* the default for session '{session}' (chosen for the session, vector 0.25 / FTS 0.75, phrase mode; "
        "change it with oxmem rankings --use NAME)"
    )


def test_search_human_output_shows_breakdown(capsys, db):
    run(capsys, "--db", db, "demo")
    code, out, _ = run(capsys, "--db", db, "search", "telegram:alice:tomatoes", "copper", "--fts-weight", "1")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "query 'copper'  weights vector 0 / fts 1  fts terms: \"copper\""
    raw = run_json(capsys, "--db", db, "search", "telegram:alice:tomatoes", "copper")["legs"]["fts"]["max"]
    assert lines[2] == f"fts: 1 candidates, raw {raw:.6g} … {raw:.6g}  (range collapsed: every score 1.0)"
    assert lines[3].split() == ["rank", "score", "vector", "raw→norm", "fts", "raw→norm", "seq", "text"]
    assert lines[4].split()[:2] == ["1", "1.0000"]
