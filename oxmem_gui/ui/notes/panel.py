"""The notes panel: the list (:class:`~.panes.NotesList`) and the editor (:class:`~.panes.NoteEditor`) of a
user's notes, loaded from the store and kept in step with the selection; its writes are :mod:`.edits`."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex
from PySide6.QtWidgets import QPushButton, QWidget

from ...core.api import BROWSE_PAGE as PAGE
from ...core.api import Note, NotFoundError, note_cursor
from ..change_marks import HoldWhilePointed, mark_current_seen
from ..context import StoreContext
from ..dialogs import Dialogs
from ..widgets import fill_with_panes, plural
from .edits import NoteEdits, UndoRecord
from .model import NOTE_ROLE, NotesModel
from .panes import NoteEditor, NotesList

#: the widgets of the two panes that the panel shows as its own attributes
LIST_WIDGETS = ("user_box", "filter", "tag_filter", "tag_mode", "view", "count_label", "bulk_add", "bulk_remove",
                "export_button", "import_button", "group_label", "eviction_button", "place_button")  # fmt: skip
EDITOR_WIDGETS = ("heading", "content", "tags", "dates", "details", "state", "new_button", "save_button",
                  "revert_button", "delete_button", "undo_button")  # fmt: skip


class NotesPanel(NoteEdits, QWidget):
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
        #: what saving leaves the agent without in this file (:meth:`ZekeReader.vector_notice`), None: nothing
        self.vector_notice: str | None = None
        self.model = NotesModel(self)
        self.model.fetcher = self._fetch_more
        #: bumped by every reload, so a page asked for before it is dropped
        self._list_generation = 0

        self.notes_list = NotesList(self.model)
        self.editor = NoteEditor()
        for name in LIST_WIDGETS:
            setattr(self, name, getattr(self.notes_list, name))
        for name in EDITOR_WIDGETS:
            setattr(self, name, getattr(self.editor, name))
        self.user_box.activated.connect(lambda _: self._user_chosen())
        self.user_box.lineEdit().editingFinished.connect(self._user_chosen)
        self.filter.textChanged.connect(lambda _: self.reload())
        self.tag_filter.tags_changed.connect(lambda _: self.reload())
        self.tag_mode.currentTextChanged.connect(lambda _: self.reload())
        self.view.selectionModel().currentRowChanged.connect(self._row_changed)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.bulk_add.clicked.connect(lambda: self.bulk_tags(add=True))
        self.bulk_remove.clicked.connect(lambda: self.bulk_tags(add=False))
        self.export_button.clicked.connect(self.export)
        self.import_button.clicked.connect(self.import_notes)
        self.eviction_button.clicked.connect(self.eviction_preview)
        self.place_button.clicked.connect(self.edit_place)
        self.content.textChanged.connect(self._update_buttons)
        self.tags.tags_changed.connect(lambda _: self._update_buttons())
        self.tags.input.textChanged.connect(lambda _: self._update_buttons())
        self.new_button.clicked.connect(self.new_note)
        self.save_button.clicked.connect(self.save)
        self.revert_button.clicked.connect(self.revert)
        self.delete_button.clicked.connect(self.delete)
        self.undo_button.clicked.connect(self.undo)

        self.splitter = fill_with_panes(self, self.notes_list, self.editor, (560, 420))
        self.splitter.setChildrenCollapsible(False)

        ctx.opened.connect(self._store_opened)
        ctx.mode_changed.connect(lambda _: self._apply_mode())
        # what the agent wrote: marked until seen; held while the pointer is over the list (rows would move)
        self.agent_wrote = HoldWhilePointed(self.view, self._agent_wrote)
        ctx.external_change.connect(self.agent_wrote)
        mark_current_seen(self.view, self.model.marks, self.model.row)
        self._apply_mode()
        self._show_note(None)

    # -- state --------------------------------------------------------------------------------------

    def dirty(self) -> bool:
        """Whether the editor holds something not saved (a tag still being typed counts)."""
        return self.editor.differs_from(self.current, self.is_new)

    def refusal(self) -> str | None:
        """Why notes cannot be edited now (the tooltip of every disabled editing control), or None."""
        store = self.ctx.store
        fixed = store.capabilities.fixed_groups.get(self.user or "") if store is not None else None
        return fixed or self.ctx.edit_refusal("notes")

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

    def nouns(self) -> tuple[str, str]:
        """What one of the listed rows is called, and many (``note``/``notes``; an agent's ``fact``/``facts``)."""
        store = self.ctx.store
        if store is None:
            return "note", "notes"
        caps = store.capabilities
        return caps.note_noun, caps.notes_label.lower()

    def no_tags(self) -> str | None:
        """Why this file's notes take no tags (an agent's facts may have none), or None."""
        store = self.ctx.store
        if store is None or store.capabilities.note_tags:
            return None
        caps = store.capabilities
        return f"{caps.label}: its {caps.notes_label.lower()} have no tags"

    def _apply_mode(self) -> None:
        """Editors read-only and writing controls disabled (with the reason as tooltip) while notes cannot be
        edited; editable again once they can. A file whose notes have no tags offers no tag editing or filter."""
        refusal = self.refusal()
        self.editor.set_read_only(refusal)
        self.editor.set_hint(self.vector_notice if refusal is None else None)
        no_tags = self.no_tags()
        if no_tags is not None:
            self.tags.set_read_only(refusal or no_tags)
        self.tag_filter.set_read_only(no_tags)
        self.tag_mode.setEnabled(no_tags is None)
        # in the format's words, and without tags where its notes have none (an always-empty column and filter)
        noun, many = self.nouns()
        self.filter.setPlaceholderText(f"Filter {many} by text…")
        self.model.set_heading(0, noun.capitalize())
        self.view.setColumnHidden(1, no_tags is not None)
        for widget in (self.tag_filter, self.tag_mode, self.tags, self.editor.tags_label, self.bulk_add,
                       self.bulk_remove):  # fmt: skip
            widget.setVisible(no_tags is None)
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
        no_tags = self.no_tags()
        allow(self.bulk_add, bool(selected) and not no_tags, no_tags or "Add a tag to every selected note")
        allow(self.bulk_remove, bool(selected) and not no_tags, no_tags or "Remove a tag from every selected note")
        allow(self.import_button, True, "Add notes from a JSON export (ids and dates kept)")
        saved = self.current is not None and not self.is_new
        several = len(selected) > 1 and not dirty and not self.is_new
        noun, many = self.nouns()
        allow(
            self.place_button,
            saved and not dirty and not several,
            "Save or revert your changes first"
            if dirty
            else f"Select one {noun} to move it"
            if several
            else "Move it to another scope, or change its time to live",
        )
        count = self.model.rowCount()
        matching = f" match{'es' if count == 1 else ''} the filters" if self.notes_list.filtered() else ""
        text = plural(count, noun, many) + matching + ("" if self.model.exhausted else " so far · scroll for more")
        if len(selected) > 1:
            text += f" · {len(selected):,} selected"
        self.count_label.setText(text if self.user else "")
        warnings = []
        if dirty and self.changed_elsewhere:
            warnings.append("⚠ another program changed this note since you opened it")
        self.state.setText(" · ".join((["● unsaved changes"] if dirty else []) + warnings))
        self.editor.show_heading(self.current, self.is_new, refusal is not None, self.unlisted, noun)
        if several:  # no one note to edit: the heading and the body say what acts on them all
            self.editor.heading.setText(f"{plural(len(selected), noun, many)} selected")
            actions = "Delete…, Export…" if no_tags else "Add tag…, Remove tag…, Delete…, Export…"
            self.editor.show_many(f"{actions} act on all of them. Select one {noun} to see it or edit it.")
        else:
            self.editor.show_many(None)

    def _show_note(self, note: Note | None) -> None:
        self.current, self.is_new, self.changed_elsewhere, self.unlisted = note, False, False, ""
        self.editor.show_note(note)
        self._update_buttons()

    # -- loading ------------------------------------------------------------------------------------

    def _store_opened(self) -> None:
        """A file was opened: start afresh (no note, no filter, nothing to undo) — unless it is the same file
        opened again (editing enabled), which keeps the user, filters, selection and the note in the editor."""
        store = self.ctx.require()
        caps = store.capabilities
        self.group_label.setText(caps.group_label)
        self.filter.setPlaceholderText(f"Filter {caps.notes_label.lower()} by text…")
        self.eviction_button.setVisible(caps.has_eviction)
        self.place_button.setVisible(bool(caps.note_fields))
        if not self.ctx.reopened:
            self.undo_record = None
            self.model.marks.forget()
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
        self.vector_notice = None
        self._apply_mode()
        self._load_users()
        notice = getattr(store, "vector_notice", None)
        if notice is not None:

            def got(said: str | None) -> None:
                if self.ctx.store is store:  # (another file opened meanwhile: not its notice)
                    self.vector_notice = said
                    self._apply_mode()

            self.ctx.run(notice, on_done=got)

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
        self.model.marks.forget()
        self._show_note(None)
        self.reload()

    def reload(self, select: str | None = None) -> None:
        """Re-read the list with the current filters; keep (or move to) the selected note."""
        if self.ctx.store is None or not self.user:
            self.model.set_notes([])
            return
        store, user = self.ctx.require(), self.user
        keep = select or (self.current.note_id if self.current and not self.is_new else None)
        # the other selected notes stay selected too (after a bulk action, say) — unless one is to be shown
        also = set() if select else {n.note_id for n in self.selected_notes()} - {keep}
        tags, mode, text = self._filters()
        self._list_generation += 1
        generation = self._list_generation
        limit = max(PAGE, len(self.model.notes))  # as many as were listed: the selection stays listed
        live = self.model.marks.take_live()

        def got(result: tuple[list[Note], bool, list[tuple[str, int]]]) -> None:
            notes, exhausted, used = result
            if generation != self._list_generation:
                return  # the filters or the user changed meanwhile: a newer list is on its way
            scroll = self.view.verticalScrollBar().value()
            self.view.selectionModel().blockSignals(True)
            self.model.set_notes(notes, exhausted=exhausted, live=live)
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
                for row, other in enumerate(notes):
                    if other.note_id in also:
                        self.view.selectionModel().select(
                            self.model.index(row, 0),
                            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
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

        async def load() -> tuple[list[Note], bool, list[tuple[str, int]]]:
            notes = await store.notes_page(user, None, limit, tags, mode, text)
            exhausted = len(notes) < limit
            if keep and not exhausted and all(n.note_id != keep for n in notes) and await self._exists(user, keep):
                # the note kept is further down (an edit moved it): read on until it is listed (a filtered list is
                # read whole for each page anyway: all of it at once)
                if tags or text:
                    notes, exhausted = await store.notes_page(user, None, 2**62, tags, mode, text), True
                while not exhausted and all(n.note_id != keep for n in notes[-PAGE:]):
                    page = await store.notes_page(user, note_cursor(notes[-1]), PAGE, tags, mode, text)
                    notes, exhausted = notes + page, len(page) < PAGE
            return notes, exhausted, await store.note_tags(user)

        self.ctx.run(load, on_done=got)

    async def _exists(self, user: str, note_id: str) -> bool:
        try:
            await self.ctx.require().get_note(user, note_id)
        except NotFoundError:
            return False
        return True

    def _filters(self) -> tuple[list[str], str, str | None]:
        return self.tag_filter.tags(), self.tag_mode.currentText(), self.filter.text().strip() or None

    def _fetch_more(self) -> None:
        """The page after the last note listed (the view scrolled to the end of the list)."""
        if self.ctx.store is None or not self.user or not self.model.notes:
            self.model.loading = False
            return
        store, user, generation = self.ctx.require(), self.user, self._list_generation
        last = self.model.notes[-1]
        tags, mode, text = self._filters()

        def got(page: list[Note]) -> None:
            if generation == self._list_generation:
                self.model.append_notes(page, exhausted=len(page) < PAGE)
                self._update_buttons()

        def failed(_exc: Exception) -> bool:
            self.model.loading = False  # the error's dialog comes from the context; scrolling asks again
            return False

        self.ctx.run(
            lambda: store.notes_page(user, note_cursor(last), PAGE, tags, mode, text),
            on_done=got,
            on_error=failed,
        )

    def _agent_wrote(self) -> None:
        self.model.marks.live()
        self.refresh()

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
