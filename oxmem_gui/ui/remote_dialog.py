"""File ▸ Open Remote…: the URL of a libSQL / Turso server and where its auth token comes from — an environment
variable (named, never read into any setting), typed once (kept in memory for this window's refreshes only), or
none. Nothing typed here is written to disk but the URL and the variable's name."""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ..core.api import TOKEN_ENV


@dataclass
class RemoteAnswer:
    """What the dialog was told: the URL, the token (None: none), and the variable it came from (to remember)."""

    url: str
    token: str | None
    variable: str | None


class RemoteDialog(QDialog):
    """Ask for a remote memory's URL and token (see the module's docstring); :attr:`answer` once accepted."""

    def __init__(self, url: str = "", variable: str = TOKEN_ENV, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a remote memory")
        self.answer: RemoteAnswer | None = None
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.url = QLineEdit(url)
        self.url.setPlaceholderText("libsql://my-agent-org.turso.io")
        self.url.setMinimumWidth(380)
        self.url.textChanged.connect(self._update)
        hint = QLabel("libsql:// or https:// as Turso prints it; http://HOST:PORT for a local server")
        hint.setEnabled(False)

        self.from_env = QRadioButton("From the &environment variable")
        self.variable = QLineEdit(variable or TOKEN_ENV)
        self.variable.textChanged.connect(self._update)
        self.env_state = QLabel()
        self.typed = QRadioButton("&Typed here (kept for this window only)")
        self.secret = QLineEdit()
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.secret.textEdited.connect(lambda _: self.typed.setChecked(True))
        self.none = QRadioButton("&None (a local server)")
        group = QButtonGroup(self)
        for button in (self.from_env, self.typed, self.none):
            group.addButton(button)
            button.toggled.connect(self._update)
        set_ = bool(os.environ.get(variable or TOKEN_ENV))
        (self.from_env if set_ else self.none).setChecked(True)

        tokens = QGridLayout()
        tokens.addWidget(self.from_env, 0, 0)
        tokens.addWidget(self.variable, 0, 1)
        tokens.addWidget(self.env_state, 1, 1)
        tokens.addWidget(self.typed, 2, 0)
        tokens.addWidget(self.secret, 2, 1)
        tokens.addWidget(self.none, 3, 0)
        form = QFormLayout()
        url_label = QLabel("&URL:")
        url_label.setBuddy(self.url)
        form.addRow(url_label, self.url)
        form.addRow("", hint)
        form.addRow("Auth token:", tokens)
        note = QLabel(
            "The memory is copied into your cache folder and opened read-only. The copy is removed when you close "
            "it, unless you keep it with File ▸ Save Snapshot As…. Nothing is ever sent back."
        )
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self._update()

    def _update(self) -> None:
        name = self.variable.text().strip()
        self.env_state.setText(f"${name} is {'set' if os.environ.get(name) else 'not set'}" if name else "")
        self.variable.setEnabled(self.from_env.isChecked())
        self.secret.setEnabled(not self.none.isChecked())
        missing = self.from_env.isChecked() and not os.environ.get(name)  # a 401 would follow: say it here
        ready = bool(self.url.text().strip()) and not missing
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(ready)

    def _accept(self) -> None:
        url = self.url.text().strip()
        if not url:
            return
        if self.from_env.isChecked():
            name = self.variable.text().strip()
            self.answer = RemoteAnswer(url, os.environ.get(name) or None, name or None)
        elif self.typed.isChecked():
            self.answer = RemoteAnswer(url, self.secret.text() or None, None)
        else:
            self.answer = RemoteAnswer(url, None, None)
        self.accept()
