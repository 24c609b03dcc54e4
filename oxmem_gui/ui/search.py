"""The hybrid-search panel: why each hit ranked where it did, and tuning the weights with evidence.

Every number comes from the core's :class:`QueryResult`; moving the weight slider re-ranks the candidates
already fetched (:func:`rerank`, no new query) and shows how each hit moved. Hits can be graded 0–3 into named
query sets (kept in the inspector's own file), and a set's recall@k, MRR and nDCG@k are computed for the current
settings and for a weight sweep, drawn as a chart.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..core.evaluation import (
    Evaluation,
    evaluate_settings,
    metrics_json,
    metrics_rows,
    result_rows,
    results_json,
    to_csv,
)
from ..core.explain import describe_settings, explain, hit_flags, moves
from ..core.formats.base import Retriever
from ..core.judgments import JudgmentStore
from ..core.retrieval import FTS_MODES, TAG_MODES, Hit, LegStats, QueryResult, fts_terms, rerank
from .context import StoreContext
from .dialogs import Dialogs
from .sessions import fit_columns
from .table_model import RowsModel
from .widgets.tags import TagEditor

VALUE_ROLE = Qt.ItemDataRole.UserRole + 20  # the exact float behind a number cell
BAR_ROLE = Qt.ItemDataRole.UserRole + 21
HTML_ROLE = Qt.ItemDataRole.UserRole + 22
VECTOR_COLOR = QColor("#3b82c4")
FTS_COLOR = QColor("#e08a2c")
GRADE_COLUMN = 7
ALL_MODELS = "all models"


def highlight(text: str, result: QueryResult) -> str:
    """The hit's text as HTML, with what the FTS expression matched in bold and marked."""
    if result.fts_mode == "phrase":
        words = [w for w in re.split(r"\W+", result.query) if w]
        pattern = r"\W+".join(re.escape(w) for w in words) if words else None
    else:
        terms = sorted(set(fts_terms(result.query)), key=len, reverse=True)
        pattern = "|".join(rf"(?<!\w){re.escape(t)}(?!\w)" for t in terms) if terms else None
    if not pattern:
        return html.escape(text)
    out, last = [], 0
    for m in re.finditer(pattern, text, flags=re.IGNORECASE):
        out.append(html.escape(text[last : m.start()]))
        out.append(f"<b style='background-color:#ffe58a;color:#000'>{html.escape(m.group(0))}</b>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


class ResultsModel(RowsModel):
    COLUMNS = (
        "Rank",
        "Move",
        "Score",
        "Contributions",
        "Vector: raw → norm × w",
        "FTS: raw → norm × w",
        "Flags",
        "Grade",
        "Text",
    )
    grade_changed = Signal(str, object)  # chunk_id, grade (None: cleared)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: QueryResult | None = None
        self.moves: dict[str, str] = {}
        self.grades: dict[str, int] = {}

    def set_result(self, result: QueryResult | None, moved: dict[str, str] | None = None) -> None:
        self.result = result
        self.moves = moved or {}
        self.set_rows(result.hits if result else [])

    def set_grades(self, grades: dict[str, int]) -> None:
        self.grades = dict(grades)
        if self.rowCount():
            self.dataChanged.emit(self.index(0, GRADE_COLUMN), self.index(self.rowCount() - 1, GRADE_COLUMN))

    def hit(self, row: int) -> Hit | None:
        return self.row(row)

    def flags(self, index: Any) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.column() == GRADE_COLUMN else base

    @staticmethod
    def _leg(raw: float | None, norm: float, weight: float) -> str:
        if raw is None:
            return f"— → 0 × {weight:g} = 0"
        return f"{raw:.4g} → {norm:.3f} × {weight:g} = {weight * norm:.4f}"

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        h = self.hit(index.row()) if index.isValid() else None
        if h is None:
            return None
        r, col = self.result, index.column()
        vc, fc = r.vector_weight * h.vector_score, r.fts_weight * h.fts_score
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                0: str(h.rank),
                1: self.moves.get(h.chunk_id, ""),
                2: f"{h.score:.4f}",
                3: f"{vc:.3f} + {fc:.3f}",
                4: self._leg(h.vector_raw, h.vector_score, r.vector_weight),
                5: self._leg(h.fts_raw, h.fts_score, r.fts_weight),
                6: "; ".join(hit_flags(r, h)),
                7: "—" if h.chunk_id not in self.grades else str(self.grades[h.chunk_id]),
                8: " ".join(h.text.split()),
            }[col]
        if role == VALUE_ROLE:
            return {
                0: h.rank,
                2: h.score,
                3: (vc, fc),
                4: (h.vector_raw, h.vector_score, vc),
                5: (h.fts_raw, h.fts_score, fc),
            }.get(col)
        if role == BAR_ROLE and col == 3:
            return (vc, fc)
        if role == HTML_ROLE and col == 8:
            return highlight(" ".join(h.text.split()), r)
        if role == Qt.ItemDataRole.EditRole and col == GRADE_COLUMN:
            return self.grades.get(h.chunk_id)
        if role == Qt.ItemDataRole.ToolTipRole:
            return explain(r, h) if col != 8 else h.text
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            label = self.moves.get(h.chunk_id, "")
            return (
                QColor("#2e8b57")
                if label.startswith("↑") or label == "new"
                else (QColor("#c0392b") if label.startswith("↓") else None)
            )
        if role == Qt.ItemDataRole.ForegroundRole and col == 6 and hit_flags(r, h):
            return QColor("#b35c00")
        return None

    def setData(self, index: Any, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        h = self.hit(index.row()) if index.isValid() else None
        if h is None or index.column() != GRADE_COLUMN or role != Qt.ItemDataRole.EditRole:
            return False
        grade = None if value in (None, "", "—") else int(value)
        if grade is None:
            self.grades.pop(h.chunk_id, None)
        else:
            self.grades[h.chunk_id] = grade
        self.dataChanged.emit(index, index)
        self.grade_changed.emit(h.chunk_id, grade)
        return True


class BarDelegate(QStyledItemDelegate):
    """The two contributions as a stacked bar (vector blue, FTS orange) on a 0…1 scale."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        self.initStyleOption(option, index)
        option.text = ""  # the numbers are in the next two columns; the bar shows their proportions
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        value = index.data(BAR_ROLE)
        if not value:
            return
        vc, fc = value
        rect = option.rect.adjusted(4, 5, -4, -5)
        painter.save()
        x = rect.x()
        for part, color in ((vc, VECTOR_COLOR), (fc, FTS_COLOR)):
            width = round(rect.width() * max(0.0, min(1.0, part)))
            painter.fillRect(x, rect.y(), width, rect.height(), color)
            x += width
        painter.setPen(option.palette.color(QPalette.ColorRole.Mid))
        painter.drawRect(rect)
        painter.restore()


class HtmlDelegate(QStyledItemDelegate):
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        self.initStyleOption(option, index)
        option.text = ""
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(2)
        doc.setHtml(f"<span style='white-space:nowrap'>{index.data(HTML_ROLE) or ''}</span>")
        painter.save()
        painter.translate(option.rect.topLeft())
        painter.setClipRect(QRectF(0, 0, option.rect.width(), option.rect.height()))
        doc.drawContents(painter)
        painter.restore()


class GradeDelegate(QStyledItemDelegate):
    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex) -> QWidget:  # noqa: N802
        box = QComboBox(parent)
        box.addItems(["—", "0", "1", "2", "3"])
        return box

    def setEditorData(self, editor: QComboBox, index: QModelIndex) -> None:  # noqa: N802
        grade = index.data(Qt.ItemDataRole.EditRole)
        editor.setCurrentText("—" if grade is None else str(grade))

    def setModelData(self, editor: QComboBox, model: Any, index: QModelIndex) -> None:  # noqa: N802
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class SweepChart(QWidget):
    """nDCG@k against the vector weight, one line per FTS mode; the best point is ringed."""

    def __init__(self, evaluation: Evaluation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.evaluation = evaluation
        self.setMinimumSize(420, 220)

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        area = QRectF(48, 12, self.width() - 60, self.height() - 44)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.drawRect(area)
        text = palette.color(QPalette.ColorRole.WindowText)
        painter.setPen(text)
        for i in range(0, 11, 2):
            x = area.left() + area.width() * i / 10
            painter.drawText(QRectF(x - 15, area.bottom() + 4, 30, 14), Qt.AlignmentFlag.AlignCenter, f"{i / 10:.1f}")
        for v in (0.0, 0.5, 1.0):
            y = area.bottom() - area.height() * v
            painter.drawText(QRectF(4, y - 7, 40, 14), Qt.AlignmentFlag.AlignRight, f"{v:.1f}")
        painter.drawText(
            QRectF(area.left(), area.bottom() + 18, area.width(), 14),
            Qt.AlignmentFlag.AlignCenter,
            f"vector weight (FTS weight = 1 − it) — nDCG@{self.evaluation.current.k}",
        )

        def point(p: Any) -> QPointF:
            return QPointF(area.left() + area.width() * p.vector_weight, area.bottom() - area.height() * p.metrics.ndcg)

        for mode, color in (("terms", VECTOR_COLOR), ("phrase", FTS_COLOR)):
            pts = [point(p) for p in self.evaluation.sweep if p.fts_mode == mode]
            if not pts:
                continue
            path = QPainterPath(pts[0])
            for p in pts[1:]:
                path.lineTo(p)
            painter.setPen(QPen(color, 2))
            painter.drawPath(path)
            painter.drawText(
                QRectF(area.right() - 90, area.top() + (4 if mode == "terms" else 20), 86, 14),
                Qt.AlignmentFlag.AlignRight,
                f"— {mode}",
            )
        best = self.evaluation.best()
        painter.setPen(QPen(text, 2))
        painter.drawEllipse(point(best), 6, 6)
        painter.end()


class MetricsDialog(QDialog):
    def __init__(
        self, evaluation: Evaluation, set_name: str, current: str, dialogs: Dialogs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.evaluation = evaluation
        self.dialogs = dialogs
        self.setWindowTitle(f"Metrics — {set_name}")
        c, best = evaluation.current, evaluation.best()
        summary = QLabel(
            f"<b>{set_name}</b>: {c.queries} judged queries"
            + (f" ({c.skipped} without a relevant chunk left out)" if c.skipped else "")
            + f"<br>Current settings ({current}): recall@{c.k} <b>{c.recall:.3f}</b>, MRR <b>{c.mrr:.3f}</b>, "
            f"nDCG@{c.k} <b>{c.ndcg:.3f}</b><br>Best in the sweep: vector {best.vector_weight:g} / FTS "
            f"{1 - best.vector_weight:g}, {best.fts_mode} mode — nDCG@{c.k} {best.metrics.ndcg:.3f}, "
            f"MRR {best.metrics.mrr:.3f}, recall@{c.k} {best.metrics.recall:.3f}"
            + ("<br>Not run: " + "; ".join(html.escape(f) for f in evaluation.failed) if evaluation.failed else "")
        )
        summary.setWordWrap(True)
        self.table = QTableWidget(len(evaluation.sweep), 5)
        self.table.setHorizontalHeaderLabels(["FTS mode", "vector weight", f"recall@{c.k}", "MRR", f"nDCG@{c.k}"])
        self.table.verticalHeader().setVisible(False)
        for r, p in enumerate(evaluation.sweep):
            cells = [
                p.fts_mode,
                f"{p.vector_weight:.1f}",
                f"{p.metrics.recall:.3f}",
                f"{p.metrics.mrr:.3f}",
                f"{p.metrics.ndcg:.3f}",
            ]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if p is best:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, col, item)
        self.table.resizeColumnsToContents()
        self.chart = SweepChart(evaluation)
        export_json = QPushButton("Export JSON…")
        export_json.clicked.connect(lambda: self._export("json"))
        export_csv = QPushButton("Export CSV…")
        export_csv.clicked.connect(lambda: self._export("csv"))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(export_json)
        buttons.addWidget(export_csv)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        split = QHBoxLayout()
        split.addWidget(self.table, 1)
        split.addWidget(self.chart, 1)
        layout.addLayout(split, 1)
        layout.addLayout(buttons)
        self.resize(900, 420)

    def _export(self, kind: str) -> None:
        path = self.dialogs.save_file(
            "Export metrics", "JSON (*.json)" if kind == "json" else "CSV (*.csv)", f"metrics.{kind}"
        )
        if path:
            text = metrics_json(self.evaluation) if kind == "json" else to_csv(metrics_rows(self.evaluation))
            Path(path).write_text(text, encoding="utf-8")


class SearchPanel(QWidget):
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

        self.ranking = QComboBox()
        self.ranking.setToolTip("Which ranking to run: the store's hybrid, or the agent's own reproduced exactly")
        self.ranking.currentIndexChanged.connect(self._ranking_changed)
        self.session = QComboBox(editable=True)
        self.session.setMinimumWidth(220)
        self.session.lineEdit().setPlaceholderText("session (memory:USER for notes)")
        self._scope_kind: str | None = None
        self.query = QLineEdit(placeholderText="Query…")
        self.query.returnPressed.connect(self.search)
        self.top_k = QSpinBox(minimum=1, maximum=200, value=8, prefix="top ")
        self.weight = QSlider(Qt.Orientation.Horizontal)
        self.weight.setRange(0, 100)
        self.weight.setValue(70)
        self.weight.setMinimumWidth(140)
        self.weight.valueChanged.connect(self._weight_moved)
        self.weight_label = QLabel()
        self.mode = QComboBox()
        self.mode.addItems(list(FTS_MODES))
        self.model_box = QComboBox()
        self.model_box.addItem(ALL_MODELS)
        self.model_box.setToolTip("Which stored vectors the vector leg searches (a mixed-model store has several)")
        self.tags = TagEditor(placeholder="tag filter…")
        self.tag_mode = QComboBox()
        self.tag_mode.addItems(list(TAG_MODES))
        self.go = QPushButton("Search")
        self.go.clicked.connect(self.search)
        self.model_label = QLabel()
        self.model_label.setWordWrap(True)
        self.legs_label = QLabel()
        self.legs_label.setWordWrap(True)

        self.set_box = QComboBox(editable=True)
        self.set_box.lineEdit().setPlaceholderText("query set")
        self.set_box.setMinimumWidth(140)
        self.metrics_button = QPushButton("Metrics…")
        self.metrics_button.clicked.connect(self.metrics)
        self.pin_button = QPushButton("Pin as A")
        self.pin_button.clicked.connect(self.pin)
        self.compare_button = QPushButton("Compare with A")
        self.compare_button.clicked.connect(self.compare)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self.export)

        self.model = ResultsModel(self)
        self.model.grade_changed.connect(self._graded)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 10)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.setItemDelegateForColumn(3, BarDelegate(self.view))
        self.view.setItemDelegateForColumn(8, HtmlDelegate(self.view))
        self.view.setItemDelegateForColumn(GRADE_COLUMN, GradeDelegate(self.view))
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.view.horizontalHeader().resizeSection(3, 110)
        fit_columns(self.view, (0, 1, 2, 4, 5, 6, 7))
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._show_explanation())
        self.explain_view = QTextBrowser()
        self.explain_view.setFont(self.view.font())

        row1 = QHBoxLayout()
        row1.addWidget(self.ranking)
        row1.addWidget(self.session)
        row1.addWidget(self.query, 1)
        row1.addWidget(self.top_k)
        row1.addWidget(self.go)
        row2 = QHBoxLayout()
        row2.addWidget(QLabel("FTS"))
        row2.addWidget(self.weight)
        row2.addWidget(QLabel("vector"))
        row2.addWidget(self.weight_label)
        row2.addWidget(self.mode)
        row2.addWidget(self.model_box)
        row2.addWidget(self.tags, 1)
        row2.addWidget(self.tag_mode)
        row3 = QHBoxLayout()
        row3.addWidget(self.model_label, 1)
        row3.addWidget(self.pin_button)
        row3.addWidget(self.compare_button)
        row3.addWidget(self.export_button)
        row3.addWidget(QLabel("Judge into"))
        row3.addWidget(self.set_box)
        row3.addWidget(self.metrics_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.explain_view)
        split.setSizes([420, 200])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.addLayout(row1)
        layout.addLayout(row2)
        layout.addLayout(row3)
        layout.addWidget(self.legs_label)
        layout.addWidget(split, 1)
        self._weight_label()
        ctx.opened.connect(self._store_opened)
        self._update_buttons()

    # -- helpers ------------------------------------------------------------------------------------

    @property
    def judgments(self) -> JudgmentStore:
        if self._judgments is None:
            self._judgments = JudgmentStore()
        return self._judgments

    def vector_weight(self) -> float:
        return self.weight.value() / 100

    def _weight_label(self) -> None:
        w = self.vector_weight()
        self.weight_label.setText(f"{w:.2f} / FTS {1 - w:.2f}")

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def _update_buttons(self) -> None:
        has = self.result is not None
        for b in (self.pin_button, self.export_button):
            b.setEnabled(has)
        self.compare_button.setEnabled(has and self.pinned is not None)

    def current_ranking(self) -> Retriever | None:
        return self.ranking.currentData()

    def _store_opened(self) -> None:
        store = self.ctx.require()
        self.base = self.result = self.pinned = None
        self.model.set_result(None)
        self.explain_view.clear()
        self._update_buttons()
        self.ranking.blockSignals(True)
        self.ranking.clear()
        for r in store.retrievers():
            self.ranking.addItem(r.label, r)
            self.ranking.setItemData(self.ranking.count() - 1, r.description, Qt.ItemDataRole.ToolTipRole)
        self.ranking.blockSignals(False)
        self._scope_kind = None
        self._ranking_changed()
        self.ctx.run(lambda: asyncio.to_thread(self.judgments.sets, store.path), on_done=self._got_sets)

    def _got_sets(self, sets: list[str]) -> None:
        self.set_box.clear()
        self.set_box.addItems(sets or ["default"])

    def _ranking_changed(self, *_: Any) -> None:
        """Tuning controls only for a tunable ranking; the scope list holds what the ranking searches over."""
        ranking = self.current_ranking()
        tunable = ranking is not None and ranking.tunable
        for w in (self.weight, self.mode, self.model_box, self.tags, self.tag_mode):
            w.setEnabled(tunable)
            w.setToolTip("" if tunable else "The agent's own ranking is fixed: it takes no weights, mode or tags")
        kind = ranking.scope if ranking is not None else None
        if kind == self._scope_kind or self.ctx.store is None:
            return
        self._scope_kind = kind
        store = self.ctx.store
        self.session.lineEdit().setPlaceholderText(
            store.capabilities.group_label.lower() if kind == "notes" else "session (memory:USER for notes)"
        )

        async def load() -> list[str]:
            if kind == "notes":
                return await store.note_users()
            return [r.session_id for r in await store.sessions_page(limit=500)] if kind else []

        def got(ids: list[str]) -> None:
            current = self.session.currentText()
            self.session.clear()
            self.session.addItems(ids)
            if current in ids:
                self.session.setCurrentText(current)

        self.ctx.run(load, on_done=got)

    # -- searching ----------------------------------------------------------------------------------

    def search(self) -> None:
        store = self.ctx.store
        session, query = self.session.currentText().strip(), self.query.text()
        ranking = self.current_ranking()
        if store is None or ranking is None:
            self.dialogs.error("This file has no ranking to search with.")
            return
        if not session:
            noun = store.capabilities.group_label.lower() if ranking.scope == "notes" else "session"
            self.dialogs.error(f"Choose a {noun} to search.")
            return
        w = self.vector_weight()
        options: dict[str, Any] = {}
        if ranking.tunable:
            options = dict(
                vector_weight=w,
                fts_weight=round(1 - w, 10),
                fts_mode=self.mode.currentText(),
                tags=self.tags.tags(),
                tag_mode=self.tag_mode.currentText(),
            )
        previous = self.result

        def done(result: QueryResult) -> None:
            same = previous is not None and (previous.query, previous.session_id) == (result.query, result.session_id)
            self._offer_models(sorted({*result.models, *result.skipped_models}))
            self.base = result
            self._show(result, previous if same else None)
            self._load_grades()

        self.ctx.run(lambda: store.search(ranking.name, session, query, self.top_k.value(), **options), on_done=done)

    def _offer_models(self, models: list[str]) -> None:
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems([ALL_MODELS, *models])
        self.model_box.setCurrentText(current if current in models else ALL_MODELS)
        self.model_box.blockSignals(False)

    def _weight_moved(self, _: int) -> None:
        self._weight_label()
        ranking = self.current_ranking()
        if self.base is None or ranking is None or not ranking.tunable or self.base.retriever != ranking.name:
            return  # an agent's own ranking is fixed: its scores are not re-weighted
        w = self.vector_weight()
        self._show(rerank(self.base, w, round(1 - w, 10)), self.result)  # from the cached legs: no new query

    def _show(self, result: QueryResult, previous: QueryResult | None) -> None:
        moved = {m.chunk_id: m.label for m in moves(previous, result)} if previous is not None else {}
        row = self.view.currentIndex().row()
        self.result = result
        self.model.set_result(result, moved)
        dropped = [m for m in moves(previous, result) if m.label == "dropped"] if previous is not None else []
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
            text += f" — dropped from the top {result.top_k}: " + ", ".join(f"#{m.before}" for m in dropped)
        self.model_label.setText(text)
        if result.steps:
            text += (
                f" — ranking {result.retriever}: "
                + "; ".join(result.steps[:2])
                + (" …" if len(result.steps) > 2 else "")
            )
        self.model_label.setText(text)
        legs = []
        for leg, name in (("vector", "vector"), ("fts", "FTS")):
            s = result.legs.get(leg) or LegStats()
            span = f" raw {s.min:.4g} … {s.max:.4g}" if s.candidates else ""
            legs.append(f"{name}: {s.candidates} candidates{span}{' (collapsed)' if s.collapsed else ''}")
        self.legs_label.setText(
            f"FTS expression: <code>{html.escape(result.fts_expression or '(none)')}</code> — " + " · ".join(legs)
        )
        if 0 <= row < self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(row, 0))
        elif self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(0, 0))
        self._show_explanation()
        self._update_buttons()

    def _show_explanation(self) -> None:
        hit = self.model.hit(self.view.currentIndex().row())
        if hit is None or self.result is None:
            self.explain_view.clear()
            return
        self.explain_view.setPlainText(explain(self.result, hit))

    # -- comparing and exporting --------------------------------------------------------------------

    def pin(self) -> None:
        self.pinned = self.result
        self._update_buttons()

    def compare_text(self) -> str:
        a, b = self.pinned, self.result
        lines = [f"A: {describe_settings(a)}", f"B: {describe_settings(b)}", ""]
        if (a.query, a.session_id) != (b.query, b.session_id):
            lines.append(f"(A searched {a.query!r} in {a.session_id}; B searched {b.query!r} in {b.session_id})")
        texts = {h.chunk_id: h.text for h in [*a.hits, *b.hits]}
        for m in moves(a, b):
            ranks = f"{m.before or '—'} → {m.after or '—'}"
            lines.append(f"{m.label:>8}  {ranks:>9}  {' '.join(texts[m.chunk_id].split())[:90]}")
        return "\n".join(lines)

    def compare(self) -> None:
        if self.pinned is None or self.result is None:
            return
        dialog = QDialog(self)
        dialog.setWindowTitle("Compare A and B")
        view = QTextBrowser()
        view.setPlainText(self.compare_text())
        QVBoxLayout(dialog).addWidget(view)
        dialog.resize(780, 420)
        self.last_dialog = dialog
        dialog.show()

    def export(self) -> None:
        if self.result is None:
            return
        path = self.dialogs.save_file("Export results", "JSON (*.json);;CSV (*.csv)", "results.json")
        if path is None:
            return
        text = to_csv(result_rows(self.result)) if path.suffix.lower() == ".csv" else results_json(self.result)
        self.ctx.run(lambda: asyncio.to_thread(Path(path).write_text, text, "utf-8"), label="Exporting results")

    # -- judgments and metrics ----------------------------------------------------------------------

    def set_name(self) -> str:
        return self.set_box.currentText().strip() or "default"

    def _load_grades(self) -> None:
        store, result, name = self.ctx.store, self.result, self.set_name()
        if store is None or result is None:
            return

        def find() -> dict[str, int]:
            for q in self.judgments.queries(store.path, name):
                if (q.session_id, q.query) == (result.session_id, result.query):
                    return q.grades
            return {}

        self.ctx.run(lambda: asyncio.to_thread(find), on_done=self.model.set_grades)

    def _graded(self, chunk_id: str, grade: int | None) -> None:
        store, result, name = self.ctx.require(), self.result, self.set_name()
        self.ctx.run(
            lambda: asyncio.to_thread(
                self.judgments.judge, store.path, name, result.session_id, result.query, chunk_id, grade
            )
        )

    def metrics(self) -> None:
        store, name = self.ctx.store, self.set_name()
        if store is None:
            return
        w, mode, k = self.vector_weight(), self.mode.currentText(), self.top_k.value()

        async def work(progress: Any, stop: Any) -> Evaluation | None:
            judged = await asyncio.to_thread(self.judgments.queries, store.path, name)
            if not judged:
                return None
            return await evaluate_settings(
                store, judged, top_k=k, k=k, vector_weight=w, fts_mode=mode, progress=progress
            )

        def done(evaluation: Evaluation | None) -> None:
            if evaluation is None:
                self.dialogs.info(f"The query set “{name}” has no judged queries yet: grade some hits (0–3) first.")
                return
            current = f"vector {w:g} / FTS {1 - w:g}, {mode} mode"
            self.last_dialog = MetricsDialog(evaluation, name, current, self.dialogs, self)
            self.last_dialog.show()

        self.ctx.run(work, label=f"Measuring “{name}”", with_progress=True, on_done=done)
