"""Tag normalization shared by notes and tag filters (contract §7), and the SQL of a tag filter."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import InvalidInputError
from .inputs import check_text, shown

#: how a tag filter combines its tags: a row with any of them, or with all
TAG_MODES = ("any", "all")
MAX_TAG_CHARS = 64
MAX_TAGS = 16
#: what separates tags wherever they are typed or listed as text (the tag entry, ``--tag a,b`` lists, exports);
#: a tag that holds it cannot be written
TAG_SEPARATOR = ","


def normalize_tags(tags: Iterable[str] | None, keep_case: bool = False) -> list[str]:
    """Strip, drop empties, lowercase (unless ``keep_case``: an agent's tags compared as written), cut to 64
    characters, drop duplicates keeping first order, keep 16."""
    if tags is None:
        return []
    if isinstance(tags, str):
        raise InvalidInputError("tags must be a list of strings, not one string")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInputError(f"tag {shown(tag)} is not a string")
        check_text(tag, "tag")
        t = (tag.strip() if keep_case else tag.strip().lower())[:MAX_TAG_CHARS]
        if t and t not in out:
            out.append(t)
    return out[:MAX_TAGS]


def tags_to_save(tags: Iterable[str] | None) -> list[str]:
    """:func:`normalize_tags` for tags about to be written: a tag holding a comma is an
    :class:`InvalidInputError` (one line naming it), raised before anything is written."""
    if tags is None or isinstance(tags, str):
        return normalize_tags(tags)
    tags = list(tags)
    for tag in tags:
        if isinstance(tag, str) and TAG_SEPARATOR in tag:
            raise InvalidInputError(
                f"tag {shown(tag)} contains a comma; commas separate tags, so give each tag on its own"
            )
    return normalize_tags(tags)


def tag_filter_sql(tags: Sequence[str], mode: str, alias: str = "c") -> tuple[str, list[str]]:
    """A SQL condition on ``{alias}.metadata_json`` keeping chunks with any / all of ``tags``."""
    if not tags:
        return "1", []
    marks = ", ".join("?" * len(tags))
    each = f"json_each({alias}.metadata_json, '$.tags')"
    if mode == "any":
        return f"EXISTS (SELECT 1 FROM {each} WHERE value IN ({marks}))", list(tags)
    if mode == "all":
        return f"(SELECT count(DISTINCT value) FROM {each} WHERE value IN ({marks})) = {len(tags)}", list(tags)
    raise InvalidInputError(f"tag mode must be one of {', '.join(TAG_MODES)}, got {mode!r}")
