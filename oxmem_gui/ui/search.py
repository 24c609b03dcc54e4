"""The hybrid-search panel: why each hit ranked where it did, and tuning the weights with evidence.

Every number comes from the core's :class:`QueryResult`; moving the weight slider re-ranks the candidates
already fetched (:func:`rerank`, no new query) and shows how each hit moved. Hits can be graded 0–3 into named
query sets (kept in the inspector's own file), and a set's recall@k, MRR and nDCG@k are computed for the current
settings and for a weight sweep, drawn as a chart.
"""

from __future__ import annotations

import asyncio
import html
import inspect
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.errors import InvalidInputError, NotFoundError, OxmemError
from ..core.formats.base import Retriever
from ..core.memory import choose_ranking, default_ranking
from ..core.retrieval.evaluation import (
    Evaluation,
    evaluate_settings,
    metrics_json,
    metrics_rows,
    result_rows,
    results_json,
    to_csv,
)
from ..core.retrieval.explain import Move, describe_settings, explain, hit_flags, moves
from ..core.retrieval.hybrid import (
    FTS_MODES,
    KEYWORDS_MODE,
    TAG_MODES,
    Hit,
    LegStats,
    QueryResult,
    fts_terms,
    hybrid_query,
    rerank,
)
from ..core.retrieval.judgments import JudgmentStore
from ..core.retrieval.ranking import PROFILES
from .context import StoreContext
from .dialogs import Dialogs
from .table_model import RowsModel, tip
from .widgets import plural, tab_leaves
from .widgets.tags import TagEditor

VALUE_ROLE = Qt.ItemDataRole.UserRole + 20  # the exact float behind a number cell
BAR_ROLE = Qt.ItemDataRole.UserRole + 21
HTML_ROLE = Qt.ItemDataRole.UserRole + 22
VECTOR_COLOR = QColor("#3b82c4")
FTS_COLOR = QColor("#e08a2c")
CONTEXT_COLOR = QColor("#9a9a9a")
GRADE_COLUMN = 7
ALL_MODELS = "all models"


def highlight(text: str, result: QueryResult) -> str:
    """The hit's text as HTML, with what the FTS expression matched in bold and marked."""
    if result.fts_mode == "phrase":
        words = [w for w in re.split(r"\W+", result.query) if w]
        pattern = r"\W+".join(re.escape(w) for w in words) if words else None
    elif result.fts_mode == KEYWORDS_MODE:  # a profile's terms: "word" or the prefix "word"*
        found = re.findall(r'"([^"]*)"(\*?)', result.fts_expression or "")
        ends = {"*": r"\w*", "": r"(?!\w)"}
        pattern = "|".join(r"(?<!\w)" + re.escape(t) + ends[star] for t, star in found) or None
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


#: what each grade means (a chunk graded 1 or more counts as relevant in the metrics)
GRADES = {0: "irrelevant", 1: "related", 2: "relevant", 3: "perfect"}
NOT_GRADED = "— not graded"
GRADES_TIP = "Grade: " + ", ".join(f"{g} {name}" for g, name in GRADES.items()) + " (1 or more counts as relevant)"


def grade_label(grade: int | None) -> str:
    """``3 perfect``; ``—`` for an ungraded hit."""
    return "—" if grade is None else f"{grade} {GRADES.get(grade, '')}".strip()


def parse_grade(value: Any) -> int | None:
    """A grade from what an editor holds: ``3``, ``"3"``, ``"3 perfect"``; None for empty or ``—``."""
    if value is None or isinstance(value, int):
        return value
    text = str(value).strip()
    if not text or text.startswith("—"):
        return None
    return int(text.split()[0])


def short_flag(flag: str) -> str:
    """A :func:`hit_flags` warning in a few words, for the narrow Flags column (its tooltip has the whole)."""
    if flag.startswith("not in "):
        return flag.removesuffix(" candidates")
    leg = "vector" if flag.startswith("vector") else "FTS"
    if "collapsed" in flag:
        return f"{leg} collapsed"
    if "no candidates" in flag:
        return f"no {leg} candidates"
    if "wide" in flag:
        return f"{leg} range tiny"
    return flag


class ResultsModel(RowsModel):
    COLUMNS = (
        "Rank",
        "Move",
        "Score",
        "Parts",
        "Vector",
        "FTS",
        "Flags",
        "Grade",
        "Text",
    )
    HEADER_TIPS = (
        "Rank under the current settings",
        "Rank change against this query's ranking with the default settings (its first run with them): "
        "↑ up, ↓ down, = same, new (not in that top k)",
        "Score = vector weight × vector score + FTS weight × FTS score",
        "The score's two contributions as a bar: vector (blue) + FTS (orange)",
        "Vector leg: raw cosine → normalized 0…1 (the tooltip has × weight = contribution)",
        "FTS leg: raw −bm25 → normalized 0…1 (the tooltip has × weight = contribution)",
        "Warnings about how the hit was scored (the tooltip has them in full)",
        GRADES_TIP + ". Double-click to grade.",
        "The hit's text (the whole text is in the tooltip and in the pane below)",
    )
    grade_changed = Signal(str, object)  # chunk_id, grade (None: cleared)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: QueryResult | None = None
        self.moves: dict[str, Move] = {}
        self.grades: dict[str, int] = {}

    def set_result(self, result: QueryResult | None, moved: dict[str, Move] | None = None) -> None:
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

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADER_TIPS[section] if 0 <= section < len(self.HEADER_TIPS) else None
        return super().headerData(section, orientation, role)

    @staticmethod
    def _leg(raw: float | None, norm: float, weight: float) -> str:
        if raw is None:
            return f"— → 0 × {weight:g} = 0"
        return f"{raw:.4g} → {norm:.3f} × {weight:g} = {weight * norm:.4f}"

    @staticmethod
    def _leg_short(raw: float | None, norm: float) -> str:
        return "—" if raw is None else f"{raw:.2f} → {norm:.2f}"

    def _move_tip(self, h: Hit) -> str:
        m = self.moves.get(h.chunk_id)
        if m is None:
            return "No ranking with the default settings to compare with"
        if m.before is None:
            return f"Not in the top {len(self.result.hits)} with the default settings; now #{h.rank}"
        return f"#{m.before} with the default settings, now #{h.rank}"

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        h = self.hit(index.row()) if index.isValid() else None
        if h is None:
            return None
        r, col = self.result, index.column()
        vc, fc = r.vector_weight * h.vector_score, r.fts_weight * h.fts_score
        if role == Qt.ItemDataRole.DisplayRole:
            move = self.moves.get(h.chunk_id)
            return {
                0: str(h.rank),
                1: move.label if move else "",
                2: f"{h.score:.4f}",
                3: f"{vc:.3f} + {fc:.3f}" + (f" + {h.context_score:.3f}" if h.context_score else ""),
                4: self._leg_short(h.vector_raw, h.vector_score),
                5: self._leg_short(h.fts_raw, h.fts_score),
                6: ", ".join(short_flag(f) for f in hit_flags(r, h)),
                7: grade_label(self.grades.get(h.chunk_id)),
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
            return (vc, fc, h.context_score, 1.0 + r.profile.get("neighbour_weight", 0.0))
        if role == HTML_ROLE and col == 8:
            return highlight(" ".join(h.text.split()), r)
        if role == Qt.ItemDataRole.EditRole and col == GRADE_COLUMN:
            return self.grades.get(h.chunk_id)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 8:
                return tip(h.text)
            if col == 6:
                return "\n".join(hit_flags(r, h)) or "No warnings"
            if col == 1:
                return self._move_tip(h)
            if col in (4, 5):
                raw, norm, w = (
                    (h.vector_raw, h.vector_score, r.vector_weight)
                    if col == 4
                    else (h.fts_raw, h.fts_score, r.fts_weight)
                )
                return (
                    ("Vector" if col == 4 else "FTS")
                    + " raw → normalized × weight = contribution:\n"
                    + self._leg(raw, norm, w)
                )
            if col == GRADE_COLUMN:
                return GRADES_TIP + ". Double-click to grade."
            return explain(r, h)
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            label = self.moves[h.chunk_id].label if h.chunk_id in self.moves else ""
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
        grade = parse_grade(value)
        if grade is None:
            self.grades.pop(h.chunk_id, None)
        else:
            self.grades[h.chunk_id] = grade
        self.dataChanged.emit(index, index)
        self.grade_changed.emit(h.chunk_id, grade)
        return True


class BarDelegate(QStyledItemDelegate):
    """The contributions as a stacked bar — vector blue, FTS orange, a profile's neighbour context grey — on the
    scale of the highest score the ranking can give (1, or 1 + the neighbour weight)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        self.initStyleOption(option, index)
        option.text = ""  # the numbers are in the next two columns; the bar shows their proportions
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        value = index.data(BAR_ROLE)
        if not value:
            return
        vc, fc, cc, scale = value
        rect = option.rect.adjusted(4, 5, -4, -5)
        painter.save()
        x = rect.x()
        for part, color in ((vc, VECTOR_COLOR), (fc, FTS_COLOR), (cc, CONTEXT_COLOR)):
            width = round(rect.width() * max(0.0, min(1.0, part / scale)))
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
        box.addItems([NOT_GRADED, *(grade_label(g) for g in GRADES)])
        box.setToolTip(GRADES_TIP)
        return box

    def setEditorData(self, editor: QComboBox, index: QModelIndex) -> None:  # noqa: N802
        grade = index.data(Qt.ItemDataRole.EditRole)
        editor.setCurrentText(NOT_GRADED if grade is None else grade_label(grade))

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
    """The metrics of a query set under the current settings and over the weight sweep. ``apply_best`` is
    emitted with the best point's (vector weight, FTS mode) when the user applies it."""

    apply_best = Signal(float, str)

    def __init__(
        self, evaluation: Evaluation, set_name: str, current: str, dialogs: Dialogs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.evaluation = evaluation
        self.dialogs = dialogs
        self.setWindowTitle(f"Metrics — {set_name}")
        c, best = evaluation.current, evaluation.best()
        summary = QLabel(
            f"<b>{html.escape(set_name)}</b>: {plural(c.queries, 'judged query', 'judged queries')}"
            + (f" ({c.skipped} without a relevant chunk left out)" if c.skipped else "")
            + f"<br>Current settings ({current}): recall@{c.k} <b>{c.recall:.3f}</b>, MRR <b>{c.mrr:.3f}</b>, "
            f"nDCG@{c.k} <b>{c.ndcg:.3f}</b><br>Best in the sweep: vector {best.vector_weight:g} / FTS "
            f"{1 - best.vector_weight:g}, {best.fts_mode} mode — nDCG@{c.k} {best.metrics.ndcg:.3f}, "
            f"MRR {best.metrics.mrr:.3f}, recall@{c.k} {best.metrics.recall:.3f}"
            + ("<br>Not run: " + "; ".join(html.escape(f) for f in evaluation.failed) if evaluation.failed else "")
        )
        summary.setWordWrap(True)
        self.summary = summary
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
        self.table.setToolTip("Every point of the sweep; the best one (by nDCG) is in bold")
        self.chart.setToolTip("nDCG against the vector weight for each FTS mode; the ring marks the best point")
        self.apply_button = QPushButton(f"Apply best (vector {best.vector_weight:g}, {best.fts_mode})")
        self.apply_button.setToolTip(
            f"Set the search panel to the best point: vector weight {best.vector_weight:g} / FTS "
            f"{1 - best.vector_weight:g}, {best.fts_mode} mode"
        )
        self.apply_button.clicked.connect(self._apply)
        export_json = QPushButton("Export JSON…")
        export_json.setToolTip("Save these metrics and the sweep as JSON")
        export_json.clicked.connect(lambda: self._export("json"))
        export_csv = QPushButton("Export CSV…")
        export_csv.setToolTip("Save the sweep as CSV")
        export_csv.clicked.connect(lambda: self._export("csv"))
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply_button)
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

    def _apply(self) -> None:
        best = self.evaluation.best()
        self.apply_best.emit(best.vector_weight, best.fts_mode)
        self.apply_button.setText("Applied")
        self.apply_button.setEnabled(False)

    def _export(self, kind: str) -> None:
        path = self.dialogs.save_file(
            "Export metrics", "JSON (*.json)" if kind == "json" else "CSV (*.csv)", f"metrics.{kind}"
        )
        if path:
            text = metrics_json(self.evaluation) if kind == "json" else to_csv(metrics_rows(self.evaluation))
            Path(path).write_text(text, encoding="utf-8")


def _hybrid_defaults() -> dict[str, Any]:
    params = inspect.signature(hybrid_query).parameters
    found = {name: params[name].default for name in ("vector_weight", "fts_weight", "fts_mode", "tag_mode")}
    return {**found, "tags": []}


#: the tunable ranking's default settings (SPEC §6): what "Reset to agent defaults" restores, and the settings of
#: the ranking each Move is measured from
DEFAULTS = _hybrid_defaults()
#: at most this wide (px) when a column is sized to its content; the Text column takes the rest
COLUMN_CAPS = {0: 56, 1: 64, 2: 72, 4: 100, 5: 100, 6: 110, 7: 100}
CONTRIBUTIONS_WIDTH = 64
#: a cell's margins and focus frame around its text
CELL_PADDING = 14
WARN_STYLE = "color: #b35c00;"
ERROR_STYLE = "color: #c0392b;"

TIPS = {
    "session": "The session to search: pick one or type its id",
    "query": "What to search for — Enter searches",
    "top_k": "How many hits to show (changing it searches again)",
    "go": "Search the session for the query with these settings (Enter in the query field)",
    "weight": "Vector weight (right) against FTS weight (left); the two sum to 1. Moving it re-ranks the hits "
    "already fetched, with no new query",
    "mode": "FTS mode: terms matches any of the words (OR); phrase matches the words together, in order (changing "
    "it searches again)",
    "model_box": "Which stored vectors the vector leg searches (a mixed-model store has several; changing it "
    "searches again)",
    "tags": "Only chunks with these tags: Enter or comma adds one (changing them searches again)",
    "tag_mode": "any: a chunk with at least one of the tags; all: a chunk with every one of them",
    "reset": "Back to this ranking's defaults: vector {vector_weight:g} / FTS {fts_weight:g}, {fts_mode} mode, "
    "no tag filter, all models",
}


class SearchPanel(QWidget):
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
        self._generation = 0
        self._tips = dict(TIPS)
        self._tips["reset"] = TIPS["reset"].format(**DEFAULTS)
        self._saved_weight: int | None = None  # the tunable hybrid's slider value while a fixed ranking shows its own

        self.ranking = QComboBox()
        self.ranking.setToolTip("Which ranking to run: the store's hybrid, or the agent's own reproduced exactly")
        self.ranking.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.ranking.setMinimumContentsLength(20)
        self.ranking.currentIndexChanged.connect(self._ranking_changed)
        self.session = QComboBox(editable=True)
        self.session.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.session.setMinimumContentsLength(22)
        self.session.lineEdit().setPlaceholderText("session (memory:USER for notes)")
        self.session.setToolTip(TIPS["session"])
        self.session.currentTextChanged.connect(lambda *_: self._update_status())
        self.session.activated.connect(lambda *_: self._look_up_default(select=True))
        self._scope_kind: str | None = None
        self.query = QLineEdit(placeholderText="Query…")
        self.query.setToolTip(TIPS["query"])
        self.query.returnPressed.connect(self.search)
        self.query.textChanged.connect(self._query_edited)
        self.top_k = QSpinBox(minimum=1, maximum=200, value=8, prefix="top ")
        self.top_k.setToolTip(TIPS["top_k"])
        self.top_k.valueChanged.connect(self._controls_changed)
        self.weight = QSlider(Qt.Orientation.Horizontal)
        self.weight.setRange(0, 100)
        self.weight.setValue(round(DEFAULTS["vector_weight"] * 100))
        self.weight.setMinimumWidth(120)
        self.weight.valueChanged.connect(self._weight_moved)
        self.weight_label = QLabel()
        self.weight_label.setToolTip(TIPS["weight"])
        self.mode = QComboBox()
        self.mode.addItems(list(FTS_MODES))
        self.mode.currentTextChanged.connect(self._controls_changed)
        self.model_box = QComboBox()
        self.model_box.addItem(ALL_MODELS)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_box.setMinimumContentsLength(10)
        self.model_box.currentTextChanged.connect(self._controls_changed)
        self.tags = TagEditor(placeholder="tag filter…")
        self.tags.tags_changed.connect(self._controls_changed)
        self.tag_mode = QComboBox()
        self.tag_mode.addItems(list(TAG_MODES))
        self.tag_mode.currentTextChanged.connect(self._controls_changed)
        self.reset_button = QPushButton("Reset to agent defaults")
        self.reset_button.clicked.connect(self.reset_to_defaults)
        self.go = QPushButton("Search")
        self.go.setToolTip(TIPS["go"])
        self.go.clicked.connect(self.search)
        self.query_note = self._data_label(ERROR_STYLE)  # why the search did not run
        self.defaults_note = self._data_label(WARN_STYLE)  # the settings that are not the defaults
        self.results_label = self._data_label()  # what the shown hits answer, and whether the controls still match
        self.model_label = self._data_label()
        self.legs_label = self._data_label()
        self.legs_label.setTextFormat(Qt.TextFormat.RichText)

        self.set_box = QComboBox(editable=True)
        self.set_box.lineEdit().setPlaceholderText("query set")
        self.set_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.set_box.setMinimumContentsLength(12)
        self.set_box.setToolTip("The query set your grades go into (type a new name to start one)")
        self.metrics_button = QPushButton("Metrics…")
        self.metrics_button.setToolTip(
            "recall@k, MRR and nDCG@k of the query set's judged queries under these settings, and over a sweep of "
            "the weight"
        )
        self.metrics_button.clicked.connect(self.metrics)
        self.pin_button = QPushButton("Pin as A")
        self.pin_button.setToolTip("Keep these results as A, to compare later results with")
        self.pin_button.clicked.connect(self.pin)
        self.compare_button = QPushButton("Compare…")
        self.compare_button.setToolTip(
            "Each hit's rank here against A (the pinned results) — or, with nothing pinned, against this query's "
            "ranking with the default settings"
        )
        self.compare_button.clicked.connect(self.compare)
        self.default_button = QToolButton()
        self.default_button.setText("Make default")
        self.default_button.setToolTip(
            "Make the chosen ranking the one this file's searches start with — for this session, or for every "
            "session (kept in oxmem's settings; the file is not written)"
        )
        self.default_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.default_button)
        self.default_session_action = menu.addAction("For this session", lambda: self.make_default(True))
        self.default_file_action = menu.addAction("For every session of this file", lambda: self.make_default(False))
        menu.addSeparator()
        self.forget_default_action = menu.addAction("Forget the choices: built-in default", self.forget_default)
        self.default_button.setMenu(menu)
        #: (ranking name, why) of the current session's default, as last looked up
        self.default_choice: tuple[str, str] | None = None
        self._lookups = 0
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save these results, with each hit's breakdown, as JSON or CSV")
        self.export_button.clicked.connect(self.export)

        self.model = ResultsModel(self)
        self.model.grade_changed.connect(self._graded)
        self.model.modelReset.connect(self._fit_columns)
        self.view = QTableView()
        self.view.setModel(self.model)
        tab_leaves(self.view)
        self.view.setToolTip(
            "Double-click a hit or press Enter on it to show its event in the session browser; double-click its "
            "Grade cell to grade it"
        )
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 10)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setMinimumSectionSize(24)
        self.view.setItemDelegateForColumn(3, BarDelegate(self.view))
        self.view.setItemDelegateForColumn(8, HtmlDelegate(self.view))
        self.view.setItemDelegateForColumn(GRADE_COLUMN, GradeDelegate(self.view))
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.view.horizontalHeader().resizeSection(3, CONTRIBUTIONS_WIDTH)
        self.view.doubleClicked.connect(lambda index: index.column() != GRADE_COLUMN and self.open_hit(index.row()))
        self.view.installEventFilter(self)
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._show_explanation())
        self.explain_view = QTextBrowser()
        self.explain_view.setFont(self.view.font())
        self.explain_view.setToolTip("The selected hit: where it is, its whole text, and how its score was made")

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
        row2.addWidget(self.tags, 1)
        row2.addWidget(self.tag_mode)
        row2.addWidget(self.reset_button)
        row3 = QHBoxLayout()
        row3.addWidget(self.model_box)
        row3.addWidget(self.default_button)
        row3.addStretch(1)
        row3.addWidget(self.pin_button)
        row3.addWidget(self.compare_button)
        row3.addWidget(self.export_button)
        row3.addWidget(QLabel("Judge into"))
        row3.addWidget(self.set_box)
        row3.addWidget(self.metrics_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.explain_view)
        split.setChildrenCollapsible(False)
        split.setSizes([420, 200])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.addLayout(row1)
        layout.addWidget(self.query_note)
        layout.addLayout(row2)
        layout.addWidget(self.defaults_note)
        layout.addLayout(row3)
        layout.addWidget(self.results_label)
        layout.addWidget(self.model_label)
        layout.addWidget(self.legs_label)
        layout.addWidget(split, 1)
        self._weight_label()
        self._apply_ranking()
        ctx.opened.connect(self._store_opened)
        self._update_buttons()
        self._update_defaults_note()
        self._update_status()

    # -- helpers ------------------------------------------------------------------------------------

    @staticmethod
    def _data_label(style: str = "") -> QLabel:
        """A label for data: it wraps, and its text never widens the panel."""
        label = QLabel()
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        label.setMinimumWidth(1)
        label.setStyleSheet(style)
        label.setVisible(False)
        return label

    @staticmethod
    def _set_label(label: QLabel, text: str) -> None:
        label.setText(text)
        label.setVisible(bool(text))

    @property
    def judgments(self) -> JudgmentStore:
        if self._judgments is None:
            self._judgments = JudgmentStore()
        return self._judgments

    def vector_weight(self) -> float:
        return self.weight.value() / 100

    def _weight_label(self) -> None:
        w, ranking = self.vector_weight(), self.current_ranking()
        text = f"{w:.2f} / FTS {1 - w:.2f}"
        if ranking is not None and not ranking.tunable:
            text = f"{text} (fixed)" if ranking.name in PROFILES else "as the agent weighs it"
        self.weight_label.setText(text)

    def _set_weight_quietly(self, value: int) -> None:
        """Move the slider without re-ranking the hits shown."""
        self.weight.blockSignals(True)
        self.weight.setValue(value)
        self.weight.blockSignals(False)

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def _update_buttons(self) -> None:
        has = self.result is not None
        for b in (self.pin_button, self.export_button):
            b.setEnabled(has)
        self.compare_button.setEnabled(has and (self.pinned is not None or self.baseline is not None))

    def current_ranking(self) -> Retriever | None:
        return self.ranking.currentData()

    def _tunable(self) -> bool:
        ranking = self.current_ranking()
        return ranking is not None and ranking.tunable

    def _models(self) -> tuple[str, ...]:
        chosen = self.model_box.currentText()
        return () if chosen in ("", ALL_MODELS) else (chosen,)

    def _request(self) -> tuple:
        """What the controls ask for, but the weight (which re-ranks without a new query)."""
        ranking = self.current_ranking()
        asked = (
            ranking.name if ranking else None,
            self.session.currentText().strip(),
            self.query.text(),
            self.top_k.value(),
        )
        if not self._tunable():
            if ranking is not None and ranking.tag_filter:
                return (*asked, tuple(self.tags.tags()), self.tag_mode.currentText())
            return asked
        return (*asked, self.mode.currentText(), tuple(self.tags.tags()), self.tag_mode.currentText(), self._models())

    def stale(self) -> bool:
        """Whether the hits shown no longer answer what the controls say (a search would change them)."""
        return self.result is not None and self._request() != self._shown

    def differences(self) -> list[str]:
        """How the tuning controls differ from the ranking's defaults, in words (empty: they are the defaults)."""
        if not self._tunable():
            return []
        out = []
        w, dw, dfts = self.vector_weight(), DEFAULTS["vector_weight"], DEFAULTS["fts_weight"]
        if abs(w - dw) > 1e-9:
            out.append(f"vector {w:.2f} / FTS {1 - w:.2f} (default {dw:.2f} / {dfts:.2f})")
        if self.mode.currentText() != DEFAULTS["fts_mode"]:
            out.append(f"{self.mode.currentText()} mode (default {DEFAULTS['fts_mode']})")
        tags = self.tags.tags()
        if tags:
            out.append(f"only chunks tagged {', '.join(tags)} (default: no tag filter)")
        if self.tag_mode.currentText() != DEFAULTS["tag_mode"]:
            out.append(f"tag mode {self.tag_mode.currentText()} (default {DEFAULTS['tag_mode']})")
        if self._models():
            out.append(f"only {self._models()[0]} vectors (default: all models)")
        return out

    def _update_defaults_note(self) -> None:
        differs = self.differences()
        self._set_label(self.defaults_note, ("Not the agent's defaults: " + "; ".join(differs)) if differs else "")
        self.reset_button.setEnabled(self._tunable() and bool(differs))

    def _update_status(self) -> None:
        r = self.result
        if r is None:
            self._set_label(self.results_label, "")
            return
        text = f"{plural(len(r.hits), 'hit')} for “{r.query}” in {r.session_id}"
        if self.stale():
            text += " — not what the controls now say: press Search (or Enter in the query) to update"
        self.results_label.setStyleSheet(WARN_STYLE if self.stale() else "")
        self._set_label(self.results_label, text)

    def _say(self, message: str) -> None:
        """Why the search did not run, next to the query field (empty: clears it)."""
        self._set_label(self.query_note, message)

    def _query_edited(self, *_: Any) -> None:
        if self.query.text().strip():
            self._say("")
        self._update_status()

    def _fit_columns(self) -> None:
        """Each column but Text as wide as its header and its cells (up to its cap); Text takes the rest."""
        rows = self.model.rowCount()
        if not rows:
            return
        header, metrics = self.view.horizontalHeader(), self.view.fontMetrics()
        for column, cap in COLUMN_CAPS.items():
            cells = (self.model.index(r, column).data() or "" for r in range(min(rows, 250)))
            if column == GRADE_COLUMN:  # grades come later: room for any of them
                cells = (grade_label(g) for g in GRADES)
            widest = max(metrics.horizontalAdvance(text) for text in cells) + CELL_PADDING
            self.view.setColumnWidth(column, min(cap, max(widest, header.sectionSizeFromContents(column).width())))
        self.view.setColumnWidth(3, max(CONTRIBUTIONS_WIDTH, header.sectionSizeFromContents(3).width()))

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
                self._set_label(label, "")
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
        self._update_buttons()
        self._update_defaults_note()
        self._update_status()
        self.ctx.run(lambda: asyncio.to_thread(self.judgments.sets, store.path), on_done=self._got_sets)

    # -- the default ranking -------------------------------------------------------------------------

    def _look_up_default(self, select: bool) -> None:
        """Find the session's default ranking (chosen per session or file, else built in), mark it in the list,
        and with ``select`` make it the current one."""
        store = self.ctx.store
        if store is None or not any(r.scope == "session" for r in store.retrievers()):
            return
        session = self.session.currentText().strip() or None
        self._lookups += 1
        lookup = self._lookups

        def got(found: tuple[Retriever, str]) -> None:
            if lookup != self._lookups or store is not self.ctx.store:
                return  # another session or file since
            ranking, why = found
            self.default_choice = (ranking.name, why)
            why_text = {"session": "default for this session", "file": "default for this file"}.get(why, "default")
            for i in range(self.ranking.count()):
                r = self.ranking.itemData(i)
                self.ranking.setItemText(i, r.label + (f" ({why_text})" if r.name == ranking.name else ""))
                if select and r.name == ranking.name:
                    self.ranking.setCurrentIndex(i)

        self.ctx.run(lambda: default_ranking(store, session), on_done=got)

    def make_default(self, for_session: bool) -> None:
        """Make the current ranking the default for the session in the field (``for_session``) or the file."""
        store, ranking = self.ctx.store, self.current_ranking()
        session = self.session.currentText().strip()
        if store is None or ranking is None or ranking.scope != "session":
            self._say("Choose a ranking over sessions to make it the default.")
            return
        if for_session and not session:
            self._say("Choose a session to make this ranking its default.")
            return
        self.ctx.run(
            lambda: choose_ranking(store, ranking.name, session if for_session else None),
            on_done=lambda _: self._look_up_default(select=False),
        )

    def forget_default(self) -> None:
        """Forget the session's and the file's choices: the built-in default again."""
        store, session = self.ctx.store, self.session.currentText().strip()
        if store is None:
            return

        async def forget() -> None:
            if session:
                await choose_ranking(store, None, session)
            await choose_ranking(store, None, None)

        self.ctx.run(forget, on_done=lambda _: self._look_up_default(select=False))

    def _got_sets(self, sets: list[str]) -> None:
        current = self.set_box.currentText().strip()
        self.set_box.clear()
        self.set_box.addItems(sets or ["default"])
        if current:
            self.set_box.setCurrentText(current)

    def _ranking_changed(self, *_: Any) -> None:
        if self._apply_ranking():
            self._update_defaults_note()
            self._update_status()  # another kind of scope: the session field changes, so search again by hand
        else:
            self._controls_changed()

    def _apply_ranking(self) -> bool:
        """Tuning controls only for a tunable ranking; the scope list holds what the ranking searches over.
        Returns whether the kind of scope changed."""
        ranking = self.current_ranking()
        tunable = ranking is None or ranking.tunable  # with no store open yet, nothing is refused
        fixed = (
            "This ranking is a fixed profile: it takes tags, but no weights, mode or model choice"
            if ranking is not None and ranking.tag_filter
            else "The agent's own ranking is fixed: it takes no weights, mode or tags"
        )
        for name in ("weight", "mode", "model_box", "tags", "tag_mode", "reset"):
            widget = self.reset_button if name == "reset" else getattr(self, name)
            enabled = tunable or (name in ("tags", "tag_mode") and ranking is not None and ranking.tag_filter)
            widget.setEnabled(enabled)
            widget.setToolTip(self._tips[name] if enabled else fixed)
        # a profile shows its fixed weights on the slider; the hybrid's setting comes back when it is chosen again
        if tunable and self._saved_weight is not None:
            self._set_weight_quietly(self._saved_weight)
            self._saved_weight = None
        elif ranking is not None and ranking.name in PROFILES:
            if self._saved_weight is None:
                self._saved_weight = self.weight.value()
            self._set_weight_quietly(round(PROFILES[ranking.name].vector_weight * 100))
        self._weight_label()
        kind = ranking.scope if ranking is not None else None
        if kind == self._scope_kind or self.ctx.store is None:
            return False
        self._scope_kind = kind
        store = self.ctx.store
        group = store.capabilities.group_label.lower()
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
            self.session.addItems(ids)
            self.session.blockSignals(False)
            if current in ids:
                self.session.setCurrentText(current)
            self._update_status()

        self.ctx.run(load, on_done=got)
        return True

    # -- searching ----------------------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        ranking = self.current_ranking()
        if not self._tunable():
            if ranking is not None and ranking.tag_filter and self.tags.tags():
                return dict(tags=self.tags.tags(), tag_mode=self.tag_mode.currentText())
            return {}
        w = self.vector_weight()
        options: dict[str, Any] = dict(
            vector_weight=w,
            fts_weight=round(1 - w, 10),
            fts_mode=self.mode.currentText(),
            tags=self.tags.tags(),
            tag_mode=self.tag_mode.currentText(),
        )
        if self._models():
            options["models"] = list(self._models())
        return options

    def search(self) -> None:
        """Run the ranking with the controls' settings. What keeps it from running is said next to the query."""
        store = self.ctx.store
        session, query = self.session.currentText().strip(), self.query.text()
        ranking = self.current_ranking()
        if store is None or ranking is None:
            self._say("This file has no ranking to search with.")
            return
        if not query.strip():
            self._say("Type a query to search for.")
            return
        if not session:
            noun = store.capabilities.group_label.lower() if ranking.scope == "notes" else "session"
            self._say(f"Choose a {noun} to search.")
            return
        self._say("")
        options, request, k = self._options(), self._request(), self.top_k.value()
        key = (ranking.name, session, query, k)
        defaults = DEFAULTS if ranking.tunable else {}
        from_defaults = "models" not in options and all(
            options.get(n, v) == v for n, v in {**defaults, "tags": []}.items()
        )
        self._generation += 1
        generation = self._generation

        async def work() -> tuple[QueryResult, QueryResult]:
            result = await store.search(ranking.name, session, query, k, **options)
            baseline = self._baselines.get(key)
            if baseline is None:
                baseline = result if from_defaults else await store.search(ranking.name, session, query, k, **defaults)
            return result, baseline

        def done(found: tuple[QueryResult, QueryResult]) -> None:
            result, baseline = found
            self.baseline = self._baselines.setdefault(key, baseline)
            if generation != self._generation:
                return  # a later search is under way
            self._offer_models(sorted({*result.models, *result.skipped_models}))
            self.base = result
            self._shown = request
            self._scope = ranking.scope
            w = self.vector_weight()
            if ranking.tunable and abs(w - result.vector_weight) > 1e-9:  # the slider moved meanwhile
                result = rerank(result, w, round(1 - w, 10))
            self._show(result)
            self._load_grades()

        def failed(exc: Exception) -> bool:
            if generation != self._generation:
                return isinstance(exc, OxmemError)
            self._update_status()
            if isinstance(exc, (InvalidInputError, NotFoundError)):
                message = str(exc)
                self._say(message[:1].upper() + message[1:] + ("" if message.endswith(".") else "."))
                return True
            return False

        self.ctx.run(work, on_done=done, on_error=failed)

    def _controls_changed(self, *_: Any) -> None:
        """A setting that needs a new query changed: search again when hits are shown, so they always answer
        the controls."""
        self._update_defaults_note()
        if self.stale() and self.query.text().strip() and self.session.currentText().strip():
            self.search()
        self._update_status()

    def _offer_models(self, models: list[str]) -> None:
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems([ALL_MODELS, *models])
        self.model_box.setCurrentText(current if current in models else ALL_MODELS)
        self.model_box.blockSignals(False)

    def _weight_moved(self, _: int) -> None:
        self._weight_label()
        self._update_defaults_note()
        ranking = self.current_ranking()
        if self.base is None or ranking is None or not ranking.tunable or self.base.retriever != ranking.name:
            return  # an agent's own ranking is fixed: its scores are not re-weighted
        w = self.vector_weight()
        self._show(rerank(self.base, w, round(1 - w, 10)))  # from the cached legs: no new query

    def reset_to_defaults(self) -> None:
        """The ranking's default settings back in the controls (searching again when hits are shown)."""
        self.weight.setValue(round(DEFAULTS["vector_weight"] * 100))
        quiet = (self.mode, self.tags, self.tag_mode, self.model_box)
        for widget in quiet:
            widget.blockSignals(True)
        self.mode.setCurrentText(DEFAULTS["fts_mode"])
        self.tags.set_tags(list(DEFAULTS["tags"]))
        self.tag_mode.setCurrentText(DEFAULTS["tag_mode"])
        self.model_box.setCurrentText(ALL_MODELS)
        for widget in quiet:
            widget.blockSignals(False)
        self._controls_changed()

    def apply_best(self, vector_weight: float, fts_mode: str) -> None:
        """Set the weight and FTS mode (a sweep's best point) of the tunable hybrid, choosing it if a fixed
        ranking is shown; the hits follow."""
        if not self._tunable():
            for i in range(self.ranking.count()):
                r = self.ranking.itemData(i)
                if r.tunable and r.scope == "session":
                    self.ranking.setCurrentIndex(i)
                    break
        self.weight.setValue(round(vector_weight * 100))
        self.mode.setCurrentText(fts_mode)

    def _show(self, result: QueryResult) -> None:
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
        self._set_label(self.model_label, text)
        legs = []
        for leg, name in (("vector", "vector"), ("fts", "FTS")):
            s = result.legs.get(leg) or LegStats()
            span = f" raw {s.min:.4g} … {s.max:.4g}" if s.candidates else ""
            legs.append(f"{name}: {plural(s.candidates, 'candidate')}{span}{' (collapsed)' if s.collapsed else ''}")
        self._set_label(
            self.legs_label,
            f"FTS expression: <code>{html.escape(result.fts_expression or '(none)')}</code> — " + " · ".join(legs),
        )
        rows = [r for r in range(self.model.rowCount()) if selected and self.model.hit(r).chunk_id == selected.chunk_id]
        if rows or self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(rows[0] if rows else 0, 0))
        self._show_explanation()
        self._update_buttons()
        self._update_status()

    def _where(self, hit: Hit) -> str:
        store = self.ctx.store
        if self._scope == "notes":
            return f"{store.capabilities.group_label if store else 'Group'} {hit.session_id} · chunk {hit.chunk_id}"
        where = f"Session {hit.session_id}"
        start, end = hit.sequence_start, hit.sequence_end
        if start is not None:
            where += f" · sequence {start}" if end in (None, start) else f" · sequences {start}–{end}"
        return where + f" · chunk {hit.chunk_id}"

    def _show_explanation(self) -> None:
        hit = self.model.hit(self.view.currentIndex().row())
        if hit is None or self.result is None:
            self.explain_view.clear()
            return
        first, _, rest = explain(self.result, hit).partition("\n")
        self.explain_view.setHtml(
            f"<p style='margin:0'><b>{html.escape(first)}</b></p>"
            f"<p style='margin-top:4px'>{html.escape(self._where(hit))}</p>"
            f"<p style='white-space:pre-wrap; margin-top:4px'>{highlight(hit.text, self.result)}</p>"
            f"<pre style='white-space:pre-wrap'>{html.escape(rest.strip(chr(10)))}</pre>"
        )

    # -- comparing and exporting --------------------------------------------------------------------

    def pin(self) -> None:
        self.pinned = self.result
        self._update_buttons()

    def compare_text(self) -> str:
        """The shown results (B) against A: the pinned results, or else the query's default-settings ranking."""
        a, b = self.pinned or self.baseline, self.result
        lines = [f"A: {describe_settings(a)}", f"B: {describe_settings(b)}", ""]
        if self.pinned is None:
            lines[0] += " (the default settings)"
        if (a.query, a.session_id) != (b.query, b.session_id):
            lines.append(f"(A searched {a.query!r} in {a.session_id}; B searched {b.query!r} in {b.session_id})")
        texts = {h.chunk_id: h.text for h in [*a.hits, *b.hits]}
        for m in moves(a, b):
            ranks = f"{m.before or '—'} → {m.after or '—'}"
            lines.append(f"{m.label:>8}  {ranks:>9}  {' '.join(texts[m.chunk_id].split())[:90]}")
        return "\n".join(lines)

    def compare(self) -> None:
        if (self.pinned is None and self.baseline is None) or self.result is None:
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
            current = ranking.label if fixed else f"vector {w:g} / FTS {1 - w:g}, {mode} mode"
            self.last_dialog = MetricsDialog(evaluation, name, current, self.dialogs, self)
            self.last_dialog.apply_best.connect(self.apply_best)
            self.last_dialog.show()

        self.ctx.run(work, label=f"Measuring “{name}”", with_progress=True, on_done=done)
