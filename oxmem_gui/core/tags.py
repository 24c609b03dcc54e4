"""Tag normalization shared by notes and tag filters (SPEC §7)."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidInputError
from .inputs import check_text, shown

MAX_TAG_CHARS = 64
MAX_TAGS = 16


def normalize_tags(tags: Iterable[str] | None) -> list[str]:
    """Strip, drop empties, lowercase, cut to 64 characters, drop duplicates keeping first order, keep 16."""
    if tags is None:
        return []
    if isinstance(tags, str):
        raise InvalidInputError("tags must be a list of strings, not one string")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInputError(f"tag {shown(tag)} is not a string")
        check_text(tag, "tag")
        t = tag.strip().lower()[:MAX_TAG_CHARS]
        if t and t not in out:
            out.append(t)
    return out[:MAX_TAGS]
