"""A real libSQL server for the tests of remote memories: ``tursodb --sync-server`` (npm package turso 0.6.0, which
``./run test`` installs through ``packaging/turso-server.sh``), started on a free loopback port and stopped by pid.

:func:`fill_oxydra` gives it an Oxydra memory: the agent's own migration scripts (``tests/core/formats/upstream/
oxydra``, verbatim) minus what that server cannot hold — the FTS5 table and its three triggers (no FTS5 module)
and libSQL's vector index — with every row of a local Oxydra file, rowids kept. The server is written to over the
same HTTP pipeline the client reads with, by this module's own small poster (the client has no write method).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw
import httpx
import pytest

from oxmem_gui.core.remote.hrana import argument, transaction
from oxmem_gui.core.remote.snapshot import statements
from tests.processes import signals_as_at_a_terminal

ROOT = Path(__file__).resolve().parent.parent
#: the agent's migrations this server cannot run: the FTS5 table and its triggers, and libSQL's vector index
NOT_ON_SERVER = ("0009_", "0014_", "0015_", "0016_", "0024_")


def tursodb() -> Path | None:
    """The server binary: ``$OXMEM_TURSODB``, else where ``packaging/turso-server.sh`` installs it."""
    if os.environ.get("OXMEM_TURSODB"):
        return Path(os.environ["OXMEM_TURSODB"])
    found = sorted((ROOT / ".venv" / "turso" / "node_modules" / "@tursodatabase").glob("cli-*/tursodb"))
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TursoServer:
    """``tursodb FILE --sync-server 127.0.0.1:PORT`` in its own process group, until :meth:`stop` (``file``: a
    database to serve, else a new one in ``folder``)."""

    def __init__(self, folder: Path, file: Path | None = None) -> None:
        binary = tursodb()
        if binary is None or not binary.is_file():
            missing = "no tursodb (the libSQL server): run packaging/turso-server.sh (./run test does)"
            if os.environ.get("OXMEM_REQUIRE_TURSODB"):  # ./run test: a test of the server never skips
                raise RuntimeError(missing)
            pytest.skip(missing)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.file = file or folder / "server.db"
        self.log = (folder / "server.log").open("wb")
        self.process = subprocess.Popen(
            [str(binary), str(self.file), "--sync-server", f"127.0.0.1:{self.port}"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=signals_as_at_a_terminal,  # stopped with SIGTERM, whatever the runner ignores
        )
        self.http = httpx.Client(timeout=30)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.execute("SELECT 1")
                break
            except httpx.TransportError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tursodb did not start: {(folder / 'server.log').read_text()[-500:]}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server by its pid (its process group) and wait for it."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.http.close()
        self.log.close()

    def _post(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answer = self.http.post(f"{self.url}/v2/pipeline", json={"baton": None, "requests": requests})
        answer.raise_for_status()
        results = answer.json()["results"]
        for r in results:
            if r["type"] == "error":
                raise RuntimeError(r["error"]["message"])
            for error in r.get("response", {}).get("result", {}).get("step_errors") or []:
                if error:
                    raise RuntimeError(error["message"])
        return results

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[list[Any]]:
        """One statement; its rows as the server sent them (typed values)."""
        stmt = {"sql": sql, "args": [argument(a) for a in args]}
        (result,) = self._post([{"type": "execute", "stmt": stmt}])
        return result["response"]["result"]["rows"]

    def transaction(self, items: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Statements in one transaction on the server (one batch: BEGIN … COMMIT), as the client builds it."""
        self._post([transaction(list(items))])

    def insert(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], per_batch: int = 500) -> None:
        marks = ", ".join("?" * len(columns))
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        for i in range(0, len(rows), per_batch):
            self.transaction((sql, row) for row in rows[i : i + per_batch])

    def count(self, table: str) -> int:
        return int(self.execute(f"SELECT count(*) FROM {table}")[0][0]["value"])


def oxydra_scripts() -> list[tuple[str, str]]:
    """The agent's migrations (before its libSQL index: ``BLOB`` vectors) that this server runs."""
    from tests.core.formats.fixtures import _oxydra_scripts

    return [(v, sql) for v, sql in _oxydra_scripts(libsql=False) if not v.startswith(NOT_ON_SERVER)]


def fill_oxydra(server: TursoServer, source: Path) -> None:
    """The agent's schema on the server (see the module's docstring) and every row of ``source``'s tables,
    rowids kept (``memory_migrations`` too: the versions the agent recorded)."""
    from tests.core.formats.fixtures import OXYDRA_BOOKKEEPING_SQL

    server.execute(OXYDRA_BOOKKEEPING_SQL)
    for _, sql in oxydra_scripts():
        for statement in statements(sql):
            server.execute(statement)
    conn = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        copy_rows(server, conn)
    finally:
        conn.close()


def copy_rows(server: TursoServer, conn: apsw.Connection) -> None:
    """Every row of each table the server has, from ``conn``, rowids kept (chunks_fts is the server's to lack)."""
    on_server = {r[0]["value"] for r in server.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").fetchall():
        if table not in on_server or table.startswith("sqlite_"):
            continue
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        rows = conn.execute(f"SELECT rowid, {', '.join(columns)} FROM {table} ORDER BY rowid").fetchall()
        server.insert(table, ["rowid", *columns], rows)


class StubServer:
    """A plain HTTP server on a free loopback port answering every POST with ``answer(handler, body)`` — for what
    the local libSQL server cannot show: a token refused (401/403), a web server that is not libSQL, an answer
    cut off midway (forwarding to a real server until told to cut). ``seen`` keeps each request's headers."""

    def __init__(self, answer: Any) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.seen.append(dict(self.headers))
                answer(self, body)

            def log_message(self, *args: Any) -> None:
                pass

        self.seen: list[dict[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def reply(handler: Any, status: int, body: bytes, content_type: str = "text/plain") -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def cutting_proxy(target: str, whole: int) -> StubServer:
    """A proxy to ``target`` that forwards ``whole`` requests, then sends half of each answer and hangs up."""
    count = [0]

    def answer(handler: Any, body: bytes) -> None:
        got = httpx.post(f"{target}/v2/pipeline", content=body, headers={"Content-Type": "application/json"})
        count[0] += 1
        if count[0] <= whole:
            reply(handler, got.status_code, got.content, "application/json")
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(got.content)))
        handler.end_headers()
        handler.wfile.write(got.content[: len(got.content) // 2])
        handler.wfile.flush()
        handler.close_connection = True

    return StubServer(answer)
