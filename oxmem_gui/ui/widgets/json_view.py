"""A read-only, monospace, syntax-coloured JSON view."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat, QTextOption
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from ..resources import is_dark

_TOKENS = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*"(?=\s*:))|(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)'
    r"|(?P<literal>\btrue\b|\bfalse\b|\bnull\b)"
)


class JsonHighlighter(QSyntaxHighlighter):
    """Keys, strings, numbers and literals in colours chosen for the palette's lightness."""

    def __init__(self, document: Any) -> None:
        super().__init__(document)
        dark = is_dark()
        colors = {
            "key": "#7cc4fa" if dark else "#0b5c9e",
            "string": "#a5d68a" if dark else "#2f7d32",
            "number": "#f5b971" if dark else "#b35c00",
            "literal": "#d7a3f5" if dark else "#7b3fa0",
        }
        self.formats = {}
        for name, color in colors.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if name == "key":
                fmt.setFontWeight(QFont.Weight.DemiBold)
            self.formats[name] = fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        for match in _TOKENS.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self.formats[match.lastgroup or ""])


class JsonView(QPlainTextEdit):
    """Read-only; the keyboard scrolls and selects in it, and Tab moves on to the next control. With ``wrap``, a
    long line (a message's text) wraps at the view's width, within a word when it has to, so it is read without
    scrolling sideways; else lines are kept whole."""

    def __init__(self, parent: QWidget | None = None, wrap: bool = False) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setTabChangesFocus(True)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        if wrap:
            self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
            self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        else:
            self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.highlighter = JsonHighlighter(self.document())

    def show_value(self, value: Any) -> None:
        """Pretty-print ``value``; a string that holds a JSON object or array (a payload stored as text) is shown
        parsed, any other string as the string it is."""
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            with contextlib.suppress(ValueError, RecursionError):  # not JSON after all: shown as the text it is
                value = json.loads(value)
        self.setPlainText(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))
