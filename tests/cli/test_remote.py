"""`oxmem --remote URL …` on a real libSQL server (tursodb): the same answers as on the local file, read-only,
one line for each error, and no copy left behind."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxmem_gui.logs import log_file
from tests.cli.test_search_all import cli
from tests.core.formats.fixtures import make_oxydra_agent
from tests.remote_server import StubServer, TursoServer, fill_oxydra, free_port, reply


@pytest.fixture(scope="module")
def oxydra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The local file, and a server holding its rows (shared: these tests only read)."""
    folder = tmp_path_factory.mktemp("remote")
    path = make_oxydra_agent(folder / "oxydra.db")
    server = TursoServer(folder)
    try:
        fill_oxydra(server, path)
        yield path, server.url
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache folder, which must be empty again after every command."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TURSO_AUTH_TOKEN", raising=False)
    return tmp_path / "cache" / "oxmem" / "remote"


def copies(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["events", "discord:carol:sourdough"],
        ["search", "discord:carol:sourdough", "starter smells"],
        ["search", "telegram:alice:berlin-move", "appointment", "--ranking", "oxydra"],
        ["summary", "telegram:alice:berlin-move"],
        ["schedules", "list"],
        ["tables"],
    ],
)
def test_a_remote_memory_answers_as_its_local_file(capsys, oxydra, cache, command):
    path, url = oxydra
    code, local, _ = cli(capsys, "--db", str(path), "--json", *command)
    assert code == 0
    code, remote, err = cli(capsys, "--remote", url, "--json", *command)
    assert code == 0, err
    if command == ["tables"]:  # the copy's tables: the server's, and the full-text table made here
        assert [t["name"] for t in json.loads(remote)] == [t["name"] for t in json.loads(local)]
    else:
        assert json.loads(remote) == json.loads(local)
    assert err.startswith(f"oxmem: notice: snapshot of {url} at ")
    assert copies(cache) == []


def test_info_names_the_server_and_how_the_snapshot_was_read(capsys, oxydra, cache):
    _, url = oxydra
    code, out, _ = cli(capsys, "--remote", url, "info")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{url}: oxydra (Oxydra memory), ")
    assert any(
        line.startswith(f"marker: snapshot of {url} at ") and "in 2 requests (one transaction)" in line
        for line in lines
    )
    assert (
        "editing: a snapshot of a remote database is read-only: oxmem never writes to the server or to the copy"
        in lines
    )


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["notes", "add", "alice", "a new fact"], "`oxmem notes add` would change the remote database"),
        (["forget", "discord:carol:sourdough"], "`oxmem forget` would change the remote database"),
        (["schedules", "pause", "x"], "`oxmem schedules pause` would change the remote database"),
        (["check"], "`oxmem check` works on local files; with --remote, use info, sessions, search…"),
        (["--db", "x.db", "sessions"], "--remote and a local file were both given; give one"),
        (["--auth-token-env", "NO_SUCH_TOKEN_VAR", "sessions"], "--auth-token-env NO_SUCH_TOKEN_VAR: that environment"),
    ],
)
def test_what_a_remote_memory_refuses_is_one_line(capsys, oxydra, cache, command, said):
    _, url = oxydra
    code, out, err = cli(capsys, "--remote", url, *command)
    assert code == 2 and out == ""
    assert err.startswith(f"oxmem: error: {said}") and err.count("\n") == 1


def test_an_empty_remote_url_is_refused_not_taken_for_the_default_store(capsys, cache):
    code, out, err = cli(capsys, "--remote", "", "sessions")
    assert (code, out) == (2, "")
    assert (
        err == "oxmem: error: not a libSQL URL: '' has no scheme; use libsql://HOST, https://HOST or http://HOST:PORT\n"
    )


def test_a_refused_connection_exits_2(capsys, cache):
    port = free_port()
    code, _, err = cli(capsys, "--remote", f"http://127.0.0.1:{port}", "sessions")
    assert (code, err) == (2, f"oxmem: error: could not connect to 127.0.0.1:{port}: Connection refused\n")
    assert copies(cache) == []


def test_the_token_comes_from_the_variable_named_and_is_never_logged(capsys, cache, monkeypatch):
    monkeypatch.setenv("TEAM_MEMORY_TOKEN", "tok-7c1e-secret")
    stub = StubServer(lambda handler, _: reply(handler, 401, b"invalid token"))
    try:
        code, out, err = cli(capsys, "-v", "--remote", stub.url, "--auth-token-env", "TEAM_MEMORY_TOKEN", "sessions")
    finally:
        stub.stop()
    host = stub.url.split("//")[1]
    assert code == 2
    assert err.splitlines()[-1] == f"oxmem: error: {host} refused the auth token (HTTP 401: invalid token)"
    assert stub.seen[0]["Authorization"] == "Bearer tok-7c1e-secret"
    logged = log_file().read_text(encoding="utf-8") if log_file() else ""
    assert "POST" in err + logged  # the request was logged, verbosely…
    assert "tok-7c1e-secret" not in out + err + logged  # …without its token
    assert "tok-7c1e-secret" not in "".join(
        p.read_text(errors="replace") for p in Path(os.environ["XDG_CACHE_HOME"]).rglob("*") if p.is_file()
    )


def test_a_command_the_memory_lacks_names_the_server_not_the_removed_snapshot(capsys, cache, tmp_path):
    server = TursoServer(tmp_path)
    try:
        server.execute("CREATE TABLE recipes (name TEXT)")
        code, _, err = cli(capsys, "--remote", server.url, "sessions")
        chose = cli(capsys, "--remote", server.url, "rankings", "--use", "oxmem")
    finally:
        server.stop()
    assert code == 2 and err.endswith(
        f"{server.url} is a SQLite database: it has no sessions (`oxmem --remote {server.url} info` says what it "
        "holds; `oxmem tables` browses any table)\n"
    )
    assert chose[0] == 2 and "would be kept for its snapshot, which is removed" in chose[2]
    assert copies(cache) == []
