"""The search panel: wires the controls (:mod:`.controls`), the results table (:mod:`.results`), the explanation
(:mod:`.explanation`), the result tools (:mod:`.tools`) and the metrics dialog (:mod:`.metrics`) to the store."""

from __future__ import annotations

import asyncio
import dataclasses
import html
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QDialog, QHBoxLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from ...core.api import (
    NOTES_PREFIX,
    AllSessions,
    Example,
    InvalidInputError,
    JudgmentStore,
    LegStats,
    NotFoundError,
    OxmemError,
    QueryResult,
    Retriever,
    WhyNot,
    moves,
    rerank,
)
from ..context import StoreContext
from ..dialogs import Dialogs
from ..widgets import plural
from .actions import ResultActions
from .controls import TIPS, WARN_STYLE, SearchControls, data_label, set_label
from .explanation import ExplanationView, where
from .results import GRADE_COLUMN, ResultsModel, ResultsView
from .tools import ResultTools

DEMO_DEFAULT_TIP = "The demo is a temporary file: a default chosen for it would be forgotten when it closes"

#: the widgets of the controls and of the result tools that the panel shows as its own attributes
CONTROLS = ("ranking", "session", "query", "top_k", "weight", "weight_label", "mode", "model_box", "tags", "tag_mode",
            "reset_button", "go", "query_note", "defaults_note")  # fmt: skip
TOOLS = ("set_box", "metrics_button", "pin_button", "compare_button", "default_button", "default_session_action",
         "default_file_action", "forget_default_action", "export_button", "why_button")  # fmt: skip


class SearchPanel(ResultActions, QWidget):
    """Runs a ranking over a session (or a notes group) and shows how each hit's score was made.

    ``open_event(session_id, sequence)`` is emitted when a hit of a session is double-clicked, or Enter is
    pressed on it: the session and sequence of the hit's (first) event.
    """

    open_event = Signal(str, int)

    def __init__(
        self, ctx: StoreContext, dialogs: Dialogs, judgments: JudgmentStore | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self._judgments = judgments
        self.base: QueryResult | None = None  # as fetched
        self.result: QueryResult | None = None  # as shown (re-ranked by the slider)
        self.pinned: QueryResult | None = None
        self.last_dialog: QDialog | None = None
        #: (ranking, session, query, top k) → that query's ranking with the default settings (its first run)
        self._baselines: dict[tuple[str, str, str, int], QueryResult] = {}
        self.baseline: QueryResult | None = None  # the shown result's
        self._shown: tuple | None = None  # the controls' request the shown result answers
        self._scope: str | None = None  # the shown result's ranking scope
        self._shown_scope: str | None = None  # the shown result's "(all sessions)" entry, when it searched them all
        #: the session list's entries that search many sessions at once, and what each searches
        self._many: dict[str, AllSessions] = {}
        #: what the session field lists (sessions or notes groups), and whether it offers all of them at once
        self._scope_kind: tuple[str | None, bool] | None = None
        self._generation = 0
        #: (ranking name, why) of the current session's default, as last looked up
        self.default_choice: tuple[str, str] | None = None
        self._lookups = 0

        self.controls = c = SearchControls()
        for name in CONTROLS:
            setattr(self, name, getattr(c, name))
        c.ranking.currentIndexChanged.connect(self._ranking_changed)
        c.session.currentTextChanged.connect(lambda *_: self._update_status())
        # another session keeps the ranking and tuning in use; only which ranking is its default is marked
        c.session.activated.connect(lambda *_: self._look_up_default(select=False))
        c.query.returnPressed.connect(self.search)
        c.query.textChanged.connect(self._query_edited)
        c.top_k.valueChanged.connect(self._controls_changed)
        c.weight.valueChanged.connect(self._weight_moved)
        for changed in (c.mode.currentTextChanged, c.model_box.currentTextChanged, c.tag_mode.currentTextChanged):
            changed.connect(self._controls_changed)
        c.tags.tags_changed.connect(self._controls_changed)
        c.reset_button.clicked.connect(self.reset_to_defaults)
        c.go.clicked.connect(self.search)
        self.results_label = data_label()  # what the shown hits answer, and whether the controls still match
        self.model_label = data_label()
        self.legs_label = data_label()
        self.legs_label.setTextFormat(Qt.TextFormat.RichText)

        self.tools = t = ResultTools(c.model_box)
        for name in TOOLS:
            setattr(self, name, getattr(t, name))
        t.metrics_button.clicked.connect(self.metrics)
        t.pin_button.clicked.connect(self.pin)
        t.compare_button.clicked.connect(self.compare)
        t.default_session_action.triggered.connect(lambda: self.make_default(True))
        t.default_file_action.triggered.connect(lambda: self.make_default(False))
        t.forget_default_action.triggered.connect(self.forget_default)
        t.export_button.clicked.connect(self.export)
        t.why_button.clicked.connect(lambda: self.why_not())
        #: the last *Why not…?* story shown (None: none), and the bar that offers its suggested change
        self.story: WhyNot | None = None
        self._pending_why: tuple[str, str] | None = None  # (session, target) to explain after the next search
        self.why_label = data_label()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setToolTip("Make the suggested change to the controls and search again")
        self.apply_button.clicked.connect(self.apply_suggestion)
        self.why_bar = QWidget()
        bar = QHBoxLayout(self.why_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.why_label, 1)
        bar.addWidget(self.apply_button)
        self.why_bar.hide()

        self.model = ResultsModel(self)
        self.model.grade_changed.connect(self._graded)
        self.view = ResultsView(self.model)
        self.view.doubleClicked.connect(lambda index: index.column() != GRADE_COLUMN and self.open_hit(index.row()))
        self.view.installEventFilter(self)
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._show_explanation())
        #: *More like this* (Ctrl+L, or the hits' context menu): the hit whose stored vector is the query's, while
        #: the query still holds its words; ``_shown_like``: the one the hits shown were searched with
        self._like: Example | None = None
        self._shown_like: Example | None = None
        self.like_action = QAction("More like this", self.view)
        self.like_action.setShortcut(QKeySequence("Ctrl+L"))
        self.like_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.like_action.setToolTip("Search with the selected hit's own stored vector (exact, for any model)")
        self.like_action.triggered.connect(self.more_like_this)
        self.view.addAction(self.like_action)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.explain_view = ExplanationView()
        self.explain_view.setFont(self.view.font())

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(self.why_bar)
        below_layout.addWidget(self.explain_view, 1)
        split.addWidget(below)
        split.setChildrenCollapsible(False)
        split.setSizes([420, 200])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.addWidget(c)
        layout.addWidget(t)
        layout.addWidget(self.results_label)
        layout.addWidget(self.model_label)
        layout.addWidget(self.legs_label)
        layout.addWidget(split, 1)
        c.show_weight()
        self._apply_ranking()
        ctx.opened.connect(self._store_opened)
        self._update_buttons()
        c.show_differences()
        self._update_status()

    # -- helpers ------------------------------------------------------------------------------------

    @property
    def judgments(self) -> JudgmentStore:
        if self._judgments is None:
            self._judgments = JudgmentStore()
        return self._judgments

    def vector_weight(self) -> float:
        return self.controls.vector_weight()

    def current_ranking(self) -> Retriever | None:
        return self.controls.current_ranking()

    def differences(self) -> list[str]:
        return self.controls.differences()

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def _update_buttons(self) -> None:
        has = self.result is not None
        for b in (self.pin_button, self.export_button):
            b.setEnabled(has)
        ranking = self.current_ranking()
        self.why_button.setEnabled(has and ranking is not None and self._shown_scope is None and not self.stale())
        self.why_button.setToolTip(
            self.tools.why_tip if self._shown_scope is None else "Why not…? explains a miss in one session: pick one"
        )
        self.compare_button.setEnabled(has and (self.pinned is not None or self.baseline is not None))

    def stale(self) -> bool:
        """Whether the hits shown no longer answer what the controls say (a search would change them)."""
        return self.result is not None and self.controls.request() != self._shown

    def _update_status(self) -> None:
        r = self.result
        if r is None:
            set_label(self.results_label, "")
            return
        text = f"{plural(len(r.hits), 'hit')} for “{r.query}” in {self._shown_scope or r.session_id}"
        if self._shown_like is not None:
            text += f" — more like {self._shown_like.item_id}: its stored vector is the query's"
        if self.stale():
            text += " — not what the controls now say: press Search (or Enter in the query) to update"
        self.results_label.setStyleSheet(WARN_STYLE if self.stale() else "")
        set_label(self.results_label, text)

    def _query_edited(self, *_: Any) -> None:
        if self.query.text().strip():
            self.controls.say("")
        self._update_status()

    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802
        if (
            watched is self.view
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and self.view.state() != QAbstractItemView.State.EditingState
        ):
            return self.open_hit()
        return super().eventFilter(watched, event)

    def open_hit(self, row: int | None = None) -> bool:
        """Emit ``open_event`` for the hit at ``row`` (default: the current one) when it is a session's event;
        returns whether it was emitted."""
        hit = self.model.hit(self.view.currentIndex().row() if row is None else row)
        if hit is None or self._scope != "session" or hit.sequence_start is None:
            return False
        self.open_event.emit(hit.session_id, hit.sequence_start)
        return True

    # -- the store ----------------------------------------------------------------------------------

    def _store_opened(self) -> None:
        store = self.ctx.require()
        keep = self.ctx.reopened  # the same file again (editing enabled): keep the results and the selected hit
        if not keep:
            self.base = self.result = self.pinned = self.baseline = None
            self._shown = self._scope = None
            self._baselines.clear()
            self.model.set_result(None)
            self.explain_view.clear()
            for label in (self.model_label, self.legs_label, self.query_note):
                set_label(label, "")
            self._scope_kind = None
        current = self.current_ranking()
        self.ranking.blockSignals(True)
        self.ranking.clear()
        for r in store.retrievers():
            self.ranking.addItem(r.label, r)
            self.ranking.setItemData(self.ranking.count() - 1, r.description, Qt.ItemDataRole.ToolTipRole)
            if keep and current is not None and r.name == current.name:
                self.ranking.setCurrentIndex(self.ranking.count() - 1)
        self.ranking.blockSignals(False)
        self._apply_ranking()
        self._look_up_default(select=not keep)
        demo = self.ctx.is_demo(store.path)
        self.default_button.setEnabled(not demo)
        self.default_button.setToolTip(DEMO_DEFAULT_TIP if demo else self.tools.default_tip)
        self._update_buttons()
        self.controls.show_differences()
        self._update_status()
        self.ctx.run(lambda: asyncio.to_thread(self.judgments.sets, store.path), on_done=self.tools.offer_sets)

    def _ranking_changed(self, *_: Any) -> None:
        if self._apply_ranking():
            self.controls.show_differences()
            self._update_status()  # another kind of scope: the session field changes, so search again by hand
        else:
            self._controls_changed()

    def _apply_ranking(self) -> bool:
        """The controls fitted to the ranking; the scope list holds what the ranking searches over. Returns
        whether the kind of scope changed."""
        self.controls.fit_ranking()
        ranking = self.current_ranking()
        kind = ranking.scope if ranking is not None else None
        every = ranking is not None and ranking.every
        if (kind, every) == self._scope_kind or self.ctx.store is None:
            return False
        self._scope_kind = (kind, every)
        store = self.ctx.store
        group = store.capabilities.group_label.lower()
        noun = f"{group}s" if kind == "notes" else f"{store.capabilities.session_noun}s"
        self._many = {f"(all {noun})": AllSessions()} if every else {}
        self.session.lineEdit().setPlaceholderText(group if kind == "notes" else "session (memory:USER for notes)")
        self.session.setToolTip(f"The {group} whose notes to search" if kind == "notes" else TIPS["session"])

        async def load() -> list[str]:
            if kind == "notes":
                return await store.note_users()
            return [r.session_id for r in await store.sessions_page(limit=500)] if kind else []

        def got(ids: list[str]) -> None:
            current = self.session.currentText()
            self.session.blockSignals(True)
            self.session.clear()
            if self._many and any(i.startswith(NOTES_PREFIX) for i in ids):  # the store's users' notes sessions
                self._many["(all users' notes)"] = AllSessions(NOTES_PREFIX)
            tips = {AllSessions(): f"Search every {noun[:-1]} at once, in one ranking; each hit names its {noun[:-1]}",
                    AllSessions(NOTES_PREFIX): "Search every user's notes at once, in one ranking"}  # fmt: skip
            for text, scope in self._many.items():  # first, so the list's top entries search many at once
                self.session.addItem(text)
                self.session.setItemData(self.session.count() - 1, tips[scope], Qt.ItemDataRole.ToolTipRole)
            self.session.addItems(ids)
            self.session.blockSignals(False)
            if current in ids or current in self._many:
                self.session.setCurrentText(current)
            self._update_status()

        self.ctx.run(load, on_done=got)
        return True

    # -- searching ----------------------------------------------------------------------------------

    def search(self) -> None:
        """Run the ranking with the controls' settings. What keeps it from running is said next to the query."""
        store = self.ctx.store
        session, query = self.session.currentText().strip(), self.query.text()
        ranking = self.current_ranking()
        if store is None or ranking is None:
            self.controls.say("This file has no ranking to search with.")
            return
        if not query.strip():
            self.controls.say("Type a query to search for.")
            return
        if not session:
            noun = store.capabilities.group_label.lower() if ranking.scope == "notes" else "session"
            self.controls.say(f"Choose a {noun} to search.")
            return
        self.controls.say("")
        options, request, k = self.controls.options(), self.controls.request(), self.top_k.value()
        like = self._like = self._like if self._like is not None and self._like.text == query else None
        if like is not None:
            options = dataclasses.replace(options, **like.options())
        key = (ranking.name, session, query, k)
        shown_scope = session if session in self._many else None
        scope = self._many.get(session, session)
        from_defaults = like is not None or options.is_default()  # (by example: the result is its own baseline)
        self._generation += 1
        generation = self._generation

        async def work() -> tuple[QueryResult, QueryResult]:
            result = await store.search(ranking.name, scope, query, k, options)
            baseline = self._baselines.get(key)
            if baseline is None:
                baseline = result if from_defaults else await store.search(ranking.name, scope, query, k)
            return result, baseline

        def done(found: tuple[QueryResult, QueryResult]) -> None:
            result, baseline = found
            self.baseline = self._baselines.setdefault(key, baseline)
            if generation != self._generation:
                return  # a later search is under way
            self.controls.offer_models(sorted({*result.models, *result.skipped_models}))
            self.base = result
            self._shown = request
            self._shown_like = like
            self._scope = ranking.scope
            self._shown_scope = shown_scope
            w = self.vector_weight()
            if ranking.tunable and abs(w - result.vector_weight) > 1e-9:  # the slider moved meanwhile
                result = rerank(result, w, round(1 - w, 10))
            self._show(result)
            self._load_grades()
            pending, self._pending_why = self._pending_why, None
            if pending is not None and pending[0] == result.session_id:
                self.why_not(pending[1])

        def failed(exc: Exception) -> bool:
            if generation != self._generation:
                return isinstance(exc, OxmemError)
            self._update_status()
            return self._say_error(exc)

        self.ctx.run(work, on_done=done, on_error=failed)

    def _say_error(self, exc: Exception) -> bool:
        """Bad input or a missing memory said next to the query (handled); anything else is not."""
        if isinstance(exc, (InvalidInputError, NotFoundError)):
            message = str(exc)
            self.controls.say(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."))
            return True
        return False

    def more_like_this(self) -> None:
        """Search again with the selected hit's stored vector as the query's, and its words as the keyword part
        (:mod:`...core.embeddings.example`): exact and offline for any model."""
        store, hit = self.ctx.store, self.model.hit(self.view.currentIndex().row())
        if store is None or hit is None:
            self.controls.say("Select a hit first: More like this searches with its stored vector.")
            return

        async def work() -> Example:
            return await store.example(hit.chunk_id)

        def done(example: Example) -> None:
            self._like = example
            self.query.setText(example.text)
            self.search()

        self.ctx.run(work, on_done=done, on_error=self._say_error)

    def _controls_changed(self, *_: Any) -> None:
        """A setting that needs a new query changed: search again when hits are shown, so they always answer
        the controls."""
        self.controls.show_differences()
        if self.stale() and self.query.text().strip() and self.session.currentText().strip():
            self.search()
        self._update_status()

    def _weight_moved(self, _: int) -> None:
        self.controls.show_weight()
        self.controls.show_differences()
        ranking = self.current_ranking()
        if self.base is None or ranking is None or not ranking.tunable or self.base.retriever != ranking.name:
            return  # an agent's own ranking is fixed: its scores are not re-weighted
        w = self.vector_weight()
        self._show(rerank(self.base, w, round(1 - w, 10)))  # from the cached legs: no new query

    def reset_to_defaults(self) -> None:
        """The ranking's default settings back in the controls (searching again when hits are shown)."""
        self.controls.reset()
        self._controls_changed()

    def apply_best(self, vector_weight: float, fts_mode: str) -> None:
        """Set the weight and FTS mode (a sweep's best point) of the tunable hybrid, choosing it if a fixed
        ranking is shown; the hits follow."""
        if not self.controls.tunable():
            for i in range(self.ranking.count()):
                r = self.ranking.itemData(i)
                if r.tunable and r.scope == "session":
                    self.ranking.setCurrentIndex(i)
                    break
        self.weight.setValue(round(vector_weight * 100))
        self.mode.setCurrentText(fts_mode)

    # -- why not this one? --------------------------------------------------------------------------------

    def why_not(self, target: str | None = None) -> None:
        """Explain a memory the shown search did not recall: ``target`` (a sequence number, a note id), else one
        picked from the session's events or the group's notes (the picker types to find). The story goes under the
        list, the memory's row is pinned at its true rank, and *Apply* makes the suggested change."""
        store, ranking, result = self.ctx.store, self.current_ranking(), self.result
        if store is None or ranking is None or result is None or result.session_id is None:
            self.controls.say("Search a session first: Why not…? explains a memory that search did not recall.")
            return
        scope, query, k = result.session_id, result.query, result.top_k
        options = self.controls.options()

        async def memories() -> list[tuple[str, str]]:
            if ranking.scope == "notes":
                return [
                    (f"{n.note_id}: {' '.join(n.content.split())}", n.note_id) for n in await store.list_notes(scope)
                ]
            return await store.why_not_choices(scope)

        def pick(items: list[tuple[str, str]]) -> None:
            chosen = self.dialogs.pick_memory(items)
            if chosen is not None:
                self.why_not(chosen)

        if target is None:
            self.ctx.run(memories, on_done=pick)
            return

        async def work() -> WhyNot:
            return await store.why_not(ranking.name, scope, query, target, k, options)

        def failed(exc: Exception) -> bool:
            if isinstance(exc, (InvalidInputError, NotFoundError)):
                self.dialogs.error(str(exc))
                return True
            return False

        asked = result
        self.ctx.run(work, on_done=lambda story: self._show_story(story, asked), on_error=failed)

    def why_not_event(self, session_id: str, sequence: int) -> None:
        """*Why wasn't this recalled?* from the session browser: explain that event for the query shown, when it
        searched this session; else put the session in the field and explain it after the next search."""
        r = self.result
        if r is not None and r.session_id == session_id and not self.stale():
            self.why_not(str(sequence))
            return
        self._pending_why = (session_id, str(sequence))
        self.session.setCurrentText(session_id)
        if self.query.text().strip():
            self.search()
        else:
            self.controls.say(f"Type the query it should have been recalled for; event #{sequence} is explained then.")
            self.query.setFocus()

    def _show_story(self, story: WhyNot, asked: QueryResult) -> None:
        if self.result is not asked:
            return  # another search is shown now
        self.story = story
        # the store's rankings rank every candidate; an agent's keeps its candidates in the pool
        candidates = self.result.ranking or self.result.pool
        hit = next((h for h in candidates if h.chunk_id == story.chunk_id), None)
        if hit is not None and not story.recalled:
            self.model.pin(hit, f"#{story.rank} of {story.of}" if story.rank else "not taken")
            self.view.resizeColumnToContents(0)
        elif hit is None and story.chunk_id:
            self.model.pin(None)
        best = story.changes[0] if story.changes else None
        set_label(
            self.why_label,
            ("Recalled" if story.recalled else "Not recalled: " + story.cut[:1].upper() + story.cut[1:])
            + (
                ""
                if story.recalled
                else f" — would bring it back: {best.words}"
                if best
                else " — nothing within these controls brings it back"
            ),
        )
        self.apply_button.setEnabled(best is not None)
        self.why_bar.show()
        self.explain_view.show_text("\n".join(story.lines()))
        row = next((r for r in range(self.model.rowCount()) if self.model.hit(r).chunk_id == story.chunk_id), None)
        if row is not None:
            self.view.selectionModel().blockSignals(True)
            self.view.selectRow(row)
            self.view.selectionModel().blockSignals(False)

    def apply_suggestion(self) -> None:
        """Make the shown story's first suggested change to the controls, then search again."""
        if self.story is None or not self.story.changes:
            return
        change = self.story.changes[0]
        c = self.controls
        if change.control == "vector_weight":
            c.weight.setValue(round(change.value * 100))
        elif change.control == "top_k":
            c.top_k.setValue(change.value)
        elif change.control == "tags":
            c.tags.set_tags([])
        elif change.control == "fts_mode":
            c.mode.setCurrentText(change.value)
        elif change.control == "query":
            c.query.setText(change.value)
        self._clear_story()
        self.search()

    def _clear_story(self) -> None:
        self.story = None
        self.why_bar.hide()

    def _show(self, result: QueryResult) -> None:
        self._clear_story()
        selected = self.model.hit(self.view.currentIndex().row())
        self.result = result
        moved = {m.chunk_id: m for m in moves(self.baseline, result)} if self.baseline is not None else {}
        self.model.set_result(result, moved)
        dropped = [m for m in moved.values() if m.label == "dropped"]
        models = result.models
        text = (
            ("model: " + models[0])
            if len(models) == 1
            else (
                f"mixed-model store: {', '.join(models)} (each searched with its own query vector)"
                if models
                else "no vectors searched"
            )
        )
        if result.skipped_models:
            text += " — skipped: " + ", ".join(result.skipped_models)
        if dropped:
            text += f" — dropped from the defaults' top {result.top_k}: " + ", ".join(f"#{m.before}" for m in dropped)
        if result.steps:
            text += (
                f" — ranking {result.retriever}: "
                + "; ".join(result.steps[:2])
                + (" …" if len(result.steps) > 2 else "")
            )
        set_label(self.model_label, text)
        legs = []
        for leg, name in (("vector", "vector"), ("fts", "FTS")):
            s = result.legs.get(leg) or LegStats()
            span = f" raw {s.min:.4g} … {s.max:.4g}" if s.candidates else ""
            legs.append(f"{name}: {plural(s.candidates, 'candidate')}{span}{' (collapsed)' if s.collapsed else ''}")
        set_label(
            self.legs_label,
            f"FTS expression: <code>{html.escape(result.fts_expression or '(none)')}</code> — " + " · ".join(legs),
        )
        rows = [r for r in range(self.model.rowCount()) if selected and self.model.hit(r).chunk_id == selected.chunk_id]
        if rows or self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(rows[0] if rows else 0, 0))
        self._show_explanation()
        self._update_buttons()
        self._update_status()

    def _show_explanation(self) -> None:
        hit = self.model.hit(self.view.currentIndex().row())
        if hit is None or self.result is None:
            self.explain_view.clear()
            return
        store = self.ctx.store
        self.explain_view.show_hit(
            self.result, hit, where(hit, self._scope, store.capabilities.group_label if store else "Group")
        )
