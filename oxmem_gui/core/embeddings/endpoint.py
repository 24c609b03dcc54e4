"""An OpenAI-compatible embeddings endpoint, used only when the user asks for one.

OpenAI, Ollama, LM Studio, vLLM and llama.cpp's server all answer ``POST {base}/embeddings`` with
``{"model": M, "input": [texts]}`` → ``{"data": [{"index": i, "embedding": [...]}, …]}``. oxmem calls one only
when ``--embeddings-url URL`` (or ``$OXMEM_EMBEDDINGS_URL``) names it — ``openai`` meaning OpenAI's own API — for
a model no local copy of which is found (:mod:`.local_models`): ZEKE's ``text-embedding-3-small``, say. The key
is ``$OPENAI_API_KEY``, sent only in the ``Authorization`` header: never in a URL (a URL holding a user part, a
query or a fragment is refused before it is repeated anywhere), never printed, logged or written to a file; an
error that repeats it has it blanked out, in any encoding a server may repeat it in (:func:`..redaction.blank`),
and a key refused (HTTP 401, 403) is said with the status and a fixed reason, never the server's words.

A URL is checked before any request: ``http``/``https`` with a host, no control character or space in it (one
shown escaped; what surrounds it, a file's last newline say, is stripped), nothing httpx would refuse. A redirect
is not followed (the text would go where the user did not name): it is one error, saying the text was not sent
again.

What is sent: the text of a search query; the text of a memory only when an edit re-embeds it (the inspector asks
first), at most :data:`BATCH` texts a request. Query vectors are kept on disk (``embeddings.db`` in the user's
cache folder) by a BLAKE3 hash of (endpoint, model, text), so a repeated query or a *Why not…?* costs no call; a
memory's vector is not kept. Each request has a time limit, headers included, and its answer is bounded by what it
could need (:func:`answer_bytes`: its texts × the vectors' size, or :data:`MAX_DIMENSIONS`, × a number's longest
JSON; :mod:`..http_post`).

An answer is used only when it fits (else :class:`UnusableAnswer`, one line, and nothing of it is kept): one vector
per text, indexes 0 … n−1 each once, every value a finite JSON number, all of one size — the size the caller
names (the stored vectors' of that model: :meth:`ApiEmbedding.embed`'s ``dimensions``), else any up to
:data:`MAX_DIMENSIONS`. A search then leaves its vector part out saying why, as for a model it cannot run; an error
of the request itself (no connection, a status other than 200, an answer too large) stops it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import apsw
import blake3
import numpy as np

from .. import folders
from ..errors import EmbeddingError, InvalidInputError
from ..http_post import bounded_post, first_line, reason
from ..redaction import blank, remember

URL_ENV = "OXMEM_EMBEDDINGS_URL"
KEY_ENV = "OPENAI_API_KEY"
OPENAI = "https://api.openai.com/v1"
#: seconds for a connection and each read; for a whole request, its answer's headers included
TIMEOUT, REQUEST_SECONDS = 30.0, 60.0
#: the most texts one request asks for
BATCH = 64
#: the most values a vector may have when the stored vectors do not say (the largest embedding models give 4096)
MAX_DIMENSIONS = 8192
#: what an answer may hold beyond its numbers: its frame, and for each text its object's fields
FRAME_BYTES, ITEM_BYTES = 64 << 10, 512
#: the longest a number may take in an answer's JSON (``-0.012345678901234567, `` and an indent's spaces)
NUMBER_BYTES = 32
#: the reason a refused key is said with (never the server's words: they may repeat it)
REFUSED = {401: "Unauthorized", 403: "Forbidden"}
REDIRECTS = (301, 302, 303, 307, 308)
CREDENTIALS = (
    "a key in the URL would be shown and saved with it: --embeddings-url takes no user part (…@), query (?…) or "
    f"fragment (#…); the key comes from ${KEY_ENV}"
)


class UnusableAnswer(EmbeddingError):
    """The endpoint answered, with what cannot be these texts' vectors (see the module's docstring)."""


def answer_bytes(count: int, dimensions: int = 0) -> int:
    """The most bytes the answer to ``count`` texts may hold, for vectors of ``dimensions`` values (0: any, up to
    :data:`MAX_DIMENSIONS`)."""
    return FRAME_BYTES + count * (ITEM_BYTES + (dimensions or MAX_DIMENSIONS) * NUMBER_BYTES)


def _escaped(text: str) -> str:
    """``text`` with each character that is not printable written as Python escapes it (``\\x1b``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class Endpoint:
    """Where embeddings are asked for, and the key sent there (never shown: not in ``repr``)."""

    url: str
    key: str | None = field(default=None, repr=False)

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc


def endpoint_from(value: str | None, key: str | None = None) -> Endpoint | None:
    """The endpoint ``value`` names (``openai``: OpenAI's API; else an ``http(s)://`` base URL, as
    ``OPENAI_BASE_URL`` is written), with ``key`` (default ``$OPENAI_API_KEY``); None for no value.
    :class:`InvalidInputError` for anything else, without repeating a URL that may hold a key."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    key = (key if key is not None else os.environ.get(KEY_ENV) or "").strip() or None
    remember(key)
    if key and not all(33 <= ord(c) < 127 for c in key):
        raise InvalidInputError(f"${KEY_ENV} has characters an HTTP header cannot carry (spaces, non-ASCII)")
    if text.lower() == "openai":
        return Endpoint(OPENAI, key)
    authority = text.split("//", 1)[1].split("/", 1)[0] if "//" in text else text
    if "?" in text or "#" in text or "@" in authority:
        raise InvalidInputError(CREDENTIALS)
    shown = repr(text[:200])
    if any(not c.isprintable() or c.isspace() for c in text):
        raise InvalidInputError(f"not an embeddings URL: {shown} holds a control character or a space")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise InvalidInputError(f"not an embeddings URL: {shown} ({_escaped(str(exc))})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(
            f"not an embeddings URL: {shown}; give http(s)://HOST[:PORT]/PATH (as OPENAI_BASE_URL is "
            "written, e.g. http://localhost:11434/v1 for Ollama) or 'openai'"
        )
    url = urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", ""))
    import httpx

    try:
        httpx.URL(url + "/embeddings")
    except httpx.InvalidURL as exc:
        raise InvalidInputError(f"not an embeddings URL: {shown} ({_escaped(str(exc))})") from None
    return Endpoint(url, key)


_configured: list[Endpoint | None] = [None]


def configure(endpoint: Endpoint | None) -> None:
    """The endpoint this process may call (None: none; the default)."""
    _configured[0] = endpoint


def configured() -> Endpoint | None:
    return _configured[0]


class QueryCache:
    """Query vectors by (endpoint, model, text), in ``embeddings.db`` in the user's cache folder: a hash of the
    three as the key, the vector as float32 — never the key, never a memory's text."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or folders.cache_dir() / "embeddings.db"
        self._lock = threading.Lock()

    @staticmethod
    def key(endpoint: Endpoint, model: str, text: str) -> bytes:
        return blake3.blake3("\0".join((endpoint.url, model, text)).encode("utf-8")).digest()

    def _connect(self) -> apsw.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = apsw.Connection(str(self.path))
        conn.setbusytimeout(5000)
        conn.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        return conn

    def get(self, key: bytes) -> np.ndarray | None:
        try:
            with self._lock:
                conn = self._connect()
                try:
                    rows = conn.execute("SELECT vector FROM vectors WHERE key = ?", (key,)).fetchall()
                finally:
                    conn.close()
        except apsw.Error:
            return None  # a cache that cannot be read is no cache
        if not rows or len(rows[0][0]) % 4:
            return None
        return np.frombuffer(rows[0][0], dtype="<f4").astype(np.float32)

    def put(self, key: bytes, vector: np.ndarray) -> None:
        try:
            with self._lock:
                conn = self._connect()
                try:
                    conn.execute(
                        "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                        (key, np.asarray(vector, dtype="<f4").tobytes()),
                    )
                finally:
                    conn.close()
        except apsw.Error:
            pass  # not kept: the next query asks again


class ApiEmbedding:
    """The embedding backend of ``model`` at ``endpoint``; with ``cache``, each text's vector is kept there (for
    queries) and a text already there costs no call. ``dimensions``: the size its vectors must have, 0 when only
    the caller can say (:meth:`embed`). ``calls`` counts the requests made."""

    def __init__(self, endpoint: Endpoint, model: str, cache: QueryCache | None = None, dimensions: int = 0) -> None:
        self.endpoint = endpoint
        self.model_name = model
        self.dimensions = dimensions
        self.cache = cache
        self.calls = 0
        self._http: Any = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ApiEmbedding, (self.endpoint, self.model_name, self.cache, self.dimensions))

    def embed(self, texts: Sequence[str], dimensions: int = 0) -> np.ndarray:
        """The ``(len(texts), size)`` float32 vectors of ``texts``, in order. Each must have ``dimensions`` values
        (0: :attr:`dimensions`; when that is 0 too, any size, the same for all): a kept vector of another size is
        asked again, an answer of another size is :class:`UnusableAnswer`."""
        size = dimensions or self.dimensions
        keys = [QueryCache.key(self.endpoint, self.model_name, t) for t in texts] if self.cache else []
        found: dict[int, np.ndarray] = {}
        for i, key in enumerate(keys):
            vector = self.cache.get(key) if self.cache else None
            if vector is not None and vector.size and (not size or vector.size == size):
                found[i] = vector
        missing = [i for i in range(len(texts)) if i not in found]
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            for i, vector in zip(batch, self._ask([texts[i] for i in batch], size), strict=True):
                found[i] = vector
                if self.cache:
                    self.cache.put(keys[i], vector)
        if not texts:
            return np.zeros((0, size), dtype=np.float32)
        if len({v.size for v in found.values()}) != 1:  # kept ones and asked ones of unequal size (no size given)
            raise UnusableAnswer(f"{self.endpoint.host} sent vectors of unequal or no length: the answer is not used")
        return np.stack([found[i] for i in range(len(texts))]).astype(np.float32)

    def _client(self) -> Any:
        import httpx

        if self._http is None or self._http.is_closed:
            headers = {"Accept-Encoding": "identity", "Content-Type": "application/json"}
            if self.endpoint.key:
                headers["Authorization"] = f"Bearer {self.endpoint.key}"
            self._http = httpx.Client(headers=headers, timeout=TIMEOUT, follow_redirects=False, trust_env=False)
        return self._http

    def hide(self, text: str) -> str:
        """``text`` with the key blanked out, in any encoding, should an answer or an error repeat it."""
        return blank(text, [self.endpoint.key], "[key]")

    def _ask(self, texts: list[str], size: int) -> list[np.ndarray]:
        import httpx

        host = self.endpoint.host
        body = json.dumps({"model": self.model_name, "input": texts}, ensure_ascii=False).encode("utf-8")
        with self._lock:
            try:
                raw, status = bounded_post(
                    self._client(), self.endpoint.url + "/embeddings", body, {}, host,
                    seconds=REQUEST_SECONDS, max_bytes=answer_bytes(len(texts), size), error=EmbeddingError,
                )  # fmt: skip
            except EmbeddingError as exc:
                raise EmbeddingError(self.hide(str(exc))) from None
            except httpx.ConnectError as exc:
                raise EmbeddingError(f"could not connect to {host}: {self.hide(reason(exc))}") from None
            except httpx.TimeoutException:
                raise EmbeddingError(f"{host} did not answer within {TIMEOUT:g} s") from None
            except httpx.HTTPError as exc:
                raise EmbeddingError(f"the connection to {host} broke off: {self.hide(reason(exc))}") from None
            self.calls += 1
        if status in REFUSED:
            words = f"HTTP {status} {REFUSED[status]}"
            if not self.endpoint.key:
                raise EmbeddingError(f"{host} asks for a key ({words}): none is set in ${KEY_ENV}")
            raise EmbeddingError(f"{host} refused the key from ${KEY_ENV} ({words})")
        if status in REDIRECTS:
            raise EmbeddingError(
                f"{host} answered HTTP {status}, a redirect: not followed, the text was not sent again (give the "
                "address it names as the endpoint, if it is to be trusted)"
            )
        said = first_line(raw, hide=self.hide)
        if status != 200:
            raise EmbeddingError(f"{host} answered HTTP {status} to POST /embeddings{': ' + said if said else ''}")
        try:
            data = json.loads(raw)["data"]
            if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
                raise TypeError
            pairs = [(item["index"], item["embedding"]) for item in data]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise UnusableAnswer(f"{host} sent an answer that is not an embeddings list ({said[:80]})") from None
        return _vectors(pairs, len(texts), size, host, self.model_name)


def _vectors(pairs: list[tuple[Any, Any]], count: int, size: int, host: str, model: str) -> list[np.ndarray]:
    """The vectors of an answer's ``(index, embedding)`` pairs, in index order, when they fit (see the module's
    docstring); else :class:`UnusableAnswer`."""
    unused = ": the answer is not used"
    if len(pairs) != count:
        raise UnusableAnswer(f"{host} sent {len(pairs)} vectors for {count} texts{unused}")
    if sorted(i if type(i) is int else -1 for i, _ in pairs) != list(range(count)):
        raise UnusableAnswer(f"{host} sent vectors whose indexes are not 0 to {count - 1}, each once{unused}")
    ordered = [vector for _, vector in sorted(pairs, key=lambda pair: pair[0])]
    if not all(isinstance(v, list) and all(type(x) in (int, float) for x in v) for v in ordered):
        raise UnusableAnswer(f"{host} sent a vector with values that are not numbers{unused}")
    sizes = {len(v) for v in ordered}
    if len(sizes) != 1 or 0 in sizes:
        raise UnusableAnswer(f"{host} sent vectors of unequal or no length{unused}")
    (length,) = sizes
    if size and length != size:
        raise UnusableAnswer(
            f"{host} sent vectors of {length} values for {model}, whose stored vectors have {size}{unused}"
        )
    if not size and length > MAX_DIMENSIONS:
        raise UnusableAnswer(
            f"{host} sent vectors of {length} values, more than the {MAX_DIMENSIONS} of any embedding model{unused}"
        )
    try:
        out = [np.asarray(v, dtype=np.float64) for v in ordered]
    except OverflowError:  # an integer beyond any float
        raise UnusableAnswer(f"{host} sent a vector with values that are not finite{unused}") from None
    vectors = [v.astype(np.float32) for v in out]
    if not all(np.isfinite(v).all() for v in vectors):  # (NaN, Infinity, or a number beyond float32's range)
        raise UnusableAnswer(f"{host} sent a vector with values that are not finite{unused}")
    return vectors


def embed_sized(backend: Any, text: str, dimensions: int) -> np.ndarray:
    """``text``'s vector by ``backend`` (any embedding backend), which must have ``dimensions`` values — the size
    of the stored vectors it is compared with (0: any) —, else :class:`UnusableAnswer` saying both sizes."""
    if isinstance(backend, ApiEmbedding):
        return backend.embed([text], dimensions)[0]
    vector = np.asarray(backend.embed([text])[0], dtype=np.float32)
    if dimensions and vector.shape != (dimensions,):
        raise UnusableAnswer(
            f"{backend.model_name} gives vectors of {vector.size} values, the stored ones have {dimensions}"
        )
    return vector


_backends: dict[tuple[Endpoint, str], ApiEmbedding] = {}


def backend(model: str) -> ApiEmbedding | None:
    """The configured endpoint's backend for ``model`` (queries cached on disk), or None when none is configured."""
    endpoint = configured()
    if endpoint is None:
        return None
    return _backends.setdefault((endpoint, model), ApiEmbedding(endpoint, model, QueryCache()))
