"""The note editor: a user's notes with tags, filtered and edited, with bulk tag changes, undo, export and import."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core import ConflictError
from ..core.store.note_files import notes_json, notes_markdown, parse_notes_json
from ..core.store.notes import Note, utc_now
from ..core.store.tags import normalize_tags
from .context import StoreContext
from .dialogs import Dialogs
from .sessions import fit_columns
from .table_model import RowsModel
from .widgets import escape_clears, fill_with_panes, plural, tab_leaves
from .widgets.tags import TAGS_ROLE, FlowLayout, TagChipDelegate, TagEditor

NOTE_ROLE = Qt.ItemDataRole.UserRole + 2
#: a note's tooltip in the list shows at most this much of its text
TOOLTIP_CHARS = 2000


def age(stamp: str | None, now: datetime | None = None) -> tuple[str, float]:
    """``("3 d", days)`` for an RFC 3339 time."""
    if not stamp:
        return "—", 0.0
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "?", 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    seconds = max(0.0, ((now or datetime.now(timezone.utc)) - then).total_seconds())
    days = seconds / 86400
    for limit, size, unit in (
        (3600, 60, "min"),
        (86400, 3600, "h"),
        (86400 * 60, 86400, "d"),
        (86400 * 730, 86400 * 30.44, "mo"),
    ):
        if seconds < limit:
            return f"{int(seconds // size)} {unit}", days
    return f"{int(seconds // (86400 * 365.25))} y", days


class NotesModel(RowsModel):
    COLUMNS = ("Note", "Tags", "Created", "Updated", "Age")

    @property
    def notes(self) -> list[Note]:
        return self.rows

    def set_notes(self, notes: list[Note]) -> None:
        self.set_rows(notes)

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.notes):
            return None
        note, column = self.notes[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return (note.content.strip().splitlines() or [""])[0]
            if column == 1:
                return ", ".join(note.tags)
            if column == 2:
                return (note.created_at or "")[:10]
            if column == 3:
                return (note.updated_at or "")[:10]
            return age(note.updated_at)[0]
        if role == TAGS_ROLE and column == 1:
            return note.tags
        if role == NOTE_ROLE:
            return note
        if role == Qt.ItemDataRole.ToolTipRole:
            return note_tooltip(note, column)
        if role == Qt.ItemDataRole.ForegroundRole:  # older notes are visibly older: they fade
            return QBrush(fading(age(note.updated_at)[1], QPalette().color(QPalette.ColorRole.Text)))
        return None


@dataclass
class UndoRecord:
    """What to put back to undo the last edit: notes as they were, notes the edit created, and the notes as the
    edit left them (undo refuses to overwrite a note another program changed since)."""

    description: str
    before: list[Note] = field(default_factory=list)
    created: list[Note] = field(default_factory=list)
    user: str = ""
    after: list[Note] = field(default_factory=list)

    def expected(self) -> dict[str, Note | None]:
        """What each note the undo touches must hold now: what the edit left (None: it deleted the note)."""
        left: dict[str, Note | None] = {n.note_id: None for n in self.before}
        left.update({n.note_id: n for n in self.after})
        return left


def note_text(note: Note | None) -> str:
    """A note as the conflict dialog shows it."""
    if note is None:
        return "(deleted)"
    return f"{note.content}\n\ntags: {', '.join(note.tags) or '—'}\nupdated {note.updated_at or '—'}"


class NotesPanel(QWidget):
    """A user's notes: the filtered list on the left, the note being edited on the right.

    While ``ctx.edit_refusal("notes")`` is not None the editors are read-only and every control that writes is
    disabled with that refusal as its tooltip. The editor never shows a note the list no longer lists unless
    it holds unsaved changes, and then its heading says so.
    """

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.user: str | None = None
        self.current: Note | None = None
        self.is_new = False
        #: set when another program changed the note being edited since it was opened
        self.changed_elsewhere = False
        #: why the note being edited (with unsaved changes) is not in the list; empty while it is listed
        self.unlisted = ""
        self.undo_record: UndoRecord | None = None
        self.model = NotesModel(self)

        self.user_box = QComboBox(editable=True)
        self.user_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.user_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.user_box.setMinimumContentsLength(12)
        self.user_box.lineEdit().setPlaceholderText("user")
        self.user_box.activated.connect(lambda _: self._user_chosen())
        self.user_box.lineEdit().editingFinished.connect(self._user_chosen)
        self.filter = escape_clears(QLineEdit(placeholderText="Filter notes by text…"))
        self.filter.textChanged.connect(lambda _: self.reload())
        self.tag_filter = TagEditor(placeholder="filter by tag…")
        self.tag_filter.tags_changed.connect(lambda _: self.reload())
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.tag_filter.input)
        escape.setContext(Qt.ShortcutContext.WidgetShortcut)  # (the constructor's context argument is ignored)
        escape.activated.connect(self._clear_tag_filter)
        self.tag_mode = QComboBox()
        self.tag_mode.addItems(["any", "all"])
        self.tag_mode.setToolTip("Notes with any of the filter's tags, or with all of them")
        self.tag_mode.currentTextChanged.connect(lambda _: self.reload())

        self.view = QTableView()
        self.view.setModel(self.model)
        tab_leaves(self.view)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 10)
        self.view.setItemDelegateForColumn(1, TagChipDelegate(self.view))
        self.view.horizontalHeader().resizeSection(0, 190)
        self.view.horizontalHeader().resizeSection(1, 160)
        fit_columns(self.view, (2, 3))
        self.view.selectionModel().currentRowChanged.connect(self._row_changed)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.count_label = data_label()

        self.bulk_add = QPushButton("Add tag…")
        self.bulk_add.clicked.connect(lambda: self.bulk_tags(add=True))
        self.bulk_remove = QPushButton("Remove tag…")
        self.bulk_remove.clicked.connect(lambda: self.bulk_tags(add=False))
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Write the selected notes (or all listed) as JSON or Markdown")
        self.export_button.clicked.connect(self.export)
        self.import_button = QPushButton("Import…")
        self.import_button.clicked.connect(self.import_notes)

        self.heading = data_label()
        self.content = QPlainTextEdit()
        self.content.setTabChangesFocus(True)
        self.content.textChanged.connect(self._update_buttons)
        self.tags = TagEditor()
        self.tags.tags_changed.connect(lambda _: self._update_buttons())
        self.tags.input.textChanged.connect(lambda _: self._update_buttons())
        self.dates = data_label()
        self.details = data_label()
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.group_label = QLabel("User")
        self.eviction_button = QPushButton("Eviction preview…")
        self.eviction_button.setToolTip(
            "What the agent's own clean-up (TTL, caps, least recently used) would delete now"
        )
        self.eviction_button.clicked.connect(self.eviction_preview)
        self.eviction_button.setVisible(False)
        self.state = data_label()
        self.new_button = QPushButton("New")
        self.new_button.clicked.connect(self.new_note)
        self.save_button = QPushButton("Save")
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(self.revert)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(self.delete)
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self.undo)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.group_label)
        row.addWidget(self.user_box, 1)
        left_layout.addLayout(row)
        left_layout.addWidget(self.filter)
        row = QHBoxLayout()
        row.addWidget(self.tag_filter, 1)
        row.addWidget(self.tag_mode, 0, Qt.AlignmentFlag.AlignTop)
        left_layout.addLayout(row)
        left_layout.addWidget(self.view, 1)
        left_layout.addWidget(self.count_label)
        row = FlowLayout()
        for b in (self.bulk_add, self.bulk_remove, self.export_button, self.import_button, self.eviction_button):
            row.addWidget(b)
        left_layout.addLayout(row)

        right = QWidget()
        form = QVBoxLayout(right)
        form.setContentsMargins(0, 0, 0, 0)
        form.addWidget(self.heading)
        form.addWidget(self.content, 1)
        tags_label = QLabel("&Tags")
        tags_label.setBuddy(self.tags.input)
        form.addWidget(tags_label)
        form.addWidget(self.tags)
        form.addWidget(self.dates)
        form.addWidget(self.details)
        buttons = FlowLayout()
        for b in (self.new_button, self.save_button, self.revert_button, self.delete_button, self.undo_button):
            buttons.addWidget(b)
        form.addLayout(buttons)
        form.addWidget(self.state)

        self.splitter = fill_with_panes(self, left, right, (560, 420))
        self.splitter.setChildrenCollapsible(False)

        ctx.opened.connect(self._store_opened)
        ctx.mode_changed.connect(lambda _: self._apply_mode())
        ctx.external_change.connect(self.refresh)
        self._apply_mode()
        self._show_note(None)

    # -- state --------------------------------------------------------------------------------------

    def dirty(self) -> bool:
        """Whether the editor holds something not saved (a tag still being typed counts)."""
        if self.is_new:
            return bool(self.content.toPlainText().strip()) or bool(self.tags.tags()) or bool(self.tags.pending())
        if self.current is None:
            return False
        return (
            self.content.toPlainText() != self.current.content
            or self.tags.tags() != self.current.tags
            or bool(self.tags.pending())
        )

    def refusal(self) -> str | None:
        """Why notes cannot be edited now (the tooltip of every disabled editing control), or None."""
        return self.ctx.edit_refusal("notes")

    def _clear_tag_filter(self) -> None:
        """Escape in the tag filter: close the completions offered, else empty what is typed there, else drop the
        filter's tags."""
        popup = self.tag_filter.input.completer().popup()
        if popup.isVisible():
            popup.hide()
        elif self.tag_filter.input.text():
            self.tag_filter.set_tags(self.tag_filter.tags())
        else:
            self.tag_filter.clear()

    def selected_notes(self) -> list[Note]:
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.model.notes[r] for r in rows if r < len(self.model.notes)]

    def guard(self) -> bool:
        """Before leaving the note being edited: True to go on (saved or discarded), False to stay."""
        if not self.dirty():
            return True
        answer = self.dialogs.unsaved("The note")
        if answer == "discard":
            self.revert()
            return True
        if answer == "save":
            self.save()
            return not self.dirty()
        return False

    def _apply_mode(self) -> None:
        """Editors read-only and writing controls disabled (with the reason as tooltip) while notes cannot be
        edited; editable again once they can."""
        refusal = self.refusal()
        self.content.setReadOnly(refusal is not None)
        if refusal is not None:
            self.content.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
        self.content.setToolTip(refusal or "")
        self.content.setPlaceholderText("" if refusal else "What should the agent remember?")
        self.tags.set_read_only(refusal)
        self._update_buttons()

    def _update_buttons(self) -> None:
        refusal = self.refusal()
        dirty = self.dirty()
        selected = self.selected_notes()

        def allow(button: QPushButton, enabled: bool, tip: str = "", writes: bool = True) -> None:
            button.setEnabled((refusal is None or not writes) and enabled)
            button.setToolTip((refusal if writes else None) or tip)

        allow(self.new_button, True, "Write a new note (Ctrl+N)")
        allow(self.save_button, dirty, "Save the note (Ctrl+S)")
        allow(self.revert_button, dirty, "Put the note back as it was loaded", writes=False)
        deletable = bool(selected) or (self.current is not None and not self.is_new)
        allow(self.delete_button, deletable, "Delete the selected notes (Ctrl+Delete)")
        undo = f"Undo: {self.undo_record.description}" if self.undo_record else "Nothing to undo"
        allow(self.undo_button, self.undo_record is not None, undo)
        allow(self.bulk_add, bool(selected), "Add a tag to every selected note")
        allow(self.bulk_remove, bool(selected), "Remove a tag from every selected note")
        allow(self.import_button, True, "Add notes from a JSON export (ids and dates kept)")
        count = self.model.rowCount()
        filtered = bool(self.filter.text().strip() or self.tag_filter.tags())
        text = plural(count, "note") + (f" match{'es' if count == 1 else ''} the filters" if filtered else "")
        if len(selected) > 1:
            text += f" · {len(selected):,} selected"
        self.count_label.setText(text if self.user else "")
        warnings = []
        if dirty and self.changed_elsewhere:
            warnings.append("⚠ another program changed this note since you opened it")
        self.state.setText(" · ".join((["● unsaved changes"] if dirty else []) + warnings))
        self._show_heading()

    def _show_heading(self) -> None:
        """Say which note the editor shows (or that it shows none)."""
        if self.is_new:
            text = "New note (not saved yet)"
        elif self.current is None:
            text = "No note selected" + ("" if self.refusal() else " — choose one in the list, or New")
        else:
            title = (self.current.content.strip().splitlines() or [""])[0]
            title = title if len(title) <= 60 else title[:59] + "…"
            text = f"Note “{title}”"
            if self.unlisted:
                text += f" — not in the list: {self.unlisted}"
        self.heading.setText(text)

    def _show_note(self, note: Note | None) -> None:
        self.current, self.is_new, self.changed_elsewhere, self.unlisted = note, False, False, ""
        self.content.blockSignals(True)
        self.content.setPlainText(note.content if note else "")
        self.content.blockSignals(False)
        self.tags.set_tags(note.tags if note else [])
        if note:
            self.dates.setText(
                f"created {note.created_at or '—'}\nupdated {note.updated_at or '—'} ({age(note.updated_at)[0]} ago)"
            )
        else:
            self.dates.setText("")
        self.details.setText("\n".join(detail_lines(note.details)) if note else "")
        self._update_buttons()

    # -- loading ------------------------------------------------------------------------------------

    def _store_opened(self) -> None:
        """A file was opened: start afresh (no note, no filter, nothing to undo) — unless it is the same file
        opened again (editing enabled), which keeps the user, filters, selection and the note in the editor."""
        store = self.ctx.require()
        caps = store.capabilities
        self.group_label.setText(caps.group_label)
        self.eviction_button.setVisible(caps.has_eviction)
        if not self.ctx.reopened:
            self.undo_record = None
            for field_ in (self.filter, self.tag_filter, self.tag_mode):
                field_.blockSignals(True)
            self.filter.clear()
            self.tag_filter.set_tags([])
            self.tag_mode.setCurrentIndex(0)
            for field_ in (self.filter, self.tag_filter, self.tag_mode):
                field_.blockSignals(False)
            self.view.selectionModel().blockSignals(True)
            self.model.set_notes([])
            self.view.selectionModel().blockSignals(False)
            self._show_note(None)
        self._apply_mode()
        self._load_users()

    def _load_users(self) -> None:
        """Re-read the list of users (keeping the one chosen when it is still there), then the notes."""
        store = self.ctx.require()

        def got(users: list[str]) -> None:
            self.user_box.blockSignals(True)
            self.user_box.clear()
            self.user_box.addItems(users)
            self.user_box.blockSignals(False)
            if self.user in users:
                self.user_box.setCurrentText(self.user)
            elif users:
                self.user = users[0]
                self.user_box.setCurrentText(users[0])
            self.reload()

        self.ctx.run(store.note_users, on_done=got)

    def set_user(self, user: str) -> None:
        self.user_box.setCurrentText(user)
        self._user_chosen()

    def _user_chosen(self) -> None:
        user = self.user_box.currentText().strip()
        if not user or user == self.user:
            return
        if not self.guard():
            self.user_box.setCurrentText(self.user or "")
            return
        self.user = user
        self._show_note(None)
        self.reload()

    def reload(self, select: str | None = None) -> None:
        """Re-read the list with the current filters; keep (or move to) the selected note."""
        if self.ctx.store is None or not self.user:
            self.model.set_notes([])
            return
        store, user = self.ctx.require(), self.user
        keep = select or (self.current.note_id if self.current and not self.is_new else None)
        tags, mode, text = self.tag_filter.tags(), self.tag_mode.currentText(), self.filter.text().strip() or None

        def got(result: tuple[list[Note], list[tuple[str, int]]]) -> None:
            notes, used = result
            scroll = self.view.verticalScrollBar().value()
            self.view.selectionModel().blockSignals(True)
            self.model.set_notes(notes)
            self.view.selectionModel().blockSignals(False)
            completions = [t for t, _ in used]
            self.tags.set_completions(completions)
            self.tag_filter.set_completions(completions)
            listed = next((i for i, n in enumerate(notes) if n.note_id == keep), None) if keep else None
            if listed is not None:
                n = notes[listed]
                self.view.selectionModel().blockSignals(True)
                self.view.selectionModel().setCurrentIndex(
                    self.model.index(listed, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )
                self.view.selectionModel().blockSignals(False)
                if not self.dirty():
                    self._show_note(n)
                else:
                    self.unlisted = ""
                    if n != self.current:  # kept as loaded: saving will show theirs vs mine
                        self.changed_elsewhere = True
            elif self.current is not None and not self.is_new:  # filtered out, or deleted elsewhere
                if self.dirty():  # the edit is kept; the heading says why the list lacks it
                    filtered = bool(tags or text)
                    self.unlisted = "the filters hide it" if filtered else "it is no longer in the file"
                else:
                    self._show_note(None)
            self.view.verticalScrollBar().setValue(scroll)
            self._update_buttons()

        async def load() -> tuple[list[Note], list[tuple[str, int]]]:
            return await store.list_notes(user, tags, mode, text), await store.note_tags(user)

        self.ctx.run(load, on_done=got)

    def refresh(self) -> None:
        self.reload()

    def _row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        note = self.model.data(current, NOTE_ROLE) if current.isValid() else None
        if self.current is not None and note is not None and note.note_id == self.current.note_id:
            return
        if not self.guard():
            self.view.selectionModel().blockSignals(True)
            self.view.selectionModel().setCurrentIndex(
                previous, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.view.selectionModel().blockSignals(False)
            return
        self._show_note(note)

    # -- editing ------------------------------------------------------------------------------------

    def new_note(self) -> None:
        if self.refusal() is not None or not self.guard():
            return
        self.view.selectionModel().blockSignals(True)
        self.view.clearSelection()
        self.view.selectionModel().blockSignals(False)
        self._show_note(None)
        self.is_new = True
        self.content.setFocus()
        self._update_buttons()

    def save(self) -> None:
        if not self.dirty():
            return
        store = self.ctx.writable("notes")
        if store is None or not self.user:
            if not self.user:
                self.dialogs.error("Choose or type a user first.")
            return
        self.tags.commit()  # a tag still being typed is saved too
        user, content, tags = self.user, self.content.toPlainText(), self.tags.tags()
        if not content.strip():
            self.dialogs.error("A note needs some content.")
            return
        if self.is_new:
            self._save_new(user, content, tags)
        else:
            self._update(user, self.current, content, tags)

    def _save_new(self, user: str, content: str, tags: list[str]) -> None:
        store = self.ctx.require()

        def saved(note: Note) -> None:
            self.undo_record = UndoRecord("create note", created=[note], user=user)
            self._show_note(note)
            self.reload(select=note.note_id)

        self.ctx.run(lambda: store.save_note(user, content, tags), label="Saving note", on_done=saved, changes="notes")

    def _update(self, user: str, loaded: Note, content: str, tags: list[str]) -> None:
        """Save over ``loaded`` — the note as this window last read it. If another program changed it since,
        nothing is written and the conflict dialog asks what to keep."""
        store = self.ctx.require()

        def saved(note: Note) -> None:
            self.undo_record = UndoRecord("edit note", before=[loaded], after=[note], user=user)
            self._show_note(note)
            self.reload(select=note.note_id)

        def failed(exc: Exception) -> bool:
            if not isinstance(exc, ConflictError):
                return False
            self._resolve(user, loaded, content, tags, exc)
            return True

        self.ctx.run(
            lambda: store.update_note(user, loaded.note_id, content, tags, expected=loaded),
            label="Saving note",
            on_done=saved,
            on_error=failed,
            changes="notes",
        )

    def _resolve(self, user: str, loaded: Note, content: str, tags: list[str], exc: ConflictError) -> None:
        """Theirs vs mine: keep mine (theirs goes to Undo), keep theirs (my edit is dropped), keep both (mine
        becomes a new note), or cancel (back to editing, nothing written)."""
        theirs: Note | None = exc.current
        mine = Note(loaded.note_id, user, content, normalize_tags(tags), loaded.created_at, None, 0)
        choices = [
            ("mine", "Keep mine" if theirs else "Save mine again"),
            ("theirs", "Keep theirs" if theirs else "Let it go"),
            ("both", "Keep both (mine as a new note)"),
        ]
        choice = self.dialogs.conflict(
            "Note changed by another program", str(exc), note_text(theirs), note_text(mine), choices
        )
        if choice == "mine" and theirs is not None:
            self._update(user, theirs, content, tags)
        elif choice == "mine":
            self._recreate(user, mine)
        elif choice == "both":
            self._save_new(user, content, tags)
        elif choice == "theirs":
            self._show_note(theirs)
            self.reload(select=theirs.note_id if theirs else None)
        else:
            self.changed_elsewhere = True
            self._update_buttons()

    def _recreate(self, user: str, mine: Note) -> None:
        """The note was deleted elsewhere and the user keeps their edit: write it back under its id."""
        store = self.ctx.require()

        def saved(notes: list[Note]) -> None:
            self.undo_record = UndoRecord("save deleted note again", created=notes, user=user)
            self._show_note(notes[0])
            self.reload(select=notes[0].note_id)

        self.ctx.run(
            lambda: store.restore_notes([replace(mine, updated_at=utc_now())], expected={mine.note_id: None}),
            label="Saving note",
            on_done=saved,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def _changed_meanwhile(self, exc: Exception) -> bool:
        """A bulk change or an undo met notes another program changed: nothing was written; show the list as it
        is now and say so."""
        if not isinstance(exc, ConflictError):
            return False
        self.dialogs.error(f"{exc}. The list now shows the notes as they are; look at them and try again.")
        self._show_note(None)
        self.reload()
        return True

    def revert(self) -> None:
        if self.is_new:
            self._show_note(None)
        else:
            self._show_note(self.current)

    def delete(self) -> None:
        notes = self.selected_notes() or ([self.current] if self.current and not self.is_new else [])
        if not notes:
            return
        store = self.ctx.writable("notes")
        if store is None:
            return
        user = self.user
        what = (
            f"the note “{(notes[0].content.splitlines() or [''])[0][:60]}”"
            if len(notes) == 1
            else f"{len(notes)} notes"
        )
        if not self.dialogs.confirm(
            "Delete notes", f"Delete {what}? Their chunks, vectors and full-text rows go too. Undo puts them back."
        ):
            return

        def deleted(_: int) -> None:
            self.undo_record = UndoRecord(f"delete {plural(len(notes), 'note')}", before=list(notes), user=user)
            self._show_note(None)
            self.reload()

        ids = [n.note_id for n in notes]
        self.ctx.run(
            lambda: store.delete_notes(user, ids, expected=notes),
            label="Deleting notes",
            on_done=deleted,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def bulk_tags(self, add: bool) -> None:
        notes = self.selected_notes()
        if not notes:
            return
        store = self.ctx.writable("notes")
        if store is None:
            return
        text = self.dialogs.text("Add tag" if add else "Remove tag", "Tag (comma-separated for several):")
        tags = normalize_tags((text or "").split(","))
        if not tags:
            return
        touched = [n for n in notes if (set(tags) - set(n.tags) if add else set(tags) & set(n.tags))]
        verb = "Add" if add else "Remove"
        if not touched:
            self.dialogs.info(f"No selected note would change: {', '.join(tags)}.")
            return
        if not self.dialogs.confirm(
            f"{verb} tags",
            f"{verb} {', '.join(tags)} {'to' if add else 'from'} {len(touched)} of the "
            f"{plural(len(notes), 'selected note')}?",
            verb,
        ):
            return
        user, ids = self.user, [n.note_id for n in touched]

        def done(changed: list[Note]) -> None:
            self.undo_record = UndoRecord(
                f"{verb.lower()} tags on {plural(len(touched), 'note')}", before=touched, user=user, after=changed
            )
            self.reload()

        self.ctx.run(
            lambda: store.set_note_tags(user, ids, tags if add else (), () if add else tags, expected=touched),
            label="Changing tags",
            on_done=done,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def undo(self) -> None:
        record = self.undo_record
        if record is None:
            return
        store = self.ctx.writable("notes")
        if store is None:
            return

        async def put_back() -> None:
            if record.created:
                await store.delete_notes(record.user, [n.note_id for n in record.created], expected=record.created)
            if record.before:
                await store.restore_notes(record.before, expected=record.expected())

        def done(_: Any) -> None:
            self.undo_record = None
            keep = record.before[0].note_id if record.before else None
            self._show_note(None)
            self.reload(select=keep)

        def failed(exc: Exception) -> bool:
            if isinstance(exc, ConflictError):
                self.undo_record = None
            return self._changed_meanwhile(exc)

        self.ctx.run(put_back, label=f"Undoing {record.description}", on_done=done, on_error=failed, changes="notes")

    # -- export and import --------------------------------------------------------------------------

    def eviction_preview(self) -> None:
        store = self.ctx.store
        if store is None:
            return

        def show(preview: Any) -> None:
            if preview is None:
                self.dialogs.info("This file's agent deletes nothing on its own.")
            else:
                self.dialogs.report("Eviction preview", "\n".join(preview.lines()))

        self.ctx.run(store.eviction_preview, label="Working out what the agent would delete", on_done=show)

    def export(self) -> None:
        notes = self.selected_notes() or list(self.model.notes)
        if not notes:
            self.dialogs.info("There are no notes to export.")
            return
        path = self.dialogs.save_file("Export notes", "JSON (*.json);;Markdown (*.md)", f"notes-{self.user}.json")
        if path is None:
            return
        text = (
            notes_markdown(self.user or "", notes) if path.suffix.lower() in (".md", ".markdown") else notes_json(notes)
        )
        self.ctx.run(
            lambda: asyncio.to_thread(path.write_text, text, "utf-8"),
            label="Exporting notes",
            on_done=lambda _: self.dialogs.info(f"Exported {plural(len(notes), 'note')} to {path}."),
        )

    def import_notes(self) -> None:
        store = self.ctx.writable("notes")
        if store is None:
            return
        path = self.dialogs.open_file("Import notes", "JSON (*.json)")
        if path is None:
            return

        async def load() -> list[Note]:
            notes = parse_notes_json(await asyncio.to_thread(Path(path).read_text, "utf-8"))
            return await store.restore_notes(notes)

        def done(notes: list[Note]) -> None:
            self.dialogs.info(
                f"Imported {plural(len(notes), 'note')} (ids and dates kept; an existing id was replaced)."
            )
            self._load_users()

        self.ctx.run(load, label="Importing notes", on_done=done, changes="notes")


def detail_lines(details: dict[str, Any]) -> list[str]:
    """What another agent's format adds to a note, one line each; superseded versions listed newest first."""
    lines = []
    for key, value in details.items():
        if key == "history":
            continue
        lines.append(f"{key.replace('_', ' ')}: {value}")
    history = details.get("history") or []
    if history:
        lines.append(f"{plural(len(history), 'earlier version')}:")
        for old in history:
            if isinstance(old, dict):
                when = old.get("superseded_at") or old.get("created_at") or ""
                lines.append(f"  • {old.get('value', old)}  (superseded {when})")
            else:
                lines.append(f"  • {old}")
    return lines


def fading(days: float, base: QColor) -> QColor:
    color = QColor(base)
    color.setAlphaF(1.0 if days < 7 else 0.8 if days < 30 else 0.62 if days < 365 else 0.45)
    return color


def note_tooltip(note: Note, column: int) -> str:
    """The whole of what a cell of the notes list may cut: the note's text (up to ``TOOLTIP_CHARS``), all its
    tags, its full dates."""
    if column == 0:
        text = note.content
        if len(text) > TOOLTIP_CHARS:
            text = f"{text[:TOOLTIP_CHARS]}… ({len(text) - TOOLTIP_CHARS:,} more characters)"
        return text
    if column == 1:
        return ", ".join(note.tags) if note.tags else "no tags"
    return f"created {note.created_at or '—'}\nupdated {note.updated_at or '—'}"


def data_label() -> QLabel:
    """A label that shows data: it wraps, and what it holds never widens the panel."""
    label = QLabel()
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label
