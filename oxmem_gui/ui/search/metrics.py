"""The metrics of a query set under the current settings and over a sweep of the weight, drawn as a chart."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.api import Evaluation, metrics_json, metrics_rows, setting_text, to_csv
from ..dialogs import Dialogs
from ..widgets import plural
from .results import FTS_COLOR, VECTOR_COLOR


class SweepChart(QWidget):
    """nDCG@k against the vector weight, one line per FTS mode; the best point is ringed. The legend sits above
    the plot, where no line can cross it."""

    #: the strip above the plot that holds the legend
    LEGEND = 20

    def __init__(self, evaluation: Evaluation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.evaluation = evaluation
        self.setMinimumSize(420, 220)
        #: as last painted: where each line's points and each legend entry are
        self.points: list[QPointF] = []
        self.legend: list[QRectF] = []

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        area = QRectF(48, self.LEGEND + 6, self.width() - 60, self.height() - 38 - self.LEGEND)
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

        metrics = painter.fontMetrics()
        self.points, self.legend = [], []
        x = area.right()
        for mode, color in reversed((("terms", VECTOR_COLOR), ("phrase", FTS_COLOR))):  # right to left
            pts = [point(p) for p in self.evaluation.sweep if p.fts_mode == mode]
            if not pts:
                continue
            self.points += pts
            path = QPainterPath(pts[0])
            for p in pts[1:]:
                path.lineTo(p)
            painter.setPen(QPen(color, 2))
            painter.drawPath(path)
            label = f"{mode} mode"
            x -= metrics.horizontalAdvance(label)
            painter.setPen(text)
            entry = QRectF(x - 24, 2, metrics.horizontalAdvance(label) + 24, self.LEGEND - 4)
            self.legend.append(entry)
            painter.drawText(entry.adjusted(24, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, label)
            painter.setPen(QPen(color, 2))
            y = 2 + (self.LEGEND - 4) / 2
            painter.drawLine(QPointF(x - 24, y), QPointF(x - 6, y))
            x -= 36
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
        self.set_name = set_name
        c, best = evaluation.current, evaluation.best()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.show_summary(current, c)
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
        layout.addWidget(self.summary)
        split = QHBoxLayout()
        split.addWidget(self.table, 1)
        split.addWidget(self.chart, 1)
        layout.addLayout(split, 1)
        layout.addLayout(buttons)
        self.resize(900, 420)

    def show_summary(self, current: str, metrics: Any) -> None:
        """The header: the set, the metrics of the settings in use (``current`` in words), and the sweep's best."""
        c, best, name = self.evaluation.current, self.evaluation.best(), html.escape(self.set_name)
        failed = self.evaluation.failed
        self.summary.setText(
            f"<b>{name}</b>: {plural(c.queries, 'judged query', 'judged queries')}"
            + (f" ({c.skipped} without a relevant chunk left out)" if c.skipped else "")
            + f"<br>Current settings ({html.escape(current)}): recall@{c.k} <b>{metrics.recall:.3f}</b>, "
            f"MRR <b>{metrics.mrr:.3f}</b>, nDCG@{c.k} <b>{metrics.ndcg:.3f}</b><br>Best in the sweep: "
            f"{setting_text(best.vector_weight, best.fts_mode)} — nDCG@{c.k} {best.metrics.ndcg:.3f}, "
            f"MRR {best.metrics.mrr:.3f}, recall@{c.k} {best.metrics.recall:.3f}"
            + ("<br>Not run: " + "; ".join(html.escape(f) for f in failed) if failed else "")
        )

    def _apply(self) -> None:
        best = self.evaluation.best()
        self.apply_best.emit(best.vector_weight, best.fts_mode)
        self.show_summary(setting_text(best.vector_weight, best.fts_mode), best.metrics)  # what is in use now
        self.apply_button.setText("Applied")
        self.apply_button.setEnabled(False)

    def _export(self, kind: str) -> None:
        path = self.dialogs.save_file(
            "Export metrics", "JSON (*.json)" if kind == "json" else "CSV (*.csv)", f"metrics.{kind}"
        )
        if path:
            text = metrics_json(self.evaluation) if kind == "json" else to_csv(metrics_rows(self.evaluation))
            Path(path).write_text(text, encoding="utf-8")
