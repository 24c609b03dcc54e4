"""The notes list's table model alone (ui/notes/model.py): its columns and roles, the tooltips that hold what a cell
cuts, ages against a fixed clock, the fading of old notes, another format's details, and paging."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from oxmem_gui.core.api import Note
from oxmem_gui.ui.notes.model import (
    NOTE_ROLE,
    TOOLTIP_CHARS,
    NotesModel,
    age,
    detail_lines,
    fading,
    readable,
)
from oxmem_gui.ui.widgets.tags import TAGS_ROLE

NOW = datetime(2037, 11, 23, 12, 0, tzinfo=timezone.utc)
TIP = Qt.ItemDataRole.ToolTipRole


def note(note_id: str, content: str, tags=(), created=None, updated=None, sequence: int = 1) -> Note:
    return Note(note_id, "alice", content, list(tags), created, updated, sequence)


@pytest.fixture
def model(qtbot):
    model = NotesModel()
    model.set_notes(
        [
            note("n1", "\n  Aisle seat, always\nsecond line  ", ["travel", "seats"], "2037-11-01T08:00:00Z", None),
            note("n2", "Tomatoes need water", [], "2037-10-02T09:30:00+00:00", "yesterday"),
        ]
    )
    return model


def test_columns_and_the_cells_short_text(model):
    assert (model.rowCount(), model.columnCount()) == (2, 5)
    titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(5)]
    assert titles == ["Note", "Tags", "Created", "Updated", "Age"]
    first = [model.index(0, c).data() for c in range(5)]
    assert first == ["Aisle seat, always", "travel, seats", "2037-11-01", "", "—"]  # no update time: no age
    second = [model.index(1, c).data() for c in range(5)]
    assert second == ["Tomatoes need water", "", "2037-10-02", "yesterday", "?"]  # an unreadable time: "?"
    assert model.index(2, 0).data() is None


def test_the_tags_column_gives_its_chips_and_every_cell_its_note(model):
    assert model.index(0, 1).data(TAGS_ROLE) == ["travel", "seats"]
    assert model.index(0, 0).data(TAGS_ROLE) is None
    assert [model.index(1, c).data(NOTE_ROLE).note_id for c in range(5)] == ["n2"] * 5


def test_tooltips_cut_a_very_long_note_and_say_when_there_are_no_tags(model):
    long = "x" * (TOOLTIP_CHARS + 1234)
    model.set_notes([note("n3", long, [], "2037-02-27T18:03:30+02:00", "2037-02-28T00:00:00Z")])
    assert model.index(0, 0).data(TIP) == "x" * TOOLTIP_CHARS + "… (1,234 more characters)"
    assert model.index(0, 1).data(TIP) == "no tags"
    dates = "created 2037-02-27 16:03:30 UTC\nupdated 2037-02-28 00:00:00 UTC"
    assert model.index(0, 2).data(TIP) == model.index(0, 4).data(TIP) == dates


@pytest.mark.parametrize(
    ("ago", "shown"),
    [
        (timedelta(seconds=59), "0 min"),
        (timedelta(minutes=59, seconds=59), "59 min"),
        (timedelta(hours=1), "1 h"),
        (timedelta(hours=23, minutes=59), "23 h"),
        (timedelta(days=59), "59 d"),
        (timedelta(days=60), "1 mo"),
        (timedelta(days=729), "23 mo"),
        (timedelta(days=730), "1 y"),
    ],
)
def test_an_age_is_said_in_its_largest_unit_that_fits(ago, shown):
    assert age((NOW - ago).isoformat(), NOW) == (shown, ago.total_seconds() / 86400)


def test_ages_read_offsets_and_naive_times_as_utc_and_never_go_negative():
    assert age("2037-11-23T14:00:00+02:00", NOW) == ("0 min", 0.0)  # 12:00 UTC
    assert age("2037-11-23T09:00:00", NOW)[0] == "3 h"  # no offset: UTC
    assert age("2037-11-24T12:00:00Z", NOW) == ("ahead", 0.0)  # in the future: a clock is off
    assert age("2037-11-23T12:00:59Z", NOW) == ("0 min", 0.0)  # (a minute's drift is no news)
    assert readable("2037-02-27T18:03:30.5+02:00") == "2037-02-27 16:03:30 UTC"
    assert (readable("soon"), readable(None)) == ("soon", "—")


def test_older_notes_fade_in_steps():
    alphas = [round(fading(days, QColor("black")).alphaF(), 2) for days in (0, 6.9, 7, 29.9, 30, 364, 365)]
    assert alphas == [1.0, 1.0, 0.85, 0.85, 0.72, 0.72, 0.6]


def test_another_formats_details_are_a_line_each_and_earlier_versions_listed():
    details = {
        "fact_key": "seat",
        "expires_at": None,
        "history": [{"value": "window", "superseded_at": "2037-01-01T00:00:00Z"}, "middle"],
    }
    assert detail_lines(details) == [
        "fact key: seat",
        "expires at: —",
        "2 earlier versions:",
        "  • window  (superseded 2037-01-01T00:00:00Z)",
        "  • middle",
    ]
    assert detail_lines({"history": []}) == []


def test_the_next_page_is_asked_once_and_notes_already_listed_are_not_repeated(model):
    asked = []
    model.fetcher = lambda: asked.append(len(model.notes))
    assert not model.canFetchMore()  # the first page was the last
    model.set_notes(model.notes, exhausted=False)
    model.fetchMore()
    model.fetchMore()  # while the page loads
    assert asked == [2] and model.loading and not model.canFetchMore()
    model.append_notes([note("n2", "Tomatoes need water"), note("n4", "Buy stamps", sequence=4)], exhausted=True)
    assert [n.note_id for n in model.notes] == ["n1", "n2", "n4"]
    assert (model.loading, model.canFetchMore()) == (False, False)


def test_the_age_column_and_the_fading_read_the_models_clock(qtbot):
    clock = [NOW]
    model = NotesModel(now=lambda: clock[0])
    model.set_notes([note("n1", "Aisle seat", updated="2037-11-20T12:00:00Z")])
    assert model.index(0, 4).data() == "3 d"
    young = model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole).color()
    clock[0] = NOW + timedelta(days=400)
    assert model.index(0, 4).data() == "13 mo"
    assert model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole).color() != young  # older: faded


def test_a_formats_details_read_as_words():
    from oxmem_gui.ui.notes.model import detail_lines

    details = {
        "expired": False,
        "ttl_minutes": None,
        "vectors": [
            {"field": "text", "dimensions": 64, "stale": True},
            {"field": "tags", "updated_at": "2037-01-02T03:04:05+00:00"},
        ],
        "problems": [],
    }
    assert detail_lines(details) == [
        "expired: no",
        "ttl minutes: —",
        "vectors: field text, dimensions 64, stale yes; field tags, updated at 2037-01-02 03:04:05 UTC",
        "problems: —",
    ]
