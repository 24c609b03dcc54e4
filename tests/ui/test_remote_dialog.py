"""File ▸ Open Remote… on a real libSQL server (tursodb): a read-only snapshot that says what it is, refreshes,
can be kept, goes away on close, and says in one dialog what went wrong."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from PySide6.QtWidgets import QDialogButtonBox

from oxmem_gui.core.remote import REMOTE_REASON
from oxmem_gui.core.remote.hrana import CREDENTIALS
from oxmem_gui.ui.remote_dialog import RemoteAnswer, RemoteDialog
from tests.core.formats.fixtures import make_oxydra_agent
from tests.core.remote.test_snapshot import add_events
from tests.remote_server import TursoServer, fill_oxydra, free_port
from tests.ui.conftest import settle

SESSION = "discord:carol:sourdough"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TursoServer]:
    s = TursoServer(tmp_path)
    try:
        fill_oxydra(s, make_oxydra_agent(tmp_path / "oxydra.db"))
        yield s
    finally:
        s.stop()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache" / "oxmem" / "remote"


def event_count(window) -> int:
    model = window.sessions.sessions
    for row in range(model.rowCount()):
        if model.index(row, 0).data() == SESSION:
            return int(str(model.index(row, 2).data()).replace(",", ""))
    raise AssertionError(f"{SESSION} is not listed")


def test_a_remote_memory_opens_read_only_refreshes_is_kept_and_goes_on_close(
    server, cache, make_window, qloop, tmp_path
):  # the server is filled before the window's loop is made: filling it runs a loop of its own
    window, ctx, dialogs = make_window(read_only=True)
    dialogs.remote_answers = [RemoteAnswer(server.url, "tok-typed-once", None)]
    window.open_remote()
    settle(qloop, ctx)
    assert dialogs.errors == []
    store = ctx.store
    assert store.remote is not None and store.format == "oxydra"
    copy = store.remote.path
    assert copy.parent == cache and copy.is_file()
    assert window.windowTitle() == f"{server.url} — Oxydra memory — oxmem"
    assert window.path_label.text().startswith(f"snapshot of {server.url} at ")
    assert window.mode_label.text() == "Read-only snapshot"
    assert REMOTE_REASON in window.mode_label.toolTip()
    assert not window.enable_action.isEnabled() and not window.enable_button.isVisible()
    assert not window.import_action.isEnabled() and window.save_snapshot_action.isEnabled()
    assert ctx.edit_refusal("notes") == f"Oxydra memory: {REMOTE_REASON}."
    assert window.sessions.sessions.rowCount() == 5 and event_count(window) == 4
    assert window.settings.value("remote/url") == server.url
    window.settings.sync()
    assert "tok-typed-once" not in Path(window.settings.fileName()).read_text(encoding="utf-8")
    assert str(copy) not in window.recent_files()
    window.database_info()  # Help ▸ About This Database…: the server, not the copy's file
    settle(qloop, ctx)
    title, text = dialogs.reports[-1]
    assert title == f"About {server.url}" and text.startswith(f"{server.url}: oxydra (Oxydra memory), ")
    assert f"marker: snapshot of {server.url} at " in text and "rows in 2 requests (one transaction)" in text

    add_events(server, SESSION, 5, 1_000)
    window.refresh()  # View ▸ Refresh (F5): pull what changed
    settle(qloop, ctx)
    assert event_count(window) == 1_004
    # 1,000 events and the session they bumped changed; every row of the small tables read and compared
    assert window.statusBar().currentMessage() == "Refreshed: 1,001 rows changed (1,129 rows read in 1 request)"
    assert window.path_label.text().startswith(f"snapshot of {server.url} at ")

    kept = tmp_path / "kept.db"
    dialogs.files = [kept]
    window.save_snapshot()
    settle(qloop, ctx)
    conn = apsw.Connection(str(kept), flags=apsw.SQLITE_OPEN_READONLY)
    assert conn.execute("SELECT count(*) FROM conversation_events").fetchall() == [(1_021,)]
    conn.close()

    qloop.run_until_complete(ctx.close())
    assert list(cache.iterdir()) == [] and kept.is_file()


def test_a_server_that_cannot_be_reached_is_one_dialog_and_the_open_file_stays(cache, make_window, qloop):
    window, ctx, dialogs = make_window(read_only=True)
    before = ctx.store
    port = free_port()
    dialogs.remote_answers = [RemoteAnswer(f"http://127.0.0.1:{port}", None, None)]
    window.open_remote()
    settle(qloop, ctx)
    assert dialogs.errors == [f"could not connect to 127.0.0.1:{port}: Connection refused"]
    assert ctx.store is before and window.windowTitle() == "demo.db — oxmem store — oxmem"
    dialogs.remote_answers = [RemoteAnswer("ftp://example.com", None, None)]
    window.open_remote()
    settle(qloop, ctx)
    assert dialogs.errors[-1].startswith("not a libSQL URL: 'ftp://example.com' has 'ftp://'")
    url = f"http://127.0.0.1:{port}"
    assert dialogs.remote_asked == [("", "TURSO_AUTH_TOKEN"), (url, "TURSO_AUTH_TOKEN")]  # the last URL offered again
    assert not cache.exists() or list(cache.iterdir()) == []


def test_the_dialog_takes_the_token_from_a_variable_typed_or_none(qtbot, monkeypatch):
    monkeypatch.delenv("TEAM_TOKEN", raising=False)
    dialog = RemoteDialog("libsql://agent-team.turso.io", "TEAM_TOKEN")
    qtbot.addWidget(dialog)
    open_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    assert dialog.none.isChecked()  # the variable is not set: no token is the default
    dialog.from_env.setChecked(True)
    assert dialog.env_state.text() == "$TEAM_TOKEN is not set" and not open_button.isEnabled()
    monkeypatch.setenv("TEAM_TOKEN", "from-env")
    dialog = RemoteDialog("libsql://agent-team.turso.io", "TEAM_TOKEN")
    qtbot.addWidget(dialog)
    assert dialog.from_env.isChecked() and dialog.env_state.text() == "$TEAM_TOKEN is set"
    dialog.buttons.button(QDialogButtonBox.StandardButton.Open).click()
    assert dialog.answer == RemoteAnswer("libsql://agent-team.turso.io", "from-env", "TEAM_TOKEN")

    typed = RemoteDialog("", "TEAM_TOKEN")
    qtbot.addWidget(typed)
    assert typed.from_env.isChecked() and not typed.buttons.button(QDialogButtonBox.StandardButton.Open).isEnabled()
    typed.url.setText("http://127.0.0.1:8080")
    qtbot.keyClicks(typed.secret, "s3cret")  # typing a token chooses "typed here"
    assert typed.typed.isChecked()
    typed.buttons.button(QDialogButtonBox.StandardButton.Open).click()
    assert typed.answer == RemoteAnswer("http://127.0.0.1:8080", "s3cret", None)
    assert os.environ["TEAM_TOKEN"] == "from-env"


def test_a_url_with_a_token_in_it_is_refused_before_it_is_shown_or_kept(cache, make_window, qloop):
    window, ctx, dialogs = make_window(read_only=True)
    dialogs.remote_answers = [RemoteAnswer("libsql://db.example.turso.io?authToken=tok-SECRET-7", None, None)]
    window.open_remote()
    settle(qloop, ctx)
    assert dialogs.errors == [CREDENTIALS]
    window.settings.sync()
    assert "SECRET" not in Path(window.settings.fileName()).read_text(encoding="utf-8")
    assert "SECRET" not in window.statusBar().currentMessage() and ctx.store.remote is None
