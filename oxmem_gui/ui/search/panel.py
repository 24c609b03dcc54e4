"""The search panel: wires the controls (:mod:`.controls`), the results table (:mod:`.results`), the explanation
(:mod:`.explanation`), the result tools (:mod:`.tools`) and the metrics dialog (:mod:`.metrics`) to the store."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QDialog, QHBoxLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from ...core.api import (
    NOTES_PREFIX,
    AllSessions,
    Example,
    Hit,
    InvalidInputError,
    JudgmentStore,
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
from ..widgets import line_edit
from .actions import ResultActions
from .controls import TIPS, WARN_STYLE, SearchControls, data_label, set_label
from .explanation import ExplanationView, where
from .results import GRADE_COLUMN, ResultsModel, ResultsView
from .state import SearchState, legs_line, model_line, story_line, within_text
from .tools import ResultTools
from .why_not import many_target, split_target

DEMO_DEFAULT_TIP = "The demo is a temporary file: a default chosen for it would be forgotten when it closes"
#: *Why not…?* after a search of many sessions, and its *Apply* then
MANY_WHY_TIP = (
    "Pick a memory of any session that the search did not recall: where it is in the ranking shown, and its own "
    "session's story — where it ranked there, the step that cut it, the change that brings it back"
)
MANY_APPLY_TIP = "The suggestion is for the memory's own session: search that session to apply it"
APPLY_TIP = "Make the suggested change to the controls and search again"
#: the most memories the picker offers after a search of many sessions, over all of them
MANY_CHOICES = 5000


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
        self.state = SearchState()
        self.last_dialog: QDialog | None = None

        self.controls = c = SearchControls()
        c.ranking.currentIndexChanged.connect(self._ranking_changed)
        c.session.currentTextChanged.connect(lambda *_: self._update_status())
        # another session keeps the ranking and tuning in use; only which ranking is its default is marked
        c.session.activated.connect(lambda *_: self._look_up_default(select=False))
        c.query.returnPressed.connect(self.search)
        session_line = c.session.lineEdit()
        if session_line is not None:  # Enter in the session box searches, as in the query box
            session_line.returnPressed.connect(self.search)
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
        t.metrics_button.clicked.connect(self.metrics)
        t.pin_button.clicked.connect(self.pin)
        t.compare_button.clicked.connect(self.compare)
        t.default_session_action.triggered.connect(lambda: self.make_default(True))
        t.default_file_action.triggered.connect(lambda: self.make_default(False))
        t.forget_default_action.triggered.connect(self.forget_default)
        t.export_button.clicked.connect(self.export)
        t.why_button.clicked.connect(lambda: self.why_not())
        #: the bar that offers the *Why not…?* story's suggested change
        self.why_label = data_label()
        self.apply_button = QPushButton("Apply")
        self.apply_button.setToolTip(APPLY_TIP)
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
        #: *More like this* (Ctrl+L, or the hits' context menu)
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
        margins = layout.contentsMargins()  # none at the sides, as in Sessions and Notes: the width goes to the text
        layout.setContentsMargins(0, margins.top(), 0, margins.bottom())
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
        self.controls.query.setFocus()
        self.controls.query.selectAll()

    def _update_buttons(self) -> None:
        has = self.state.result is not None
        for b in (self.tools.pin_button, self.tools.export_button):
            b.setEnabled(has)
        ranking = self.current_ranking()
        # with 0 hits too; after a search of many sessions, a memory of any of them (told in its own session)
        self.tools.why_button.setEnabled(has and ranking is not None and not self.stale())
        self.tools.why_button.setToolTip(self.tools.why_tip if self.state.shown_scope is None else MANY_WHY_TIP)
        self.tools.compare_button.setEnabled(has and (self.state.pinned is not None or self.state.baseline is not None))

    def stale(self) -> bool:
        """Whether the hits shown no longer answer what the controls say (a search would change them)."""
        return self.state.stale(self.controls.request())

    def _update_status(self) -> None:
        stale = self.stale()
        self.results_label.setStyleSheet(WARN_STYLE if stale else "")
        set_label(self.results_label, self.state.status(self.controls.request()))

    def _query_edited(self, *_: Any) -> None:
        if self.controls.query.text().strip():
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
        if hit is None or self.state.scope != "session" or hit.sequence_start is None:
            return False
        self.open_event.emit(hit.session_id, hit.sequence_start)
        return True

    # -- the store ----------------------------------------------------------------------------------

    def _store_opened(self) -> None:
        store = self.ctx.require()
        keep = self.ctx.reopened  # the same file again (editing enabled): keep the results and the selected hit
        if not keep:
            self.state.forget()
            self.model.set_result(None)
            self.explain_view.clear()
            for label in (self.model_label, self.legs_label, self.controls.query_note):
                set_label(label, "")
        current = self.current_ranking()
        self.controls.ranking.blockSignals(True)
        self.controls.ranking.clear()
        for r in store.retrievers():
            self.controls.ranking.addItem(r.label, r)
            self.controls.ranking.setItemData(
                self.controls.ranking.count() - 1, r.description, Qt.ItemDataRole.ToolTipRole
            )
            if keep and current is not None and r.name == current.name:
                self.controls.ranking.setCurrentIndex(self.controls.ranking.count() - 1)
        self.controls.ranking.blockSignals(False)
        self._apply_ranking()
        self._look_up_default(select=not keep)
        demo = self.ctx.is_demo(store.path)
        self.tools.default_button.setEnabled(not demo)
        self.tools.default_button.setToolTip(DEMO_DEFAULT_TIP if demo else self.tools.default_tip)
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
        if (kind, every) == self.state.scope_kind or self.ctx.store is None:
            return False
        self.state.scope_kind = (kind, every)
        store = self.ctx.store
        group = store.capabilities.group_label.lower()
        noun = f"{group}s" if kind == "notes" else f"{store.capabilities.session_noun}s"
        self.state.many = {f"(all {noun})": AllSessions()} if every else {}
        line_edit(self.controls.session).setPlaceholderText(
            group if kind == "notes" else "session (memory:USER for notes)"
        )
        self.controls.session.setToolTip(f"The {group} whose notes to search" if kind == "notes" else TIPS["session"])

        async def load() -> list[str]:
            if kind == "notes":
                return await store.note_users()
            return [r.session_id for r in await store.sessions_page(limit=500)] if kind else []

        def got(ids: list[str]) -> None:
            current = self.controls.session.currentText()
            self.controls.session.blockSignals(True)
            self.controls.session.clear()
            if self.state.many and any(i.startswith(NOTES_PREFIX) for i in ids):  # the store's users' notes sessions
                self.state.many["(all users' notes)"] = AllSessions(NOTES_PREFIX)
            tips = {AllSessions(): f"Search every {noun[:-1]} at once, in one ranking; each hit names its {noun[:-1]}",
                    AllSessions(NOTES_PREFIX): "Search every user's notes at once, in one ranking"}  # fmt: skip
            for text, scope in self.state.many.items():  # first, so the list's top entries search many at once
                self.controls.session.addItem(text)
                self.controls.session.setItemData(
                    self.controls.session.count() - 1, tips[scope], Qt.ItemDataRole.ToolTipRole
                )
            self.controls.session.addItems(ids)
            self.controls.session.blockSignals(False)
            if current in ids or current in self.state.many:
                self.controls.session.setCurrentText(current)
            self._update_status()
            self._prepare()

        self.ctx.run(load, on_done=got)
        return True

    def _prepare(self) -> None:
        """Build what the first search of the scope shown reads, from the moment the file opens (restored at once
        when the file was opened before; the status bar says it is under way, and a search asked meanwhile is
        answered once it ends)."""
        store, ranking = self.ctx.store, self.current_ranking()
        session = self.controls.session.currentText().strip()
        if store is None or ranking is None or ranking.scope == "notes" or not session:
            return
        scope = self.state.many.get(session, session)
        self.ctx.run(lambda: store.prepare_search(scope), label="Preparing the search index")

    # -- searching ----------------------------------------------------------------------------------

    def search(self) -> None:
        """Run the ranking with the controls' settings. What keeps it from running is said next to the query."""
        store = self.ctx.store
        session, query = self.controls.session.currentText().strip(), self.controls.query.text()
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
        c = self.controls
        asked = self.state.ask(ranking, session, query, c.top_k.value(), c.options(), c.request())

        def done(found: tuple[QueryResult, QueryResult]) -> None:
            result, baseline = found
            if not self.state.arrived(asked, result, baseline):
                return  # a later search is under way
            self.controls.offer_models(sorted({*result.models, *result.skipped_models}))
            w = self.vector_weight()
            if ranking.tunable and abs(w - result.vector_weight) > 1e-9:  # the slider moved meanwhile
                result = rerank(result, w, round(1 - w, 10))
            self._show(result)
            self._load_grades()
            pending, self.state.pending_why = self.state.pending_why, None
            if pending is not None and pending[0] == result.session_id:
                self.why_not(pending[1])

        def failed(exc: Exception) -> bool:
            if asked.generation != self.state.generation:
                return isinstance(exc, OxmemError)
            self._update_status()
            return self._say_error(exc)

        self.ctx.run(lambda: self.state.search(store, asked), on_done=done, on_error=failed)

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
            self.state.like = example
            self.controls.query.setText(example.text)
            self.search()

        self.ctx.run(work, on_done=done, on_error=self._say_error)

    def _controls_changed(self, *_: Any) -> None:
        """A setting that needs a new query changed: search again when hits are shown, so they always answer
        the controls."""
        self.controls.show_differences()
        if self.stale() and self.controls.query.text().strip() and self.controls.session.currentText().strip():
            self.search()
        self._update_status()

    def _weight_moved(self, _: int) -> None:
        self.controls.show_weight()
        self.controls.show_differences()
        ranking = self.current_ranking()
        base = self.state.base
        if base is None or ranking is None or not ranking.tunable or base.retriever != ranking.name:
            return  # an agent's own ranking is fixed: its scores are not re-weighted
        w = self.vector_weight()
        self._show(rerank(base, w, round(1 - w, 10)))  # from the cached legs: no new query

    def reset_to_defaults(self) -> None:
        """The ranking's default settings back in the controls (searching again when hits are shown)."""
        self.controls.reset()
        self._controls_changed()

    def apply_best(self, vector_weight: float, fts_mode: str) -> None:
        """Set the weight and FTS mode (a sweep's best point) of the tunable hybrid, choosing it if a fixed
        ranking is shown; the hits follow."""
        if not self.controls.tunable():
            for i in range(self.controls.ranking.count()):
                r = self.controls.ranking.itemData(i)
                if r.tunable and r.scope == "session":
                    self.controls.ranking.setCurrentIndex(i)
                    break
        self.controls.weight.setValue(round(vector_weight * 100))
        self.controls.mode.setCurrentText(fts_mode)

    # -- why not this one? --------------------------------------------------------------------------------

    def why_not(self, target: str | None = None) -> None:
        """Explain a memory the shown search did not recall: ``target`` (a sequence number, a note id), else one
        picked from the session's events or the group's notes (the picker types to find). The story goes under the
        list, the memory's row is pinned at its true rank, and *Apply* makes the suggested change.

        After a search of many sessions ("(all sessions)") the picker offers every session's memories and ``target``
        names its session (:func:`.why_not.many_target`): the core explains a memory within one session, so the
        story is its own session's ranking, said so above it with the memory's place in the ranking shown."""
        store, ranking, result = self.ctx.store, self.current_ranking(), self.state.result
        many = self.state.many.get(self.state.shown_scope or "") if result is not None else None
        if store is None or ranking is None or result is None or (result.session_id is None and many is None):
            self.controls.say("Search a session first: Why not…? explains a memory that search did not recall.")
            return
        scope, query, k = result.session_id, result.query, result.top_k
        options = self.controls.options()
        if many is not None and target is not None:
            scope, target = split_target(target)
            if scope is None or not many.admits(scope):
                self.dialogs.error(f"say which of {self.state.shown_scope} the memory {target!r} is in")
                return

        async def notes_of(user: str) -> list[tuple[str, str]]:
            return [(f"{n.note_id}: {' '.join(n.content.split())}", n.note_id) for n in await store.list_notes(user)]

        async def memories() -> list[tuple[str, str]]:
            if many is None:
                assert scope is not None
                return await notes_of(scope) if ranking.scope == "notes" else await store.why_not_choices(scope)
            if ranking.scope == "notes":
                ids = await store.note_users()
            else:
                ids = [r.session_id for r in await store.sessions_page(limit=500)]
            out: list[tuple[str, str]] = []
            for sid in (i for i in ids if many.admits(i)):
                if len(out) >= MANY_CHOICES:
                    break
                found = await notes_of(sid) if ranking.scope == "notes" else await store.why_not_choices(
                    sid, MANY_CHOICES - len(out)
                )
                out += [(f"{sid} · {label}", many_target(sid, t)) for label, t in found]
            return out[:MANY_CHOICES]

        def pick(items: list[tuple[str, str]]) -> None:
            chosen = self.dialogs.pick_memory(items)
            if chosen is not None:
                self.why_not(chosen)

        if target is None:
            self.ctx.run(memories, on_done=pick)
            return

        assert scope is not None
        session = scope

        async def work() -> WhyNot:
            return await store.why_not(ranking.name, session, query, target, k, options)

        def failed(exc: Exception) -> bool:
            if isinstance(exc, (InvalidInputError, NotFoundError)):
                self.dialogs.error(str(exc))
                return True
            return False

        asked, within = result, session if many is not None else None
        self.ctx.run(work, on_done=lambda story: self._show_story(story, asked, within), on_error=failed)

    def why_not_event(self, session_id: str, sequence: int) -> None:
        """*Why wasn't this recalled?* from the session browser: explain that event for the query shown, when it
        searched this session; else put the session in the field and explain it after the next search."""
        r = self.state.result
        if r is not None and r.session_id == session_id and not self.stale():
            self.why_not(str(sequence))
            return
        many = self.state.many.get(self.state.shown_scope or "")
        if r is not None and r.session_id is None and many is not None and many.admits(session_id) and not self.stale():
            self.why_not(many_target(session_id, str(sequence)))  # the search of many sessions shown holds it
            return
        self.state.pending_why = (session_id, str(sequence))
        self.controls.session.setCurrentText(session_id)
        if self.controls.query.text().strip():
            self.search()
        else:
            self.controls.say(f"Type the query it should have been recalled for; event #{sequence} is explained then.")
            self.controls.query.setFocus()

    def _show_story(self, story: WhyNot, asked: QueryResult, within: str | None = None) -> None:
        """Show ``story`` of a memory for the search ``asked``; ``within``: the memory's session, when ``asked``
        searched many sessions and the story is that session's own ranking."""
        if self.state.result is not asked:
            return  # another search is shown now
        self.state.story = story
        # the store's rankings rank every candidate; an agent's keeps its candidates in the pool
        candidates = self.state.result.ranking or self.state.result.pool
        at = next((i for i, h in enumerate(candidates, 1) if h.chunk_id == story.chunk_id), None)
        hit = candidates[at - 1] if at is not None else None
        if within is not None:  # pinned at its place in the ranking shown, by that ranking's numbers
            if hit is not None and at is not None and at > len(asked.hits):
                self.model.pin(hit, f"#{at} of {len(candidates)}")
                self.view.resizeColumnToContents(0)
            elif hit is None and story.chunk_id:
                self.model.pin(None)
        elif hit is not None and not story.recalled:
            self.model.pin(hit, f"#{story.rank} of {story.of}" if story.rank else "not taken")
            self.view.resizeColumnToContents(0)
        elif hit is None and story.chunk_id:
            self.model.pin(None)
        line = story_line(story)
        if within is not None:
            line = f"In session {within}'s own ranking — {line}"
        set_label(self.why_label, line)
        # a suggestion for the memory's own session would not be checked against the ranking of many sessions
        self.apply_button.setEnabled(bool(story.changes) and within is None)
        self.apply_button.setToolTip(MANY_APPLY_TIP if within is not None else APPLY_TIP)
        self.why_bar.show()
        head = [within_text(story, within, asked, self.state.shown_scope or "many sessions"), ""] if within else []
        self.explain_view.show_text("\n".join([*head, *story.lines()]))
        row = next((r for r, hit in self._hits() if hit.chunk_id == story.chunk_id), None)
        if row is not None:
            self.view.selectionModel().blockSignals(True)
            self.view.selectRow(row)
            self.view.selectionModel().blockSignals(False)

    def apply_suggestion(self) -> None:
        """Make the shown story's first suggested change to the controls, then search again."""
        if self.state.story is None or not self.state.story.changes:
            return
        change = self.state.story.changes[0]
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
        self.state.story = None
        self.why_bar.hide()

    def _show(self, result: QueryResult) -> None:
        self._clear_story()
        selected = self.model.hit(self.view.currentIndex().row())
        self.state.result = result
        moved = {m.chunk_id: m for m in moves(self.state.baseline, result)} if self.state.baseline is not None else {}
        self.model.set_result(result, moved)
        dropped = [m.before for m in moved.values() if m.label == "dropped" and m.before is not None]
        set_label(self.model_label, model_line(result, dropped))
        set_label(self.legs_label, legs_line(result))
        rows = [r for r, hit in self._hits() if selected and hit.chunk_id == selected.chunk_id]
        if rows or self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(rows[0] if rows else 0, 0))
        self._show_explanation()
        self._update_buttons()
        self._update_status()

    def _hits(self) -> list[tuple[int, Hit]]:
        """The hits shown, with their rows."""
        return [(r, hit) for r in range(self.model.rowCount()) if (hit := self.model.hit(r)) is not None]

    def _show_explanation(self) -> None:
        hit = self.model.hit(self.view.currentIndex().row())
        if hit is None or self.state.result is None:
            self.explain_view.clear()
            return
        store = self.ctx.store
        self.explain_view.show_hit(
            self.state.result, hit, where(hit, self.state.scope, store.capabilities.group_label if store else "Group")
        )
