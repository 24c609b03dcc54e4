"""What can be done with the shown results: make the ranking the default, pin them as A and compare, export
them, and grade them into a query set whose metrics can be measured. The panel connects the actions."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMenu, QPushButton, QToolButton, QWidget

from ..widgets import line_edit


class ResultTools(QWidget):
    """One row: ``model_box`` (the controls' vector model choice, laid out here), *Make default* with its menu,
    *Pin as A*, *Compare…*, *Export…*, the query set to judge into and *Metrics…*."""

    def __init__(self, model_box: QComboBox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.set_box = QComboBox(editable=True)
        line_edit(self.set_box).setPlaceholderText("query set")
        self.set_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.set_box.setMinimumContentsLength(4)
        self.set_box.setToolTip("The query set your grades go into (type a new name to start one)")
        self.metrics_button = QPushButton("Metrics…")
        self.metrics_button.setToolTip(
            "recall@k, MRR and nDCG@k of the query set's judged queries under these settings, and over a sweep of "
            "the weight"
        )
        self.pin_button = QPushButton("Pin as A")
        self.pin_button.setToolTip("Keep these results as A, to compare later results with")
        self.compare_button = QPushButton("Compare…")
        self.compare_button.setToolTip(
            "Each hit's rank here against A (the pinned results) — or, with nothing pinned, against this query's "
            "ranking with the default settings"
        )
        self.default_button = QToolButton()
        self.default_button.setText("Make default")
        self.default_tip = (
            "Make the chosen ranking (the hybrid: with its weight and FTS mode) the one this file's searches start "
            "with — for this session, or for every session (kept in oxmem's settings; the file is not written)"
        )
        self.default_button.setToolTip(self.default_tip)
        self.default_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.default_button)
        self.default_session_action = menu.addAction("For this session")
        self.default_file_action = menu.addAction("For every session of this file")
        menu.addSeparator()
        self.forget_default_action = menu.addAction("Forget the choices: built-in default")
        self.default_button.setMenu(menu)
        self.why_button = QPushButton("Why not…?")
        self.why_tip = (
            "Pick a memory of this session that the search did not recall: where it ranked, the step that cut it, "
            "and the smallest change that brings it back"
        )
        self.why_button.setToolTip(self.why_tip)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save these results, with each hit's breakdown, as JSON or CSV")

        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(model_box)
        row.addWidget(self.default_button)
        row.addStretch(1)
        row.addWidget(self.why_button)
        row.addWidget(self.pin_button)
        row.addWidget(self.compare_button)
        row.addWidget(self.export_button)
        row.addWidget(QLabel("Judge into"))
        row.addWidget(self.set_box)
        row.addWidget(self.metrics_button)

    def set_name(self) -> str:
        """The query set grades go into (``default`` when none is typed)."""
        return self.set_box.currentText().strip() or "default"

    def offer_sets(self, sets: list[str]) -> None:
        """The file's query sets to choose from, keeping the one typed."""
        current = self.set_box.currentText().strip()
        self.set_box.clear()
        self.set_box.addItems(sets or ["default"])
        if current:
            self.set_box.setCurrentText(current)
