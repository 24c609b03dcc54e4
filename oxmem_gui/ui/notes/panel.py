"""The notes panel: the list (:class:`~.panes.NotesList`) and the editor (:class:`~.panes.NoteEditor`) of a
user's notes, loaded from the store and kept in step with the selection; its writes are :mod:`.edits`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtWidgets import QPushButton, QWidget

from ...core.api import BROWSE_PAGE as PAGE
from ...core.api import Note, utc_now
from ..change_marks import HoldWhilePointed, mark_current_seen
from ..context import StoreContext
from ..dialogs import Dialogs
from ..widgets import fill_with_panes, line_edit, plural
from .edits import NoteEdits
from .model import NOTE_ROLE, NotesModel
from .panes import NoteEditor, NotesList
from .state import Listing, NoteFilters, NotesState, count_text


class NotesPanel(NoteEdits, QWidget):
    """A user's notes: the filtered list on the left, the note being edited on the right.

    While ``ctx.edit_refusal("notes")`` is not None the editors are read-only and every control that writes is
    disabled with that refusal as its tooltip. The editor never shows a note the list no longer lists unless
    it holds unsaved changes, and then its heading says so.
    """

    def __init__(
        self,
        ctx: StoreContext,
        dialogs: Dialogs,
        parent: QWidget | None = None,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        """``now``: the clock the notes' ages read (tests pass a fixed one)."""
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.state = NotesState()
        self.model = NotesModel(self, now)
        self.model.fetcher = self._fetch_more
        self.list_pane = NotesList(self.model)
        self.editor = NoteEditor(now=now)
        self.list_pane.user_box.activated.connect(lambda _: self._user_chosen())
        line_edit(self.list_pane.user_box).editingFinished.connect(self._user_chosen)
        self.list_pane.filter.textChanged.connect(lambda _: self.reload())
        self.list_pane.tag_filter.tags_changed.connect(lambda _: self.reload())
        self.list_pane.tag_mode.currentTextChanged.connect(lambda _: self.reload())
        self.list_pane.view.selectionModel().currentRowChanged.connect(self._row_changed)
        self.list_pane.view.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.list_pane.bulk_add.clicked.connect(lambda: self.bulk_tags(add=True))
        self.list_pane.bulk_remove.clicked.connect(lambda: self.bulk_tags(add=False))
        self.list_pane.export_button.clicked.connect(self.export)
        self.list_pane.import_button.clicked.connect(self.import_notes)
        self.list_pane.eviction_button.clicked.connect(self.eviction_preview)
        self.list_pane.place_button.clicked.connect(self.edit_place)
        self.editor.content.textChanged.connect(self._update_buttons)
        self.editor.tags.tags_changed.connect(lambda _: self._update_buttons())
        self.editor.tags.input.textChanged.connect(lambda _: self._update_buttons())
        self.editor.new_button.clicked.connect(self.new_note)
        self.editor.save_button.clicked.connect(self.save)
        self.editor.revert_button.clicked.connect(self.revert)
        self.editor.delete_button.clicked.connect(self.delete)
        self.editor.undo_button.clicked.connect(self.undo)

        # the editor under the list: the notes' text has the window's width (over half of it at 1024 px)
        self.splitter = fill_with_panes(self, self.list_pane, self.editor, (284, 284), Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)

        ctx.opened.connect(self._store_opened)
        ctx.mode_changed.connect(lambda _: self._apply_mode())
        # what the agent wrote: marked until seen; held while the pointer is over the list (rows would move)
        self.agent_wrote = HoldWhilePointed(self.list_pane.view, self._agent_wrote)
        ctx.external_change.connect(self.agent_wrote)
        mark_current_seen(self.list_pane.view, self.model.marks, self.model.row)
        self._apply_mode()
        self._show_note(None)

    # -- state --------------------------------------------------------------------------------------

    def dirty(self) -> bool:
        """Whether the editor holds something not saved (a tag still being typed counts); while a save started
        from this note is on its way, compared with what it writes."""
        saving = self.state.saving
        if saving is not None and saving.shown == self.state.shown:
            return self.dirty_over(saving)
        return self.editor.differs_from(self.state.current, self.state.is_new)

    def refusal(self) -> str | None:
        """Why notes cannot be edited now (the tooltip of every disabled editing control), or None."""
        store = self.ctx.store
        fixed = store.capabilities.fixed_groups.get(self.state.user or "") if store is not None else None
        return fixed or self.ctx.edit_refusal("notes")

    def selected_notes(self) -> list[Note]:
        rows = sorted({i.row() for i in self.list_pane.view.selectionModel().selectedRows()})
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
        store = self.ctx.store
        self.editor.tags.keep_case = store is not None and store.capabilities.tags_keep_case
        self.editor.set_read_only(refusal)
        self._show_hints()
        no_tags = self.no_tags()
        if no_tags is not None:
            self.editor.tags.set_read_only(refusal or no_tags)
        self.list_pane.tag_filter.set_read_only(no_tags)
        self.list_pane.tag_mode.setEnabled(no_tags is None)
        # in the format's words, and without tags where its notes have none (an always-empty column and filter)
        noun, many = self.nouns()
        self.list_pane.filter.setPlaceholderText(f"Filter {many} by text…")
        self.model.set_heading(0, noun.capitalize())
        self.list_pane.view.setColumnHidden(1, no_tags is not None)
        lst, editor = self.list_pane, self.editor
        for widget in (lst.tag_filter, lst.tag_mode, editor.tags, editor.tags_label, lst.bulk_add, lst.bulk_remove):
            widget.setVisible(no_tags is None)
        self._update_buttons()

    def _update_buttons(self) -> None:
        refusal = self.refusal()
        dirty = self.dirty()
        selected = self.selected_notes()

        def allow(button: QPushButton, enabled: bool, tip: str = "", writes: bool = True) -> None:
            button.setEnabled((refusal is None or not writes) and enabled)
            button.setToolTip((refusal if writes else None) or tip)

        allow(self.editor.new_button, True, "Write a new note (Ctrl+N)")
        allow(self.editor.save_button, dirty, "Save the note (Ctrl+S)")
        allow(self.editor.revert_button, dirty, "Put the note back as it was loaded", writes=False)
        deletable = bool(selected) or (self.state.current is not None and not self.state.is_new)
        allow(self.editor.delete_button, deletable, "Delete the selected notes (Ctrl+Delete)")
        allow(self.editor.undo_button, self.state.undo_record is not None, self.state.undo_tip())
        no_tags = self.no_tags()
        allow(self.list_pane.bulk_add, bool(selected) and not no_tags, no_tags or "Add a tag to every selected note")
        allow(
            self.list_pane.bulk_remove,
            bool(selected) and not no_tags,
            no_tags or "Remove a tag from every selected note",
        )
        allow(self.list_pane.import_button, True, "Add notes from a JSON export (ids and dates kept)")
        saved = self.state.current is not None and not self.state.is_new
        several = len(selected) > 1 and not dirty and not self.state.is_new
        noun, many = self.nouns()
        allow(
            self.list_pane.place_button,
            saved and not dirty and not several,
            "Save or revert your changes first"
            if dirty
            else f"Select one {noun} to move it"
            if several
            else "Move it to another scope, or change its time to live",
        )
        text = count_text(
            self.model.rowCount(), self.model.exhausted, self.list_pane.filtered(), len(selected), noun, many
        )
        self.list_pane.count_label.setText(text if self.state.user else "")
        warnings = []
        if dirty and self.state.changed_elsewhere:
            warnings.append("⚠ another program changed this note since you opened it")
        self.editor.status.setText(" · ".join((["● unsaved changes"] if dirty else []) + warnings))
        self.editor.show_heading(self.state.current, self.state.is_new, refusal is not None, self.state.unlisted, noun)
        if several:  # no one note to edit: the heading and the body say what acts on them all
            self.editor.heading.setText(f"{plural(len(selected), noun, many)} selected")
            actions = "Delete…, Export…" if no_tags else "Add tag…, Remove tag…, Delete…, Export…"
            self.editor.show_many(f"{actions} act on all of them. Select one {noun} to see it or edit it.")
        else:
            self.editor.show_many(None)

    def _show_note(self, note: Note | None) -> None:
        self.state.show(note)
        self.editor.show_note(note)
        self._show_hints()
        self._update_buttons()

    def _show_hints(self) -> None:
        """While notes can be edited: the format's rules for writing one, and what saving the note shown will
        change that the agent sees — said before saving, not after."""
        store = self.ctx.store
        if store is None or self.refusal() is not None:
            self.editor.set_hint([])
            return
        note = None if self.state.is_new else self.state.current
        said = [store.capabilities.note_rules, self.state.vector_notice, *store.edit_effects(note)]
        self.editor.set_hint([s for s in said if s])

    # -- loading ------------------------------------------------------------------------------------

    def _store_opened(self) -> None:
        """A file was opened: start afresh (no note, no filter, nothing to undo) — unless it is the same file
        opened again (editing enabled), which keeps the user, filters, selection and the note in the editor."""
        store = self.ctx.require()
        caps = store.capabilities
        self.list_pane.group_label.setText(caps.group_label)
        self.list_pane.filter.setPlaceholderText(f"Filter {caps.notes_label.lower()} by text…")
        self.list_pane.eviction_button.setVisible(caps.has_eviction)
        self.list_pane.place_button.setVisible(bool(caps.note_fields))
        if not self.ctx.reopened:
            self.state.file_opened(str(store.path))
            self.model.marks.forget()
            for field_ in (self.list_pane.filter, self.list_pane.tag_filter, self.list_pane.tag_mode):
                field_.blockSignals(True)
            self.list_pane.filter.clear()
            self.list_pane.tag_filter.set_tags([])
            self.list_pane.tag_mode.setCurrentIndex(0)
            for field_ in (self.list_pane.filter, self.list_pane.tag_filter, self.list_pane.tag_mode):
                field_.blockSignals(False)
            self.list_pane.view.selectionModel().blockSignals(True)
            self.model.set_notes([])
            self.list_pane.view.selectionModel().blockSignals(False)
            self._show_note(None)
        self.state.vector_notice = None
        self._apply_mode()
        self._load_users()
        notice = getattr(store, "vector_notice", None)
        if notice is not None:

            def got(said: str | None) -> None:
                if self.ctx.store is store:  # (another file opened meanwhile: not its notice)
                    self.state.vector_notice = said
                    self._apply_mode()

            self.ctx.run(notice, on_done=got)

    def _load_users(self) -> None:
        """Re-read the list of users (keeping the one chosen when it is still there), then the notes."""
        store = self.ctx.require()

        def got(users: list[str]) -> None:
            self.list_pane.user_box.blockSignals(True)
            self.list_pane.user_box.clear()
            self.list_pane.user_box.addItems(users)
            self.list_pane.user_box.blockSignals(False)
            if self.state.user in users:
                self.list_pane.user_box.setCurrentText(self.state.user)
            elif users:
                self.state.user = users[0]
                self.list_pane.user_box.setCurrentText(users[0])
            self.reload()

        self.ctx.run(store.note_users, on_done=got)

    def set_user(self, user: str) -> None:
        self.list_pane.user_box.setCurrentText(user)
        self._user_chosen()

    def _user_chosen(self) -> None:
        user = self.list_pane.user_box.currentText().strip()
        if not user or user == self.state.user:
            return
        if not self.guard():
            self.list_pane.user_box.setCurrentText(self.state.user or "")
            return
        self.state.user = user
        self.model.marks.forget()
        self._show_note(None)
        self.reload()

    def reload(self, select: str | None = None) -> None:
        """Re-read the list with the current filters; keep (or move to) the selected note."""
        if self.ctx.store is None or not self.state.user:
            self.model.set_notes([])
            return
        store, user, filters = self.ctx.require(), self.state.user, self._filters()
        keep = select or self.state.kept()
        # the other selected notes stay selected too (after a bulk action, say) — unless one is to be shown
        also = set() if select else {n.note_id for n in self.selected_notes()} - {keep}
        generation = self.state.new_list()
        limit = max(PAGE, len(self.model.notes))  # as many as were listed: the selection stays listed
        live = self.model.marks.take_live()

        def got(listing: Listing) -> None:
            if generation != self.state.generation:
                return  # the filters or the user changed meanwhile: a newer list is on its way
            view, selection = self.list_pane.view, self.list_pane.view.selectionModel()
            scroll = view.verticalScrollBar().value()
            selection.blockSignals(True)
            self.model.set_notes(listing.notes, exhausted=listing.exhausted, live=live)
            completions = [t for t, _ in listing.tags_used]
            self.editor.tags.set_completions(completions)
            self.list_pane.tag_filter.set_completions(completions)
            row, redraw = self.state.relist(listing.notes, keep, self.dirty(), filters.active())
            if row is not None:
                rows = QItemSelectionModel.SelectionFlag.Rows
                selection.setCurrentIndex(
                    self.model.index(row, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect | rows
                )
                for other, note in enumerate(listing.notes):
                    if note.note_id in also:
                        selection.select(self.model.index(other, 0), QItemSelectionModel.SelectionFlag.Select | rows)
            selection.blockSignals(False)
            if redraw:
                self.editor.show_note(self.state.current)
                self._show_hints()
            view.verticalScrollBar().setValue(scroll)
            self._update_buttons()

        self.ctx.run(lambda: self.state.read_list(store, user, filters, limit, keep), on_done=got)

    def _filters(self) -> NoteFilters:
        text = self.list_pane.filter.text().strip() or None
        return NoteFilters(tuple(self.list_pane.tag_filter.tags()), self.list_pane.tag_mode.currentText(), text)

    def _fetch_more(self) -> None:
        """The page after the last note listed (the view scrolled to the end of the list)."""
        if self.ctx.store is None or not self.state.user or not self.model.notes:
            self.model.loading = False
            return
        store, user, generation = self.ctx.require(), self.state.user, self.state.generation
        last, filters = self.model.notes[-1], self._filters()

        def got(page: list[Note]) -> None:
            if generation == self.state.generation:
                self.model.append_notes(page, exhausted=len(page) < PAGE)
                self._update_buttons()

        def failed(_exc: Exception) -> bool:
            self.model.loading = False  # the error's dialog comes from the context; scrolling asks again
            return False

        self.ctx.run(lambda: self.state.next_page(store, user, last, filters), on_done=got, on_error=failed)

    def _agent_wrote(self) -> None:
        self.model.marks.live()
        self.refresh()

    def refresh(self) -> None:
        self.reload()

    def _row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        note = self.model.data(current, NOTE_ROLE) if current.isValid() else None
        if self.state.current is not None and note is not None and note.note_id == self.state.current.note_id:
            return
        if not self.guard():
            self.list_pane.view.selectionModel().blockSignals(True)
            self.list_pane.view.selectionModel().setCurrentIndex(
                previous, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.list_pane.view.selectionModel().blockSignals(False)
            return
        self._show_note(note)
