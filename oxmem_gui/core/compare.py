"""What changed between two memory files of one format — a backup and the file now: ``oxmem diff OLD NEW``.

Read through the reader interface (:data:`~.memory.Memory`), so it works for every format oxmem reads, and
compared by key, the way a ``FULL JOIN`` on the keys would: sessions by id (added, removed, events appended — more
events, none before the last one replaced — or rewritten: fewer or as many events and another last sequence, as a
note's edit does to its notes session), summaries by session, notes (facts,
memories) by ``(group, id)`` (added, deleted, changed: the text's word diff and the tags added and removed; a new
version of a fact that an agent keeps as a new row is a change of it),
schedules by id (added, removed, paused, resumed, changed: which fields). Only keys and the compared values are
held, never the files' other rows; a note's word diff is computed when asked for (:func:`word_diff`). The store's
notes are read as rows, every user's in one query, and only the rows that differ are decoded (:mod:`.compare_rows`).
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any

from .compare_rows import Stored, differing, note_of, store_rows
from .errors import InvalidInputError
from .formats.detect import article
from .memory import Memory, open_memory
from .memory_store import MemoryStore
from .schedules.store import Schedule
from .store.notes import NOTES_PREFIX, Note

#: the fields of a schedule whose change is reported (the run bookkeeping — next/last run, failures — is not an edit)
SCHEDULE_FIELDS = ("name", "goal", "cadence_json", "notification_policy", "status", "channel_id", "user_id")


@dataclass
class SessionChange:
    session_id: str
    kind: str  # added, removed, appended, rewritten
    old_events: int | None
    new_events: int | None

    @property
    def appended(self) -> int:
        return (self.new_events or 0) - (self.old_events or 0)

    @property
    def events(self) -> str:
        """Its events in words: ``had 9 events``, ``+1 event (4 → 5)``…"""
        return {
            "added": _events(self.new_events),
            "removed": f"had {_events(self.old_events)}",
            "appended": f"+{_events(self.appended)} ({self.old_events} → {self.new_events})",
            "rewritten": f"{self.old_events} → {_events(self.new_events)}",
        }[self.kind]


def _events(n: int | None) -> str:
    return f"{n or 0:,} event" + ("" if n == 1 else "s")


@dataclass
class NoteChange:
    group: str
    note_id: str
    kind: str  # added, deleted, changed
    old: Note | None
    new: Note | None

    @property
    def tags_added(self) -> list[str]:
        return sorted(set(self.new.tags if self.new else []) - set(self.old.tags if self.old else []))

    @property
    def tags_removed(self) -> list[str]:
        return sorted(set(self.old.tags if self.old else []) - set(self.new.tags if self.new else []))

    @property
    def text_changed(self) -> bool:
        return self.old is not None and self.new is not None and self.old.content != self.new.content


@dataclass
class SummaryChange:
    session_id: str
    old: str | None
    new: str | None


@dataclass
class ScheduleChange:
    schedule_id: str
    name: str
    kind: str  # added, removed, paused, resumed, changed
    fields: list[tuple[str, Any, Any]] = field(default_factory=list)  # (field, old, new)


@dataclass
class FileDiff:
    old_path: str
    new_path: str
    format: str
    sessions: list[SessionChange] = field(default_factory=list)
    summaries: list[SummaryChange] = field(default_factory=list)
    notes: list[NoteChange] = field(default_factory=list)
    schedules: list[ScheduleChange] = field(default_factory=list)
    note_noun: str = "note"
    #: many of them, as the format says it (``notes``, ``facts``, ``memories``)
    notes_word: str = "notes"

    def counts(self) -> dict[str, int]:
        """How many of each change, by ``"what kind"`` (only kinds that occur), in a fixed order."""
        out: dict[str, int] = {}
        for what, changes in (("sessions", self.sessions), (self.notes_word, self.notes),
                              ("schedules", self.schedules)):  # fmt: skip
            for c in changes:
                key = f"{what} {c.kind}"
                out[key] = out.get(key, 0) + 1
        appended = sum(c.appended for c in self.sessions if c.kind == "appended")
        if appended:
            out["events appended"] = appended
        if self.summaries:
            out["summaries changed"] = len(self.summaries)
        return out

    @property
    def empty(self) -> bool:
        return not (self.sessions or self.summaries or self.notes or self.schedules)


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` to ``new`` word by word: ``(op, text)`` with op ``=`` (kept), ``-`` (removed) or ``+`` (added);
    words and the whitespace between them are compared as separate tokens, so the pieces join back into the texts."""
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


def _sessions(old: list, new: list) -> list[SessionChange]:
    before = {s.session_id: s for s in old}
    after = {s.session_id: s for s in new}
    out = [SessionChange(sid, "removed", before[sid].event_count, None) for sid in sorted(before.keys() - after)]
    out += [SessionChange(sid, "added", None, after[sid].event_count) for sid in sorted(after.keys() - before)]
    for sid in sorted(before.keys() & after.keys()):
        a, b = before[sid], after[sid]
        if (a.event_count, a.last_sequence) == (b.event_count, b.last_sequence):
            continue
        grew = (b.event_count or 0) > (a.event_count or 0) and (b.last_sequence or 0) >= (a.last_sequence or 0)
        out.append(SessionChange(sid, "appended" if grew else "rewritten", a.event_count, b.event_count))
    return out


async def _all_notes(memory: Memory) -> dict[tuple[str, str], Note]:
    if not memory.capabilities.has_notes:
        return {}
    found = {}
    for group in await memory.note_users():
        for note in await memory.list_notes(group):
            found[(group, note.note_id)] = note
    return found


async def _stored_notes(memory: Memory) -> dict[tuple[str, str], Stored]:
    """:func:`_all_notes`, the store's as rows read in one query (:func:`.compare_rows.store_rows`)."""
    if isinstance(memory, MemoryStore) and memory.capabilities.has_notes:
        return await memory._db.read(store_rows)
    return dict(await _all_notes(memory))


def _notes(before: dict[tuple[str, str], Stored], after: dict[tuple[str, str], Stored]) -> list[NoteChange]:
    keys = differing(before, after)  # the others hold the same stored row on both sides
    out = [NoteChange(*key, "deleted", note_of(before[key]), None) for key in sorted(keys - after.keys())]
    out += [NoteChange(*key, "added", None, note_of(after[key])) for key in sorted(keys - before.keys())]
    for key in sorted(keys & before.keys() & after.keys()):
        a, b = note_of(before[key]), note_of(after[key])
        if a.content != b.content or sorted(a.tags) != sorted(b.tags):
            out.append(NoteChange(*key, "changed", a, b))
    return _versions(out)


def _versions(changes: list[NoteChange]) -> list[NoteChange]:
    """A deleted note and an added one of the same group with the same ``details["key"]`` as one change: where an
    agent keeps versions (aidaemon supersedes a fact with a new row of the same category and key), an edit is a
    new id for the same fact."""
    deleted = {(c.group, c.old.details.get("key")): c for c in changes if c.kind == "deleted"}
    replaced, out = set(), []
    for c in changes:
        key = c.new.details.get("key") if c.kind == "added" else None
        old = deleted.pop((c.group, key), None) if key is not None else None
        if old is not None:
            replaced.add(id(old))
            c = NoteChange(c.group, c.note_id, "changed", old.old, c.new)
        out.append(c)
    return [c for c in out if id(c) not in replaced]


def _schedule_name(s: Schedule) -> str:
    return s.name or s.goal[:60]


def _schedules(old: list[Schedule], new: list[Schedule]) -> list[ScheduleChange]:
    before = {s.schedule_id: s for s in old}
    after = {s.schedule_id: s for s in new}
    out = [ScheduleChange(k, _schedule_name(before[k]), "removed") for k in sorted(before.keys() - after)]
    out += [ScheduleChange(k, _schedule_name(after[k]), "added") for k in sorted(after.keys() - before)]
    for k in sorted(before.keys() & after.keys()):
        a, b = before[k], after[k]
        fields = [(f, getattr(a, f), getattr(b, f)) for f in SCHEDULE_FIELDS if getattr(a, f) != getattr(b, f)]
        if not fields:
            continue
        kind = "changed"
        if [f for f, *_ in fields] == ["status"]:
            kind = "paused" if b.status == "paused" else "resumed" if a.status == "paused" else "changed"
        out.append(ScheduleChange(k, _schedule_name(b), kind, fields))
    return out


async def _summaries(old: Memory, new: Memory, sessions: set[str]) -> list[SummaryChange]:
    out = []
    for sid in sorted(sessions):
        a, b = await old.read_summary_state(sid), await new.read_summary_state(sid)
        text_a, text_b = (a or {}).get("summary"), (b or {}).get("summary")
        if text_a != text_b:
            out.append(SummaryChange(sid, text_a, text_b))
    return out


def _conversations(memory: Memory, sessions: list) -> list:
    """The sessions but the store's notes sessions (``memory:USER``): a note's edit is reported as the note's."""
    if isinstance(memory, MemoryStore):
        return [s for s in sessions if not s.session_id.startswith(NOTES_PREFIX)]
    return sessions


async def diff_memories(old: Memory, new: Memory) -> FileDiff:
    """What changed from ``old`` to ``new`` (two open files of one format)."""
    if old.capabilities.format != new.capabilities.format:
        raise InvalidInputError(
            f"{old.path.name} is {article(old.capabilities.label)} {old.capabilities.label} and {new.path.name} is "
            f"{article(new.capabilities.label)} {new.capabilities.label}: "
            "compare a file with a backup of it, or another file of the same format"
        )
    caps = new.capabilities
    result = FileDiff(
        str(old.path), str(new.path), caps.format, note_noun=caps.note_noun, notes_word=caps.notes_label.lower()
    )
    if caps.has_sessions:
        before = _conversations(old, await old.list_sessions(True))
        after = _conversations(new, await new.list_sessions(True))
        result.sessions = _sessions(before, after)
        both = {s.session_id for s in before} & {s.session_id for s in after}
        result.summaries = await _summaries(old, new, both)
    result.notes = _notes(await _stored_notes(old), await _stored_notes(new))
    if caps.has_schedules:
        huge = 1 << 62
        result.schedules = _schedules(await old.schedules.search(limit=huge), await new.schedules.search(limit=huge))
    return result


async def diff_files(old: str | os.PathLike[str], new: str | os.PathLike[str], **open_options: Any) -> FileDiff:
    """:func:`diff_memories` of two files, each opened read-only (nothing is written to either)."""
    a = await open_memory(old, read_only=True, create=False, **open_options)
    try:
        b = await open_memory(new, read_only=True, create=False, **open_options)
        try:
            return await diff_memories(a, b)
        finally:
            await b.aclose()
    finally:
        await a.aclose()
