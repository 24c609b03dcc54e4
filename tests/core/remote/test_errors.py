"""Everything that can go wrong opening a remote memory is one line, and leaves nothing behind: a bad URL, a
refused connection, a refused token, a server that is not libSQL, a pull or a refresh cut off midway."""

from __future__ import annotations

import asyncio
import gzip
import json
import time

import apsw
import httpx
import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.memory import open_remote, refresh_remote
from oxmem_gui.core.remote import HranaClient, RemoteError, TokenError, hrana, snapshot
from oxmem_gui.core.remote.hrana import server_url, value
from tests.core.remote.test_snapshot import add_events, first_session, rows_of
from tests.remote_server import StubServer, cutting_proxy, free_port, reply


def opening(url: str, cache, token: str | None = None):
    return asyncio.run(open_remote(url, token, folder=cache, embedding="deterministic"))


def refused_by(answer, cache) -> tuple[str, str]:
    """Open a stub server that answers every request with ``answer(handler, body)``: its URL and the one line of
    the :class:`RemoteError` the open raised (nothing may be left in ``cache``)."""
    stub = StubServer(answer)
    try:
        with pytest.raises(RemoteError) as caught:
            opening(stub.url, cache)
    finally:
        stub.stop()
    assert "\n" not in str(caught.value)
    assert not cache.exists() or list(cache.iterdir()) == []
    return stub.url, str(caught.value)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://files.example.com", "not a libSQL URL: 'ftp://files.example.com' has 'ftp://'; use libsql://HOST"),
        ("db-org.turso.io", "not a libSQL URL: 'db-org.turso.io' has no scheme; use libsql://HOST"),
        ("libsql://", "not a libSQL URL: 'libsql://' names no host"),
        ("http://127.0.0.1:99999", "not a libSQL URL: 'http://127.0.0.1:99999' has a bad port"),
        ("libsql://db.turso.io?authToken=abc", "a token in the URL would be shown and saved with it"),
        ("https://user:pw@db.turso.io", "a token in the URL would be shown and saved with it"),
        ("http://SECRET@db.turso.io", "a token in the URL would be shown and saved with it"),
    ],
)
def test_a_bad_url_is_one_line(url, message, cache):
    with pytest.raises(InvalidInputError) as caught:
        opening(url, cache)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert not cache.exists()


def test_urls_as_turso_prints_them():
    assert server_url("libsql://db-org.turso.io") == "https://db-org.turso.io"
    assert server_url(" https://db-org.aws-eu-west-1.turso.io/ ") == "https://db-org.aws-eu-west-1.turso.io"
    assert server_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert server_url("LIBSQL://Host.example:443/base/") == "https://Host.example:443/base"


def test_values_as_the_server_types_them():
    assert value({"type": "integer", "value": "9223372036854775807"}) == 9223372036854775807
    assert value({"type": "float", "value": 1.5}) == 1.5
    assert value({"type": "blob", "base64": "AAEC/w"}) == b"\x00\x01\x02\xff"  # tursodb leaves out the padding
    assert value({"type": "null"}) is None
    with pytest.raises(RemoteError, match="a value of an unknown type 'decimal'"):
        value({"type": "decimal", "value": "1"})


def test_a_refused_connection_is_one_line(cache):
    port = free_port()
    with pytest.raises(RemoteError, match=rf"^could not connect to 127\.0\.0\.1:{port}: Connection refused$"):
        opening(f"http://127.0.0.1:{port}", cache)
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_is_one_line_and_the_token_goes_only_in_the_header(status, cache):
    stub = StubServer(lambda handler, body: reply(handler, status, b"Unauthorized: token expired\n"))
    try:
        with pytest.raises(TokenError) as caught:
            opening(stub.url, cache, token="s3cret-token")
        host = stub.url.split("//")[1]
        assert str(caught.value) == f"{host} refused the auth token (HTTP {status}: Unauthorized: token expired)"
        assert stub.seen[0]["Authorization"] == "Bearer s3cret-token"
    finally:
        stub.stop()
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (404, b"Not Found", "HTTP 404 from POST /v2/pipeline: Not Found"),
        (200, b"<!doctype html><title>Welcome</title>", "HTTP 200 from POST /v2/pipeline: <!doctype html><title>"),
        (200, b'{"hello": "world"}', 'HTTP 200 from POST /v2/pipeline: {"hello": "world"}'),
    ],
)
def test_a_server_that_is_not_libsql_is_one_line(status, body, said, cache):
    url, message = refused_by(lambda handler, _: reply(handler, status, body), cache)
    assert message.startswith(f"{url} does not answer as a libSQL server ({said}")


def test_no_answer_in_time_is_one_line():
    stub = StubServer(lambda handler, _: (time.sleep(1.5), reply(handler, 200, b"{}")))
    try:
        with HranaClient(stub.url, timeout=0.3) as client, pytest.raises(RemoteError) as caught:
            client.read(["SELECT 1"])
        assert str(caught.value) == f"{stub.url.split('//')[1]} did not answer within 0.3 s"
    finally:
        stub.stop()


def test_a_refused_statement_says_what_the_server_said(server):
    with HranaClient(server.url) as client, pytest.raises(RemoteError) as caught:
        client.read(["SELECT 1", "SELECT * FROM no_such_table"])
    assert str(caught.value) == "the server refused a read: Parse error: no such table: no_such_table"
    with HranaClient(server.url) as client:  # the failed read ended its transaction: the next one runs
        assert client.read(["SELECT 40 + 2"])[0].rows == [(42,)]


def test_a_pull_cut_off_midway_leaves_nothing(oxydra_server, cache, monkeypatch):
    monkeypatch.setattr(snapshot, "PAGE_ROWS", 4)
    proxy = cutting_proxy(oxydra_server.url, whole=5)  # the schema, the first pages, 3 more pages; then cut
    try:
        with pytest.raises(RemoteError, match=r"^the connection to 127\.0\.0\.1:\d+ broke off: "):
            opening(proxy.url, cache)
    finally:
        proxy.stop()
    assert list(cache.iterdir()) == []


def test_a_refresh_cut_off_midway_keeps_the_previous_snapshot(oxydra_server, oxydra_file, cache, monkeypatch):
    proxy = cutting_proxy(oxydra_server.url, whole=3)  # the pull's 2 requests, the refresh's first; then cut

    async def go() -> None:
        async with await open_remote(proxy.url, folder=cache, embedding="deterministic") as memory:
            before, notice = rows_of(memory.remote.path), memory.open_notice
            monkeypatch.setattr(snapshot, "PAGE_ROWS", 40)  # 100 new events: the refresh pages on
            add_events(oxydra_server, first_session(oxydra_file), 1000, 100)
            with pytest.raises(RemoteError, match="broke off"):
                await refresh_remote(memory)
            assert rows_of(memory.remote.path) == before
            assert memory.open_notice == notice
            sessions = await memory.list_sessions()
            assert sum(s.event_count for s in sessions) == len(before["conversation_events"])

    try:
        asyncio.run(go())
    finally:
        proxy.stop()
    assert list(cache.iterdir()) == []


def test_a_hostile_schema_is_left_out_and_the_copy_never_attaches_a_file(tmp_path):
    """The copy runs the server's CREATE texts: anything but one plain CREATE is left out, with why, and its
    connection refuses ATTACH whatever it is given."""
    evil = tmp_path / "evil.db"
    schema = snapshot.plan(
        [
            ("table", "notes", "notes", "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)"),
            ("table", "t2", "t2", f"CREATE TABLE t2 (a); ATTACH '{evil}' AS e; CREATE TABLE e.x (a)"),
            ("table", "files", "files", "CREATE VIRTUAL TABLE files USING csv(filename='/etc/passwd')"),
            ("table", "found", "found", "CREATE VIRTUAL TABLE found USING fts5(text)"),
            ("index", "i", "notes", "CREATE INDEX i ON notes (text)"),
            ("view", "v", "v", "CREATE VIEW v AS SELECT 1; DROP TABLE notes"),
        ]
    )
    assert [t.name for t in schema.tables] == ["notes", "found"]
    assert schema.after == ["CREATE INDEX i ON notes (text)"]
    assert sorted(schema.skipped) == ["files", "t2", "v"]
    assert set(schema.skipped.values()) == {
        "not one plain CREATE statement of a table, an FTS5 table, an index, a trigger or a view"
    }
    conn = apsw.Connection(str(tmp_path / "copy.db"))
    snapshot.guard(conn)
    with pytest.raises(apsw.AuthError):
        conn.execute(f"ATTACH '{evil}' AS e")
    conn.close()
    assert not evil.exists()


def test_rows_deleted_during_a_paged_pull_make_it_start_over(oxydra_server, cache, monkeypatch):
    """The agent deletes an event the pull has already copied: the final count differs, the pull starts over, and
    the copy is the server's rows as they are after the deletion. (Rows deleted before their page is read are
    simply not there: the count agrees.)"""
    monkeypatch.setattr(snapshot, "PAGE_ROWS", 4)
    seen = [0]
    first = oxydra_server.execute("SELECT min(rowid) FROM conversation_events")[0][0]["value"]

    def answer(handler, body: bytes) -> None:
        got = httpx.post(f"{oxydra_server.url}/v2/pipeline", content=body, headers={"Content-Type": "application/json"})
        seen[0] += 1
        if seen[0] == 4:  # the first page of events came with request 2
            oxydra_server.execute(f"DELETE FROM conversation_events WHERE rowid = {first}")
        reply(handler, got.status_code, got.content, "application/json")

    proxy = StubServer(answer)
    try:
        memory = opening(proxy.url, cache)
        try:
            report = memory.remote.report
            assert report.rows["conversation_events"] == 20
            assert report.requests == 30 + 29  # the first pull (found short by its final count), the second
            copy = rows_of(memory.remote.path)["conversation_events"]
            assert int(first) not in [r[0] for r in copy] and len(copy) == 20
        finally:
            asyncio.run(memory.aclose())
    finally:
        proxy.stop()


def _batch(*cells) -> bytes:
    """A pipeline answer whose first statement (the schema read) returns one row of ``cells``."""
    result = {"step_results": [{}, {"cols": [{"name": "a"}], "rows": [list(cells)]}, {}, None]}
    answer = {"type": "ok", "response": {"type": "batch", "result": result}}
    return json.dumps({"baton": None, "results": [answer]}).encode()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"results": [1]}', "sent an answer that is not Hrana's (a result is 1)"),
        (b'{"results": [{"type": "ok", "response": "x"}]}', "sent an answer that is not Hrana's (a result is {'type'"),
        (b'{"results": []}', "answered 0 of 1 requests"),
        (_batch({"type": "text"}), "sent an answer that is not Hrana's (KeyError: 'value')"),
        (_batch({"type": "blob", "base64": "A"}), "sent an answer that is not Hrana's (Error: Invalid base64"),
        (_batch({"type": "decimal", "value": "1"}), "the server sent a value of an unknown type 'decimal'"),
        (
            json.dumps({"results": [{"type": "ok", "response": {"result": {"step_results": [{}, {"rows": 5}]}}}]}),
            "sent an answer that is not Hrana's (TypeError: ",
        ),
        (_batch({"type": "text", "value": "table"}), "sent rows oxmem cannot use (ValueError: "),  # 1 column, not 4
    ],
)
def test_an_answer_that_is_not_hranas_is_one_line(body, said, cache):
    data = body.encode() if isinstance(body, str) else body
    _, message = refused_by(lambda handler, _: reply(handler, 200, data, "application/json"), cache)
    assert said in message and "\n" not in message
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://[::1", "not a libSQL URL: 'http://[::1' (Invalid IPv6 URL)"),
        ("http://[zz]:80", "not a libSQL URL: 'http://[zz]:80' ("),
        ("http://999.999.999.999", "not a libSQL URL: 'http://999.999.999.999' (Invalid IPv4 address"),
        ("http://\u2603.invalid:1", "not a libSQL URL: 'http://\u2603.invalid:1' (Invalid IDNA hostname"),
        ("http://127.0.0.1:9/" + "x" * 100_000, "not a libSQL URL: 'http://127.0.0.1:9/xxxx"),
    ],
)
def test_a_url_httpx_would_refuse_is_one_line_before_any_request(url, said, cache):
    with pytest.raises(InvalidInputError) as caught:
        opening(url, cache)
    assert str(caught.value).startswith(said) and len(str(caught.value)) < 400


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            lambda h, _: (
                h.send_response(307),
                h.send_header("Location", "/v2/pipeline"),
                h.send_header("Content-Length", "0"),
                h.end_headers(),
            ),
            "redirects in a loop",
        ),
        (
            lambda h, _: reply_encoded(h, "gzip", b"not gzip at all"),
            "sent a compressed answer (gzip) though asked not to",
        ),
        (lambda h, _: reply(h, 200, b"[" * 100_000 + b"]" * 100_000), "does not answer as a libSQL server (HTTP 200"),
    ],
)
def test_loops_garbage_encodings_and_deep_json_are_one_line(answer, said, cache):
    _, message = refused_by(answer, cache)
    assert said in message and "\n" not in message


def reply_encoded(handler, encoding: str, body: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Encoding", encoding)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_the_token_is_trimmed_checked_and_never_repeated_from_the_server(cache):
    stub = StubServer(lambda h, _: reply(h, 401, b"denied: Bearer tok-SECRET-99 is expired"))
    try:
        with pytest.raises(TokenError) as caught:
            opening(stub.url, cache, token="tok-SECRET-99\r\n")  # as a variable set from a file often ends
        assert stub.seen[0]["Authorization"] == "Bearer tok-SECRET-99"
    finally:
        stub.stop()
    assert "SECRET" not in str(caught.value) and str(caught.value).endswith(
        "(HTTP 401: denied: Bearer [token] is expired)"
    )
    with pytest.raises(InvalidInputError, match="characters an HTTP header cannot carry"):
        opening("http://127.0.0.1:9", cache, token="tok SECRÉT")


def test_a_server_that_sends_the_same_page_again_is_stopped(oxydra_server, cache, monkeypatch):
    """A server answering every page with the first rows again would keep a pull going forever."""
    monkeypatch.setattr(snapshot, "PAGE_ROWS", 4)

    def answer(handler, body: bytes) -> None:
        sent = json.loads(body)
        for step in sent["requests"][0]["batch"]["steps"]:  # every page from the start
            step["stmt"]["sql"] = step["stmt"]["sql"].replace("WHERE rowid > ?", "WHERE rowid > -1 OR ?")
        got = httpx.post(f"{oxydra_server.url}/v2/pipeline", json=sent)
        reply(handler, got.status_code, got.content, "application/json")

    stub = StubServer(answer)
    try:
        with pytest.raises(RemoteError, match="sent memory_migrations rows out of rowid order"):
            opening(stub.url, cache)
    finally:
        stub.stop()
    assert list(cache.iterdir()) == []


def test_a_table_named_chunks_that_is_not_the_stores_opens_as_tables(server, cache):
    server.execute("CREATE TABLE chunks (a TEXT)")
    server.insert("chunks", ["a"], [("x",)])

    async def go() -> None:
        async with await open_remote(server.url, folder=cache, embedding="deterministic") as memory:
            assert memory.format == "sqlite-unknown"
            assert [t.name for t in await memory.tables()] == ["chunks"]

    asyncio.run(go())


SECRET = "tok-SECRET-41"


@pytest.mark.parametrize(
    "url",
    [
        f"ftp://h/?authToken={SECRET}",  # a scheme refused: said before, with the whole URL
        f"http://h:99999/?authToken={SECRET}",  # a bad port
        f"http://[::1/?authToken={SECRET}",  # a broken IPv6 host
        f"http:///?authToken={SECRET}",  # no host
        f"http://{SECRET}@db.example",  # a token as the user part (httpx would send it as Basic auth)
        f"http://user:{SECRET}@db.example",
        f"libsql://db.example?auth_token={SECRET}",
        f"libsql://db.example?token={SECRET}",
        f"libsql://db.example?jwt={SECRET}",
        f"libsql://db.example/#{SECRET}",
    ],
)
def test_a_url_that_could_carry_a_token_is_refused_without_repeating_it(url, cache):
    with pytest.raises(InvalidInputError) as caught:
        opening(url, cache)
    assert SECRET not in str(caught.value) and str(caught.value).startswith("a token in the URL would be shown")
    assert not cache.exists()


def echoing(handler, body: bytes) -> None:
    """A hostile server: the Authorization header it was sent, echoed as a bare-string result and as an integer
    cell that is not a number."""
    said = handler.headers.get("Authorization", "")
    cells = [{"type": "integer", "value": said}]
    results = [{"type": "ok", "response": {"type": "batch", "result": {"step_results": [{}, {"cols": [{"name": "x"}],
               "rows": [cells]}, {}], "step_errors": [None, None, None]}}}]  # fmt: skip
    reply(handler, 200, json.dumps({"results": results}).encode(), "application/json")


def test_a_server_that_echoes_the_token_never_gets_it_shown(cache):
    for answer in (echoing, lambda h, _: reply(h, 200, json.dumps({"results": [h.headers["Authorization"]]}).encode())):
        stub = StubServer(answer)
        try:
            with pytest.raises(RemoteError) as caught:
                opening(stub.url, cache, token=SECRET)
        finally:
            stub.stop()
        assert SECRET not in str(caught.value) and "[token]" in str(caught.value)


def trickle_headers(handler, body: bytes) -> None:
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for i in range(100):  # a header line every 0.1 s: each read is in time, the whole never ends
        handler.wfile.write(f"X-Slow-{i}: 1\r\n".encode())
        handler.wfile.flush()
        time.sleep(0.1)


def test_a_request_whose_headers_trickle_in_is_cut_at_the_deadline(monkeypatch):
    monkeypatch.setattr(hrana, "ANSWER_SECONDS", 1)
    stub = StubServer(trickle_headers)
    try:
        with HranaClient(stub.url) as client:
            started = time.monotonic()
            with pytest.raises(RemoteError) as caught:
                client.read(["SELECT 1"])
            assert time.monotonic() - started < 9  # cut (the whole trickle takes 10 s), however busy the machine
            assert str(caught.value) == f"{client.host} sent its answer too slowly (over 1 s)"
    finally:
        stub.stop()


def test_an_answer_too_big_or_compressed_is_refused_as_it_comes(monkeypatch, cache):
    monkeypatch.setattr(hrana, "ANSWER_BYTES", 1 << 20)
    big = b'{"results": ["' + b"x" * (4 << 20) + b'"]}'
    _, message = refused_by(lambda h, _: reply(h, 200, big, "application/json"), cache)
    assert message.endswith("sent an answer over 1 MiB: refused")
    bomb = gzip.compress(b"[" * (50 << 20))  # 50 MiB of JSON in ~50 KB
    _, message = refused_by(lambda h, _: reply_encoded(h, "gzip", bomb), cache)
    assert message.endswith("sent a compressed answer (gzip) though asked not to")


def test_a_token_the_servers_long_answer_would_cut_in_two_is_still_blanked_out(cache):
    said = "x" * 105 + " Bearer tok-SECRET-99 is expired"  # the 120-character cut falls inside the token
    stub = StubServer(lambda h, _: reply(h, 401, said.encode()))
    try:
        with pytest.raises(TokenError) as caught:
            opening(stub.url, cache, token="tok-SECRET-99")
    finally:
        stub.stop()
    assert "tok-SEC" not in str(caught.value)
    assert str(caught.value).endswith("(HTTP 401: " + "x" * 105 + " Bearer [token…)")
