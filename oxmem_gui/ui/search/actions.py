"""What the search panel does with a ranking and its results besides showing them: make the ranking the default
of a session or the file (in oxmem's settings, never the file), pin results as A and compare, export, grade hits
into a query set, and measure the set's metrics.

:class:`ResultActions` is mixed into :class:`~.panel.SearchPanel`: it uses the panel's controls, results and tools.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from ...core.api import (
    Evaluation,
    JudgmentStore,
    Retriever,
    choose_ranking,
    default_search,
    evaluate_settings,
    result_rows,
    results_json,
    setting_text,
    to_csv,
)
from ..context import StoreContext
from ..dialogs import Dialogs
from .controls import SearchControls
from .explanation import compare_text
from .metrics import MetricsDialog
from .results import ResultsModel
from .state import SearchState
from .tools import ResultTools

#: what the ranking list adds to the default's label: chosen for the session, for the file, or built in
DEFAULT_MARKS = {"session": "session default", "file": "file default"}


if TYPE_CHECKING:  # mixed into a QWidget (the panel)
    from PySide6.QtWidgets import QWidget as _Panel
else:
    _Panel = object


class ResultActions(_Panel):
    """The actions of :class:`~.panel.SearchPanel` on its ranking and results (see the module's docstring)."""

    # what it uses of the panel
    ctx: StoreContext
    dialogs: Dialogs
    controls: SearchControls
    tools: ResultTools
    model: ResultsModel
    state: SearchState
    last_dialog: QDialog | None

    @property
    def judgments(self) -> JudgmentStore:  # (the panel's: opened on first use)
        raise NotImplementedError

    if TYPE_CHECKING:

        def current_ranking(self) -> Retriever | None: ...
        def vector_weight(self) -> float: ...
        def _update_buttons(self) -> None: ...
        def apply_best(self, vector_weight: float, fts_mode: str) -> None: ...

    def _look_up_default(self, select: bool) -> None:
        """Find the session's default ranking (chosen per session or file, else built in), mark it in the list,
        and with ``select`` make it the current one."""
        store = self.ctx.store
        if store is None or not any(r.scope == "session" for r in store.retrievers()):
            return
        session = self.controls.session.currentText().strip() or None
        self.state.lookups += 1
        lookup = self.state.lookups

        def got(found: tuple[Retriever, str, dict[str, Any]]) -> None:
            if lookup != self.state.lookups or store is not self.ctx.store:
                return  # another session or file since
            ranking, why, tuning = found
            self.state.default_choice = (ranking.name, why)
            why_text = DEFAULT_MARKS.get(why, "default")
            for i in range(self.controls.ranking.count()):
                r = self.controls.ranking.itemData(i)
                self.controls.ranking.setItemText(i, r.label + (f" ({why_text})" if r.name == ranking.name else ""))
                if select and r.name == ranking.name:
                    self.controls.ranking.setCurrentIndex(i)
            if select and tuning:
                self.controls.weight.setValue(round(tuning["vector_weight"] * 100))
                self.controls.mode.setCurrentText(tuning["fts_mode"])
            self.controls.show_ranking_tip()

        self.ctx.run(lambda: default_search(store, session), on_done=got)

    def make_default(self, for_session: bool) -> None:
        """Make the current ranking the default for the session in the field (``for_session``) or the file; the
        tunable hybrid's weight and FTS mode are kept with it."""
        store, ranking = self.ctx.store, self.current_ranking()
        session = self.controls.session.currentText().strip()
        if store is None or ranking is None or ranking.scope != "session":
            self.controls.say("Choose a ranking over sessions to make it the default.")
            return
        if for_session and not session:
            self.controls.say("Choose a session to make this ranking its default.")
            return
        tuning = None
        if ranking.tunable:
            tuning = {"vector_weight": self.vector_weight(), "fts_mode": self.controls.mode.currentText()}
        self.ctx.run(
            lambda: choose_ranking(store, ranking.name, session if for_session else None, tuning),
            on_done=lambda _: self._look_up_default(select=False),
        )

    def forget_default(self) -> None:
        """Forget the session's and the file's choices: the built-in default again."""
        store, session = self.ctx.store, self.controls.session.currentText().strip()
        if store is None:
            return

        async def forget() -> None:
            if session:
                await choose_ranking(store, None, session)
            await choose_ranking(store, None, None)

        self.ctx.run(forget, on_done=lambda _: self._look_up_default(select=False))

    def pin(self) -> None:
        self.state.pinned = self.state.result
        self._update_buttons()

    def compare_text(self) -> str:
        """The shown results (B) against A: the pinned results, or else the query's default-settings ranking
        (empty while there is nothing to compare)."""
        a, b = self.state.pinned or self.state.baseline, self.state.result
        return compare_text(a, b, self.state.pinned is not None) if a is not None and b is not None else ""

    def compare(self) -> None:
        if (self.state.pinned is None and self.state.baseline is None) or self.state.result is None:
            return
        dialog = QDialog(self)
        dialog.setWindowTitle("Compare A and B")
        view = QTextBrowser()
        view.setPlainText(self.compare_text())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(view)
        layout.addWidget(buttons)
        dialog.resize(780, 420)
        self.last_dialog = dialog
        dialog.show()

    def export(self) -> None:
        if self.state.result is None:
            return
        path = self.dialogs.save_file("Export results", "JSON (*.json);;CSV (*.csv)", "results.json")
        if path is None:
            return
        text = (
            to_csv(result_rows(self.state.result)) if path.suffix.lower() == ".csv" else results_json(self.state.result)
        )
        self.ctx.run(lambda: asyncio.to_thread(Path(path).write_text, text, "utf-8"), label="Exporting results")

    def set_name(self) -> str:
        return self.tools.set_name()

    def _load_grades(self) -> None:
        store, result, name = self.ctx.store, self.state.result, self.set_name()
        if store is None or result is None:
            return

        scope = self.state.searched()

        def find() -> dict[str, int]:
            for q in self.judgments.queries(store.path, name):
                if (q.session_id, q.query) == (scope, result.query):
                    return dict(q.grades)
            return {}

        self.ctx.run(lambda: asyncio.to_thread(find), on_done=self.model.set_grades)

    def _graded(self, chunk_id: str, grade: int | None) -> None:
        store, result, name = self.ctx.require(), self.state.result, self.set_name()
        if result is None:  # (a grade is given in the hits of a result)
            return
        scope = self.state.searched()
        self.ctx.run(
            lambda: asyncio.to_thread(self.judgments.judge, store.path, name, scope, result.query, chunk_id, grade)
        )

    def metrics(self) -> None:
        store, name = self.ctx.store, self.set_name()
        if store is None:
            return
        w, mode, k = self.vector_weight(), self.controls.mode.currentText(), self.controls.top_k.value()
        ranking = self.current_ranking()
        fixed = ranking.name if ranking is not None and not ranking.tunable and ranking.scope == "session" else None

        async def work(progress: Any, stop: Any) -> Evaluation | None:
            judged = await asyncio.to_thread(self.judgments.queries, store.path, name)
            if not judged:
                return None
            return await evaluate_settings(
                store, judged, top_k=k, k=k, vector_weight=w, fts_mode=mode, progress=progress, ranking=fixed
            )

        def done(evaluation: Evaluation | None) -> None:
            if evaluation is None:
                self.dialogs.info(f"The query set “{name}” has no judged queries yet: grade some hits (0–3) first.")
                return
            current = ranking.label if fixed and ranking is not None else setting_text(w, mode)
            self.last_dialog = MetricsDialog(evaluation, name, current, self.dialogs, self)
            self.last_dialog.apply_best.connect(self.apply_best)
            self.last_dialog.show()

        self.ctx.run(work, label=f"Measuring “{name}”", with_progress=True, on_done=done)
