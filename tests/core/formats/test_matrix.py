"""Every registered format through every read command of the command line: an example file of each format (and
variant) — the frameworks' written by their own code — and each command, with and without ``--json``, either
answers (exit 0, JSON that parses) or refuses in one line (exit 2, ``oxmem: error: …``), never a traceback.

The formats are :data:`~oxmem_gui.core.formats.detect.LABELS`: a format registered there without an example
here fails :func:`test_every_registered_format_has_an_example`, so a new format is in this matrix the moment it
is registered."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from oxmem_gui.core.formats.detect import LABELS
from tests.cli._support import _call, build_demo
from tests.core.formats import fixtures as fx


def _framework(module: str, *args, **kwargs) -> Callable[[Path], Path]:
    """A file written by a framework's own code, with the writer of its tests (skipped when it is not installed)."""

    def build(path: Path) -> Path:
        tests = importlib.import_module(f"tests.core.formats.{module}")
        tests.write(path, *args, **kwargs)
        return path

    return build


def _mem0(path: Path) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEM0_TELEMETRY", "False")
        mp.setenv("MEM0_DIR", str(path.parent / "mem0-home"))
        pytest.importorskip("mem0", reason="mem0ai writes these files (a test dependency)")
        import mem0.memory.storage as storage

        importlib.import_module("tests.core.formats.test_mem0_history").write(storage, path)
    return path


def _openai_agents(path: Path) -> Path:
    tests = importlib.import_module("tests.core.formats.test_openai_agents")
    tests.write(path, {"weather": tests.WEATHER, "hello": tests.HELLO})
    return path


def _needs(module: str, build: Callable[[Path], Path]) -> Callable[[Path], Path]:
    def built(path: Path) -> Path:
        pytest.importorskip(module)
        return build(path)

    return built


#: example → (its format, how it is built, what it needs on the command line)
EXAMPLES: dict[str, tuple[str, Callable[[Path], Path], tuple[str, ...]]] = {
    "oxmem": ("oxmem", lambda p: build_demo(p.parent / "demo"), ()),
    "oxydra": ("oxydra", fx.make_oxydra, ()),
    "oxydra-agent": ("oxydra", fx.make_oxydra_agent, ()),
    "oxydra-libsql": ("oxydra-libsql", _needs("libsql", fx.make_oxydra_libsql), ()),
    "omega": ("omega", fx.make_omega, ()),
    "omega-old": ("omega", lambda p: fx.make_omega(p, "old"), ()),
    "zeke": ("zeke", fx.make_zeke, ()),
    "zeke-384": ("zeke", lambda p: fx.make_zeke(p, "384"), ()),
    "aidaemon": ("aidaemon", fx.make_aidaemon, ()),
    "aidaemon-legacy": ("aidaemon-legacy", lambda p: fx.make_aidaemon(p, "legacy"), ()),
    "aidaemon-encrypted": (
        "encrypted",
        _needs("sqlcipher3", fx.make_encrypted_aidaemon),
        ("--key", fx.AIDAEMON_KEY),
    ),
    "openai-agents": ("openai-agents", _openai_agents, ()),
    "agno": ("agno", _framework("test_agno"), ()),
    "mem0-history": ("mem0-history", _mem0, ()),
    "langgraph-store": ("langgraph-store", _framework("test_langgraph_store", text_fields=["text", "tags[*]"]), ()),
    "langgraph-checkpoints": ("langgraph-checkpoints", _framework("test_langgraph_checkpoints"), ()),
    "sqlite-unknown": ("sqlite-unknown", fx.make_unknown_sqlite, ()),
    "not-sqlite": ("not-sqlite", fx.make_not_sqlite, ()),
}


def test_every_registered_format_has_an_example():
    assert set(LABELS) == {fmt for fmt, _, _ in EXAMPLES.values()}


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> dict[str, Path]:
    """Each example written once, as it is first asked for (the commands below only read)."""
    built: dict[str, Path] = {}

    def example(name: str) -> Path:
        if name not in built:
            _, build, _ = EXAMPLES[name]
            built[name] = build(tmp_path_factory.mktemp(name) / f"{name}.db")
        return built[name]

    return example  # type: ignore[return-value]


def answered(capsys, argv: list[str], as_json: bool) -> str:
    """Run ``oxmem ARGV`` and hold it to the rule: exit 0 with (valid JSON) output, or one error line (exit 2);
    ``check`` may exit 1 (problems found). Returns what it printed."""
    code = _call([*argv, "--json"] if as_json else argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, (argv, err)
    if code == 2:  # (notices about the file may come first)
        lines = err.splitlines()
        assert out == "" and lines and lines[-1].startswith("oxmem: error: "), (argv, out, err)
        assert all(line.startswith("oxmem: notice: ") for line in lines[:-1]), (argv, err)
        return ""
    assert code == 0 or (code == 1 and "check" in argv), (argv, code, err)
    if as_json:
        json.loads(out)
    return out


def first_session_and_word(capsys, base: list[str]) -> tuple[str, str]:
    """A session of the file and a word of its first events (``s``, ``memory`` when there is none)."""
    code = _call([*base, "sessions", "--json"])
    out, _ = capsys.readouterr()
    try:
        listed = json.loads(out) if code == 0 else []
    except ValueError:
        listed = []
    rows = listed.get("sessions", []) if isinstance(listed, dict) else listed
    if not rows:
        return "s", "memory"
    session = rows[0]["session_id"]
    code = _call([*base, "events", session, "--json"])
    out, _ = capsys.readouterr()
    listed = json.loads(out) if code == 0 else []
    events = listed.get("events", []) if isinstance(listed, dict) else listed
    texts = [e["payload"].get("content") for e in events if isinstance(e.get("payload"), dict)]
    words = [w.strip(".,!?\"'") for t in texts if isinstance(t, str) for w in t.split()]
    words = [w for w in words if w.isalpha() and len(w) >= 4]
    return session, (words[0] if words else "memory")


COMMANDS = ["info", "sessions", "events", "notes list", "search", "search --all", "search --why", "check", "tables",
            "sql", "rankings", "summary", "diff"]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("example", list(EXAMPLES))
def test_every_read_command_answers_or_refuses_in_one_line(examples, capsys, monkeypatch, example, command):
    monkeypatch.setenv("OXMEM_EMBEDDING", "deterministic")
    path = examples(example)
    _, _, extra = EXAMPLES[example]
    base = ["--db", str(path), *extra]
    session, word = first_session_and_word(capsys, base)
    argv = {
        "events": ["events", session],
        "notes list": ["notes", "list", "alice"],
        "search": ["search", session, word],
        "search --all": ["search", "--all", word],
        "search --why": ["search", session, word, "--why", "1"],
        "sql": ["sql", "SELECT count(*) FROM sqlite_master"],
        "summary": ["summary", session],
        "diff": ["diff", str(path)],
    }.get(command, command.split())
    for as_json in (False, True):
        answered(capsys, [*base, *argv], as_json)
    if command == "search":  # and with each ranking the file offers
        code = _call([*base, "rankings", "--json"])
        out, _ = capsys.readouterr()
        if code == 0:
            listed = json.loads(out)
            names = [r["name"] for r in (listed.get("rankings", []) if isinstance(listed, dict) else listed)]
            for name in names:
                answered(capsys, [*base, "search", session, word, "--ranking", name], as_json=True)
