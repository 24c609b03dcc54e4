"""How the benches print a table: each column as wide as its widest cell, two spaces apart."""

from __future__ import annotations

from collections.abc import Sequence


def table(headers: Sequence[object], rows: Sequence[Sequence[object]], *, right: bool = False,
          rule: bool = False) -> str:  # fmt: skip
    """The lines of the table, header first; ``right``: cells aligned right; ``rule``: a line of dashes under the
    header."""
    cells = [[str(c) for c in row] for row in (headers, *rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(c.rjust(w) if right else c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
