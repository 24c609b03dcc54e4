"""What a search runs over: one session (its id), or many at once (:class:`AllSessions`).

A search over many sessions is one ranking, exactly as if their chunks were one session's: each leg takes the
``top_k × 4`` best candidates among all of them, min–max normalization runs over those candidates (so a hit's
normalized score is relative to the best and worst candidates of the whole scope, not of its own session), and
ties are broken as contract §6 says, on the candidates' own sequence numbers. On a file of one session, the
ranking equals that session's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AllSessions:
    """Every session whose id starts with ``prefix`` (``""``: every session of the file)."""

    prefix: str = ""

    def admits(self, session_id: str) -> bool:
        return session_id.startswith(self.prefix)


#: every session of the file
ALL_SESSIONS = AllSessions()

#: a search's scope: a session id, or many sessions
Scope = str | AllSessions


def scope_sql(scope: Scope, column: str = "c.session_id") -> tuple[str, tuple[str, ...]]:
    """A condition on ``column`` admitting the scope's sessions, and its arguments."""
    if isinstance(scope, str):
        return f"{column} = ?", (scope,)
    if not scope.prefix:
        return "1", ()
    return f"substr({column}, 1, ?) = ?", (len(scope.prefix), scope.prefix)


def admits(scope: Scope, session_id: str) -> bool:
    """Whether a chunk of ``session_id`` belongs to the scope."""
    return scope == session_id if isinstance(scope, str) else scope.admits(session_id)


def shown_scope(scope: Scope) -> str | None:
    """The scope as a result names it: the session id, or None for many sessions."""
    return scope if isinstance(scope, str) else None


def scope_json(scope: Scope) -> dict[str, str]:
    """The scope as JSON keeps it: ``{"session": id}`` or ``{"prefix": p}``."""
    return {"session": scope} if isinstance(scope, str) else {"prefix": scope.prefix}


def scope_of(kept: dict[str, str]) -> Scope:
    """The scope :func:`scope_json` kept (ValueError for anything else)."""
    if isinstance(kept, dict) and isinstance(kept.get("session"), str):
        return kept["session"]
    if isinstance(kept, dict) and isinstance(kept.get("prefix"), str):
        return AllSessions(kept["prefix"])
    raise ValueError(f"not a scope: {kept!r}")


#: how a judgment keeps a search of many sessions where a session id goes (no agent's session id starts with NUL)
_MANY = "\x00many:"


def scope_key(scope: Scope) -> str:
    """The scope as text, for a column of session ids: the id itself, or a mark no session id has."""
    return scope if isinstance(scope, str) else _MANY + scope.prefix


def scope_from_key(key: str) -> Scope:
    """The scope :func:`scope_key` wrote."""
    return AllSessions(key.removeprefix(_MANY)) if key.startswith(_MANY) else key


def scope_name(scope: Scope) -> str:
    """The scope in words: the session id, ``(all sessions)`` or ``(sessions starting 'P')``."""
    if isinstance(scope, str):
        return scope
    return f"(sessions starting {scope.prefix!r})" if scope.prefix else "(all sessions)"
