"""The default ranking chosen per file and per session in ``rankings.json``: what is saved, what is read back, and
which entries (a bad tuning, a value that names no ranking, a damaged file) are ignored."""

from __future__ import annotations

import json

import pytest

from oxmem_gui.core.retrieval.ranking_choice import Choice, choose, chosen, config_file, tuning_of


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    """A configuration folder of the test's own: nothing chosen yet."""
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config" / "rankings.json"


@pytest.fixture
def db(tmp_path):
    return tmp_path / "agent.db"


def test_nothing_chosen_is_none_and_needs_no_file(db, config):
    assert config_file() == config
    assert chosen(db) is None and chosen(db, "chat") is None
    assert not config.exists()


def test_a_session_choice_wins_over_the_file_choice(db):
    choose(db, "oxydra")
    choose(db, "oxmem", "chat", {"vector_weight": 0.25, "fts_mode": "phrase"})
    assert chosen(db, "chat") == Choice("oxmem", "session", {"vector_weight": 0.25, "fts_mode": "phrase"})
    assert chosen(db, "other") == Choice("oxydra", "file", {})
    assert chosen(db) == Choice("oxydra", "file", {})


def test_the_file_is_keyed_by_the_resolved_path_and_sorted(db, config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    choose(db.relative_to(tmp_path), "oxmem", "chat", {"vector_weight": 1, "fts_mode": "terms"})
    choose(db, "tuned")
    assert json.loads(config.read_text()) == {
        str(db.resolve()): {"*": "tuned", "chat": {"fts_mode": "terms", "ranking": "oxmem", "vector_weight": 1}}
    }
    assert [p.name for p in config.parent.iterdir()] == ["rankings.json"]  # no temporary file left


def test_forgetting_the_last_choice_removes_the_files_entry(db, config, tmp_path):
    other = tmp_path / "other.db"
    choose(db, "oxmem", "chat")
    choose(other, "oxydra")
    choose(db, None, "chat")
    choose(db, None, "never-chosen")  # forgetting what was never chosen is no error
    assert json.loads(config.read_text()) == {str(other.resolve()): {"*": "oxydra"}}
    assert chosen(db, "chat") is None and chosen(other, "chat") == Choice("oxydra", "file", {})


@pytest.mark.parametrize(
    ("value", "tuning"),
    [
        ({"vector_weight": 0.4, "fts_mode": "phrase"}, {"vector_weight": 0.4, "fts_mode": "phrase"}),
        ({"vector_weight": 0, "fts_mode": "terms"}, {"vector_weight": 0.0, "fts_mode": "terms"}),
        ({"vector_weight": 1.5, "fts_mode": "terms"}, {}),
        ({"vector_weight": -0.1, "fts_mode": "terms"}, {}),
        ({"vector_weight": True, "fts_mode": "terms"}, {}),
        ({"vector_weight": "0.4", "fts_mode": "terms"}, {}),
        ({"vector_weight": 0.4, "fts_mode": "keywords"}, {}),
        ({"vector_weight": 0.4}, {}),
        ("oxmem", {}),
        (None, {}),
    ],
)
def test_only_a_weight_in_0_1_with_a_known_fts_mode_is_tuning(value, tuning):
    assert tuning_of(value) == tuning


def test_entries_that_name_no_ranking_are_ignored_and_bad_tuning_is_dropped(db, config):
    config.parent.mkdir()
    config.write_text(
        json.dumps(
            {
                str(db.resolve()): {
                    "*": 7,
                    "a": {"vector_weight": 0.5},
                    "b": {"ranking": "oxmem", "vector_weight": 2, "fts_mode": "terms"},
                },
                "not-an-entry": ["oxmem"],
            }
        )
    )
    assert chosen(db) is None  # "*" holds no name: as if nothing was chosen for the file
    assert chosen(db, "a") is None
    assert chosen(db, "b") == Choice("oxmem", "session", {})


@pytest.mark.parametrize("text", ["[1, 2]", '"oxmem"', "", '{"x": 1}'])
def test_a_damaged_file_reads_as_empty_and_is_replaced_by_the_next_choice(db, config, text):
    config.parent.mkdir()
    config.write_text(text)
    assert chosen(db) is None
    choose(db, "oxmem")
    assert json.loads(config.read_text()) == {str(db.resolve()): {"*": "oxmem"}}
