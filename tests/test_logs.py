"""The programs' log: a file in the user's log folder (warnings always, debug with --verbose), on stderr with
--verbose, and an unexpected error in the inspector logged with its traceback behind one dialog naming the file."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading

import pytest

from oxmem_gui.cli import main
from oxmem_gui.logs import LOG_NAME, log_file, setup_logging


@pytest.fixture
def log_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OXMEM_LOG_DIR", str(tmp_path / "log"))
    yield tmp_path / "log"
    setup_logging("pytest")  # the next test's handlers, not this folder's


def test_quiet_by_default_verbose_on_request(log_folder, tmp_path, capsys):
    db = str(tmp_path / "m.db")
    assert main(["--db", db, "--embedding", "deterministic", "init"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and log_file() == log_folder / LOG_NAME
    assert not (log_folder / LOG_NAME).exists()  # nothing worth a line: no file yet
    assert main(["--db", db, "--embedding", "deterministic", "--verbose", "sessions"]) == 0
    out, err = capsys.readouterr()
    assert "oxmem: DEBUG oxmem_gui.logs: logging to " in err
    assert (
        f"oxmem[{os.getpid()}] DEBUG oxmem_gui.logs: logging to {log_folder / LOG_NAME}"
        in (log_folder / LOG_NAME).read_text()
    )


def test_warnings_reach_the_file_without_verbose(log_folder):
    setup_logging("oxmem")
    logging.getLogger("oxmem_gui.test").warning("the agent's file has %d bad rows", 3)
    logging.getLogger("oxmem_gui.test").info("not this")
    text = (log_folder / LOG_NAME).read_text()
    assert "WARNING oxmem_gui.test: the agent's file has 3 bad rows" in text and "not this" not in text


def test_an_unwritable_log_folder_costs_only_the_file(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("OXMEM_LOG_DIR", str(blocker / "log"))  # a folder under a file cannot exist
    try:
        assert main(["--db", str(tmp_path / "m.db"), "--embedding", "deterministic", "init"]) == 0
        assert log_file() is None and capsys.readouterr().err == ""
    finally:
        setup_logging("pytest")


def test_gui_verbose_flag_and_log_file(log_folder, tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OXMEM_LOG_DIR": str(log_folder), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "oxmem_gui", "--demo", "--embedding", "deterministic", "--verbose",
         "--screenshot", str(tmp_path / "shot.png")],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "oxmem-gui: DEBUG oxmem_gui.logs: logging to" in done.stderr
    assert "oxmem-gui[" in (log_folder / LOG_NAME).read_text()


class Dialogs:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, message: str) -> None:
        self.errors.append(message)


def test_an_unexpected_error_is_logged_with_its_traceback_behind_one_dialog(log_folder, qapp):
    from oxmem_gui.ui.crash import CrashReporter

    setup_logging("oxmem-gui")
    dialogs = Dialogs()
    reporter = CrashReporter(dialogs)
    previous = sys.excepthook
    loop = asyncio.new_event_loop()
    reporter.install(loop)
    try:

        def broken_slot():
            raise ValueError("column 7 of nothing")

        try:
            broken_slot()
        except ValueError:
            sys.excepthook(*sys.exc_info())
        sys.excepthook(*_raised(ValueError("column 7 of nothing")))  # the same again: no second dialog
        worker = threading.Thread(target=lambda: 1 / 0)
        worker.start()
        worker.join()
        qapp.processEvents()  # the worker's report crosses to the GUI thread
        loop.call_exception_handler({"message": "task failed", "exception": KeyError("session")})
    finally:
        reporter.uninstall()
        loop.close()
    where = f"The details are in {log_folder / LOG_NAME}."
    assert dialogs.errors == [
        f"Unexpected error: column 7 of nothing\n\n{where}",
        f"Unexpected error: division by zero\n\n{where}",
        f"Unexpected error: 'session'\n\n{where}",
    ]
    text = (log_folder / LOG_NAME).read_text()
    assert text.count("CRITICAL oxmem_gui.crash: unexpected error") == 4
    assert 'raise ValueError("column 7 of nothing")' in text and "ZeroDivisionError: division by zero" in text
    assert sys.excepthook is previous  # uninstalled


def _raised(error: BaseException):
    try:
        raise error
    except BaseException as caught:  # noqa: BLE001 - handed on as it is
        return type(caught), caught, caught.__traceback__
