"""``oxmem … --help`` for every command, the defaults it shows, and what a missing default store suggests."""

from __future__ import annotations

import argparse
import sys

import pytest

from oxmem_gui.cli import build_parser
from oxmem_gui.core.folders import default_db_path

from ._support import assert_one_error_line, run


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command line that reaches a parser: (), ("search",), ("notes", "search"), …"""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(build_parser())


def _parser_of(command: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in command:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


def _help(capsys, monkeypatch, *command: str) -> str:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, *command, "--help")
    assert (code, err) == (0, ""), (command, code, err)
    return " ".join(out.split())


def test_the_walk_reaches_every_action_of_notes_and_schedules():
    assert {(), ("search",), ("tables",), ("model",), ("notes",), ("schedules",)} <= set(COMMANDS)
    assert {c[1] for c in COMMANDS if c[:1] == ("notes",) and len(c) == 2} == {
        "list",
        "add",
        "update",
        "delete",
        "search",
    }
    assert {c[1] for c in COMMANDS if c[:1] == ("schedules",) and len(c) == 2} == {
        "list",
        "add",
        "update",
        "next",
        "pause",
        "resume",
        "delete",
        "runs",
    }


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "oxmem")
def test_help_of_every_command_exits_0(capsys, monkeypatch, command):
    shown = _help(capsys, monkeypatch, *command)
    assert shown.startswith(" ".join(("usage: oxmem", *command)) + " ")
    # the global options are listed under every command, with their defaults
    assert "--db PATH store file (default: $OXMEM_DB or the user data folder)" in shown
    assert "(default: 30)" in shown  # --wait


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "oxmem")
def test_every_option_that_takes_a_value_says_its_default(command):
    parser = _parser_of(command)
    in_required_group = {id(a) for g in parser._mutually_exclusive_groups if g.required for a in g._group_actions}
    silent = [
        a.option_strings[0] if a.option_strings else a.dest
        for a in parser._actions
        if not a.required
        and id(a) not in in_required_group
        and (a.option_strings and a.nargs != 0 or a.nargs == "?")
        and "default" not in (a.help or "")
    ]
    assert silent == []


def test_search_help_shows_each_option_with_its_default(capsys, monkeypatch):
    for command in (("search",), ("notes", "search")):
        shown = _help(capsys, monkeypatch, *command)
        for text in (
            "--top-k N how many hits, 1 to 1,000 (default: 8)",
            "--vector-weight W weight of the vector (cosine) leg (default: 0.7, or 1 − --fts-weight when only that "
            "is given)",
            "--fts-weight W weight of the full-text (BM25) leg (default: 0.3, or 1 − --vector-weight when only that "
            "is given)",
            "--fts-mode {terms,phrase} terms: any of the words; phrase: the words in a row (default: terms)",
            "--tag T only hits tagged T; repeat for more tags (default: no tag filter)",
            "--tag-mode {any,all} any: a hit needs one of the --tag tags; all: every one (default: any)",
            "--ranking NAME which ranking to run (see `oxmem rankings`; default: the store's hybrid",
        ):
            assert text in shown, (command, text)


@pytest.fixture
def no_store_yet(tmp_path, monkeypatch):
    """A home folder with nothing in it, no $OXMEM_DB and no $XDG_DATA_HOME: the default store is missing."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the default store's folder asserted here is the Linux one (~/.local/share/oxmem)")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OXMEM_DB", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_db_path() == tmp_path / ".local" / "share" / "oxmem" / "memory.db"
    return tmp_path


HINT = (
    "no store at ~/.local/share/oxmem/memory.db — create one with `oxmem init`, or try `oxmem demo`; "
    "--db PATH opens another file"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"],
        ["search", "telegram:alice:lisbon-trip", "hotel"],
        ["notes", "list", "alice"],
        ["schedules", "list"],
        ["forget", "s"],
        ["check"],
        ["info"],
        ["tables"],
    ],
    ids=" ".join,
)
def test_a_missing_default_store_says_how_to_make_one(capsys, no_store_yet, argv):
    code, out, err = run(capsys, *argv)
    assert_one_error_line(code, out, err)
    assert err == f"oxmem: error: {HINT}\n"
    assert list(no_store_yet.iterdir()) == []  # nothing created, not even the folder


def test_the_hint_works_init_then_reads(capsys, no_store_yet):
    code, out, err = run(capsys, "init")
    assert (code, err) == (0, "")
    assert out == f"{no_store_yet}/.local/share/oxmem/memory.db: applied 0001_initial\n"
    code, out, err = run(capsys, "sessions")
    assert (code, out, err) == (0, "session  created  updated  last seq  events\n", "")


def test_a_missing_default_store_outside_home_is_named_in_full(capsys, no_store_yet, monkeypatch, tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    code, out, err = run(capsys, "sessions")
    assert (code, out) == (2, "")
    assert err.startswith(f"oxmem: error: no store at {data}/oxmem/memory.db — create one with `oxmem init`")


def test_a_path_given_is_only_said_missing(capsys, no_store_yet, monkeypatch):
    """--db and $OXMEM_DB name a file on purpose: a typo there should not be answered by creating another."""
    absent = no_store_yet / "absent.db"
    code, _, err = run(capsys, "--db", str(absent), "sessions")
    assert (code, err) == (2, f"oxmem: error: {absent} does not exist\n")
    monkeypatch.setenv("OXMEM_DB", str(absent))
    code, _, err = run(capsys, "sessions")
    assert (code, err) == (2, f"oxmem: error: {absent} does not exist\n")


def test_demo_and_init_take_the_store_as_their_argument(capsys, tmp_path):
    """`oxmem demo PATH` is what a newcomer types first: it means `--db PATH` (it said "unrecognized arguments")."""
    path = tmp_path / "new" / "demo.db"
    code, out, err = run(capsys, "demo", str(path))
    assert (code, err) == (0, "")
    assert out.startswith(f"demo written to {path}: 6 sessions, 50 events, 9 notes")
    assert run(capsys, "init", str(path)) == (0, f"{path}: up to date\n", "")
    assert run(capsys, "--db", str(path), "demo", str(path))[0] == 0  # the same store named twice is fine
    other = tmp_path / "other.db"
    code, out, err = run(capsys, "--db", str(other), "demo", str(path))
    assert_one_error_line(code, out, err, f"two stores named: --db {other} and {path}; give one")
    assert not other.exists()
