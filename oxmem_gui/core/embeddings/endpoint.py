"""An OpenAI-compatible embeddings endpoint, used only when the user asks for one.

OpenAI, Ollama, LM Studio, vLLM and llama.cpp's server all answer ``POST {base}/embeddings`` with
``{"model": M, "input": [texts]}`` → ``{"data": [{"index": i, "embedding": [...]}, …]}``. oxmem calls one only
when ``--embeddings-url URL`` (or ``$OXMEM_EMBEDDINGS_URL``) names it — ``openai`` meaning OpenAI's own API — for
a model no local copy of which is found (:mod:`.local_models`): ZEKE's ``text-embedding-3-small``, say. The key
is ``$OPENAI_API_KEY``, sent only in the ``Authorization`` header: never in a URL (a URL holding a user part, a
query or a fragment is refused before it is repeated anywhere), never printed, logged or written to a file; an
error that repeats it has it blanked out.

What is sent: the text of a search query; the text of a memory only when an edit re-embeds it (the inspector asks
first). Query vectors are kept on disk (``embeddings.db`` in the user's cache folder) by a BLAKE3 hash of
(endpoint, model, text), so a repeated query or a *Why not…?* costs no call; a memory's vector is not kept.
Each request has a time limit, headers included, and a bounded answer (:mod:`..http_post`).
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
from ..redaction import remember

URL_ENV = "OXMEM_EMBEDDINGS_URL"
KEY_ENV = "OPENAI_API_KEY"
OPENAI = "https://api.openai.com/v1"
#: seconds for a connection and each read; for a whole request, its answer's headers included
TIMEOUT, REQUEST_SECONDS = 30.0, 60.0
#: the most bytes one answer may hold (a batch of 1536-value vectors in JSON is a few MB)
ANSWER_BYTES = 64 << 20
CREDENTIALS = (
    "a key in the URL would be shown and saved with it: --embeddings-url takes no user part (…@), query (?…) or "
    f"fragment (#…); the key comes from ${KEY_ENV}"
)


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
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise InvalidInputError(f"not an embeddings URL: {text[:200]!r} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(
            f"not an embeddings URL: {text[:200]!r}; give http(s)://HOST[:PORT]/PATH (as OPENAI_BASE_URL is "
            "written, e.g. http://localhost:11434/v1 for Ollama) or 'openai'"
        )
    return Endpoint(urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", "")), key)


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
    queries) and a text already there costs no call. ``calls`` counts the requests made."""

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

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [QueryCache.key(self.endpoint, self.model_name, t) for t in texts] if self.cache else []
        found: dict[int, np.ndarray] = {}
        for i, key in enumerate(keys):
            vector = self.cache.get(key) if self.cache else None
            if vector is not None:
                found[i] = vector
        missing = [i for i in range(len(texts)) if i not in found]
        if missing:
            for i, vector in zip(missing, self._ask([texts[i] for i in missing]), strict=True):
                found[i] = vector
                if self.cache:
                    self.cache.put(keys[i], vector)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        out = np.stack([found[i] for i in range(len(texts))]).astype(np.float32)
        self.dimensions = out.shape[1]
        return out

    def _client(self) -> Any:
        import httpx

        if self._http is None or self._http.is_closed:
            headers = {"Accept-Encoding": "identity", "Content-Type": "application/json"}
            if self.endpoint.key:
                headers["Authorization"] = f"Bearer {self.endpoint.key}"
            self._http = httpx.Client(headers=headers, timeout=TIMEOUT, follow_redirects=True, trust_env=False)
        return self._http

    def hide(self, text: str) -> str:
        """``text`` with the key blanked out, should an answer or an error repeat it."""
        key = self.endpoint.key
        return text.replace(key, "[key]") if key else text

    def _ask(self, texts: list[str]) -> list[np.ndarray]:
        import httpx

        host = self.endpoint.host
        body = json.dumps({"model": self.model_name, "input": texts}, ensure_ascii=False).encode("utf-8")
        with self._lock:
            try:
                raw, status = bounded_post(
                    self._client(), self.endpoint.url + "/embeddings", body, {}, host,
                    seconds=REQUEST_SECONDS, max_bytes=ANSWER_BYTES, error=EmbeddingError,
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
        said = first_line(raw, hide=self.hide)
        if status in (401, 403):
            raise EmbeddingError(f"{host} refused the key from ${KEY_ENV} (HTTP {status}{': ' + said if said else ''})")
        if status != 200:
            raise EmbeddingError(f"{host} answered HTTP {status} to POST /embeddings{': ' + said if said else ''}")
        try:
            data = json.loads(raw)["data"]
            ordered = sorted(data, key=lambda item: item["index"])
            vectors = [np.asarray(item["embedding"], dtype=np.float64) for item in ordered]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise EmbeddingError(f"{host} sent an answer that is not an embeddings list ({said[:80]})") from None
        sizes = {v.shape for v in vectors}
        if len(vectors) != len(texts) or len(sizes) != 1 or len(next(iter(sizes))) != 1 or not sizes.pop()[0]:
            raise EmbeddingError(f"{host} sent {len(vectors)} vectors of unequal or no length for {len(texts)} texts")
        out = [v.astype(np.float32) for v in vectors]
        if not all(np.isfinite(v).all() for v in out):
            raise EmbeddingError(f"{host} sent a vector with values that are not finite")
        return out


_backends: dict[tuple[Endpoint, str], ApiEmbedding] = {}


def backend(model: str) -> ApiEmbedding | None:
    """The configured endpoint's backend for ``model`` (queries cached on disk), or None when none is configured."""
    endpoint = configured()
    if endpoint is None:
        return None
    return _backends.setdefault((endpoint, model), ApiEmbedding(endpoint, model, QueryCache()))
