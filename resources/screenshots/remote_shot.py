"""The README's pictures of a remote memory at 1024×640: File ▸ Open Remote…'s dialog, and the session browser on
a snapshot of an Oxydra memory served by a real libSQL server (``tursodb``, as the tests start it) right after
View ▸ Refresh pulled what the agent wrote since.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/remote_shot.py OUT.png
    (the dialog goes to remote-dialog.png beside OUT.png)
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from shot import settle, take  # noqa: E402

from oxmem_gui.ui.remote_dialog import RemoteDialog  # noqa: E402
from tests.core.formats.fixtures import make_oxydra_agent  # noqa: E402
from tests.remote_server import TursoServer, fill_oxydra  # noqa: E402

SESSION = "discord:carol:sourdough"
LATER = [
    ("user", "Fed it 1:5:5 last night and it doubled in six hours. Ready to bake?"),
    ("assistant", "Yes: it peaks at about six hours. Mix the dough now, bulk ferment 4–5 hours at 24 °C."),
]


async def scene(window, ctx):
    dialog = RemoteDialog("libsql://agent-memory-team.turso.io", "TURSO_AUTH_TOKEN", window)
    dialog.show()
    await settle(ctx)
    dialog.grab().save(str(Path(sys.argv[1]).with_name("remote-dialog.png")))
    dialog.close()
    await ctx.open_remote(SERVER.url, None, embedding="semantic")
    await ctx.wait_idle()
    rows = [(SESSION, 5 + i, json.dumps({"role": r, "content": t})) for i, (r, t) in enumerate(LATER)]
    SERVER.insert("conversation_events", ["session_id", "sequence", "payload_json"], rows)
    SERVER.execute("UPDATE sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?", [SESSION])
    window.show_panel("sessions")
    window.sessions.sessions_view.selectRow(0)
    await settle(ctx)
    window.refresh()  # View ▸ Refresh: pull what changed
    await settle(ctx)
    window.sessions.events_view.selectRow(5)


with tempfile.TemporaryDirectory() as folder:
    SERVER = TursoServer(Path(folder))
    try:
        fill_oxydra(SERVER, make_oxydra_agent(Path(folder) / "oxydra.db"))
        take(scene)
    finally:
        SERVER.stop()
