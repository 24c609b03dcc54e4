"""The README's picture of File ▸ Compare with Backup… on a 1024×640 window: a demo store, a backup of it, then a
note edited, one deleted, one added, an event appended, a session forgotten and a schedule paused.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/compare_shot.py OUT.png
"""

import shutil
import tempfile
from pathlib import Path

from shot import take

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.compare import diff_files
from oxmem_gui.core.demo import fill_demo
from oxmem_gui.ui.compare_dialog import CompareDialog


async def scene(w, ctx):
    d = Path(tempfile.mkdtemp())
    path, backup = d / "memory.db", d / "memory-backup-2026-11-23.db"
    s = await MemoryStore.open(path, embedding="deterministic")
    await fill_demo(s)
    await s.aclose()
    shutil.copy(path, backup)
    s = await MemoryStore.open(path, embedding="deterministic")
    notes = await s.list_notes("alice")
    n = notes[0]
    await s.update_note(
        "alice",
        n.note_id,
        n.content.replace("every editor and terminal", "every editor, terminal and browser"),
        [*n.tags, "dark"],
    )
    await s.delete_note("alice", notes[1].note_id)
    await s.save_note("bob", "Bob prefers window seats on long flights.", ["travel"])
    await s.store(
        "telegram:alice:tomatoes", 5, {"role": "user", "content": "The basil is flowering, should I pinch it?"}
    )
    await s.forget("slack:bob:weekly-metrics")
    sched = (await s.schedules.search(limit=5))[0]
    await s.schedules.pause(sched.schedule_id)
    await s.aclose()
    await ctx.open(str(path), read_only=True, embedding="deterministic")
    await ctx.wait_idle()
    diff = await diff_files(backup, path, embedding="deterministic")
    dlg = CompareDialog(diff, w)
    dlg.resize(min(dlg.width(), 984), 560)
    tree = dlg.tree
    notes_top = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0).startswith("Notes")
    )
    changed = next(
        notes_top.child(i) for i in range(notes_top.childCount()) if notes_top.child(i).text(0).startswith("changed")
    )
    tree.setCurrentItem(changed)
    dlg.show()
    return dlg


take(scene)
