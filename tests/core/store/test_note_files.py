"""Notes as files: the exact JSON export (and what importing it keeps, fills in and refuses, naming the note) and
the exact Markdown export."""

from __future__ import annotations

import json

import pytest

from oxmem_gui.core.errors import InvalidInputError
from oxmem_gui.core.store.note_files import notes_json, notes_markdown, parse_notes_json
from oxmem_gui.core.store.notes import Note

CREATED, UPDATED = "2026-03-01T09:00:00+00:00", "2026-03-02T10:30:00+00:00"
SEATS = Note("note-1", "alice", "  Prefers aisle seats\nexcept on night trains  ", ["travel"], CREATED, UPDATED, 4)
CAFE = Note("note-2", "alice", "Caf\u00e9 au lait, no sugar", [], CREATED, CREATED, 9, {"scope": "x"})


def test_the_json_export_is_an_indented_list_of_six_fields_with_text_unescaped():
    assert notes_json([CAFE]) == (
        "[\n"
        "  {\n"
        '    "note_id": "note-2",\n'
        '    "user": "alice",\n'
        '    "content": "Caf\u00e9 au lait, no sugar",\n'
        '    "tags": [],\n'
        f'    "created_at": "{CREATED}",\n'
        f'    "updated_at": "{CREATED}"\n'
        "  }\n"
        "]"
    )
    assert notes_json([]) == "[]"


def test_an_import_normalizes_tags_and_fills_in_what_is_missing():
    text = json.dumps(
        [
            {"note_id": "n1", "user": "bob", "content": "Likes tea", "tags": [" Drinks ", "DRINKS", "morning"]},
            {"note_id": "n2", "user": "bob", "content": "Hates queues", "created_at": CREATED, "extra": 1},
        ]
    )
    assert parse_notes_json(text) == [
        Note("n1", "bob", "Likes tea", ["drinks", "morning"], None, None, 0),
        Note("n2", "bob", "Hates queues", [], CREATED, None, 0),
    ]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([{"note_id": "n1", "user": "u", "content": "ok"}, {"note_id": "n2", "content": "c"}], "note 2 has no user"),
        ([{"note_id": "   ", "user": "u", "content": "c"}], "note 1 has no note_id"),
        ([{"note_id": "n1", "user": "u", "content": 42}], "note 1 has no content"),
        ([{"note_id": "n1", "user": "u", "content": "c"}, "text"], "note 2 is not an object"),
        ([{"note_id": "n1", "user": "u", "content": "c", "tags": {"a": 1}}], "note 1: tags must be a list"),
    ],
)
def test_the_first_bad_note_is_named_by_its_position(entries, message):
    with pytest.raises(InvalidInputError) as caught:
        parse_notes_json(json.dumps(entries))
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[\n  {"note_id": "n1"},\n  {"note_id": }\n]', "the file is not JSON: Expecting value (line 3)"),
        ("[" + "1" * 5000 + "]", "the file holds JSON too large to read (a huge number, or nesting too deep)"),
        ("[" * 100_000 + "]" * 100_000, "the file holds JSON too large to read (a huge number, or nesting too deep)"),
        ('{"notes": []}', "the file must hold a JSON list of notes"),
    ],
)
def test_a_file_that_is_not_a_readable_json_list_is_one_line(text, message):
    with pytest.raises(InvalidInputError) as caught:
        parse_notes_json(text)
    assert str(caught.value) == message


def test_the_markdown_export_titles_each_note_by_its_first_line_and_shows_its_text_trimmed():
    assert notes_markdown("alice", [SEATS, CAFE]) == (
        "# Notes of alice\n"
        "\n"
        "## Prefers aisle seats\n"
        "\n"
        "- id: `note-1`\n"
        "- tags: travel\n"
        f"- created: {CREATED}\n"
        f"- updated: {UPDATED}\n"
        "\n"
        "Prefers aisle seats\n"
        "except on night trains\n"
        "\n"
        "## Caf\u00e9 au lait, no sugar\n"
        "\n"
        "- id: `note-2`\n"
        "- tags: \u2014\n"
        f"- created: {CREATED}\n"
        f"- updated: {CREATED}\n"
        "\n"
        "Caf\u00e9 au lait, no sugar\n"
    )


def test_a_long_first_line_is_cut_to_80_characters_in_the_title_and_no_notes_is_just_the_heading():
    long = Note("n", "u", "w" * 100, [], None, None, 1)
    assert notes_markdown("u", [long]).split("\n")[2] == "## " + "w" * 80
    assert notes_markdown("u", []) == "# Notes of u\n"
