"""The grid of SQLite values (ui/cells_model.py): headers, what a cell shows of text, numbers, BLOBs and NULL, when
its tooltip holds more, the whole value for the pane below, and rows added a page at a time."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt

from oxmem_gui.ui.cells_model import CELL_WIDTH, CellsModel

TIP = Qt.ItemDataRole.ToolTipRole
BLOB = bytes([0x00, 0x01, 0xFF]) * 5


@pytest.fixture
def model(qtbot):
    model = CellsModel()
    model.reset(["id", "text", "blob", "value"], [[1, "short", BLOB, None], [2, "line one\nline two", b"ab", 3.5]])
    return model


def test_headers_name_the_columns_and_number_the_rows_from_one(model):
    assert (model.rowCount(), model.columnCount()) == (2, 4)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(5)] == ["id", "text", "blob", "value", None]
    assert [model.headerData(r, Qt.Orientation.Vertical) for r in range(2)] == [1, 2]
    assert model.headerData(0, Qt.Orientation.Horizontal, TIP) is None
    assert model.rowCount(model.index(0, 0)) == model.columnCount(model.index(0, 0)) == 0  # a table: no children


def test_cells_show_one_line_nulls_in_grey_and_blobs_by_size_and_first_bytes(model):
    assert [model.index(0, c).data() for c in range(4)] == [
        "1",
        "short",
        "BLOB 15 bytes: 00 01 ff 00 01 ff 00 01 …",
        "NULL",
    ]
    assert [model.index(1, c).data() for c in range(4)] == ["2", "line one ⏎ line two", "BLOB 2 bytes: 61 62", "3.5"]
    assert model.index(0, 3).data(Qt.ItemDataRole.ForegroundRole) == Qt.GlobalColor.gray
    assert model.index(0, 1).data(Qt.ItemDataRole.ForegroundRole) is None
    model.reset(["text"], [["z" * 200]])
    assert model.index(0, 0).data() == "z" * (CELL_WIDTH - 1) + "…"


def test_a_tooltip_only_when_the_cell_may_show_less_than_the_value(model):
    assert [model.index(0, c).data(TIP) for c in (0, 1, 3)] == [None, None, None]  # shown whole, short, NULL
    assert model.index(1, 1).data(TIP) == "line one\nline two"  # its line break shown as ⏎
    assert model.index(0, 2).data(TIP) == "BLOB 15 bytes: 00 01 ff 00 01 ff 00 01 …"
    model.reset(["text"], [["x" * 19], ["x" * 20], [" ".join(["word"] * 40)]])
    assert model.index(0, 0).data(TIP) is None
    assert model.index(1, 0).data(TIP) == "x" * 20  # long enough that its column may cut it
    assert model.index(2, 0).data(TIP) == " ".join(["word"] * 20) + "\n" + " ".join(["word"] * 20)  # lines ≤ 100


def test_the_whole_value_is_the_text_null_or_the_blobs_bytes_in_hex(model):
    assert model.full_value(model.index(1, 1)) == "line one\nline two"
    assert model.full_value(model.index(0, 3)) == "NULL"
    assert model.full_value(model.index(1, 3)) == "3.5"
    assert model.full_value(model.index(0, 2)) == "BLOB, 15 bytes:\n" + " ".join(["00 01 ff"] * 5)
    assert model.full_value(QModelIndex()) == ""
    model.reset(["blob"], [[bytes(range(256)) * 17]])
    whole = model.full_value(model.index(0, 0))
    assert whole.startswith("BLOB, 4,352 bytes:\n00 01 02") and whole.endswith("fd fe ff …")
    assert len(whole.split("\n")[1].split()) == 4096 + 1  # the first 4,096 bytes, then "…"


def test_a_next_page_is_inserted_after_the_rows_loaded_and_a_reset_replaces_all(model):
    inserted = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    model.append([[3, "three", None, 0], [4, "four", None, 1]])
    model.append([])
    assert inserted == [(2, 3)] and model.rowCount() == 4
    assert [model.headerData(r, Qt.Orientation.Vertical) for r in (2, 3)] == [3, 4]
    assert model.index(3, 1).data() == "four"
    resets = []
    model.modelReset.connect(lambda: resets.append(model.columnCount()))
    model.reset(["only"], [])
    assert resets == [1] and model.rowCount() == 0
