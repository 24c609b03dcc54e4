"""Notes as files: JSON (export and import, ids and dates kept) and Markdown (export, for reading)."""

from __future__ import annotations

import json

from ..errors import InvalidInputError
from .notes import Note
from .tags import tags_to_save


def notes_json(notes: list[Note]) -> str:
    return json.dumps(
        [
            {
                "note_id": n.note_id,
                "user": n.user,
                "content": n.content,
                "tags": n.tags,
                "created_at": n.created_at,
                "updated_at": n.updated_at,
            }
            for n in notes
        ],
        indent=2,
        ensure_ascii=False,
    )


def parse_notes_json(text: str) -> list[Note]:
    """Notes from :func:`notes_json`'s format; the first bad entry is an error naming it."""
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"the file is not JSON: {exc.msg} (line {exc.lineno})") from exc
    except (ValueError, RecursionError):  # a number of more than 4,300 digits, nesting beyond the stack
        raise InvalidInputError("the file holds JSON too large to read (a huge number, or nesting too deep)") from None
    if not isinstance(items, list):
        raise InvalidInputError("the file must hold a JSON list of notes")
    notes = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise InvalidInputError(f"note {i} is not an object")
        for key in ("note_id", "user", "content"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise InvalidInputError(f"note {i} has no {key}")
        tags = item.get("tags", [])
        if not isinstance(tags, list):
            raise InvalidInputError(f"note {i}: tags must be a list")
        notes.append(
            Note(
                item["note_id"],
                item["user"],
                item["content"],
                tags_to_save(tags),
                item.get("created_at"),
                item.get("updated_at"),
                0,
            )
        )
    return notes


def notes_markdown(user: str, notes: list[Note]) -> str:
    lines = [f"# Notes of {user}", ""]
    for n in notes:
        title = (n.content.strip().splitlines() or [""])[0][:80]
        lines += [
            f"## {title}",
            "",
            f"- id: `{n.note_id}`",
            f"- tags: {', '.join(n.tags) or '—'}",
            f"- created: {n.created_at}",
            f"- updated: {n.updated_at}",
            "",
            n.content.strip(),
            "",
        ]
    return "\n".join(lines)
