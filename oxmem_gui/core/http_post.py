"""One HTTP POST whose answer is bounded in size and in time, headers included: what oxmem asks of servers it
does not control (a libSQL server, an embeddings endpoint).

httpx's timeout is per read: an answer — headers included — that trickles in is cut once it has taken
``seconds`` in all (the client is closed from a watching thread, which checks in short sleeps: a timed wait would
trust the clock more than it needs); an answer over ``max_bytes``, or compressed though asked not to be (the
client sends ``Accept-Encoding: identity``), is refused as it comes.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from .errors import OxmemError


def bounded_post(
    http: Any,
    url: str,
    body: bytes | str,
    headers: dict[str, str],
    host: str,
    *,
    seconds: float,
    max_bytes: int,
    error: type[OxmemError] = OxmemError,
) -> tuple[bytes, int]:
    """POST ``body`` to ``url`` with the httpx client ``http``: the answer's bytes and status as sent. A client
    the deadline had to close is closed afterwards (``http.is_closed``: make a new one). What went wrong with the
    answer is ``error``, in one line naming ``host``."""
    slow = f"{host} sent its answer too slowly (over {seconds:g} s)"
    expired, done = threading.Event(), threading.Event()

    def watch() -> None:
        end = time.monotonic() + seconds
        while not done.is_set():
            if time.monotonic() >= end:
                expired.set()
                http.close()  # the blocked read fails at once
                return
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))

    threading.Thread(target=watch, name="oxmem-answer-deadline", daemon=True).start()
    try:
        with http.stream("POST", url, content=body, headers=headers) as response:
            encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise error(f"{host} sent a compressed answer ({encoding[:40]}) though asked not to")
            chunks, size = [], 0
            for chunk in response.iter_raw():
                size += len(chunk)
                if size > max_bytes:
                    raise error(f"{host} sent an answer over {size_words(max_bytes)}: refused")
                chunks.append(chunk)
                if expired.is_set():
                    raise error(slow)
            return b"".join(chunks), response.status_code
    except Exception:
        if expired.is_set():
            raise error(slow) from None
        raise
    finally:
        done.set()


def first_line(raw: bytes, limit: int = 120, hide: Callable[[str], str] = lambda text: text) -> str:
    """The first line of an answer's text, at most ``limit`` characters. ``hide`` blanks a secret out of the whole
    text before it is cut (a secret cut in two would no longer be found)."""
    text = hide(raw.decode("utf-8", "replace")).strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def size_words(size: int) -> str:
    """A size in bytes as people say it: ``64 MiB``, ``1.5 MiB``, ``512 KiB``, ``300 bytes``."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.3g} {unit}"
    return f"{size} bytes"


def reason(exc: Exception) -> str:
    """The innermost cause of a transport error, as the system said it ("Connection refused" out of
    "[Errno 111] Connection refused")."""
    text = str(exc)
    errno = re.search(r"\[Errno -?\d+\]", text)
    return (text[errno.end() :] if errno else text).strip() or type(exc).__name__
