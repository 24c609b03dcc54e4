"""The notes panel's writes, each an operation on the store (run with ``ctx.run``) that records how to undo it:
save (new, or over the note as loaded, with theirs-vs-mine when another program changed it), delete, add or
remove tags on many notes, undo, import, export and the agent's eviction preview.

:class:`NoteEdits` is mixed into :class:`~.panel.NotesPanel`: it uses the panel's editor, selection and list.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.api import ConflictError, Note, normalize_tags, notes_json, notes_markdown, parse_notes_json, utc_now_text
from ..context import StoreContext
from ..dialogs import Dialogs
from ..widgets import plural
from .model import readable
from .state import NoteFilters, NotesState, SaveInFlight, UndoRecord

if TYPE_CHECKING:
    from .model import NotesModel
    from .panes import NoteEditor, NotesList


def note_text(note: Note | None, saved: bool = True) -> str:
    """A note as the conflict dialog shows it: its text, tags and (``saved``: it is in the file) when it was
    last updated."""
    if note is None:
        return "(deleted)"
    when = f"\nupdated {readable(note.updated_at)}" if saved else ""
    return f"{note.content}\n\ntags: {', '.join(note.tags) or '—'}{when}"


class NoteEdits:
    """The writes of :class:`~.panel.NotesPanel` (see the module's docstring)."""

    # what it uses of the panel
    ctx: StoreContext
    dialogs: Dialogs
    state: NotesState
    if TYPE_CHECKING:
        list_pane: NotesList
        editor: NoteEditor
        model: NotesModel

        def _show_note(self, note: Note | None) -> None: ...
        def reload(self, select: str | None = None) -> None: ...
        def selected_notes(self) -> list[Note]: ...
        def nouns(self) -> tuple[str, str]: ...
        def refusal(self) -> str | None: ...
        def guard(self) -> bool: ...
        def dirty(self) -> bool: ...
        def _update_buttons(self) -> None: ...
        def _show_hints(self) -> None: ...
        def _load_users(self) -> None: ...
        def _filters(self) -> NoteFilters: ...

    # -- editing ------------------------------------------------------------------------------------

    def new_note(self) -> None:
        if self.refusal() is not None or not self.guard():
            return
        self.list_pane.view.selectionModel().blockSignals(True)
        self.list_pane.view.clearSelection()
        self.list_pane.view.selectionModel().blockSignals(False)
        self._show_note(None)
        self.state.is_new = True
        self.editor.content.setFocus()
        self._update_buttons()

    def save(self) -> None:
        """Save what the editor holds. One save is written at a time: Save asked while one is on its way is
        done when it ends, and the editor stays editable throughout (what is typed meanwhile is kept)."""
        if not self.dirty():
            return
        store, user, loaded = self.ctx.writable("notes"), self.state.user, self.state.current
        if store is None or not user:
            if not user:
                self.dialogs.error("Choose or type a user first.")
            return
        if self.state.saving is not None:
            self.state.saving.then.append(self.save)
            return
        self.editor.tags.commit()  # a tag still being typed is saved too
        content, tags = self.editor.content.toPlainText(), self.editor.tags.tags()
        if not content.strip():
            self.dialogs.error("A note needs some content.")
            return
        self.state.saving = SaveInFlight(content, tags, self.state.shown)
        if self.state.is_new or loaded is None:
            self._save_new(user, content, tags)
        else:
            self._update(user, loaded, content, tags)
        self._update_buttons()

    def _saved(self, note: Note, record: UndoRecord | None) -> None:
        """A save ended with ``note`` in the file. If the editor still shows what was saved, it shows the note
        as saved — keeping anything typed meanwhile, which is then saved over the new version (never taken for
        another program's change); if the user went on to another note, the editor is left alone."""
        flight, self.state.saving = self.state.saving, None
        if record is not None:
            self.state.history.push(record)
        if flight is None or flight.shown == self.state.shown:
            typed_on = self.dirty_over(flight)
            self.state.current, self.state.is_new, self.state.changed_elsewhere = note, False, False
            self.state.unlisted = ""
            if typed_on:
                self.editor.show_facts(note)
            else:
                self.editor.show_note(note)
            self.reload(select=note.note_id)
        else:
            self.reload()
        self._show_hints()
        self._update_buttons()
        for then in flight.then if flight is not None else []:
            then()

    def dirty_over(self, flight: SaveInFlight | None) -> bool:
        """Whether the editor holds something other than what ``flight`` wrote."""
        return flight is not None and self.editor.differs(flight.content, flight.tags)

    def _save_failed(self, exc: Exception) -> bool:
        self.state.saving = None  # what was asked meanwhile is not done: the user sees why, and asks again
        self._update_buttons()
        return False

    def _save_new(self, user: str, content: str, tags: list[str]) -> None:
        store = self.ctx.require()

        def saved(note: Note) -> None:
            self._saved(note, UndoRecord("create note", created=[note], user=user))

        self.ctx.run(
            lambda: store.save_note(user, content, tags),
            label="Saving note",
            on_done=saved,
            on_error=self._save_failed,
            changes="notes",
        )

    def _update(self, user: str, loaded: Note, content: str, tags: list[str]) -> None:
        """Save over ``loaded`` — the note as this window last read it. If another program changed it since,
        nothing is written and the conflict dialog asks what to keep — unless the file already holds exactly
        this text and these tags (this window's own earlier save, or the same change made elsewhere)."""
        store = self.ctx.require()

        def saved(note: Note) -> None:
            self._saved(note, UndoRecord("edit note", before=[loaded], after=[note], user=user))

        def failed(exc: Exception) -> bool:
            if not isinstance(exc, ConflictError):
                return self._save_failed(exc)
            theirs: Note | None = exc.current
            if theirs is not None and theirs.content == content and theirs.tags == normalize_tags(tags):
                self._saved(theirs, None)
                return True
            flight, self.state.saving = self.state.saving, None
            self._resolve(user, loaded, content, tags, exc, flight)
            return True

        self.ctx.run(
            lambda: store.update_note(user, loaded.note_id, content, tags, expected=loaded),
            label="Saving note",
            on_done=saved,
            on_error=failed,
            changes="notes",
        )

    def _resolve(
        self,
        user: str,
        loaded: Note,
        content: str,
        tags: list[str],
        exc: ConflictError,
        flight: SaveInFlight | None,
    ) -> None:
        """Theirs vs mine: keep mine (theirs goes to Undo), keep theirs (my edit is dropped), keep both (mine
        becomes a new note), or back to editing with nothing written (the default: Enter or Escape)."""
        theirs: Note | None = exc.current
        mine = Note(loaded.note_id, user, content, normalize_tags(tags), loaded.created_at, None, 0)
        choices = [
            ("mine", "Keep mine" if theirs else "Save mine again"),
            ("theirs", "Keep theirs" if theirs else "Let it go"),
            ("both", "Keep both (mine as a new note)"),
        ]
        choice = self.dialogs.conflict(
            "Note changed by another program", str(exc), note_text(theirs), note_text(mine, saved=False), choices
        )
        if choice in ("mine", "both"):
            self.state.saving = SaveInFlight(content, tags, flight.shown if flight else self.state.shown)
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
            self.state.changed_elsewhere = True
            self._update_buttons()

    def _recreate(self, user: str, mine: Note) -> None:
        """The note was deleted elsewhere and the user keeps their edit: write it back under its id."""
        store = self.ctx.require()

        def saved(notes: list[Note]) -> None:
            self._saved(notes[0], UndoRecord("save deleted note again", created=notes, user=user))

        def failed(exc: Exception) -> bool:
            self._save_failed(exc)
            return self._changed_meanwhile(exc)

        self.ctx.run(
            lambda: store.restore_notes([replace(mine, updated_at=utc_now_text())], expected={mine.note_id: None}),
            label="Saving note",
            on_done=saved,
            on_error=failed,
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
        if self.state.is_new:
            self._show_note(None)
        else:
            self._show_note(self.state.current)

    def delete(self) -> None:
        notes = self.selected_notes() or ([self.state.current] if self.state.current and not self.state.is_new else [])
        if not notes:
            return
        store = self.ctx.writable("notes")
        if store is None:
            return
        user = self.state.user
        if user is None:
            return
        noun, many = self.nouns()
        if len(notes) == 1:
            what, its, it = f"the {noun} “{(notes[0].content.splitlines() or [''])[0][:60]}”", "Its", "it"
        else:
            what, its, it = f"{len(notes)} {many}", "Their", "them"
        title = f"Delete {noun if len(notes) == 1 else many}"
        if not self.dialogs.confirm(title, f"Delete {what}? {its} search index entries go too. Undo puts {it} back."):
            return

        def deleted(_: int) -> None:
            self.state.history.push(UndoRecord(f"delete {plural(len(notes), 'note')}", before=list(notes), user=user))
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
        user, ids = self.state.user, [n.note_id for n in touched]
        if user is None:
            return

        def done(changed: list[Note]) -> None:
            record = UndoRecord(
                f"{verb.lower()} tags on {plural(len(touched), 'note')}", before=touched, user=user, after=changed
            )
            self.state.history.push(record)
            self.reload()

        self.ctx.run(
            lambda: store.set_note_tags(user, ids, tags if add else (), () if add else tags, expected=touched),
            label="Changing tags",
            on_done=done,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def undo(self) -> None:
        if self.state.saving is not None:  # it undoes that save, once written
            self.state.saving.then.append(self.undo)
            return
        record = self.state.undo_record
        if record is None:
            return
        store = self.ctx.writable("notes")
        if store is None:
            return

        async def put_back() -> list[Note]:
            if record.created:
                await store.delete_notes(record.user, [n.note_id for n in record.created], expected=record.created)
            if record.before:
                return await store.restore_notes(record.before, expected=record.expected())
            return []

        def done(restored: list[Note]) -> None:
            self.state.history.drop(record)
            self.state.history.rebase(restored)
            keep = record.before[0].note_id if record.before else None
            self._show_note(None)
            self.reload(select=keep)

        def failed(exc: Exception) -> bool:
            if isinstance(exc, ConflictError):
                self.state.history.drop(record)
            return self._changed_meanwhile(exc)

        self.ctx.run(put_back, label=f"Undoing {record.description}", on_done=done, on_error=failed, changes="notes")

    def edit_place(self) -> None:
        """Where a memory lives and how long (ZEKE: its scope and TTL), asked in turn; one edit, undoable."""
        note = self.state.current
        store = self.ctx.writable("notes")
        if note is None or self.state.is_new or store is None:
            return
        noun = self.nouns()[0]
        scope = self.dialogs.text("Scope and TTL", f"Scope of this {noun} (another one moves it):", note.user)
        if scope is None:
            return
        now = note.details.get("ttl_seconds")
        answer = self.dialogs.text(
            "Scope and TTL", "Time to live in seconds from its creation, or none:", "none" if now is None else str(now)
        )
        if answer is None:
            return
        text = answer.strip().lower()
        ttl: Any = None if text in ("", "none") else int(text) if text.isdigit() else answer
        fields: dict[str, Any] = {}
        if scope.strip() != note.user:
            fields["scope"] = scope.strip()
        if ttl != now:
            fields["ttl_seconds"] = ttl
        user = self.state.user
        if not fields or user is None:
            return

        def done(moved: Note) -> None:
            self.state.history.push(UndoRecord(f"the {noun}'s scope or TTL", before=[note], user=user, after=[moved]))
            self._show_note(moved if moved.user == self.state.user else None)
            self._load_users()

        self.ctx.run(
            lambda: store.update_note(user, note.note_id, note.content, note.tags, expected=note, **fields),
            label=f"Changing the {noun}",
            on_done=done,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def eviction_preview(self) -> None:
        """What the agent's own clean-up would delete now; once editing is enabled, a button to do it (asked again
        with the count), undoable like a deletion."""
        store = self.ctx.store
        if store is None:
            return

        def show(preview: Any) -> None:
            if preview is None:
                self.dialogs.info("This file's agent deletes nothing on its own.")
                return
            noun, many = self.nouns()
            count = plural(len(preview.items), noun, many)
            refusal = store.capabilities.refusal("notes") or (
                "enable editing (Edit ▸ Enable Editing) to delete them" if store.read_only else None
            )
            heading = preview.heading()
            if preview.items and refusal:
                heading.insert(1, f"Not deleted from here: {refusal}.")
            action = f"Delete these {count}…" if preview.items and not refusal else None
            table = ("Eviction preview", "\n".join(heading), preview.COLUMNS, preview.rows(), action)
            if self.dialogs.table(*table) and self.dialogs.confirm(
                "Apply the agent's clean-up",
                f"Delete {count} now, as the agent's own clean-up would as of {preview.now}? If the agent changed "
                "any of them meanwhile, nothing is deleted. Undo puts them back.",
                f"Delete {len(preview.items):,}",
            ):
                self._apply_eviction(preview, count)

        self.ctx.run(store.eviction_preview, label="Working out what the agent would delete", on_done=show)

    def _apply_eviction(self, preview: Any, count: str) -> None:
        store = self.ctx.writable("notes")
        if store is None:
            return

        def done(gone: list[Note]) -> None:
            self.state.history.push(
                UndoRecord(f"the clean-up of {count}", before=list(gone), user=self.state.user or "")
            )
            self._show_note(None)
            self.reload()

        ids = [e.id for e in preview.items]
        self.ctx.run(
            lambda: store.apply_eviction(ids, preview.now),
            label=f"Deleting {count}",
            on_done=done,
            on_error=self._changed_meanwhile,
            changes="notes",
        )

    def export(self) -> None:
        """The selected notes, else every note the filters list (also those not yet scrolled to), as JSON or
        Markdown."""
        selected = self.selected_notes()
        if selected or self.model.exhausted or self.ctx.store is None or not self.state.user:
            self._export(selected or list(self.model.notes))
            return
        store, user = self.ctx.require(), self.state.user
        f = self._filters()
        self.ctx.run(
            lambda: store.list_notes(user, list(f.tags), f.mode, f.text), label="Reading notes", on_done=self._export
        )

    def _export(self, notes: list[Note]) -> None:
        if not notes:
            self.dialogs.info("There are no notes to export.")
            return
        path = self.dialogs.save_file("Export notes", "JSON (*.json);;Markdown (*.md)", f"notes-{self.state.user}.json")
        if path is None:
            return
        text = (
            notes_markdown(self.state.user or "", notes)
            if path.suffix.lower() in (".md", ".markdown")
            else notes_json(notes)
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
