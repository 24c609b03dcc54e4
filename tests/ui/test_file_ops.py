"""The inspector on damaged files, snapshots and interrupted imports: one clear message, nothing lost."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.demo import fill_demo
from tests.core.test_database import corrupt_page_of
from tests.ui.conftest import settle


def select(view, row):
    view.setCurrentIndex(view.model().index(row, 0))


def test_a_damaged_page_is_one_dialog_with_what_to_do(make_window, qloop, tmp_path):
    async def build():
        store = await MemoryStore.open(tmp_path / "demo.db", embedding="deterministic")
        await fill_demo(store)
        await store.aclose()

    qloop.run_until_complete(build())
    corrupt_page_of(tmp_path / "demo.db", "conversation_events")
    window, ctx, dialogs = make_window(read_only=True)
    sessions = window.sessions
    select(sessions.sessions_view, 0)
    settle(qloop, ctx)
    sessions.tabs.setCurrentIndex(3)  # the context preview reads the same damaged table
    settle(qloop, ctx)
    assert dialogs.errors == [
        f"database is damaged (database disk image is malformed): open a backup or run "
        f"`oxmem --db {tmp_path / 'demo.db'} check`"
    ]


def test_a_snapshot_says_so_and_offers_no_editing(make_window, qloop):
    window, ctx, _ = make_window(read_only=True)
    ctx.store._db.notice = "demo.db is open as a snapshot: its folder is not writable"
    window._mode(True)
    assert window.mode_label.text() == "Read-only snapshot"
    assert window.mode_label.toolTip() == "demo.db is open as a snapshot: its folder is not writable"
    assert window.enable_button.isHidden() and not window.enable_action.isEnabled()


def test_a_cancelled_import_keeps_whole_batches_and_resumes(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    lines = [
        json.dumps({"session_id": "bulk", "sequence": i, "payload": {"role": "user", "content": f"m{i}"}})
        for i in range(1, 1201)
    ]
    (tmp_path / "e.jsonl").write_text("\n".join(lines))

    def cancel_after_a_batch(label, done, total):
        if 0 < done < total:
            window.cancel_work()

    # direct: the cancel lands in the worker between two batches, not whenever the GUI thread gets to it
    ctx.progress.connect(cancel_after_a_batch, Qt.ConnectionType.DirectConnection)
    dialogs.files = [tmp_path / "e.jsonl"]
    window.import_events()
    settle(qloop, ctx)
    ctx.progress.disconnect(cancel_after_a_batch)
    stored = [e.sequence for e in qloop.run_until_complete(ctx.store.recall("bulk"))]
    assert stored == list(range(1, len(stored) + 1)) and len(stored) in (500, 1000)
    assert dialogs.infos == [
        f"Cancelled after storing {len(stored):,} of 1,200 events; import the same file again to resume."
    ]
    dialogs.files = [tmp_path / "e.jsonl"]
    window.import_events()
    settle(qloop, ctx)
    assert len(qloop.run_until_complete(ctx.store.recall("bulk"))) == 1200
    assert window.statusBar().currentMessage() == (
        f"Imported {1200 - len(stored):,} events from e.jsonl ({len(stored):,} were already there)"
    )
