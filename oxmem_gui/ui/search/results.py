"""The search results as a table: the model of the hits (score, each leg's raw and normalized value, the move
from the default ranking, the grade), the delegates that draw its bars, highlighted text and grades, and the
view that shows them."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import QModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from ...core.api import KEYWORDS_MODE, Hit, Move, QueryResult, explain, fts_terms, hit_flags
from ..rows_model import RowsModel, tip
from ..widgets import ColumnChooser, tab_leaves

VALUE_ROLE = Qt.ItemDataRole.UserRole + 20  # the exact float behind a number cell
BAR_ROLE = Qt.ItemDataRole.UserRole + 21
HTML_ROLE = Qt.ItemDataRole.UserRole + 22
VECTOR_COLOR = QColor("#3b82c4")
FTS_COLOR = QColor("#e08a2c")
CONTEXT_COLOR = QColor("#9a9a9a")
UPDATE_COLOR = QColor("#2e8b57")
GRADE_COLUMN = 7
#: the hit's session: shown only when a search spans sessions
SESSION_COLUMN = 8
TEXT_COLUMN = 9
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
    if flag.startswith("update"):  # the update step: "updates sequence 3", "updated by sequence 7"
        return flag.replace("sequence ", "#")
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
        "Session",
        "Text",
    )
    HEADER_TIPS = (
        "Rank under the current settings",
        "Rank change against this query's ranking with the default settings (its first run with them): "
        "↑ up, ↓ down, = same, new (not in that top k)",
        "Score = vector weight × vector score + FTS weight × FTS score (+ a profile's neighbour and update steps)",
        "The score's contributions as a bar: vector (blue) + FTS (orange) + a profile's neighbour context (grey) "
        "+ update lift (green)",
        "Vector leg: raw cosine → normalized 0…1 (the tooltip has × weight = contribution)",
        "FTS leg: raw −bm25 → normalized 0…1 (the tooltip has × weight = contribution)",
        "Warnings about how the hit was scored, and what it updates or is updated by (the tooltip has them in full)",
        GRADES_TIP + ". Double-click to grade.",
        "The session the hit is in (a search of all sessions ranks them together)",
        "The hit's text (the whole text is in the tooltip and in the pane below)",
    )
    grade_changed = Signal(str, object)  # chunk_id, grade (None: cleared)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: QueryResult | None = None
        self.moves: dict[str, Move] = {}
        self.grades: dict[str, int] = {}
        #: a hit below the top k shown at its true rank (*Why not…?*), and that rank in words ("#23 of 64")
        self.pinned: Hit | None = None
        self.pinned_label = ""

    def set_result(self, result: QueryResult | None, moved: dict[str, Move] | None = None) -> None:
        self.result = result
        self.moves = moved or {}
        self.pinned, self.pinned_label = None, ""
        self.set_rows(result.hits if result else [])

    def pin(self, hit: Hit | None, label: str = "") -> None:
        """Show ``hit`` (not among the hits) as a last row, its rank column saying ``label``; None: none."""
        self.pinned, self.pinned_label = hit, label
        hits = self.result.hits if self.result else []
        self.set_rows(hits + ([hit] if hit is not None and all(h.chunk_id != hit.chunk_id for h in hits) else []))

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
                0: self.pinned_label if h is self.pinned else str(h.rank),
                1: move.label if move else "",
                2: f"{h.score:.4f}",
                3: f"{vc:.3f} + {fc:.3f}" + "".join(f" + {x:.3f}" for x in (h.context_score, h.update_score) if x),
                4: self._leg_short(h.vector_raw, h.vector_score),
                5: self._leg_short(h.fts_raw, h.fts_score),
                6: ", ".join(short_flag(f) for f in hit_flags(r, h)),
                7: grade_label(self.grades.get(h.chunk_id)),
                8: h.session_id,
                9: " ".join(h.text.split()),
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
            return (vc, fc, h.context_score, h.update_score, 1.0 + r.profile.get("neighbour_weight", 0.0))
        if role == HTML_ROLE and col == TEXT_COLUMN:
            return highlight(" ".join(h.text.split()), r)
        if role == Qt.ItemDataRole.EditRole and col == GRADE_COLUMN:
            return self.grades.get(h.chunk_id)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == TEXT_COLUMN:
                return tip(h.text)
            if col == SESSION_COLUMN:
                return h.session_id
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
        if role == Qt.ItemDataRole.BackgroundRole and h is self.pinned:
            return QColor("#fff3c4")
        if role == Qt.ItemDataRole.ForegroundRole and h is self.pinned:
            return QColor("#000000")
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
    """The contributions as a stacked bar — vector blue, FTS orange, a profile's neighbour context grey and update
    lift green — on the scale of the highest score the ranking can give (1, or 1 + the neighbour weight)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        self.initStyleOption(option, index)
        option.text = ""  # the numbers are in the next two columns; the bar shows their proportions
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        value = index.data(BAR_ROLE)
        if not value:
            return
        vc, fc, cc, uc, scale = value
        rect = option.rect.adjusted(4, 5, -4, -5)
        painter.save()
        x = rect.x()
        for part, color in ((vc, VECTOR_COLOR), (fc, FTS_COLOR), (cc, CONTEXT_COLOR), (uc, UPDATE_COLOR)):
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


#: the columns hidden until asked for: Vector, FTS, Flags (each hit's tooltip and the pane below have them)
HIDDEN_COLUMNS = (4, 5, 6)
#: at most this wide (px) when a column is sized to its content; the Text column takes the rest
COLUMN_CAPS = {0: 56, 1: 64, 2: 72, 4: 100, 5: 100, 6: 110, 7: 100, SESSION_COLUMN: 140}
CONTRIBUTIONS_WIDTH = 64
#: a cell's margins and focus frame around its text
CELL_PADDING = 14


class ResultsView(QTableView):
    """The hits, a row each; the Grade cell is edited in place, every other column fits its content."""

    def __init__(self, model: ResultsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        model.modelReset.connect(self.fit_columns)  # before the view's own reset handling, as it was
        self.setModel(model)
        tab_leaves(self)
        self.setToolTip(
            "Double-click a hit or press Enter on it to show its event in the session browser; double-click its "
            "Grade cell to grade it"
        )
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.horizontalHeader().setStretchLastSection(True)
        self.horizontalHeader().setMinimumSectionSize(24)
        self.setItemDelegateForColumn(3, BarDelegate(self))
        self.setItemDelegateForColumn(TEXT_COLUMN, HtmlDelegate(self))
        self.setItemDelegateForColumn(GRADE_COLUMN, GradeDelegate(self))
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.horizontalHeader().resizeSection(3, CONTRIBUTIONS_WIDTH)
        #: Vector, FTS and Flags are in the pane below and each cell's tooltip; shown on demand (the header's
        #: context menu, the hits' context menu or Ctrl+Shift+C), they leave the Text its width by default
        self.columns = ColumnChooser(self, hidden=HIDDEN_COLUMNS, fixed=(SESSION_COLUMN, TEXT_COLUMN), own_menu=True)
        self.addAction(self.columns.menu.menuAction())

    def fit_columns(self) -> None:
        """Each column but Text as wide as its header and its cells (up to its cap); Text takes the rest. The
        Session column only for a search of many sessions."""
        model = self.model()
        self.setColumnHidden(SESSION_COLUMN, model.result is None or model.result.session_id is not None)
        rows = model.rowCount()
        if not rows:
            return
        header, metrics = self.horizontalHeader(), self.fontMetrics()
        for column, cap in COLUMN_CAPS.items():
            cells = (model.index(r, column).data() or "" for r in range(min(rows, 250)))
            if column == GRADE_COLUMN:  # grades come later: room for any of them
                cells = (grade_label(g) for g in GRADES)
            widest = max(metrics.horizontalAdvance(text) for text in cells) + CELL_PADDING
            self.setColumnWidth(column, min(cap, max(widest, header.sectionSizeFromContents(column).width())))
        self.setColumnWidth(3, max(CONTRIBUTIONS_WIDTH, header.sectionSizeFromContents(3).width()))
