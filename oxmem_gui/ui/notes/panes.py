"""The two panes of the notes panel: the filtered list of a user's notes (:class:`NotesList`) and the editor of
one note (:class:`NoteEditor`). They hold widgets and show what they are given; the panel loads and writes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core.api import Note, utc_now
from ..widgets import ColumnChooser, escape_clears, fit_columns, line_edit, tab_leaves
from ..widgets.tags import FlowLayout, TagChipDelegate, TagEditor, wrap_chip_rows
from .model import NotesModel, age, detail_lines, readable

#: the Tags column's width (a note's chips wrap onto lines within it)
TAGS_WIDTH = 160
#: the columns shown only on demand: Created, Updated
HIDDEN_COLUMNS = (2, 3)


def data_label() -> QLabel:
    """A label that shows data: it wraps, and what it holds never widens the panel."""
    label = QLabel()
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label


class NotesList(QWidget):
    """The user (or the agent's group) whose notes are listed, the text and tag filters, the list, how many it
    shows, and the actions on the selected notes."""

    def __init__(self, model: NotesModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.user_box = QComboBox(editable=True)
        self.user_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.user_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.user_box.setMinimumContentsLength(12)
        line_edit(self.user_box).setPlaceholderText("user")
        self.filter = escape_clears(QLineEdit(placeholderText="Filter notes by text…"))
        self.tag_filter = TagEditor(placeholder="filter by tag…")
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.tag_filter.input)
        escape.setContext(Qt.ShortcutContext.WidgetShortcut)  # (the constructor's context argument is ignored)
        escape.activated.connect(self._clear_tag_filter)
        self.tag_mode = QComboBox()
        self.tag_mode.addItems(["any", "all"])
        self.tag_mode.setToolTip("Notes with any of the filter's tags, or with all of them")

        self.view = QTableView()
        self.view.setModel(model)
        tab_leaves(self.view)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 10)
        self.view.setItemDelegateForColumn(1, TagChipDelegate(self.view))
        wrap_chip_rows(self.view, 1)
        # the note's text takes what the list's width leaves (over half the window at 1024 px); its dates are in the
        # editor, and in the list on demand (the header's context menu, the list's, Ctrl+Shift+C)
        self.view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.view.horizontalHeader().resizeSection(1, TAGS_WIDTH)
        fit_columns(self.view, (2, 3, 4))
        self.columns = ColumnChooser(self.view, hidden=HIDDEN_COLUMNS, fixed=(0,))
        self.count_label = data_label()

        self.bulk_add = QPushButton("Add tag…")
        self.bulk_remove = QPushButton("Remove tag…")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Write the selected notes (or all listed) as JSON or Markdown")
        self.import_button = QPushButton("Import…")
        self.group_label = QLabel("User")
        self.eviction_button = QPushButton("Eviction preview…")
        self.eviction_button.setToolTip(
            "What the agent's own clean-up (TTL, caps, least recently used) would delete now"
        )
        self.eviction_button.setVisible(False)
        self.place_button = QPushButton("Scope && TTL…")
        self.place_button.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.group_label)
        row.addWidget(self.user_box, 1)
        row.addWidget(self.filter, 2)  # beside the user: the list under them keeps the rows
        layout.addLayout(row)
        row = QHBoxLayout()
        row.addWidget(self.tag_filter, 1)
        row.addWidget(self.tag_mode, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(row)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.count_label)
        actions = FlowLayout()
        buttons = (self.bulk_add, self.bulk_remove, self.place_button, self.export_button, self.import_button)
        for b in (*buttons, self.eviction_button):
            actions.addWidget(b)
        layout.addLayout(actions)

    def _clear_tag_filter(self) -> None:
        """Escape in the tag filter: close the completions offered, else empty what is typed there, else drop the
        filter's tags."""
        completer = self.tag_filter.input.completer()
        popup = completer.popup() if completer is not None else None
        if popup is not None and popup.isVisible():
            popup.hide()
        elif self.tag_filter.input.text():
            self.tag_filter.set_tags(self.tag_filter.tags())
        else:
            self.tag_filter.clear()

    def filtered(self) -> bool:
        return bool(self.filter.text().strip() or self.tag_filter.tags())


class NoteEditor(QWidget):
    """The note being edited: which one it is, its text, its tags, its dates and what the agent's format adds,
    the buttons that write, and whether it holds unsaved changes."""

    def __init__(self, parent: QWidget | None = None, now: Callable[[], datetime] = utc_now) -> None:
        super().__init__(parent)
        self.now = now  # the clock "updated … ago" reads
        self.heading = data_label()
        self.content = QPlainTextEdit()
        self.content.setTabChangesFocus(True)
        self.tags = TagEditor()
        self.dates = data_label()
        self.details = data_label()
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = data_label()
        self.new_button = QPushButton("New")
        self.save_button = QPushButton("Save")
        self.revert_button = QPushButton("Revert")
        self.delete_button = QPushButton("Delete…")
        self.undo_button = QPushButton("Undo")

        fields = QWidget()  # one note's: shown unless several are selected
        field_layout = QVBoxLayout(fields)
        field_layout.setContentsMargins(0, 0, 0, 0)
        # the text gives up height before the tags do (many chips wrap onto lines); it scrolls, at least 2 lines
        self.content.setMinimumHeight(2 * self.content.fontMetrics().lineSpacing() + 12)
        field_layout.addWidget(self.content, 1)
        #: what saving will leave the agent without, said before saving (empty: nothing)
        self.hint = data_label()
        self.hint.setStyleSheet("color: #8a5a00")
        self.hint.hide()
        field_layout.addWidget(self.hint)
        self.tags_label = QLabel("&Tags")
        self.tags_label.setBuddy(self.tags.input)
        field_layout.addWidget(self.tags_label)
        field_layout.addWidget(self.tags)
        field_layout.addWidget(self.dates)
        field_layout.addWidget(self.details)
        self.many = QLabel()  # what several selected notes can have done to them
        self.many.setWordWrap(True)
        self.many.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.body = QStackedWidget()
        self.body.addWidget(fields)
        self.body.addWidget(self.many)

        form = QVBoxLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addWidget(self.heading)
        form.addWidget(self.body, 1)
        buttons = FlowLayout()
        for b in (self.new_button, self.save_button, self.revert_button, self.delete_button, self.undo_button):
            buttons.addWidget(b)
        form.addLayout(buttons)
        form.addWidget(self.status)

    def differs_from(self, note: Note | None, is_new: bool) -> bool:
        """Whether the editor holds something not saved over ``note`` (a tag still being typed counts)."""
        if is_new:
            return bool(self.content.toPlainText().strip()) or bool(self.tags.tags()) or bool(self.tags.pending())
        return note is not None and self.differs(note.content, note.tags)

    def differs(self, content: str, tags: list[str]) -> bool:
        """Whether the editor holds other than ``content`` and ``tags`` (a tag still being typed counts)."""
        return self.content.toPlainText() != content or self.tags.tags() != tags or bool(self.tags.pending())

    def set_read_only(self, refusal: str | None) -> None:
        """Read-only, with the refusal as tooltip, while notes cannot be edited; editable again once they can."""
        read_only = refusal is not None
        self.content.setReadOnly(read_only)
        if read_only:
            self.content.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
        # read-only looks it: the window's colour instead of an input box's white, and no blinking caret
        palette = QApplication.palette(self.content)
        if read_only:
            palette.setColor(QPalette.ColorRole.Base, palette.color(QPalette.ColorRole.Window))
        self.content.setPalette(palette)
        self.content.setCursorWidth(0 if read_only else 1)
        self.content.setToolTip(refusal or "")
        self.content.setPlaceholderText("" if refusal else "What should the agent remember?")
        self.tags.set_read_only(refusal)

    def set_hint(self, said: list[str]) -> None:
        """Under the text, before saving: how the format's notes are written, and what saving this one changes
        that the agent will see (a memory saved with no vector, its last use cleared), each a sentence."""
        self.hint.setText(" ".join(s[:1].upper() + s[1:] + "." for s in said))
        self.hint.setVisible(bool(said))

    def show_note(self, note: Note | None) -> None:
        """The note's text, tags, dates and details (nothing for None); no change signal is sent for the text."""
        self.content.blockSignals(True)
        self.content.setPlainText(note.content if note else "")
        self.content.blockSignals(False)
        self.tags.set_tags(note.tags if note else [])
        self.show_facts(note)

    def show_facts(self, note: Note | None) -> None:
        """The note's dates and details, leaving its text and tags as they are (being edited, say)."""
        if note:
            ago = age(note.updated_at, self.now())[0]
            when = "ahead of this computer's clock" if ago == "ahead" else f"{ago} ago"
            self.dates.setText(f"created {readable(note.created_at)}\nupdated {readable(note.updated_at)} ({when})")
        else:
            self.dates.setText("")
        self.details.setText("\n".join(detail_lines(note.details)) if note else "")

    def show_many(self, text: str | None) -> None:
        """Several notes are selected: ``text`` (what can be done to them all) instead of one note's fields, which
        come back with None."""
        self.many.setText(text or "")
        self.body.setCurrentIndex(1 if text else 0)

    def show_heading(self, note: Note | None, is_new: bool, refused: bool, unlisted: str, noun: str = "note") -> None:
        """Say which note (``noun``: what the format calls one) the editor shows, or that it shows none."""
        if is_new:
            text = f"New {noun} (not saved yet)"
        elif note is None:
            text = f"No {noun} selected" + ("" if refused else " — choose one in the list, or New")
        else:
            title = (note.content.strip().splitlines() or [""])[0]
            title = title if len(title) <= 60 else title[:59] + "…"
            text = f"{noun.capitalize()} “{title}”"
            if unlisted:
                text += f" — not in the list: {unlisted}"
            elif refused:
                text += " — read-only"
        self.heading.setText(text)
