"""Session state: the rolling summary with optimistic concurrency, and the context preview (contract §8).

``session_state.state_json`` holds ``last_sequence`` and ``summary_state`` =
``{"epoch", "summary", "upper_sequence", "metadata"}``; every other key an agent wrote is kept as is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..database import write_transaction
from ..embeddings.indexing import PayloadNotIndexable, dumps, extract_text, normalize
from ..errors import InvalidInputError
from .events import Event, read_state, recall, require_session, write_state

SUMMARY_HEADER = "Recent condensed turns:"
SUMMARY_PREFIX = "Rolling session summary: "
CONDENSED_TEXT_CHARS = 180

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """A simple, swappable estimate: one token per 4 characters, rounded up (0 for empty text)."""
    return math.ceil(len(text) / 4)


@dataclass
class SummaryConfig:
    """Rolling summarization settings (the seed agent's defaults)."""

    min_turns: int = 4
    trigger_ratio: float = 0.80
    target_ratio: float = 0.50


@dataclass
class CasResult:
    applied: bool
    epoch: int


@dataclass
class SummaryOutcome:
    triggered: bool
    reason: str
    tokens_before: int
    tokens_after: int
    condensed_sequences: list[int] = field(default_factory=list)
    state: dict[str, Any] | None = None


@dataclass
class ContextItem:
    sequence: int
    role: str
    text: str
    tokens: int
    status: str  # "summarized" | "included" | "dropped"


@dataclass
class ContextPreview:
    budget: int
    used: int
    summary_message: str | None
    summary_tokens: int
    items: list[ContextItem]


def read_summary_state(conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
    require_session(conn, session_id)
    summary = read_state(conn, session_id).get("summary_state")
    return summary if isinstance(summary, dict) else None


def _stored_epoch(state: Mapping[str, Any]) -> int:
    summary = state.get("summary_state")
    epoch = summary.get("epoch", 0) if isinstance(summary, dict) else 0
    return epoch if isinstance(epoch, int) else 0


def write_summary_state(
    conn: apsw.Connection,
    session_id: str,
    summary: str,
    upper_sequence: int,
    expected_epoch: int,
    metadata: Mapping[str, Any] | None = None,
) -> CasResult:
    """Compare-and-swap: store the summary with ``epoch = expected_epoch + 1`` only if the stored epoch
    (0 when absent) equals ``expected_epoch``; otherwise write nothing and return the current epoch.
    An ``upper_sequence`` lower than the stored one is an error.
    """
    if not isinstance(summary, str):
        raise InvalidInputError("summary must be a string")
    for name, value in (("upper_sequence", upper_sequence), ("expected_epoch", expected_epoch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInputError(f"{name} must be a non-negative integer, got {value!r}")
    with write_transaction(conn):
        require_session(conn, session_id)
        state = read_state(conn, session_id)
        current = _stored_epoch(state)
        if current != expected_epoch:
            return CasResult(False, current)
        old = state.get("summary_state") if isinstance(state.get("summary_state"), dict) else {}
        old_upper = old.get("upper_sequence") or 0
        if upper_sequence < old_upper:
            raise InvalidInputError(f"upper_sequence {upper_sequence} is lower than the stored summary's {old_upper}")
        state["summary_state"] = {
            "epoch": expected_epoch + 1,
            "summary": summary,
            "upper_sequence": upper_sequence,
            "metadata": dict(metadata or {}),
        }
        write_state(conn, session_id, state)
    return CasResult(True, expected_epoch + 1)


def message_text(event: Event) -> tuple[str, str]:
    """``(role, text)`` of an event as the agent would render it; raw JSON for a malformed payload."""
    try:
        extracted = extract_text(event.payload)
    except PayloadNotIndexable:
        return "unknown", dumps(event.payload)
    return extracted.role, normalize(extracted.text)


def summary_message(summary: str) -> str:
    return SUMMARY_PREFIX + summary


def _compose(summary: str, lines: list[str]) -> str:
    block = "\n".join(lines)
    if not summary:
        return f"{SUMMARY_HEADER}\n{block}"
    if SUMMARY_HEADER in summary:
        return f"{summary}\n{block}"
    return f"{summary}\n\n{SUMMARY_HEADER}\n{block}"


def summarize(
    conn: apsw.Connection,
    session_id: str,
    budget_tokens: int,
    config: SummaryConfig | None = None,
    count: TokenCounter = estimate_tokens,
) -> SummaryOutcome:
    """Condense the oldest unsummarized messages into the rolling summary when the budget is nearly used.

    Triggers when at least ``min_turns`` messages are unsummarized and the context (summary message plus
    those messages) uses more than ``trigger_ratio`` of ``budget_tokens``; condenses oldest first until use
    is at most ``target_ratio`` of the budget, always keeping the newest message. Written with CAS.
    """
    config = config or SummaryConfig()
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens <= 0:
        raise InvalidInputError(f"token budget must be a positive integer, got {budget_tokens!r}")
    current = read_summary_state(conn, session_id) or {}
    summary = current.get("summary") or ""
    upper = current.get("upper_sequence") or 0
    epoch = current.get("epoch") or 0
    pending = [(e.sequence, *message_text(e)) for e in recall(conn, session_id) if e.sequence > upper]

    def use(text: str, msgs: list[tuple[int, str, str]]) -> int:
        return (count(summary_message(text)) if text else 0) + sum(count(t) for _, _, t in msgs)

    before = use(summary, pending)
    if len(pending) < config.min_turns or before <= config.trigger_ratio * budget_tokens:
        reason = (
            f"{len(pending)} unsummarized messages (< {config.min_turns})"
            if len(pending) < config.min_turns
            else f"{before} tokens used of {budget_tokens} (trigger at {config.trigger_ratio:.0%})"
        )
        return SummaryOutcome(False, reason, before, before)
    lines: list[str] = []
    new_summary = summary
    condensed: list[int] = []
    while len(pending) > 1 and use(new_summary, pending) > config.target_ratio * budget_tokens:
        seq, role, text = pending.pop(0)
        lines.append(f"- [{seq}] {role}: {text[:CONDENSED_TEXT_CHARS]}")
        condensed.append(seq)
        new_summary = _compose(summary, lines)
    meta = dict(current.get("metadata") or {})
    meta["condensed_messages"] = int(meta.get("condensed_messages", 0)) + len(condensed)
    cas = write_summary_state(conn, session_id, new_summary, condensed[-1], epoch, meta)
    if not cas.applied:
        return SummaryOutcome(False, f"summary changed concurrently (epoch {cas.epoch})", before, before)
    after = use(new_summary, pending)
    state = read_summary_state(conn, session_id)
    return SummaryOutcome(True, f"condensed {len(condensed)} messages", before, after, condensed, state)


def context_preview(
    conn: apsw.Connection, session_id: str, budget_tokens: int, count: TokenCounter = estimate_tokens
) -> ContextPreview:
    """What the agent would see of a session of this store (:func:`preview_events`)."""
    return preview_events(recall(conn, session_id), read_summary_state(conn, session_id), budget_tokens, count)


def preview_events(
    events: Sequence[Event],
    state: Mapping[str, Any] | None,
    budget_tokens: int,
    count: TokenCounter = estimate_tokens,
) -> ContextPreview:
    """What the agent would see: the summary message, then the newest unsummarized messages that fit.

    Messages covered by the summary (``upper_sequence``) are ``summarized``; unsummarized ones are taken newest
    first while they fit the budget (``included``); the first that does not fit, and every older one, is
    ``dropped``.
    """
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens <= 0:
        raise InvalidInputError(f"token budget must be a positive integer, got {budget_tokens!r}")
    state = state or {}
    upper = state.get("upper_sequence") or 0
    message = summary_message(state["summary"]) if state.get("summary") else None
    used = summary_tokens = count(message) if message else 0
    items = []
    for event in events:
        role, text = message_text(event)
        status = "summarized" if event.sequence <= upper else "pending"
        items.append(ContextItem(event.sequence, role, text, count(text), status))
    full = False
    for item in reversed(items):
        if item.status != "pending":
            continue
        if not full and used + item.tokens <= budget_tokens:
            item.status = "included"
            used += item.tokens
        else:
            full = True
            item.status = "dropped"
    return ContextPreview(budget_tokens, used, message, summary_tokens, items)
