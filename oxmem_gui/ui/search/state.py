"""What the Search panel shows, without Qt: the result fetched and the one shown (re-ranked by the weight), what
it answers, the defaults' ranking it is compared with, the pinned result, the *Why not…?* story, and the words the
panel says about them.

:class:`~.panel.SearchPanel` is a thin view of it: it runs :meth:`SearchState.search` through the store context and
draws what the state holds. A result asked for before a newer search is dropped when it arrives (``generation``),
so the hits shown always answer the last search asked.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import Any

from ...core.api import (
    ALL_SESSIONS,
    AllSessions,
    Example,
    LegStats,
    MemoryReader,
    QueryResult,
    Retriever,
    SearchOptions,
    WhyNot,
)
from ..words import plural

#: (ranking, session, query, top k): a query whose first run with the default settings is its baseline
BaselineKey = tuple[str, str, str, int]


@dataclass
class SearchState:
    """The Search panel's state (see the module's docstring)."""

    base: QueryResult | None = None  # as fetched
    result: QueryResult | None = None  # as shown (re-ranked by the slider)
    pinned: QueryResult | None = None
    #: the shown result's baseline: its query's ranking with the default settings
    baseline: QueryResult | None = None
    baselines: dict[BaselineKey, QueryResult] = field(default_factory=dict)
    #: the controls' request the shown result answers (:meth:`SearchControls.request`)
    shown: tuple[Any, ...] | None = None
    scope: str | None = None  # the shown result's ranking scope (``session``, ``notes``)
    shown_scope: str | None = None  # the shown result's "(all sessions)" entry, when it searched them all
    #: the session list's entries that search many sessions at once, and what each searches
    many: dict[str, AllSessions] = field(default_factory=dict)
    #: what the session field lists (sessions or notes groups), and whether it offers all of them at once
    scope_kind: tuple[str | None, bool] | None = None
    generation: int = 0
    #: (ranking name, why) of the current session's default, as last looked up
    default_choice: tuple[str, str] | None = None
    lookups: int = 0
    #: the last *Why not…?* story shown (None: none)
    story: WhyNot | None = None
    pending_why: tuple[str, str] | None = None  # (session, target) to explain after the next search
    #: *More like this*: the hit whose stored vector is the query's while the query holds its words; ``shown_like``:
    #: the one the hits shown were searched with
    like: Example | None = None
    shown_like: Example | None = None

    def forget(self) -> None:
        """Another file: no result, no baseline, nothing pinned."""
        self.base = self.result = self.pinned = self.baseline = None
        self.shown = self.scope = None
        self.baselines.clear()
        self.scope_kind = None

    def searched(self) -> str | AllSessions:
        """What the shown result searched: its session, or the many sessions of its "(all …)" entry."""
        assert self.result is not None
        if self.shown_scope is not None and self.shown_scope in self.many:
            return self.many[self.shown_scope]
        return self.result.session_id or ALL_SESSIONS

    def stale(self, request: tuple[Any, ...]) -> bool:
        """Whether the hits shown no longer answer ``request`` (what the controls now ask)."""
        return self.result is not None and request != self.shown

    def status(self, request: tuple[Any, ...]) -> str:
        """What the hits shown answer, and whether the controls still ask that (empty: nothing shown)."""
        r = self.result
        if r is None:
            return ""
        text = f"{plural(len(r.hits), 'hit')} for “{r.query}” in {self.shown_scope or r.session_id}"
        if self.shown_like is not None:
            text += f" — more like {self.shown_like.item_id}: its stored vector is the query's"
        if self.stale(request):
            text += " — not what the controls now say: press Search (or Enter in the query) to update"
        return text

    def ask(
        self,
        ranking: Retriever,
        session: str,
        query: str,
        top_k: int,
        options: SearchOptions,
        request: tuple[Any, ...],
    ) -> Asked:
        """A search of ``session`` (or of an entry of :attr:`many`) is asked: it becomes the last one asked. A query
        that still holds the words of :attr:`like` is searched with its stored vector."""
        if self.like is not None and self.like.text != query:
            self.like = None
        if self.like is not None:
            options = replace(options, **self.like.options())
        self.generation += 1
        return Asked(
            ranking,
            (ranking.name, session, query, top_k),
            self.many.get(session, session),
            options,
            request,
            self.like,
            session if session in self.many else None,
            self.generation,
        )

    async def search(self, store: MemoryReader, asked: Asked) -> tuple[QueryResult, QueryResult]:
        """The result of ``asked``, and its baseline: the defaults' result, computed once per query (the result
        itself when it was asked with the defaults, or by example)."""
        name, (_, _, query, k) = asked.ranking.name, asked.key
        result = await store.search(name, asked.scope, query, k, asked.options)
        baseline = self.baselines.get(asked.key)
        if baseline is None:
            if asked.like is not None or asked.options.is_default():
                baseline = result
            else:
                baseline = await store.search(name, asked.scope, query, k)
        return result, baseline

    def arrived(self, asked: Asked, result: QueryResult, baseline: QueryResult) -> bool:
        """``asked``'s result arrived: its baseline is kept; whether it is still the last search asked (else it is
        dropped, and the caller shows nothing)."""
        self.baseline = self.baselines.setdefault(asked.key, baseline)
        if asked.generation != self.generation:
            return False
        self.base = self.result = result  # (shown as fetched until the weight re-ranks it)
        self.shown, self.shown_like = asked.request, asked.like
        self.scope, self.shown_scope = asked.ranking.scope, asked.shown_scope
        return True


@dataclass(frozen=True)
class Asked:
    """One search as asked: its ranking, baseline key, scope (a session or many), options, the controls' request it
    answers, the example it searches by (None: by words), the "(all …)" entry chosen and its generation."""

    ranking: Retriever
    key: BaselineKey
    scope: str | AllSessions
    options: SearchOptions
    request: tuple[Any, ...]
    like: Example | None
    shown_scope: str | None
    generation: int


def model_line(result: QueryResult, dropped: list[int]) -> str:
    """The models searched, what was skipped, the defaults' hits that dropped out (``#n`` each) and the ranking's
    first steps."""
    models = result.models
    if len(models) == 1:
        text = "model: " + models[0]
    elif models:
        text = f"mixed-model store: {', '.join(models)} (each searched with its own query vector)"
    else:
        text = "no vectors searched"
    if result.skipped_models:
        text += " — skipped: " + ", ".join(result.skipped_models)
    if dropped:
        text += f" — dropped from the defaults' top {result.top_k}: " + ", ".join(f"#{n}" for n in dropped)
    if result.steps:
        more = " …" if len(result.steps) > 2 else ""
        text += f" — ranking {result.retriever}: " + "; ".join(result.steps[:2]) + more
    return text


def legs_line(result: QueryResult) -> str:
    """The FTS expression and each leg's candidates with their raw score span (rich text)."""
    legs = []
    for leg, name in (("vector", "vector"), ("fts", "FTS")):
        s = result.legs.get(leg) or LegStats()
        span = f" raw {s.min:.4g} … {s.max:.4g}" if s.candidates and s.min is not None and s.max is not None else ""
        legs.append(f"{name}: {plural(s.candidates, 'candidate')}{span}{' (collapsed)' if s.collapsed else ''}")
    expression = html.escape(result.fts_expression or "(none)")
    return f"FTS expression: <code>{expression}</code> — " + " · ".join(legs)


def shown_place(story: WhyNot, shown: QueryResult, shown_scope: str) -> str:
    """Where the story's memory is in ``shown``, the ranking of many sessions the panel shows (its own numbers)."""
    candidates = shown.ranking or shown.pool
    if story.chunk_id is None:
        return f"In the {shown_scope} ranking shown: it has no chunk, so nothing ranks it"
    rank = next((i for i, h in enumerate(candidates, 1) if h.chunk_id == story.chunk_id), None)
    if rank is None:
        return f"In the {shown_scope} ranking shown: not among its {plural(len(candidates), 'candidate')}"
    top = f"top {shown.top_k}"
    return (f"In the {shown_scope} ranking shown: #{rank} of {len(candidates)} candidates ("
            + (f"recalled in the {top})" if rank <= len(shown.hits) else f"not in the {top})"))  # fmt: skip


def within_text(story: WhyNot, session: str, shown: QueryResult, shown_scope: str) -> str:
    """The head of a *Why not…?* story asked after a search of many sessions: the memory's session, its place in
    the ranking shown, and that the story below is its own session's ranking (the core explains one session at a
    time), the same story as ``oxmem search SESSION QUERY --why ID`` tells."""
    return "\n".join([
        f"The memory is in session {session}.",
        shown_place(story, shown, shown_scope) + ".",
        f"Below, ranked within session {session}: Why not…? explains a memory by its own session's ranking, not "
        f"by the ranking of {shown_scope} (as `oxmem search SESSION QUERY --why ID` does).",
    ])  # fmt: skip


def story_line(story: WhyNot) -> str:
    """A *Why not…?* story in one line: recalled, or why not and the first change that brings it back."""
    if story.recalled:
        return "Recalled"
    line = "Not recalled: " + story.cut[:1].upper() + story.cut[1:]
    best = story.changes[0] if story.changes else None
    return line + (
        f" — would bring it back: {best.words}" if best else " — nothing within these controls brings it back"
    )
