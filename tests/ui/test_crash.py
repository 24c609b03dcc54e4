"""The crash reporter: the dialog's words for an unexpected error (with or without a log file), which errors show
no dialog, how a repeat is held back, hooks put back, and a key in an error reaching neither dialog nor log."""

from __future__ import annotations

import asyncio
import sys
import threading
from types import SimpleNamespace

import pytest

from oxmem_gui.core.embeddings.endpoint import ApiEmbedding, endpoint_from
from oxmem_gui.core.errors import EmbeddingError
from oxmem_gui.core.redaction import remember
from oxmem_gui.logs import LOG_NAME, setup_logging
from oxmem_gui.ui import crash
from oxmem_gui.ui.crash import CrashReporter, unexpected
from tests.remote_server import StubServer, reply
from tests.ui.conftest import FakeDialogs

KEY = "sk-crash-0123456789SECRET"


@pytest.fixture
def log_folder(tmp_path, monkeypatch):
    """The log file and settings in the test's folder; the session's own log put back afterwards."""
    monkeypatch.setenv("OXMEM_LOG_DIR", str(tmp_path / "log"))
    monkeypatch.setenv("OXMEM_CONFIG_DIR", str(tmp_path / "config"))
    setup_logging("oxmem-gui")
    yield tmp_path / "log"
    monkeypatch.undo()
    setup_logging("pytest")


@pytest.fixture
def reporter(qapp):
    dialogs = FakeDialogs()
    return CrashReporter(dialogs), dialogs


def raised(error: BaseException):
    try:
        raise error
    except BaseException as caught:  # noqa: BLE001 - handed on as it is
        return type(caught), caught, caught.__traceback__


def test_without_a_log_file_the_dialog_names_no_file(tmp_path, monkeypatch, reporter):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("OXMEM_LOG_DIR", str(blocker / "log"))  # a folder under a file cannot exist
    try:
        assert setup_logging("oxmem-gui") is None
        assert unexpected("disk on fire") == "Unexpected error: disk on fire"
        crashes, dialogs = reporter
        crashes.excepthook(*raised(OSError("disk on fire")))
        assert dialogs.errors == ["Unexpected error: disk on fire"]
    finally:
        monkeypatch.undo()
        setup_logging("pytest")


def test_an_error_without_words_is_named_by_its_type(log_folder, reporter):
    crashes, dialogs = reporter
    crashes.excepthook(*raised(RuntimeError()))
    assert dialogs.errors == [f"Unexpected error: RuntimeError\n\nThe details are in {log_folder / LOG_NAME}."]
    assert "RuntimeError" in (log_folder / LOG_NAME).read_text()


def test_ctrl_c_shows_no_dialog_and_is_not_logged_as_a_crash(log_folder, reporter, capsys):
    crashes, dialogs = reporter
    crashes.excepthook(*raised(KeyboardInterrupt()))
    err = capsys.readouterr().err
    assert dialogs.errors == [] and err.startswith("Traceback") and err.endswith("KeyboardInterrupt\n")
    assert not (log_folder / LOG_NAME).exists()  # nothing logged: the file is not even made


def test_a_loop_message_without_an_exception_is_logged_without_a_dialog(log_folder, reporter):
    crashes, dialogs = reporter
    loop = asyncio.new_event_loop()
    crashes.install(loop)
    try:
        loop.call_exception_handler({"message": "Task was destroyed but it is pending!"})
    finally:
        crashes.uninstall()
        loop.close()
    logged = (log_folder / LOG_NAME).read_text()
    assert dialogs.errors == [] and "ERROR oxmem_gui.crash: asyncio: Task was destroyed but it is pending!" in logged


def test_the_same_error_is_held_back_only_within_the_repeat_window(log_folder, reporter, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(crash, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    crashes, dialogs = reporter
    for at, words in [(100.0, "A"), (104.9, "A"), (105.0, "A"), (105.1, "B"), (105.2, "A"), (105.3, "A")]:
        clock[0] = at
        crashes.excepthook(*raised(ValueError(words)))
    where = f"\n\nThe details are in {log_folder / LOG_NAME}."
    # the window counts from the last dialog shown, and only the very last message is held back
    assert dialogs.errors == [f"Unexpected error: {w}{where}" for w in ("A", "A", "B", "A")]
    assert (log_folder / LOG_NAME).read_text().count("CRITICAL oxmem_gui.crash: unexpected error") == 6


def test_uninstall_puts_both_hooks_back_and_twice_is_harmless(reporter):
    crashes, _ = reporter
    before = (sys.excepthook, threading.excepthook)
    crashes.install()
    assert sys.excepthook == crashes.excepthook and threading.excepthook is not before[1]
    crashes.uninstall()
    crashes.uninstall()
    assert (sys.excepthook, threading.excepthook) == before


def test_a_key_in_a_servers_answer_reaches_neither_the_dialog_nor_the_log(log_folder, reporter):
    server = StubServer(lambda handler, _: reply(handler, 401, f"invalid key: Bearer {KEY}".encode()))
    try:
        backend = ApiEmbedding(endpoint_from(f"{server.url}/v1", KEY), "text-embedding-3-small", None)
        with pytest.raises(EmbeddingError) as caught:
            backend.embed(["where did Alice fly?"])
        assert server.seen[0]["Authorization"] == f"Bearer {KEY}"  # the key was sent, and repeated back
    finally:
        server.stop()
    crashes, dialogs = reporter
    crashes.excepthook(type(caught.value), caught.value, caught.value.__traceback__)
    host = server.url.removeprefix("http://")
    (shown,) = dialogs.errors
    assert shown.startswith(  # a refused key: the status and a fixed reason, never the answer that repeats it
        f"Unexpected error: {host} refused the key from $OPENAI_API_KEY (HTTP 401 Unauthorized)"
    )
    logged = (log_folder / LOG_NAME).read_text()
    assert "EmbeddingError" in logged and "(HTTP 401 Unauthorized)" in logged  # the traceback, without the key
    assert KEY not in shown and KEY not in logged and "SECRET" not in logged


def test_a_secret_in_any_error_reaches_neither_the_dialog_nor_the_log(log_folder, reporter, monkeypatch):
    """The net under the code that blanks its own secrets: a plain error repeating a token from the environment and
    a key typed into the inspector is shown and logged with both hidden, its traceback included."""
    monkeypatch.setenv("TURSO_AUTH_TOKEN", "tok-from-the-environment-42")
    remember("typed-passphrase-for-the-db")
    crashes, dialogs = reporter
    crashes.excepthook(*raised(RuntimeError("tok-from-the-environment-42 and typed-passphrase-for-the-db failed")))
    (shown,) = dialogs.errors
    assert shown.startswith("Unexpected error: [hidden] and [hidden] failed")
    logged = (log_folder / LOG_NAME).read_text()
    assert "RuntimeError: [hidden] and [hidden] failed" in logged
    assert "environment-42" not in logged + shown and "passphrase" not in logged + shown
