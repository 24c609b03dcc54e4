"""The base of the table models (ui/rows_model.py): ``tip`` breaking and cutting a tooltip's text, and a
``RowsModel``'s rows, headers, renamed columns and change marks keyed by the subclass's key."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from oxmem_gui.ui.rows_model import TIP_MAX, RowsModel, tip


class Pairs(RowsModel):
    COLUMNS = ("Key", "Value")

    def key(self, row):
        return row[0]


@pytest.fixture
def model(qtbot):
    model = Pairs()
    model.set_rows([("a", 1), ("b", 2)])
    return model


def test_tip_breaks_at_the_last_space_that_fits_and_cuts_a_word_too_long():
    assert tip("aaa bbb ccc", line=7) == "aaa bbb\nccc"
    assert tip("abcdefghijkl mn", line=5) == "abcde\nfghij\nkl mn"  # no space to break at: cut at the line's width
    assert tip("one two\n\nthree four", line=5) == "one\ntwo\n\nthree\nfour"  # its own line breaks kept


def test_tip_keeps_every_character_up_to_the_limit_then_says_the_whole_length():
    assert tip("abc def ghi", limit=5) == "abc d…\n(11 characters in all)"
    whole = "x" * TIP_MAX
    assert tip(whole).replace("\n", "") == whole and tip(whole).count("\n") == TIP_MAX // 100 - 1
    assert tip(whole + "y").endswith("…\n(4,001 characters in all)")


def test_set_rows_resets_to_a_copy_and_out_of_range_is_none(model):
    resets, rows = [], [("c", 3)]
    model.modelReset.connect(lambda: resets.append(model.rowCount()))
    model.set_rows(rows)
    rows.append(("d", 4))
    assert resets == [1]
    assert (model.rowCount(), model.columnCount()) == (1, 2)
    assert (model.row(0), model.row(1), model.row(-1)) == (("c", 3), None, None)
    assert model.rowCount(model.index(0, 0)) == model.columnCount(model.index(0, 0)) == 0


def test_headers_are_the_column_titles_horizontally_only(model):
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in (-1, 0, 1, 2)] == [None, "Key", "Value", None]
    assert model.headerData(0, Qt.Orientation.Vertical) is None
    assert model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole) is None


def test_renaming_a_column_changes_that_model_alone_and_repaints_its_header(model):
    renamed = []
    model.headerDataChanged.connect(lambda orientation, first, last: renamed.append((orientation, first, last)))
    model.set_heading(0, "Fact")
    assert renamed == [(Qt.Orientation.Horizontal, 0, 0)]
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in (0, 1)] == ["Fact", "Value"]
    assert Pairs.COLUMNS == Pairs().COLUMNS == ("Key", "Value")


def test_change_marks_follow_the_models_key(model):
    told = []
    model.unseen_changed.connect(lambda: told.append(len(model.marks.unseen)))
    model.marks.observe(model.rows, live=False)  # the first load: nothing marked
    model.marks.observe([("a", 1), ("b", 20), ("c", 3)], live=True)  # b changed and c is new
    assert told == [2] and model.marks.unseen == {"b", "c"}
    assert model.marks.is_unseen(("b", 99)) and not model.marks.is_unseen(("a", 1))
