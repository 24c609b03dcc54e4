"""File ▸ Compare with Backup…: what changed from a backup (or another file of the format) to the open file —
the counts first, then every change grouped by kind, and the selected change in full below — what changed in that
row, never the row again: a note's or summary's text as a word diff (removed words struck through in red, added ones
in green) and both texts whole, its tags added and removed; a session's events before and now and what the change
means; a schedule's fields before and now."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.api import FileDiff, NoteChange, ScheduleChange, SessionChange, SummaryChange, word_diff
from .widgets import tab_leaves

_STYLE = {"-": "color:#b3261e;text-decoration:line-through;", "+": "color:#1e7b34;font-weight:600;"}


def words_html(old: str, new: str) -> str:
    """The word diff of two texts as HTML."""
    out = []
    for op, text in word_diff(old, new):
        shown = html.escape(text).replace("\n", "<br>")
        out.append(f'<span style="{_STYLE[op]}">{shown}</span>' if op in _STYLE else shown)
    return "".join(out)


def _line(change: object) -> str:
    if isinstance(change, SessionChange):
        return f"{change.kind}: {change.session_id} — {change.events}"
    if isinstance(change, SummaryChange):
        return f"changed: {change.session_id}"
    if isinstance(change, NoteChange):
        note = change.new or change.old
        tags = " ".join([*(f"+#{t}" for t in change.tags_added), *(f"−#{t}" for t in change.tags_removed)])
        tags = tags if change.kind == "changed" else ""  # an added or deleted note's tags are in its detail
        text = " ".join(note.content.split())[:80]
        return f"{change.kind}: {change.group} · {text}" + (f"  [{tags}]" if tags else "")
    assert isinstance(change, ScheduleChange)
    return f"{change.kind}: {change.name}" + (f" ({', '.join(f for f, *_ in change.fields)})" if change.fields else "")


def note_tags(change: NoteChange) -> list[str]:
    return (change.new or change.old).tags


#: what each kind of change to a session means, from the backup (before) to the file (now)
SESSION_KINDS = {
    "added": "A session the backup does not have.",
    "removed": "A session the backup has that the file no longer does.",
    "appended": "Events added after the backup's last one; none of the backup's events replaced.",
    "rewritten": "Events replaced or removed: as many events as the backup or fewer, and another last sequence.",
}
#: what an added or removed schedule means (a changed one lists its fields)
SCHEDULE_KINDS = {
    "added": "A schedule the backup does not have.",
    "removed": "A schedule the backup has that the file no longer does.",
}


def _fields(rows: list[tuple[str, object, object]]) -> str:
    """Fields before (the backup) and now (the file), as an HTML table (empty: no rows); None is shown as —."""
    cells = "".join(
        f"<tr><td>{html.escape(f)}</td><td style='{_STYLE['-']}'>{html.escape('—' if a is None else str(a))}</td>"
        f"<td style='{_STYLE['+']}'>{html.escape('—' if b is None else str(b))}</td></tr>"
        for f, a, b in rows
    )
    return f"<table cellpadding=4><tr><th>field</th><th>before</th><th>now</th></tr>{cells}</table>" if rows else ""


def _before_now(old: str | None, new: str | None) -> str:
    """Both texts whole, side by side (the word diff above marks what changed between them)."""
    def cell(text: str | None) -> str:
        return html.escape(text).replace("\n", "<br>") if text is not None else "<i>none</i>"

    return (
        "<table width='100%' cellpadding=4><tr><th align=left width='50%'>Before (the backup)</th>"
        "<th align=left width='50%'>Now (this file)</th></tr>"
        f"<tr><td valign=top>{cell(old)}</td><td valign=top>{cell(new)}</td></tr></table>"
    )


def _detail(change: object) -> str:
    """The selected change in full, as HTML."""
    if isinstance(change, NoteChange):
        parts = [f"<b>{html.escape(change.kind.capitalize())}</b> · {html.escape(change.group)} · "
                 f"<code>{html.escape(change.note_id)}</code>"]  # fmt: skip
        if change.kind != "changed":
            parts.append("Tags: " + (html.escape(", ".join(note_tags(change))) or "none"))
        elif change.tags_added or change.tags_removed:
            parts.append(
                "Tags: "
                + " ".join(f'<span style="{_STYLE["+"]}">+{html.escape(t)}</span>' for t in change.tags_added)
                + " "
                + " ".join(f'<span style="{_STYLE["-"]}">{html.escape(t)}</span>' for t in change.tags_removed)
            )
        old, new = change.old.content if change.old else "", change.new.content if change.new else ""
        same = change.kind == "changed" and not change.text_changed
        parts.append(("<i>Text unchanged:</i> " if same else "") + words_html(old, new))
        both = _before_now(old, new) if change.text_changed else ""
        return "<p>" + "</p><p>".join(parts) + "</p>" + both
    if isinstance(change, SummaryChange):
        text = words_html(change.old or "", change.new or "")
        return (f"<p><b>Summary of {html.escape(change.session_id)}</b></p><p>{text}</p>"
                + _before_now(change.old, change.new))  # fmt: skip
    if isinstance(change, ScheduleChange):
        head = (
            f"<p><b>{html.escape(change.kind.capitalize())}</b>: {html.escape(change.name)} · {change.schedule_id}</p>"
        )
        what = SCHEDULE_KINDS.get(change.kind)
        return head + (f"<p>{html.escape(what)}</p>" if what and not change.fields else "") + _fields(change.fields)
    if isinstance(change, SessionChange):
        rows: list[tuple[str, object, object]] = [("events", change.old_events, change.new_events)]
        if change.kind == "appended":
            rows.append(("events appended", None, change.appended))
        return (
            f"<p><b>{html.escape(change.kind.capitalize())}</b> · session <code>{html.escape(change.session_id)}"
            f"</code></p><p>{html.escape(SESSION_KINDS.get(change.kind, ''))}</p>" + _fields(rows)
        )
    return f"<p>{html.escape(_line(change))}</p>"


class CompareDialog(QDialog):
    """The changes of :class:`~oxmem_gui.core.compare.FileDiff`; keyboard: arrows move through them."""

    def __init__(self, diff: FileDiff, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare with Backup")
        counts = diff.counts()
        summary = ", ".join(f"{what} {n:,}" for what, n in counts.items()) if counts else "No changes."
        self.heading = QLabel(f"From {diff.old_path}\nto {diff.new_path}\n\n{summary}")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = tab_leaves(QTreeWidget())
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.detail = QTextBrowser()
        self.detail.setPlaceholderText("Select a change to see it in full")
        groups = (
            ("Sessions", diff.sessions),
            ("Summaries", diff.summaries),
            (diff.notes_word.capitalize(), diff.notes),
            ("Schedules", diff.schedules),
        )
        for title, changes in groups:
            if not changes:
                continue
            top = QTreeWidgetItem([f"{title} ({len(changes):,})"])
            self.tree.addTopLevelItem(top)
            for change in changes:
                item = QTreeWidgetItem([_line(change)])
                item.setData(0, Qt.ItemDataRole.UserRole, change)
                item.setToolTip(0, _line(change))
                top.addChild(item)
            top.setExpanded(len(changes) <= 200)
        self.tree.currentItemChanged.connect(self._show)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.detail)
        split.setSizes([260, 160])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(820, 560)
        first = self.tree.topLevelItem(0)
        if first is not None and first.childCount():
            self.tree.setCurrentItem(first.child(0))
        self.tree.setFocus()

    def _show(self, item: QTreeWidgetItem | None, _previous: object = None) -> None:
        change = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        self.detail.setHtml(_detail(change) if change is not None else "")
