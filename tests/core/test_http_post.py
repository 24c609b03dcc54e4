"""``bounded_post`` against a real HTTP server on 127.0.0.1: the answer as sent, the size bound to the byte, a
compressed answer refused, a trickling answer cut at its deadline, each error in one line naming the host; and
the helpers that turn answers and transport errors into words."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from oxmem_gui.core.errors import EmbeddingError, OxmemError
from oxmem_gui.core.http_post import bounded_post, first_line, reason, size_words

MIB = 1 << 20


class Server:
    """A local HTTP server whose POST answer is ``answer(handler, body)``, set per test."""

    def __init__(self) -> None:
        self.answer: Callable[[BaseHTTPRequestHandler, bytes], None] = lambda h, body: None
        self.seen: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.seen.append((dict(self.headers), body))
                with contextlib.suppress(OSError):  # the client went away (a refused or cut answer)
                    outer.answer(self, body)

            def log_message(self, *args) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/embeddings"
        self.thread = threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, **headers: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    client = httpx.Client()
    yield client
    client.close()


def post(http: httpx.Client, server: Server, **bounds) -> tuple[bytes, int]:
    bounds = {"seconds": 30.0, "max_bytes": MIB, **bounds}
    return bounded_post(http, server.url, b'{"input": ["hi"]}', {"X-Probe": "1"}, "local", **bounds)


def test_the_answer_comes_back_as_sent_with_its_status_and_the_client_stays_usable(server, http):
    server.answer = lambda h, body: send(h, 418, b"teapot says: " + body[::-1])
    assert post(http, server) == (b'teapot says: }]"ih"[ :"tupni"{', 418)
    headers, body = server.seen[0]
    assert body == b'{"input": ["hi"]}' and headers["X-Probe"] == "1"
    for watcher in [t for t in threading.enumerate() if t.name == "oxmem-answer-deadline"]:
        watcher.join()  # the deadline's watcher ends with the answer, and never closes the client afterwards
    assert not http.is_closed
    assert post(http, server) == (b'teapot says: }]"ih"[ :"tupni"{', 418)


def test_an_answer_of_exactly_max_bytes_is_kept_and_one_byte_more_is_refused_in_one_line(server, http):
    server.answer = lambda h, _: send(h, 200, b"x" * MIB)
    raw, status = post(http, server)
    assert (len(raw), status) == (MIB, 200)
    server.answer = lambda h, _: send(h, 200, b"x" * (MIB + 1))
    with pytest.raises(OxmemError) as caught:
        post(http, server)
    assert str(caught.value) == "local sent an answer over 1 MiB: refused"


def test_a_compressed_answer_is_refused_as_the_callers_error_type(server, http):
    server.answer = lambda h, _: send(h, 200, b"\x1f\x8b not really gzip", Content_Encoding=" GZip ")
    with pytest.raises(EmbeddingError) as caught:
        post(http, server, error=EmbeddingError)
    assert str(caught.value) == "local sent a compressed answer (gzip) though asked not to"
    server.answer = lambda h, _: send(h, 200, b"plain", Content_Encoding="Identity")
    assert post(http, server, error=EmbeddingError) == (b"plain", 200)


def test_an_answer_that_trickles_in_is_cut_at_the_deadline_and_its_client_closed(server, http):
    def trickle(handler: BaseHTTPRequestHandler, _: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "400")
        handler.end_headers()
        for _ in range(400):  # a byte every 0.05 s: each read is in time, the whole takes 20 s
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.05)

    server.answer = trickle
    with pytest.raises(EmbeddingError) as caught:
        post(http, server, seconds=0.5, error=EmbeddingError)
    assert str(caught.value) == "local sent its answer too slowly (over 0.5 s)"
    assert http.is_closed


def test_a_transport_error_is_not_wrapped_and_reason_gives_the_systems_words(http):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(httpx.ConnectError) as caught:
        bounded_post(http, f"http://127.0.0.1:{port}/", b"", {}, "local", seconds=30, max_bytes=MIB)
    assert str(caught.value).startswith("[Errno ") and str(caught.value).endswith("] Connection refused")
    assert reason(caught.value) == "Connection refused"
    assert reason(TimeoutError()) == "TimeoutError"


def test_first_line_is_the_answers_first_non_blank_line_cut_to_the_limit():
    assert first_line(b"\n  \n  error: bad key \xff\nsecond line") == "error: bad key \ufffd"
    assert first_line(b"") == "" and first_line(b" \n\t ") == ""
    assert first_line(b"x" * 200) == "x" * 119 + "\u2026"
    assert first_line(b"x" * 120) == "x" * 120
    assert first_line(b"abcdef", limit=4) == "abc\u2026"


def test_sizes_are_said_as_people_say_them_and_only_an_errno_prefix_is_dropped():
    assert [size_words(n) for n in (300, 512 << 10, 1 << 20, 3 << 19, 64 << 20)] == [
        "300 bytes", "512 KiB", "1 MiB", "1.5 MiB", "64 MiB",
    ]  # fmt: skip
    assert reason(OSError(111, "Connection refused")) == "Connection refused"
    assert reason(ValueError("[Errno -2] Name or service not known")) == "Name or service not known"
    assert reason(ValueError("the server said ] and left")) == "the server said ] and left"
