"""What the Notes panel shows, without Qt: whose notes, the note in the editor (new, changed by another program,
no longer listed), what Undo puts back, and the list read a page at a time in the list's order.

:class:`~.panel.NotesPanel` is a thin view of it: it runs these coroutines (through the store context), and
draws what :meth:`NotesState.relist` decides. A list asked for before the filters or the user changed is dropped
when it arrives (``generation``): the panel never shows a list that no longer matches its choices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...core.api import BROWSE_PAGE as PAGE
from ...core.api import MemoryReader, Note, NotFoundError, note_cursor
from ..words import plural


@dataclass
class UndoRecord:
    """What to put back to undo the last edit: notes as they were, notes the edit created, and the notes as the
    edit left them (undo refuses to overwrite a note another program changed since)."""

    description: str
    before: list[Note] = field(default_factory=list)
    created: list[Note] = field(default_factory=list)
    user: str = ""
    after: list[Note] = field(default_factory=list)

    def puts_back(self) -> str:
        """What undoing it leaves, in a line: the first note's text as it was (``… and 2 more``), or which note
        it removes again."""
        notes, verb = (self.before, "") if self.before else (self.created, "removes ")
        if not notes:
            return ""
        first = (notes[0].content.strip().splitlines() or [""])[0][:80]
        more = f" and {len(notes) - 1:,} more" if len(notes) > 1 else ""
        return f"{verb}{first}{more}"

    def expected(self) -> dict[str, Note | None]:
        """What each note the undo touches must hold now: what the edit left (None: it deleted the note)."""
        left: dict[str, Note | None] = {n.note_id: None for n in self.before}
        left.update({n.note_id: n for n in self.after})
        return left


class UndoHistory:
    """The edits Undo can put back, newest last, for one file: many steps (at most :data:`LIMIT`, the oldest
    dropped first), each undone in turn, newest first."""

    LIMIT = 100

    def __init__(self) -> None:
        self.records: list[UndoRecord] = []

    def push(self, record: UndoRecord) -> None:
        self.records.append(record)
        del self.records[: -self.LIMIT]

    def last(self) -> UndoRecord | None:
        return self.records[-1] if self.records else None

    def rebase(self, restored: list[Note]) -> None:
        """An undo wrote ``restored`` back: the older steps that left those notes now expect them as written
        (a file may give a note put back a new row or date; the next Undo would take that for another program's
        change)."""
        by_id = {n.note_id: n for n in restored}
        for record in self.records:
            record.after = [by_id.get(n.note_id, n) for n in record.after]
            record.created = [by_id.get(n.note_id, n) for n in record.created]

    def drop(self, record: UndoRecord) -> None:
        """``record`` was undone, or cannot be any more (another program changed its notes)."""
        if record in self.records:
            self.records.remove(record)


@dataclass
class SaveInFlight:
    """A save on its way to the file: what it writes, and which showing of the editor it was started from (the
    user may type on, or start another note, before it ends)."""

    content: str
    tags: list[str]
    shown: int
    #: what was asked meanwhile (Save again, Undo), done in order once this save has ended
    then: list[Callable[[], None]] = field(default_factory=list)


@dataclass(frozen=True)
class NoteFilters:
    """The list's filters: tags (with ``mode`` ``any`` or ``all``) and a text to find, None: no text."""

    tags: tuple[str, ...] = ()
    mode: str = "any"
    text: str | None = None

    def active(self) -> bool:
        return bool(self.tags or self.text)


@dataclass
class Listing:
    """A list as read: the notes, whether they are all there is, and the tags in use with how many notes have each."""

    notes: list[Note]
    exhausted: bool
    tags_used: list[tuple[str, int]]


@dataclass
class NotesState:
    """The Notes panel's state (see the module's docstring)."""

    user: str | None = None
    #: the note in the editor (None: none, or a new one while ``is_new``)
    current: Note | None = None
    is_new: bool = False
    #: another program changed the note being edited since it was opened
    changed_elsewhere: bool = False
    #: why the note being edited (with unsaved changes) is not in the list; empty while it is listed
    unlisted: str = ""
    #: what Undo puts back in this file, newest last (each file opened keeps its own: :attr:`histories`)
    history: UndoHistory = field(default_factory=UndoHistory)
    histories: dict[str, UndoHistory] = field(default_factory=dict)
    #: the save being written, None: none
    saving: SaveInFlight | None = None
    #: bumped each time the editor is given a note (or a new one) to show
    shown: int = 0
    #: what saving leaves the agent without in this file (``ZekeReader.vector_notice``), None: nothing
    vector_notice: str | None = None
    #: bumped by every new list, so a page asked for before it is dropped
    generation: int = 0

    @property
    def undo_record(self) -> UndoRecord | None:
        """What the next Undo puts back."""
        return self.history.last()

    def file_opened(self, path: str) -> None:
        """Another file is shown: its own Undo history (kept while the inspector runs) comes back."""
        self.history = self.histories.setdefault(path, UndoHistory())

    def show(self, note: Note | None) -> None:
        """``note`` goes into the editor as loaded (None: an empty editor)."""
        self.current, self.is_new, self.changed_elsewhere, self.unlisted = note, False, False, ""
        self.shown += 1

    def kept(self) -> str | None:
        """The id of the saved note in the editor: the one a new list keeps selected."""
        return self.current.note_id if self.current is not None and not self.is_new else None

    def new_list(self) -> int:
        """A new list is asked for: its generation (pages and lists of older ones are dropped)."""
        self.generation += 1
        return self.generation

    async def read_list(
        self, store: MemoryReader, user: str, filters: NoteFilters, limit: int, keep: str | None
    ) -> Listing:
        """The first ``limit`` notes of ``user`` that pass ``filters``, read on until ``keep`` is among them when
        it is further down (an edit moved it) and still in the file, and the tags in use."""
        tags, mode, text = list(filters.tags), filters.mode, filters.text
        notes = await store.notes_page(user, None, limit, tags, mode, text)
        exhausted = len(notes) < limit
        if keep and not exhausted and all(n.note_id != keep for n in notes) and await _exists(store, user, keep):
            while not exhausted and all(n.note_id != keep for n in notes[-PAGE:]):
                page = await store.notes_page(user, note_cursor(notes[-1]), PAGE, tags, mode, text)
                notes, exhausted = notes + page, len(page) < PAGE
        return Listing(notes, exhausted, await store.note_tags(user))

    @staticmethod
    async def next_page(store: MemoryReader, user: str, last: Note, filters: NoteFilters) -> list[Note]:
        """The page after ``last``."""
        return await store.notes_page(user, note_cursor(last), PAGE, list(filters.tags), filters.mode, filters.text)

    def relist(self, notes: list[Note], keep: str | None, dirty: bool, filtered: bool) -> tuple[int | None, bool]:
        """A new list arrived: the row of the note kept (None: not listed), and whether the editor is to be drawn
        again from :attr:`current`. An edit in progress is never replaced: if the list lacks its note it says why
        (:attr:`unlisted`); if the note changed in the file it is marked :attr:`changed_elsewhere`, so saving shows
        theirs against mine."""
        row = next((i for i, n in enumerate(notes) if n.note_id == keep), None) if keep else None
        if row is not None:
            if not dirty:
                self.show(notes[row])
                return row, True
            self.unlisted = ""
            if notes[row] != self.current:
                self.changed_elsewhere = True
            return row, False
        if self.current is not None and not self.is_new:  # filtered out, or deleted elsewhere
            if dirty:
                self.unlisted = "the filters hide it" if filtered else "it is no longer in the file"
                return None, False
            self.show(None)
            return None, True
        return None, False

    def undo_tip(self) -> str:
        return f"Undo: {self.undo_record.description}" if self.undo_record else "Nothing to undo"


async def _exists(store: MemoryReader, user: str, note_id: str) -> bool:
    try:
        await store.get_note(user, note_id)
    except NotFoundError:
        return False
    return True


def count_text(count: int, exhausted: bool, filtered: bool, selected: int, noun: str, many: str) -> str:
    """What the list's count says: ``12 notes match the filters so far · scroll for more · 2 selected``."""
    matching = f" match{'es' if count == 1 else ''} the filters" if filtered else ""
    text = plural(count, noun, many) + matching + ("" if exhausted else " so far · scroll for more")
    return text + (f" · {selected:,} selected" if selected > 1 else "")
