"""The JSON view: values pretty-printed with sorted keys and their own characters, each token coloured by its
kind, and the keyboard selecting in it, never typing into it, and leaving it with Tab."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget

from oxmem_gui.ui.widgets.json_view import JsonView


def coloured(view: JsonView) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each line of the view with its highlighted pieces, as ``(kind, text)``."""
    kinds = {fmt.foreground().color().name(): kind for kind, fmt in view.highlighter.formats.items()}
    lines = []
    block = view.document().firstBlock()
    while block.isValid():
        text = block.text()
        pieces = [
            (kinds[r.format.foreground().color().name()], text[r.start : r.start + r.length])
            for r in block.layout().formats()
        ]
        lines.append((text, pieces))
        block = block.next()
    return lines


def make_view(qtbot) -> JsonView:
    view = JsonView()
    qtbot.addWidget(view)
    return view


def test_keys_are_sorted_and_text_keeps_its_own_characters(qtbot):
    view = make_view(qtbot)
    view.show_value({"zeta": "café ☕", "alpha": {"nested": [], "empty": {}}})
    assert view.toPlainText() == '{\n  "alpha": {\n    "empty": {},\n    "nested": []\n  },\n  "zeta": "café ☕"\n}'


def test_each_token_is_coloured_by_its_kind(qtbot):
    view = make_view(qtbot)
    view.show_value({"n": -1.5e3, "s": "abc 123", "t": True, "z": None, 'k"q': "x"})
    assert coloured(view) == [
        ("{", []),
        ('  "k\\"q": "x",', [("key", '"k\\"q"'), ("string", '"x"')]),
        ('  "n": -1500.0,', [("key", '"n"'), ("number", "-1500.0")]),
        ('  "s": "abc 123",', [("key", '"s"'), ("string", '"abc 123"')]),  # the digits in a string stay string
        ('  "t": true,', [("key", '"t"'), ("literal", "true")]),
        ('  "z": null', [("key", '"z"'), ("literal", "null")]),
        ("}", []),
    ]


def test_keys_are_bold_and_colours_differ_by_kind(qtbot):
    view = make_view(qtbot)
    formats = view.highlighter.formats
    assert set(formats) == {"key", "string", "number", "literal"}
    assert len({fmt.foreground().color().name() for fmt in formats.values()}) == 4
    assert formats["key"].fontWeight() > formats["string"].fontWeight()


def test_a_list_of_values_colours_each_item(qtbot):
    view = make_view(qtbot)
    view.show_value([1, "two", False, {"k": 0}])
    assert [pieces for _, pieces in coloured(view)] == [
        [],
        [("number", "1")],
        [("string", '"two"')],
        [("literal", "false")],
        [],
        [("key", '"k"'), ("number", "0")],
        [],
        [],
    ]


def test_typing_changes_nothing_and_ctrl_a_selects_everything(qtbot):
    view = make_view(qtbot)
    view.show_value({"a": 1})
    view.setFocus()
    qtbot.keyClicks(view, "xyz")
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert view.toPlainText() == '{\n  "a": 1\n}'
    qtbot.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert view.textCursor().selectedText() == '{\u2029  "a": 1\u2029}'  # Qt's paragraph separators


def test_tab_moves_on_to_the_next_control(qtbot):
    page = QWidget()
    qtbot.addWidget(page)
    view, after = JsonView(), QLineEdit()
    layout = QVBoxLayout(page)
    layout.addWidget(view)
    layout.addWidget(after)
    page.show()
    page.activateWindow()
    view.show_value({"a": 1})
    view.setFocus()
    QApplication.processEvents()
    assert view.hasFocus()
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert after.hasFocus() and view.toPlainText() == '{\n  "a": 1\n}'


def test_a_new_value_replaces_the_old_and_long_lines_do_not_wrap(qtbot):
    view = make_view(qtbot)
    view.show_value({"old": 1})
    view.show_value("x" * 500)
    assert view.toPlainText() == '"' + "x" * 500 + '"'
    assert view.document().blockCount() == 1 and view.lineWrapMode() == JsonView.LineWrapMode.NoWrap


def test_a_payload_stored_as_json_text_is_shown_parsed_other_text_as_it_is(qtbot):
    view = JsonView()
    qtbot.addWidget(view)
    view.show_value('{"role": "user", "content": "hi"}')
    assert view.toPlainText() == '{\n  "content": "hi",\n  "role": "user"\n}'
    view.show_value("[1, 2")  # looks like JSON, is not
    assert view.toPlainText() == '"[1, 2"'
    view.show_value("plain words")
    assert view.toPlainText() == '"plain words"'
