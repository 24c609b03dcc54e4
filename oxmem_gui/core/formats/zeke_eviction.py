"""ZEKE's eviction (``evict_stale_and_lru``), computed and never done; and how ZEKE matches a scope prefix.

(1) TTL — rows with ``ttl_seconds`` whose ``created_at +
ttl_seconds < now``. ZEKE applies a scope's default TTL (90 days for ``task:``/``ops:``/``calendar:``) when it
*stores* a memory, and its eviction only looks at ``ttl_seconds IS NOT NULL``: a NULL TTL never expires, so no
default is applied here unless ``default_ttls`` asks for it (a what-if). (2) per-prefix caps over the rows
left (``persona:`` 5000; ``task:``, ``ops:``, ``calendar:``, ``notes`` 10000; ZEKE matches ``scope LIKE
'prefix%'``), deleting the least recently used beyond the cap; (3) a global cap of 20000 over what is left.
LRU order is ZEKE's ``COALESCE(last_accessed_at, created_at) ASC, created_at ASC`` on the stored text (its naive
ISO times sort as time), then rowid for rows equal in both (ZEKE leaves that tie to SQLite's scan, which is
rowid order).

:func:`apply_evictions` does it, once the user has seen the preview: ZEKE's own deletion (``core/memory/
evictor.py``, ``evict_stale_and_lru``: ``DELETE FROM memories WHERE id IN (…)`` per step, ``memories_fts``
following by its triggers), with two differences written down here: all steps are one transaction (ZEKE commits
after each), and the preview is worked out again inside that transaction at the same time — if it is not exactly
the memories the user confirmed (the agent wrote meanwhile), nothing is deleted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError
from .base import Eviction, EvictionPreview
from .times import parse_when, rfc3339, shown_time

#: ZEKE's scope prefixes (as its eviction matches them, ``scope LIKE 'prefix%'``) and their row caps
DEFAULT_CAPS: dict[str, int] = {"persona:": 5000, "task:": 10000, "ops:": 10000, "calendar:": 10000, "notes": 10000}
GLOBAL_CAP = 20000
#: ZEKE's default TTL per scope prefix, applied when it stores a memory (given here only as a what-if)
DEFAULT_TTLS: dict[str, int] = {"task:": 90 * 86400, "ops:": 90 * 86400, "calendar:": 90 * 86400}
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: the columns of ``memories`` read here, in this order
_COLUMNS = "rowid, id, text, scope, tags, created_at, last_accessed_at, ttl_seconds"


def like_prefix(prefix: str) -> str:
    """``prefix%`` for ``LIKE … ESCAPE '\\'`` with the prefix's own ``%``, ``_`` and ``\\`` taken literally."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def prefix_matches(scope: object, prefix: str) -> bool:
    """``scope LIKE 'prefix%'`` as SQLite decides it (ASCII letters case-insensitive), prefix taken literally."""
    if not isinstance(scope, str):
        return False
    return scope.translate(_ASCII_FOLD).startswith(prefix.translate(_ASCII_FOLD))


def cap_prefix(name: str) -> str:
    """A cap's name as ZEKE's prefix: ``persona`` → ``persona:``, ``notes`` → ``notes`` (ZEKE's own spelling),
    any other name without a colon gets one."""
    if name == "notes" or name.endswith(":"):
        return name
    return name + ":"


def _sqlite_order(value: object) -> tuple[int, Any]:
    """A sort key that orders values as SQLite's ``ORDER BY`` does (NULL, numbers, text, blobs)."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (3, bytes(value))  # type: ignore[arg-type]


def _utc(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(timezone.utc)
    if now.tzinfo is None:
        return now.replace(tzinfo=timezone.utc)
    return now.astimezone(timezone.utc)


def _expires(created_at: object, ttl: object) -> datetime | None:
    """``created_at + ttl_seconds`` (None: no TTL, or values ZEKE could not add either)."""
    when = parse_when(created_at)
    if when is None or ttl is None or isinstance(ttl, (str, bytes)):
        return None
    try:
        return when + timedelta(seconds=ttl)  # type: ignore[arg-type]
    except (OverflowError, TypeError):
        return None


def _check_cap(value: Any, what: str) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{what} must be a whole number ≥ 0 (or None), not {value!r}")
    return value


def evictions(
    conn: apsw.Connection,
    at: datetime,
    caps: dict[str, int | None],
    global_cap: int | None,
    ttls: dict[str, int | None],
) -> EvictionPreview:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM memories ORDER BY rowid").fetchall()
    shown_now = rfc3339(at)
    rules = [
        f"ttl: memories with ttl_seconds whose created_at + ttl_seconds is before {shown_now} (a NULL ttl_seconds "
        "never expires: ZEKE applies a scope's default TTL when it stores a memory, not when it evicts)"
    ]
    items: list[Eviction] = []

    def evict(row: tuple, rule: str) -> None:
        _rowid, mid, text, scope, _tags, created, accessed, _ttl = row
        items.append(
            Eviction(
                str(mid),
                scope,
                rule,
                "" if text is None else str(text),
                shown_time(created) if created is not None else None,
                shown_time(accessed) if accessed else None,
            )
        )

    # 1) TTL
    live = []
    for row in rows:
        _rowid, mid, _text, scope, _tags, created, _accessed, ttl = row
        rule = "ttl"
        if ttl is None:
            prefix = next((p for p in ttls if ttls[p] is not None and prefix_matches(scope, p)), None)
            if prefix is None:
                live.append(row)
                continue
            ttl, rule = ttls[prefix], f"default ttl {prefix}"
        expires = _expires(created, ttl)
        if expires is None:
            rules.append(
                f"⚠ memory {mid}: created_at {created!r} + ttl_seconds {ttl!r} cannot be computed; ZEKE's eviction "
                "would stop with an error here (kept in this preview)"
            )
            live.append(row)
        elif at > expires:
            evict(row, rule)
        else:
            live.append(row)
    for prefix, ttl in ttls.items():
        if ttl is not None:
            rules.append(
                f"default ttl {prefix}: what-if — memories of {prefix}* with a NULL ttl_seconds given {ttl:,} s "
                "(ZEKE itself does not do this)"
            )

    def lru(row: tuple) -> tuple:
        rowid, _mid, _text, _scope, _tags, created, accessed, _ttl = row
        return (_sqlite_order(accessed if accessed is not None else created), _sqlite_order(created), rowid)

    # 2) per-prefix caps, in ZEKE's order, each over what is left
    for prefix, cap in caps.items():
        if cap is None:
            continue
        rule = f"cap {prefix} {cap}"
        rules.append(
            f"{rule}: beyond {cap:,} memories whose scope starts with {prefix!r}, the least recently used go "
            "(COALESCE(last_accessed_at, created_at) ascending, then created_at, then rowid)"
        )
        group = [r for r in live if prefix_matches(r[3], prefix)]
        if len(group) > cap:
            excess = sorted(group, key=lru)[: len(group) - cap]
            for r in excess:
                evict(r, rule)
            gone = {r[0] for r in excess}
            live = [r for r in live if r[0] not in gone]

    # 3) global cap
    if global_cap is not None:
        rule = f"global cap {global_cap}"
        rules.append(f"{rule}: beyond {global_cap:,} memories in all, the least recently used go (same order)")
        if len(live) > global_cap:
            for r in sorted(live, key=lru)[: len(live) - global_cap]:
                evict(r, rule)
    return EvictionPreview(shown_now, rules, items)


def apply_evictions(
    conn: apsw.Connection,
    memories_of: Callable[[apsw.Connection, Sequence[str]], list[Any]],
    at: datetime,
    caps: dict[str, int | None],
    global_cap: int | None,
    confirmed: Sequence[str],
) -> list[Any]:
    """Delete what :func:`evictions` lists at ``at`` (ZEKE's own TTL and caps; no what-if TTLs), provided it is
    exactly the ``confirmed`` ids; returns the deleted memories as they were (``memories_of(conn, ids)``), for
    undo. One transaction; :class:`ConflictError` (nothing deleted) when the list changed since it was shown,
    :class:`InvalidInputError` when a memory's expiry cannot be computed (ZEKE's own eviction stops there)."""
    with write_transaction(conn):
        preview = evictions(conn, at, caps, global_cap, {})
        broken = [r for r in preview.rules if r.startswith("⚠")]
        if broken:
            raise InvalidInputError(f"{broken[0][2:]}; nothing was deleted")
        ids = [e.id for e in preview.items]
        if sorted(ids) != sorted(str(i) for i in confirmed):
            raise ConflictError(
                f"the memories changed since the preview: {len(ids):,} would be deleted as of {preview.now}, not the "
                f"{len(confirmed):,} confirmed; nothing was deleted",
                preview,
            )
        gone = memories_of(conn, ids)
        # ZEKE's DELETE … WHERE id IN (?, ?, …), with the ids as one JSON array (no limit on how many)
        conn.execute("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))
    return gone
