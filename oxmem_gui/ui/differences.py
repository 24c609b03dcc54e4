"""Where two texts differ, word by word, as character ranges in each: what the conflict dialog highlights in
theirs and in mine."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

#: a word, or a run of the spaces, or one other character: the units compared
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKENS.finditer(text)]


def differences(theirs: str, mine: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The ``(start, end)`` character ranges of ``theirs`` and of ``mine`` that the other lacks or holds
    otherwise, in order; two equal texts give none."""
    a, b = _tokens(theirs), _tokens(mine)
    matcher = SequenceMatcher(None, [t for t, _, _ in a], [t for t, _, _ in b], autojunk=False)
    ours: list[tuple[int, int]] = []
    yours: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            ours.append((a[i1][1], a[i2 - 1][2]))
        if j2 > j1:
            yours.append((b[j1][1], b[j2 - 1][2]))
    return ours, yours
