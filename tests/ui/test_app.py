"""The inspector's first window, offscreen."""

import os
import subprocess
import sys

from oxmem_gui.app import MainWindow
from oxmem_gui.core.demo import fill_demo
from tests.conftest import open_sync


def test_window_lists_the_demo_sessions(qtbot, tmp_path, loop):
    store = open_sync(loop, tmp_path / "demo.db")
    loop.run_until_complete(fill_demo(store.inner))
    window = MainWindow()
    qtbot.addWidget(window)
    loop.run_until_complete(window.load(store.inner))
    assert window.table.rowCount() == 6
    ids = [window.table.item(r, 0).text() for r in range(6)]
    assert "telegram:alice:lisbon-trip" in ids
    row = ids.index("telegram:alice:lisbon-trip")
    assert (window.table.item(row, 2).text(), window.table.item(row, 3).text()) == ("15", "15")
    assert window.header.text().endswith("6 sessions (editing)")
    assert window.statusBar().currentMessage() == "Embeddings: deterministic-hash-v1"
    store.aclose()


def test_screenshot_command_writes_a_png(tmp_path):
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [sys.executable, "-m", "oxmem_gui", "--demo", "--screenshot", str(shot)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_text("not sqlite " * 50)
    done = subprocess.run(
        [sys.executable, "-m", "oxmem_gui", str(bad), "--screenshot", str(tmp_path / "s.png")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"oxmem-gui: error: {bad} is not a SQLite database"
