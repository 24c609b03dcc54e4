"""The embeddings endpoint against servers that misbehave on purpose, each a real HTTP server on loopback: one that
repeats the key back in every encoding it can (in its answer's body, headers and reason phrase), answers whose
vectors do not fit the stored ones, URLs a request could not be made to, redirects, and an answer far larger than
the request could need (measured in a child process)."""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

import pytest

from oxmem_gui.core import redaction
from oxmem_gui.core.embeddings import endpoint
from oxmem_gui.core.embeddings.endpoint import ApiEmbedding, QueryCache, UnusableAnswer, endpoint_from
from oxmem_gui.core.errors import EmbeddingError, InvalidInputError
from tests.remote_server import reply
from tests.secret_forms import forms, go_escaped, leaks, random_key

MODEL = "text-embedding-3-small"
KEY = "sk-hostile-0123456789abcdef"
#: the statuses a hostile server answers with (200: with an answer that is not JSON)
STATUSES = (400, 401, 403, 500, 200)


@pytest.fixture(autouse=True)
def forget_the_keys(monkeypatch):
    """The many keys of these tests are remembered only while each test runs (a process holds one or two)."""
    monkeypatch.setattr(redaction, "_given", set(redaction._given))


class Serving:
    """A loopback HTTP server answering each POST with ``answer(handler, body)`` (``answer`` may be replaced
    between requests); ``seen`` keeps each request's headers. Stopped by :meth:`stop` within a twentieth of a
    second."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler, bytes], None]) -> None:
        self.answer = answer
        self.seen: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.seen.append(dict(self.headers))
                with contextlib.suppress(OSError):  # the client hung up (an answer refused as it came)
                    outer.answer(self, body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serving(answer: Callable[[BaseHTTPRequestHandler, bytes], None]) -> Serving:
    return Serving(answer)


def api(server: Serving, key: str = KEY, dimensions: int = 0) -> ApiEmbedding:
    return ApiEmbedding(endpoint_from(f"{server.url}/v1", key), MODEL, dimensions=dimensions)


# -- the key repeated back ----------------------------------------------------------------------------------------


def hostile(rng: random.Random, status: int):
    """An answer with ``status`` whose reason phrase, headers and body repeat the request's key — read from its
    ``Authorization`` header — in encodings picked by ``rng`` (its first line holds several: the line shown)."""

    def answer(handler, _body: bytes) -> None:
        key = handler.headers["Authorization"].removeprefix("Bearer ")
        every = forms(key)
        picked = rng.sample(sorted(every), 6)
        ascii_forms = [every[n] for n in sorted(every) if every[n].isascii() and "\n" not in every[n]]
        first = " ".join(every[n] for n in picked)
        echo = json.dumps({"error": {"message": f"Incorrect API key provided: {key}", "header": f"Bearer {key}"}})
        body = f"{first} | {echo}\n{go_escaped(key)}\n{quote(key)}" if status != 200 else "{not json " + first
        handler.send_response(status, rng.choice(ascii_forms))
        handler.send_header("Content-Type", "application/json")
        for i, form in enumerate(rng.sample(ascii_forms, 4)):
            handler.send_header(f"X-Echo-{i}", form)
        raw = body.encode()
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    return answer


def test_a_server_repeating_the_key_in_any_encoding_never_gets_it_shown():
    rng = random.Random(7)
    server = serving(lambda handler, _: None)
    shown = []
    try:
        for run in range(60):
            key, status = random_key(rng), STATUSES[run % len(STATUSES)]
            server.answer = hostile(rng, status)
            with pytest.raises(EmbeddingError) as caught:
                api(server, key).embed(["where did Alice fly?"])
            said = str(caught.value)
            assert leaks(key, said) == [], (run, status, key, said)
            assert "\n" not in said
            shown.append(said)
    finally:
        server.stop()
    host = server.url.removeprefix("http://")
    assert shown.count(f"{host} refused the key from $OPENAI_API_KEY (HTTP 401 Unauthorized)") == 12
    assert shown.count(f"{host} refused the key from $OPENAI_API_KEY (HTTP 403 Forbidden)") == 12
    assert sum(s.startswith(f"{host} answered HTTP 500 to POST /embeddings: ") for s in shown) == 12
    assert sum(s.startswith(f"{host} sent an answer that is not an embeddings list ({{not json ") for s in shown) == 12


@pytest.mark.parametrize(("status", "reason"), [(401, "Unauthorized"), (403, "Forbidden")])
def test_a_refused_key_is_said_with_the_status_and_a_fixed_reason_never_the_answer(status, reason):
    server = serving(lambda handler, _: reply(handler, status, b"your key sk-hostile-0123456789abcdef was wrong"))
    try:
        with pytest.raises(EmbeddingError) as caught:
            api(server).embed(["q"])
        host = server.url.removeprefix("http://")
        assert str(caught.value) == f"{host} refused the key from $OPENAI_API_KEY (HTTP {status} {reason})"
        with pytest.raises(EmbeddingError) as caught:
            ApiEmbedding(endpoint_from(f"{server.url}/v1", ""), MODEL).embed(["q"])
        assert str(caught.value) == f"{host} asks for a key (HTTP {status} {reason}): none is set in $OPENAI_API_KEY"
    finally:
        server.stop()


# -- answers that do not fit ---------------------------------------------------------------------------------------


def answering(data, status: int = 200) -> Serving:
    """A server answering every request with ``{"data": data}`` (a text: sent as it is)."""
    body = data if isinstance(data, str) else json.dumps({"object": "list", "data": data})
    return serving(lambda handler, _: reply(handler, status, body.encode(), "application/json"))


def item(i, vector) -> dict:
    return {"object": "embedding", "index": i, "embedding": vector}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([item(0, [1.0, 2.0])], "{host} sent 1 vectors for 2 texts: the answer is not used"),
        (
            [item(0, [1, 2]), item(1, [3, 4]), item(2, [5, 6])],
            "{host} sent 3 vectors for 2 texts: the answer is not used",
        ),
        (
            [item(0, [1.0, 2.0]), item(0, [3.0, 4.0])],
            "{host} sent vectors whose indexes are not 0 to 1, each once: the answer is not used",
        ),
        (
            [item(0, [1.0, 2.0]), item(2, [3.0, 4.0])],
            "{host} sent vectors whose indexes are not 0 to 1, each once: the answer is not used",
        ),
        (
            [item(True, [1.0, 2.0]), item(0, [3.0, 4.0])],
            "{host} sent vectors whose indexes are not 0 to 1, each once: the answer is not used",
        ),
        (
            [item(0, [1.0, "2.5"]), item(1, [3.0, 4.0])],
            "{host} sent a vector with values that are not numbers: the answer is not used",
        ),
        (
            [item(0, [1.0, True]), item(1, [3.0, 4.0])],
            "{host} sent a vector with values that are not numbers: the answer is not used",
        ),
        (
            [item(0, [1.0, None]), item(1, [3.0, 4.0])],
            "{host} sent a vector with values that are not numbers: the answer is not used",
        ),
        (
            [item(0, [[1.0], [2.0]]), item(1, [3.0, 4.0])],
            "{host} sent a vector with values that are not numbers: the answer is not used",
        ),
        (
            [item(0, "1.0,2.0"), item(1, [3.0, 4.0])],
            "{host} sent a vector with values that are not numbers: the answer is not used",
        ),
        (
            '{"data": [{"index": 0, "embedding": [1, NaN]}, {"index": 1, "embedding": [1, 2]}]}',
            "{host} sent a vector with values that are not finite: the answer is not used",
        ),
        (
            '{"data": [{"index": 0, "embedding": [1, 1e999]}, {"index": 1, "embedding": [1, 2]}]}',
            "{host} sent a vector with values that are not finite: the answer is not used",
        ),
        (
            '{"data": [{"index": 0, "embedding": [1, ' + "9" * 400 + ']}, {"index": 1, "embedding": [1, 2]}]}',
            "{host} sent a vector with values that are not finite: the answer is not used",
        ),
        (
            [item(0, [1.0, 2.0]), item(1, [3.0])],
            "{host} sent vectors of unequal or no length: the answer is not used",
        ),
        ([item(0, []), item(1, [])], "{host} sent vectors of unequal or no length: the answer is not used"),
        (
            [item(0, [0] * 8193), item(1, [0] * 8193)],
            "{host} sent vectors of 8193 values, more than the 8192 of any embedding model: the answer is not used",
        ),
        (
            {"index": 0},
            '{host} sent an answer that is not an embeddings list ({{"object": "list", "data": {{"index": 0}}}})',
        ),
    ],
)
def test_an_answer_that_does_not_fit_the_texts_is_one_line_and_never_used(data, message, tmp_path):
    server = answering(data)
    try:
        backend = ApiEmbedding(endpoint_from(f"{server.url}/v1", KEY), MODEL, QueryCache(tmp_path / "e.db"))
        with pytest.raises(UnusableAnswer) as caught:
            backend.embed(["one", "two"])
    finally:
        server.stop()
    assert str(caught.value) == message.format(host=server.url.removeprefix("http://"))
    assert backend.cache.get(QueryCache.key(backend.endpoint, MODEL, "one")) is None  # nothing of it kept


def test_vectors_of_another_size_than_the_stored_ones_are_refused_and_not_kept(tmp_path):
    server = answering([item(0, [0.6, 0.8, 0.0])])
    cache = QueryCache(tmp_path / "e.db")
    try:
        backend = ApiEmbedding(endpoint_from(f"{server.url}/v1", KEY), MODEL, cache)
        with pytest.raises(UnusableAnswer) as caught:
            backend.embed(["coffee"], dimensions=1536)
        host = server.url.removeprefix("http://")
        assert str(caught.value) == (
            f"{host} sent vectors of 3 values for {MODEL}, whose stored vectors have 1536: the answer is not used"
        )
        assert cache.get(QueryCache.key(backend.endpoint, MODEL, "coffee")) is None
        assert backend.embed(["coffee"], dimensions=3).tolist() == [[0.6000000238418579, 0.800000011920929, 0.0]]
        assert backend.embed(["coffee"], dimensions=3).shape == (1, 3) and len(server.seen) == 2  # (now kept)
        with pytest.raises(UnusableAnswer):  # a kept vector of another size is not taken for this one: asked again
            backend.embed(["coffee"], dimensions=1536)
        assert len(server.seen) == 3 and backend.dimensions == 0  # the size is the caller's to say, not learned
    finally:
        server.stop()


def test_many_texts_are_asked_in_batches_each_answer_bounded_by_what_it_could_need():
    asked = []

    def answer(handler, body: bytes) -> None:
        texts = json.loads(body)["input"]
        asked.append(len(texts))
        reply(handler, 200, json.dumps({"data": [item(i, [float(i), 1.0]) for i in range(len(texts))]}).encode())

    server = serving(answer)
    try:
        out = api(server).embed([f"text {i}" for i in range(150)])
    finally:
        server.stop()
    assert asked == [64, 64, 22] and out.shape == (150, 2) and out[:, 0].tolist() == [float(i % 64) for i in range(150)]
    assert [endpoint.answer_bytes(n, d) for n, d in ((1, 0), (64, 0), (1, 1536), (2, 3))] == [
        (64 << 10) + 512 + 8192 * 32,
        (64 << 10) + 64 * (512 + 8192 * 32),
        (64 << 10) + 512 + 1536 * 32,
        (64 << 10) + 2 * (512 + 3 * 32),
    ]


def test_an_answer_one_byte_over_its_bound_is_refused_in_one_line():
    bound = endpoint.answer_bytes(1, 2)
    answer = json.dumps({"data": [item(0, [0.5, 0.5])]})
    sizes = iter([bound, bound + 1])
    server = serving(lambda handler, _: reply(handler, 200, answer.ljust(next(sizes)).encode(), "application/json"))
    try:
        backend = api(server, dimensions=2)
        assert backend.embed(["q"]).tolist() == [[0.5, 0.5]]  # exactly the bound: taken (JSON may end in spaces)
        with pytest.raises(EmbeddingError) as caught:
            backend.embed(["r"])
    finally:
        server.stop()
    assert str(caught.value) == f"{server.url.removeprefix('http://')} sent an answer over 64.6 KiB: refused"


def test_a_sixty_mib_answer_is_refused_without_reading_it_into_memory():
    """The answer streams in as fast as loopback carries it; the client, in a child process, reads only what a
    query could need, and its peak memory stays a small multiple of a bare interpreter's."""
    number = b"0.5,"  # short numbers: many values for the size, as a hostile server would send
    whole = 60 << 20

    def answer(handler, _body: bytes) -> None:
        head, tail = b'{"data": [{"index": 0, "embedding": [', b"0.5]}]}"
        count = (whole - len(head) - len(tail)) // len(number)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(head) + count * len(number) + len(tail)))
        handler.end_headers()
        try:
            handler.wfile.write(head)
            block = number * 4096
            for _ in range(count // 4096):
                handler.wfile.write(block)
            handler.wfile.write(number * (count % 4096) + tail)
        except OSError:  # the client hung up: what the test wants
            return

    server = serving(answer)
    child = textwrap.dedent(
        f"""
        import json, sys
        from oxmem_gui.core.embeddings.endpoint import ApiEmbedding, endpoint_from
        from oxmem_gui.core.errors import EmbeddingError
        backend = ApiEmbedding(endpoint_from({server.url + "/v1"!r}, "sk-child-key-0123456789"), {MODEL!r})
        try:
            backend.embed(["where did Alice fly?"])
            said = "taken"
        except EmbeddingError as exc:
            said = str(exc)
        # this process's own peak (VmHWM: its memory since exec; ru_maxrss would count the test runner's, which
        # Linux carries across fork and exec)
        peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
        print(json.dumps({{"said": said, "peak_kib": peak}}))
        """
    )
    try:
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["said"] == f"{server.url.removeprefix('http://')} sent an answer over 320 KiB: refused"
    assert report["peak_kib"] < 300 * 1024, report


# -- where a request may go ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://local\x1bhost/v1", "'http://local\\x1bhost/v1'"),
        ("http://localhost/v1\x7f", "'http://localhost/v1\\x7f'"),
        ("http://localhost\x00/v1", "'http://localhost\\x00/v1'"),
        ("http://localhost/v\n1", "'http://localhost/v\\n1'"),
        ("http://localhost/v\t1", "'http://localhost/v\\t1'"),
        ("http://local host/v1", "'http://local host/v1'"),
        ("http://localhost/\u202ev1", "'http://localhost/\\u202ev1'"),
        ("http://localhost/v1\u2028x", "'http://localhost/v1\\u2028x'"),
    ],
)
def test_a_url_with_a_control_character_or_a_space_is_refused_showing_it_escaped(url, shown):
    with pytest.raises(InvalidInputError) as caught:
        endpoint_from(url, KEY)
    said = str(caught.value)
    assert said == f"not an embeddings URL: {shown} holds a control character or a space"
    assert said.isprintable()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://[::1/v1", "not an embeddings URL: 'http://[::1/v1' (Invalid IPv6 URL)"),
        (
            "http:///v1",
            "not an embeddings URL: 'http:///v1'; give http(s)://HOST[:PORT]/PATH (as OPENAI_BASE_URL is "
            "written, e.g. http://localhost:11434/v1 for Ollama) or 'openai'",
        ),
        ("http://\u2603.net/v1", "not an embeddings URL: 'http://\u2603.net/v1' (Invalid IDNA hostname: '\u2603.net')"),
    ],
)
def test_a_url_httpx_would_refuse_is_refused_before_any_request(url, message):
    with pytest.raises(InvalidInputError) as caught:
        endpoint_from(url, KEY)
    assert str(caught.value) == message


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_text_is_not_sent_again(status):
    elsewhere = serving(lambda handler, _: reply(handler, 200, json.dumps({"data": [item(0, [1.0])]}).encode()))

    def redirect(handler, _body: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Location", f"{elsewhere.url}/v1/embeddings")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server = serving(redirect)
    try:
        with pytest.raises(EmbeddingError) as caught:
            api(server).embed(["the query's private words"])
    finally:
        server.stop()
        elsewhere.stop()
    assert str(caught.value) == (
        f"{server.url.removeprefix('http://')} answered HTTP {status}, a redirect: not followed, the text was not "
        "sent again (give the address it names as the endpoint, if it is to be trusted)"
    )
    assert len(server.seen) == 1 and elsewhere.seen == []


# -- an answer for stored vectors: of their size, or left out of the search ---------------------------------------


async def searched(path, retriever: str, scope: str, query: str, server: Serving | None = None):
    """``query`` ranked by ``retriever`` over ``scope`` of the file at ``path``, with ``server`` as the configured
    embeddings endpoint (none: none)."""
    from oxmem_gui.core.memory import open_memory

    endpoint.configure(endpoint_from(f"{server.url}/v1", KEY) if server is not None else None)
    try:
        async with await open_memory(path, read_only=True, embedding="deterministic") as memory:
            return await memory.search(retriever, scope, query, 8)
    finally:
        endpoint.configure(None)


def embedding_each_text(vector_of: Callable[[str], list[float]]) -> Serving:
    """A server giving each text asked for the vector ``vector_of(text)``."""

    def answer(handler, body: bytes) -> None:
        texts = json.loads(body)["input"]
        reply(handler, 200, json.dumps({"data": [item(i, vector_of(t)) for i, t in enumerate(texts)]}).encode())

    return serving(answer)


def test_a_zeke_search_leaves_its_vector_part_out_when_the_answer_has_another_size_than_the_stored_vectors(tmp_path):
    import asyncio

    from tests.core.formats.fixtures import make_zeke

    path = make_zeke(tmp_path / "memory.db")  # 1536-value vectors: text-embedding-3-small
    server = embedding_each_text(lambda text: [1.0, 0.5, 0.25])
    try:
        result = asyncio.run(searched(path, "zeke", "notes", "bike lock", server))
    finally:
        server.stop()
    why = (
        f"{server.url.removeprefix('http://')} sent vectors of 3 values for {MODEL}, whose stored vectors have 1536: "
        "the answer is not used; the vector part is left out"
    )
    assert result.skipped_models == {MODEL: why} and result.models == [] and result.vector_errors == []
    assert f"vector: {why} — as ZEKE does when embedding fails, the result is the keyword part only" in result.steps
    assert [(h.text, h.metadata["match_type"]) for h in result.hits] == [("Bike lock code changed; ask Dana.", "fts")]
    assert len(server.seen) == 1


def test_an_oxmem_store_of_an_api_models_vectors_uses_an_answer_of_their_size_and_leaves_out_another(tmp_path):
    import asyncio

    import apsw

    from oxmem_gui.core.embeddings.backends import deterministic_vector
    from tests.cli._support import build_demo

    path = build_demo(tmp_path / "demo")
    session, query = "telegram:alice:lisbon-trip", "hotel near the old town"
    own = asyncio.run(searched(path, "oxmem", session, query))  # its vectors as made: deterministic-hash-v1
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE chunks_vec SET embedding_model = ?", (MODEL,))  # the same 64-value vectors, named as OpenAI's
    conn.close()
    right = embedding_each_text(lambda text: deterministic_vector(text).tolist())
    try:
        result = asyncio.run(searched(path, "oxmem", session, query, right))
    finally:
        right.stop()
    assert (result.models, result.skipped_models, result.vector_errors) == ([MODEL], {}, [])
    assert [(h.chunk_id, h.vector_raw, h.fts_raw) for h in result.hits] == [
        (h.chunk_id, h.vector_raw, h.fts_raw) for h in own.hits
    ]
    assert sum(h.vector_raw is not None for h in result.hits) == len(result.hits) == 8
    wrong = embedding_each_text(lambda text: [0.6, 0.8, 0.0])
    try:
        result = asyncio.run(searched(path, "oxmem", session, query, wrong))
    finally:
        wrong.stop()
    why = (
        f"{wrong.url.removeprefix('http://')} sent vectors of 3 values for {MODEL}, whose stored vectors have 64: the "
        "answer is not used; the vector part is left out"
    )
    assert (result.models, result.skipped_models, result.vector_errors) == ([], {MODEL: why}, [])
    assert result.hits and all(h.vector_raw is None for h in result.hits)


def test_a_zeke_edit_refuses_an_answer_of_another_size_than_the_files_vectors_and_changes_nothing(tmp_path):
    import asyncio

    import apsw

    from oxmem_gui.core.memory import open_memory
    from tests.core.formats.fixtures import ZEKE_IDS, make_zeke

    path = make_zeke(tmp_path / "memory.db")
    memory_id = ZEKE_IDS["n-wifi"]
    before = apsw.Connection(str(path)).execute("SELECT text, embedding FROM memories WHERE id = ?", (memory_id,))
    before = before.fetchall()
    server = embedding_each_text(lambda text: [0.6, 0.8, 0.0])

    async def edit() -> None:
        async with await open_memory(path, read_only=False, embedding="deterministic") as memory:
            await memory.update_note("notes", memory_id, "Guest Wi-Fi password changed.")

    endpoint.configure(endpoint_from(f"{server.url}/v1", KEY))
    try:
        with pytest.raises(UnusableAnswer) as caught:
            asyncio.run(edit())
    finally:
        endpoint.configure(None)
        server.stop()
    assert str(caught.value) == (
        f"{server.url.removeprefix('http://')} sent vectors of 3 values for {MODEL}, whose stored vectors have 1536: "
        "the answer is not used"
    )
    after = apsw.Connection(str(path)).execute("SELECT text, embedding FROM memories WHERE id = ?", (memory_id,))
    assert after.fetchall() == before and len(before[0][1]) == 1536 * 4


def test_why_not_leaves_out_the_vectors_an_answer_of_another_size_does_not_fit(tmp_path):
    import asyncio

    import apsw

    from oxmem_gui.core.memory import open_memory
    from tests.cli._support import build_demo

    path = build_demo(tmp_path / "demo")
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE chunks_vec SET embedding_model = ?", (MODEL,))  # 64-value vectors, named as OpenAI's
    conn.close()
    server = embedding_each_text(lambda text: [0.6, 0.8, 0.0])

    async def story():
        async with await open_memory(path, read_only=True, embedding="deterministic") as memory:
            return await memory.why_not("oxmem", "telegram:alice:lisbon-trip", "hotel near the old town", "3", 2)

    endpoint.configure(endpoint_from(f"{server.url}/v1", KEY))
    try:
        found = asyncio.run(story())
    finally:
        endpoint.configure(None)
        server.stop()
    why = (
        f"{server.url.removeprefix('http://')} sent vectors of 3 values for {MODEL}, whose stored vectors have 64: the "
        "answer is not used; the vector part is left out"
    )
    assert (found.result.models, found.result.skipped_models, found.result.vector_errors) == ([], {MODEL: why}, [])
