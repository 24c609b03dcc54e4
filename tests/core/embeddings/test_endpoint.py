"""The OpenAI-compatible embeddings endpoint against a real HTTP server on loopback: which URLs and keys are taken,
what is sent, vectors put back in order, the query cache on disk, and errors that never repeat the key."""

from __future__ import annotations

import json
import pickle
import socket

import numpy as np
import pytest

from oxmem_gui.core.embeddings import endpoint
from oxmem_gui.core.embeddings.endpoint import ApiEmbedding, Endpoint, QueryCache, endpoint_from
from oxmem_gui.core.errors import EmbeddingError, InvalidInputError
from tests.remote_server import StubServer, reply

KEY = "sk-test-0123456789SECRET"
MODEL = "text-embedding-3-small"


def vector_of(text: str) -> list[float]:
    return [float(len(text)), float(ord(text[0])) if text else 0.0, 0.5]


class Embedder:
    """An embeddings server's answers: each text's :func:`vector_of`, listed last text first (with its index)."""

    def __init__(self) -> None:
        self.asked: list[dict] = []

    def __call__(self, handler, body: bytes) -> None:
        asked = json.loads(body)
        self.asked.append(asked)
        data = [{"index": i, "embedding": vector_of(t)} for i, t in enumerate(asked["input"])][::-1]
        reply(handler, 200, json.dumps({"object": "list", "data": data}).encode(), "application/json")


@pytest.fixture
def embedder():
    answer = Embedder()
    server = StubServer(answer)
    yield server, answer
    server.stop()


def serving(status: int, body: bytes):
    """A server answering every request with ``status`` and ``body``."""
    return StubServer(lambda handler, _: reply(handler, status, body, "application/json"))


def api(server: StubServer, cache: QueryCache | None = None, model: str = MODEL) -> ApiEmbedding:
    return ApiEmbedding(endpoint_from(f"{server.url}/v1", KEY), model, cache)


def test_urls_are_normalized_and_the_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-from-env  ")
    assert [endpoint_from(v) for v in (None, "", "   ")] == [None, None, None]
    assert endpoint_from(" OpenAI ") == Endpoint("https://api.openai.com/v1", "sk-from-env")
    local = endpoint_from("HTTP://Localhost:11434/v1/", "sk-given")
    assert (local.url, local.key, local.host) == ("http://Localhost:11434/v1", "sk-given", "Localhost:11434")
    assert "sk-given" not in repr(local)
    monkeypatch.setenv("OPENAI_API_KEY", " ")
    assert endpoint_from("https://example.test/api").key is None


@pytest.mark.parametrize(
    "url",
    [f"http://user:{KEY}@localhost:11434/v1", f"http://localhost/v1?api_key={KEY}", f"http://localhost/v1#{KEY}"],
)
def test_a_url_that_could_hold_a_key_is_refused_without_repeating_it(url):
    with pytest.raises(InvalidInputError) as caught:
        endpoint_from(url, "")
    assert str(caught.value) == endpoint.CREDENTIALS and KEY not in str(caught.value)


def test_urls_that_are_not_http_and_keys_a_header_cannot_carry_are_refused():
    with pytest.raises(InvalidInputError, match=r"^not an embeddings URL: 'ftp://host/v1'; give http\(s\)://"):
        endpoint_from("ftp://host/v1")
    with pytest.raises(InvalidInputError, match=r"^not an embeddings URL: 'http://host:99999/v1' \(Port"):
        endpoint_from("http://host:99999/v1")
    with pytest.raises(InvalidInputError) as caught:
        endpoint_from("http://host/v1", "sk-with space")
    assert str(caught.value) == "$OPENAI_API_KEY has characters an HTTP header cannot carry (spaces, non-ASCII)"


def test_vectors_come_back_in_the_order_asked_with_the_key_only_in_its_header(embedder):
    server, answer = embedder
    backend = api(server)
    out = backend.embed(["hi", "hello", "hey there"])
    assert out.dtype == np.float32 and out.tolist() == [vector_of(t) for t in ("hi", "hello", "hey there")]
    assert (backend.calls, backend.dimensions) == (1, 0)  # (the size is the caller's to say: the stored vectors')
    assert answer.asked == [{"model": MODEL, "input": ["hi", "hello", "hey there"]}]
    (headers,) = server.seen
    assert (headers["Authorization"], headers["Content-Type"], headers["Accept-Encoding"]) == (
        f"Bearer {KEY}",
        "application/json",
        "identity",
    )
    assert backend.embed([]).shape == (0, 0) and backend.calls == 1  # nothing to ask
    assert backend.embed([], dimensions=3).shape == (0, 3) and backend.calls == 1


def test_the_query_cache_asks_only_for_texts_it_has_not_seen(embedder, tmp_path):
    server, answer = embedder
    cache = QueryCache(tmp_path / "cache" / "embeddings.db")
    first = api(server, cache)
    first.embed(["alpha", "beta"])
    again = api(server, cache)  # another backend (another run) on the same cache
    out = again.embed(["beta", "gamma", "alpha"])
    assert out.tolist() == [vector_of(t) for t in ("beta", "gamma", "alpha")]
    assert [a["input"] for a in answer.asked] == [["alpha", "beta"], ["gamma"]]
    api(server, cache, model="other-model").embed(["alpha"])  # the model is part of the cache's key
    assert [a["input"] for a in answer.asked][-1] == ["alpha"] and len(answer.asked) == 3
    kept = cache.path.read_bytes()
    assert KEY.encode() not in kept and b"alpha" not in kept and b"gamma" not in kept


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (  # a refused key: the status and a fixed reason, never the answer (it may repeat the key in any encoding)
            401,
            f"invalid key: Bearer {KEY}",
            "{host} refused the key from $OPENAI_API_KEY (HTTP 401 Unauthorized)",
        ),
        (403, "", "{host} refused the key from $OPENAI_API_KEY (HTTP 403 Forbidden)"),
        (  # a key the 120-character cut would split: blanked out before the cut, so no part of it is shown
            400,
            "x" * 100 + f" key {KEY}",
            "{host} answered HTTP 400 to POST /embeddings: " + "x" * 100 + " key [key]",
        ),
        (500, f"boom\nsecond line {KEY}", "{host} answered HTTP 500 to POST /embeddings: boom"),
        (200, f"<html>{KEY}</html>", "{host} sent an answer that is not an embeddings list (<html>[key]</html>)"),
        (
            200,
            '{"data": [{"index": 0, "embedding": [1, 2]}]}',
            "{host} sent 1 vectors for 2 texts: the answer is not used",
        ),
        (
            200,
            '{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}',
            "{host} sent vectors of unequal or no length: the answer is not used",
        ),
        (
            200,
            '{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}]}',
            "{host} sent vectors of unequal or no length: the answer is not used",
        ),
        (
            200,
            '{"data": [{"index": 0, "embedding": [1, NaN]}, {"index": 1, "embedding": [1, 2]}]}',
            "{host} sent a vector with values that are not finite: the answer is not used",
        ),
    ],
)
def test_bad_answers_are_one_error_without_the_key(status, body, message):
    server = serving(status, body.encode())
    try:
        backend = api(server)
        with pytest.raises(EmbeddingError) as caught:
            backend.embed(["one", "two"])
    finally:
        server.stop()
    host = server.url.removeprefix("http://")
    assert str(caught.value) == message.format(host=host)
    assert KEY[:8] not in str(caught.value) and backend.calls == 1


def test_a_server_that_is_not_there_is_a_connection_error_naming_only_the_host():
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = ApiEmbedding(endpoint_from(f"http://127.0.0.1:{port}/v1", KEY), MODEL)
    with pytest.raises(EmbeddingError) as caught:
        backend.embed(["anything"])
    assert str(caught.value) == f"could not connect to 127.0.0.1:{port}: Connection refused"
    assert backend.calls == 0


def test_the_configured_endpoint_gives_one_backend_per_model_and_pickles_without_a_client():
    try:
        endpoint.configure(None)
        assert endpoint.backend(MODEL) is None
        chosen = endpoint_from("http://127.0.0.1:9/v1", KEY)
        endpoint.configure(chosen)
        one = endpoint.backend(MODEL)
        assert one is endpoint.backend(MODEL) and one is not endpoint.backend("other-model")
        assert (one.endpoint, one.model_name, isinstance(one.cache, QueryCache)) == (chosen, MODEL, True)
    finally:
        endpoint.configure(None)
    copy = pickle.loads(pickle.dumps(ApiEmbedding(chosen, MODEL, dimensions=1536)))
    assert (copy.endpoint, copy.endpoint.key, copy.model_name, copy.dimensions, copy.calls, copy._http) == (
        chosen,
        KEY,
        MODEL,
        1536,
        0,
        None,
    )
