"""In words: the selected hit (where it is, its whole text with the query's terms marked, how its score was made),
and how two rankings of a query differ."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QWidget

from ...core.api import Hit, QueryResult, describe_settings, explain, moves
from .results import highlight


def where(hit: Hit, scope: str | None, group_label: str) -> str:
    """Where a hit comes from: its session and sequences, or its notes group, and its chunk."""
    if scope == "notes":
        return f"{group_label} {hit.session_id} · chunk {hit.chunk_id}"
    found = f"Session {hit.session_id}"
    start, end = hit.sequence_start, hit.sequence_end
    if start is not None:
        found += f" · sequence {start}" if end in (None, start) else f" · sequences {start}–{end}"
    return found + f" · chunk {hit.chunk_id}"


def compare_text(a: QueryResult, b: QueryResult, pinned: bool) -> str:
    """Results B against A (``pinned`` results, or else the query's default-settings ranking), a line per hit."""
    lines = [f"A: {describe_settings(a)}", f"B: {describe_settings(b)}", ""]
    if not pinned:
        lines[0] += " (the default settings)"
    if (a.query, a.session_id) != (b.query, b.session_id):
        lines.append(f"(A searched {a.query!r} in {a.session_id}; B searched {b.query!r} in {b.session_id})")
    texts = {h.chunk_id: h.text for h in [*a.hits, *b.hits]}
    for m in moves(a, b):
        ranks = f"{m.before or '—'} → {m.after or '—'}"
        lines.append(f"{m.label:>8}  {ranks:>9}  {' '.join(texts[m.chunk_id].split())[:90]}")
    return "\n".join(lines)


class ExplanationView(QTextBrowser):
    """The selected hit, in full."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip("The selected hit: where it is, its whole text, and how its score was made")

    def show_text(self, text: str) -> None:
        """Plain lines (a *Why not…?* story)."""
        self.setHtml(f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>")

    def show_hit(self, result: QueryResult, hit: Hit, place: str) -> None:
        first, _, rest = explain(result, hit).partition("\n")
        self.setHtml(
            f"<p style='margin:0'><b>{html.escape(first)}</b></p>"
            f"<p style='margin-top:4px'>{html.escape(place)}</p>"
            f"<p style='white-space:pre-wrap; margin-top:4px'>{highlight(hit.text, result)}</p>"
            f"<pre style='white-space:pre-wrap'>{html.escape(rest.strip(chr(10)))}</pre>"
        )
