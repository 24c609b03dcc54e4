"""A small client of Hrana's HTTP pipeline API: ``POST {url}/v2/pipeline`` with JSON, which sqld, Turso Cloud and
the ``tursodb`` server answer.

The subset used is the one every such server speaks (and the only one ``tursodb --sync-server`` does): a pipeline
of ``batch`` requests with ``baton: null`` — no stream is kept between requests, no ``close``, no ``sequence``.
Each read is one batch ``BEGIN`` · statements · ``COMMIT`` (a ``ROLLBACK`` when the commit did not run), so what
one batch reads comes from one transaction on the server. Values arrive typed (``{"type": "integer", "value":
"7"}``, blobs in base64); :func:`value` turns them into Python's.

Built on httpx: a maintained HTTP client with connection reuse, timeouts, TLS and redirects (307/308 keep the
POST), so there is no socket code here. The libsql package's remote mode speaks ``/v3``, which the local server
does not answer. The token goes only into the ``Authorization`` header of each request: it is never logged
and never written anywhere.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import InvalidInputError, OxmemError
from ..http_post import bounded_post, first_line, reason
from ..redaction import remember

#: seconds to wait for a connection and for each read of an answer
TIMEOUT = 30.0
#: seconds a request may take in all, its answer's headers included, however it trickles in
ANSWER_SECONDS = 120
#: the most bytes one answer may hold (a page of rows is a few MB); answers are asked for, and read, uncompressed
ANSWER_BYTES = 128 << 20
SCHEMES = {"libsql": "https", "https": "https", "http": "http"}
#: why a URL that could carry a token is refused (said without repeating any of it)
CREDENTIALS = (
    "a token in the URL would be shown and saved with it: oxmem takes no user part (…@), query (?…) or fragment (#…) "
    "in a libSQL URL; give the token through --auth-token-env (or the dialog)"
)


class RemoteError(OxmemError):
    """The server could not be reached, refused the token, is not a libSQL server, or failed a read."""


class TokenError(RemoteError):
    """HTTP 401 or 403: the server wants a (valid) auth token."""


def server_url(url: str) -> str:
    """The base URL requests go to, from a URL as Turso prints it: ``libsql://db-org.turso.io`` (HTTPS),
    ``https://…``, or ``http://host:port`` for a local server. Anything else is :class:`InvalidInputError`."""
    text = url.strip()
    if _credentials(text):  # before anything else: no message below may repeat it
        raise InvalidInputError(CREDENTIALS)
    try:
        parts = urlsplit(text)
        parts.hostname  # noqa: B018 - raises on a bracketed host that is not an IPv6 address
    except ValueError as exc:
        raise InvalidInputError(f"not a libSQL URL: {text[:200]!r} ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        given = f"'{parts.scheme}://'" if parts.scheme else "no scheme"
        raise InvalidInputError(
            f"not a libSQL URL: {text!r} has {given}; use libsql://HOST, https://HOST or http://HOST:PORT"
        )
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        raise InvalidInputError(f"not a libSQL URL: {text!r} has a bad port") from None
    if not parts.hostname:
        raise InvalidInputError(f"not a libSQL URL: {text!r} names no host")
    base = urlunsplit((SCHEMES[scheme], parts.netloc, parts.path.rstrip("/"), "", ""))
    import httpx  # here, not at the top: every start of oxmem would pay its 50–70 ms import

    try:
        httpx.URL(base + "/v2/pipeline")  # what httpx itself refuses: a host no DNS name can be, a URL too long
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise InvalidInputError(f"not a libSQL URL: {text[:200]!r} ({exc})") from None
    return base


def _credentials(text: str) -> bool:
    """Whether a URL has a part a token could be in: a query, a fragment, or a user part before the host."""
    if "?" in text or "#" in text:
        return True
    authority = text.split("//", 1)[1] if "//" in text else text
    return "@" in authority.split("/", 1)[0]


def shown_url(url: str) -> str:
    """The URL as the user gave it, without a trailing slash: what messages and the status bar say."""
    return url.strip().rstrip("/")


def _blob(cell: dict[str, Any]) -> bytes:
    data = cell.get("base64", "")
    return binascii.a2b_base64(data + "=" * (-len(data) % 4))  # tursodb leaves the padding out


#: each Hrana value type → its Python value (C-level getters where they do: a pull converts millions of cells)
_CONVERT: dict[str, Any] = {
    "text": itemgetter("value"),
    "integer": lambda cell: int(cell["value"]),
    "float": lambda cell: float(cell["value"]),
    "blob": _blob,
    "null": lambda cell: None,
}


def value(cell: dict[str, Any]) -> Any:
    """A Hrana value as Python's: None, int, float, str or bytes."""
    convert = _CONVERT.get(cell.get("type"))  # type: ignore[arg-type]
    if convert is None:
        raise RemoteError(f"the server sent a value of an unknown type {cell.get('type')!r}")
    return convert(cell)


def _rows(cells: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """Rows of Hrana values as tuples of Python values."""
    try:
        return [tuple([_CONVERT[c["type"]](c) for c in row]) for row in cells]
    except KeyError:
        for row in cells:  # say which value
            for c in row:
                value(c)
        raise


def argument(python: Any) -> dict[str, Any]:
    """A Python value as a Hrana argument."""
    if python is None:
        return {"type": "null"}
    if isinstance(python, bool | int):
        return {"type": "integer", "value": str(int(python))}
    if isinstance(python, float):
        return {"type": "float", "value": python}
    if isinstance(python, bytes | bytearray | memoryview):
        return {"type": "blob", "base64": base64.b64encode(bytes(python)).decode("ascii")}
    return {"type": "text", "value": str(python)}


def transaction(statements: Sequence[tuple[str, Sequence[Any]] | str]) -> dict[str, Any]:
    """A ``batch`` request running ``statements`` (SQL, or SQL with arguments) in one transaction: ``BEGIN``, each
    statement only when the one before it succeeded, ``COMMIT``, and a ``ROLLBACK`` when the commit did not run
    (the ``tursodb`` server keeps one connection: a transaction left open would block every later request)."""
    steps: list[dict[str, Any]] = [{"stmt": {"sql": "BEGIN"}}]
    for item in statements:
        sql, args = (item, ()) if isinstance(item, str) else item
        steps.append({"stmt": {"sql": sql, "args": [argument(a) for a in args]}, "condition": _ok(len(steps) - 1)})
    steps.append({"stmt": {"sql": "COMMIT"}, "condition": _ok(len(steps) - 1)})
    steps.append({"stmt": {"sql": "ROLLBACK"}, "condition": {"type": "not", "cond": _ok(len(steps) - 1)}})
    return {"type": "batch", "batch": {"steps": steps}}


def _ok(step: int) -> dict[str, Any]:
    return {"type": "ok", "step": step}


@dataclass
class Rows:
    """One statement's answer: column names and rows of Python values."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


@dataclass
class Traffic:
    """What a client has moved so far: requests made, bytes of answers."""

    requests: int = 0
    bytes: int = 0


class HranaClient:
    """Reads from one libSQL server. ``token`` goes into each request's ``Authorization: Bearer`` header."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = TIMEOUT, transport: Any = None) -> None:
        self.url = shown_url(url)
        self.endpoint = server_url(url) + "/v2/pipeline"
        self.host = urlsplit(self.endpoint).netloc
        token = (token or "").strip()
        if token and not all(33 <= ord(c) < 127 for c in token):
            raise InvalidInputError("the auth token has characters an HTTP header cannot carry (spaces, non-ASCII)")
        self._token = token
        remember(token)
        self._options = {"timeout": timeout, "transport": transport}
        self._http = self._client()
        self.traffic = Traffic()

    def _client(self) -> Any:
        import httpx  # imported by server_url above, so no cost here

        headers = {"Accept-Encoding": "identity"}  # an answer is read as sent: no decompression to bound
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return httpx.Client(headers=headers, follow_redirects=True, trust_env=False, **self._options)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HranaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, statements: Sequence[tuple[str, Sequence[Any]] | str]) -> list[Rows]:
        """Run ``statements`` (SQL, or SQL with arguments) in one transaction on the server and return each one's
        rows. The first statement that fails raises :class:`RemoteError` with the server's message."""
        request = transaction(statements)
        commit = len(request["batch"]["steps"]) - 2
        try:
            return _answers(self._pipeline([request])[0], commit)
        except RemoteError as exc:  # whatever the server's words repeat, the token is blanked out of them
            raise type(exc)(self.hide(str(exc))) from None
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:  # binascii.Error included
            said = self.hide(f"{type(exc).__name__}: {exc}")
            raise RemoteError(f"{self.url} sent an answer that is not Hrana's ({said})") from None

    def _post(self, body: str) -> tuple[bytes, int]:
        """The answer's bytes and status, read as sent, bounded in time (:data:`ANSWER_SECONDS`, headers included)
        and size (:data:`ANSWER_BYTES`): :func:`..http_post.bounded_post`."""
        try:
            return bounded_post(
                self._http, self.endpoint, body, {"Content-Type": "application/json"}, self.host,
                seconds=ANSWER_SECONDS, max_bytes=ANSWER_BYTES, error=RemoteError,
            )  # fmt: skip
        finally:
            if self._http.is_closed:
                self._http = self._client()  # the deadline closed the old one

    def hide(self, text: str) -> str:
        """``text`` (a server's words, an error's) with the token blanked out, should it be there."""
        return text.replace(self._token, "[token]") if self._token else text

    def _pipeline(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """POST one pipeline; the results of its requests, or :class:`RemoteError` saying in one line what
        went wrong."""
        import httpx  # imported when the client was made

        body = json.dumps({"baton": None, "requests": requests}, separators=(",", ":"))
        try:
            raw, status = self._post(body)
        except httpx.ConnectError as exc:
            raise RemoteError(f"could not connect to {self.host}: {self.hide(reason(exc))}") from None
        except httpx.TimeoutException:
            raise RemoteError(f"{self.host} did not answer within {self._http.timeout.read:g} s") from None
        except httpx.TooManyRedirects:
            raise RemoteError(f"{self.host} redirects in a loop") from None
        except httpx.HTTPError as exc:  # cut off, malformed, an encoding that does not decode
            raise RemoteError(f"the connection to {self.host} broke off: {self.hide(reason(exc))}") from None
        self.traffic.requests += 1
        self.traffic.bytes += len(raw)
        if status in (401, 403):
            said = first_line(raw, hide=self.hide)
            raise TokenError(f"{self.host} refused the auth token (HTTP {status}{': ' + said if said else ''})")
        try:
            answer = json.loads(raw) if status == 200 else None
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict) or not isinstance(answer.get("results"), list):
            said = first_line(raw, hide=self.hide)
            raise RemoteError(
                f"{self.url} does not answer as a libSQL server (HTTP {status} from POST /v2/pipeline"
                f"{': ' + said if said else ''})"
            )
        results = []
        for item in answer["results"]:
            if not isinstance(item, dict) or not isinstance(item.get("response", {}), dict):
                raise RemoteError(f"{self.url} sent an answer that is not Hrana's (a result is {item!r:.60})")
            if item.get("type") == "error":
                raise RemoteError(f"the server refused the request: {self.hide(_message(item.get('error')))}")
            results.append(item.get("response", {}).get("result") or {})
        if len(results) != len(requests):
            raise RemoteError(f"{self.url} answered {len(results)} of {len(requests)} requests")
        return results


def _answers(result: dict[str, Any], commit: int) -> list[Rows]:
    """The rows of a transaction's statements (steps 1 … ``commit - 1``), or :class:`RemoteError` for the first
    step the server refused or skipped."""
    outcomes = result.get("step_results") or []
    errors = result.get("step_errors") or []
    for i in range(commit + 1):
        error = errors[i] if i < len(errors) else None
        if error:
            what = "" if 0 < i < commit else (" (starting the read)" if i == 0 else " (ending the read)")
            raise RemoteError(f"the server refused a read{what}: {_message(error)}")
    answers = []
    for i in range(1, commit):
        outcome = outcomes[i] if i < len(outcomes) else None
        if outcome is None:
            raise RemoteError("the server skipped a read of the batch without saying why")
        answers.append(Rows([c.get("name") or "" for c in outcome.get("cols", [])], _rows(outcome.get("rows", []))))
    return answers


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)
    return str(error)
