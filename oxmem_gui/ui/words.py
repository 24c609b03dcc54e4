"""Words the panels say, without Qt."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 note``, ``2 notes``, ``1,200 entries`` (``many``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
