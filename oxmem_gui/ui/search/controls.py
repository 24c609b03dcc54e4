"""What the search panel asks for: the ranking, the session (or notes group), the query, top-k, and the tuning of
a tunable ranking (the weight slider, the FTS mode, the tag filter, the vector models), with the two notes that
say why a search did not run and how the settings differ from the ranking's defaults.

:class:`SearchControls` holds the widgets and answers questions about them (:meth:`~SearchControls.request`,
:meth:`~SearchControls.options`, :meth:`~SearchControls.differences`); the panel decides what to do when they
change.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.api import FTS_MODES, PROFILES, SEARCH_DEFAULTS, TAG_MODES, Retriever, SearchOptions
from ..widgets import ElidedLabel, line_edit
from ..widgets.tags import TagEditor

ALL_MODELS = "all models"
WARN_STYLE = "color: #b35c00;"
ERROR_STYLE = "color: #c0392b;"


#: the tunable ranking's default settings (contract §6): what "Reset to agent defaults" restores, and the settings of
#: the ranking each Move is measured from
DEFAULTS: dict[str, Any] = {
    name: getattr(SEARCH_DEFAULTS, name) for name in ("vector_weight", "fts_weight", "fts_mode", "tag_mode")
} | {"tags": list(SEARCH_DEFAULTS.tags)}

TIPS = {
    "ranking": "Which ranking to run: the store's hybrid, or the agent's own reproduced exactly",
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


def data_label(style: str = "") -> QLabel:
    """A label for data: it wraps, and its text never widens the panel."""
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)
    label.setStyleSheet(style)
    label.setVisible(False)
    return label


def set_label(label: QLabel, text: str) -> None:
    """Show ``text`` in ``label``; an empty text hides it."""
    label.setText(text)
    label.setVisible(bool(text))


class SearchControls(QWidget):
    """Two rows of controls, each followed by its note (shown only when it has something to say). The vector
    model choice is made here too, though the panel lays it out with the result tools."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tips = dict(TIPS)
        self.tips["reset"] = TIPS["reset"].format(**DEFAULTS)
        #: the tunable hybrid's slider value while a fixed ranking shows its own
        self.saved_weight: int | None = None

        self.ranking = QComboBox()
        self.ranking.setToolTip(TIPS["ranking"])
        self.ranking.currentIndexChanged.connect(lambda _: self.show_ranking_tip())
        self.ranking.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.ranking.setMinimumContentsLength(20)
        self.session = QComboBox(editable=True)
        self.session.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.session.setMinimumContentsLength(22)
        line_edit(self.session).setPlaceholderText("session (memory:USER for notes)")
        self.session.setToolTip(TIPS["session"])
        self.query = QLineEdit(placeholderText="Query…")
        self.query.setToolTip(TIPS["query"])
        self.top_k = QSpinBox(minimum=1, maximum=200, value=8, prefix="top ")
        self.top_k.setToolTip(TIPS["top_k"])
        self.weight = QSlider(Qt.Orientation.Horizontal)
        self.weight.setRange(0, 100)
        self.weight.setValue(round(DEFAULTS["vector_weight"] * 100))
        self.weight.setMinimumWidth(120)
        self.weight_label = QLabel()
        self.weight_label.setToolTip(TIPS["weight"])
        self.mode = QComboBox()
        self.mode.addItems(list(FTS_MODES))
        self.model_box = QComboBox()
        self.model_box.addItem(ALL_MODELS)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_box.setMinimumContentsLength(10)
        self.tags = TagEditor(placeholder="tag filter…")
        self.tag_mode = QComboBox()
        self.tag_mode.addItems(list(TAG_MODES))
        self.reset_button = QPushButton("Reset to agent defaults")
        self.go = QPushButton("Search")
        self.go.setToolTip(TIPS["go"])
        self.query_note = data_label(ERROR_STYLE)  # why the search did not run
        # the settings that are not the defaults: one line (whole in its tooltip), its room kept while hidden so
        # that the results do not jump when it appears
        self.defaults_note = ElidedLabel()
        self.defaults_note.setStyleSheet(WARN_STYLE)
        keep = self.defaults_note.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        self.defaults_note.setSizePolicy(keep)
        self.defaults_note.setMinimumHeight(self.defaults_note.fontMetrics().height())
        self.defaults_note.setVisible(False)

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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row1)
        layout.addWidget(self.query_note)
        layout.addLayout(row2)
        layout.addWidget(self.defaults_note)

    def current_ranking(self) -> Retriever | None:
        chosen = self.ranking.currentData()
        return chosen if isinstance(chosen, Retriever) else None

    def show_ranking_tip(self) -> None:
        """The ranking list's tooltip: the chosen ranking's whole label (the list may cut it) and what it does."""
        ranking = self.current_ranking()
        self.ranking.setToolTip(
            f"{self.ranking.currentText()}\n{ranking.description}" if ranking is not None else TIPS["ranking"]
        )

    def tunable(self) -> bool:
        ranking = self.current_ranking()
        return ranking is not None and ranking.tunable

    def vector_weight(self) -> float:
        return self.weight.value() / 100

    def show_weight(self) -> None:
        """The weight in words beside the slider (a fixed ranking's weight says it is fixed)."""
        w, ranking = self.vector_weight(), self.current_ranking()
        text = f"{w:.2f} / FTS {1 - w:.2f}"
        if ranking is not None and not ranking.tunable:
            text = f"{text} (fixed)" if ranking.name in PROFILES else "as the agent weighs it"
        self.weight_label.setText(text)

    def set_weight_quietly(self, value: int) -> None:
        """Move the slider without re-ranking the hits shown."""
        self.weight.blockSignals(True)
        self.weight.setValue(value)
        self.weight.blockSignals(False)

    def models(self) -> tuple[str, ...]:
        chosen = self.model_box.currentText()
        return () if chosen in ("", ALL_MODELS) else (chosen,)

    def request(self) -> tuple[Any, ...]:
        """What the controls ask for, but the weight (which re-ranks without a new query)."""
        ranking = self.current_ranking()
        asked = (
            ranking.name if ranking else None,
            self.session.currentText().strip(),
            self.query.text(),
            self.top_k.value(),
        )
        if not self.tunable():
            if ranking is not None and ranking.tag_filter:
                return (*asked, tuple(self.tags.tags()), self.tag_mode.currentText())
            return asked
        return (*asked, self.mode.currentText(), tuple(self.tags.tags()), self.tag_mode.currentText(), self.models())

    def options(self) -> SearchOptions:
        """The search options the controls set for the current ranking."""
        ranking = self.current_ranking()
        if not self.tunable():
            if ranking is not None and ranking.tag_filter and self.tags.tags():
                return SearchOptions(tags=tuple(self.tags.tags()), tag_mode=self.tag_mode.currentText())
            return SEARCH_DEFAULTS
        w = self.vector_weight()
        return SearchOptions(
            vector_weight=w,
            fts_weight=round(1 - w, 10),
            fts_mode=self.mode.currentText(),
            tags=tuple(self.tags.tags()),
            tag_mode=self.tag_mode.currentText(),
            models=tuple(self.models()) or None,
        )

    def differences(self) -> list[str]:
        """How the tuning controls differ from the ranking's defaults, in words (empty: they are the defaults)."""
        if not self.tunable():
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
        if self.models():
            out.append(f"only {self.models()[0]} vectors (default: all models)")
        return out

    def show_differences(self) -> None:
        differs = self.differences()
        set_label(self.defaults_note, ("Not the agent's defaults: " + "; ".join(differs)) if differs else "")
        self.reset_button.setEnabled(self.tunable() and bool(differs))

    def say(self, message: str) -> None:
        """Why the search did not run, next to the query field (empty: clears it)."""
        set_label(self.query_note, message)

    def fit_ranking(self) -> None:
        """Tuning controls only for a tunable ranking (a fixed profile still takes tags); a profile shows its fixed
        weights on the slider, and the hybrid's own setting comes back when it is chosen again."""
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
            widget.setToolTip(self.tips[name] if enabled else fixed)
        if tunable and self.saved_weight is not None:
            self.set_weight_quietly(self.saved_weight)
            self.saved_weight = None
        elif ranking is not None and ranking.name in PROFILES:
            if self.saved_weight is None:
                self.saved_weight = self.weight.value()
            self.set_weight_quietly(round(PROFILES[ranking.name].vector_weight * 100))
        self.show_weight()

    def offer_models(self, models: list[str]) -> None:
        """The vector models a search found, to choose from (keeping the choice when it is still there)."""
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems([ALL_MODELS, *models])
        self.model_box.setCurrentText(current if current in models else ALL_MODELS)
        self.model_box.blockSignals(False)

    def reset(self) -> None:
        """The ranking's default settings back in the controls; only the slider's move is signalled."""
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
