"""The README's picture of the Tables panel's Execute SQL tab on a demo store at 1024×640 (a keyword highlighted,
the result's first page shown).

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/sql_shot.py OUT.png
"""

import asyncio
import sys

import qasync
from PySide6.QtWidgets import QApplication

from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.main_window import MainWindow

QUERY = """-- where did the agent talk about the trip?
SELECT e.session_id, e.sequence, json_extract(e.payload_json, '$.role') AS role,
       substr(json_extract(e.payload_json, '$.content'), 1, 60) AS text
FROM conversation_events e
WHERE e.payload_json LIKE '%Lisbon%'
ORDER BY e.session_id, e.sequence"""

app = QApplication(sys.argv)
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)


async def main() -> None:
    ctx = StoreContext()
    window = MainWindow(ctx)
    window.resize(1024, 640)
    window.show()
    await ctx.open_demo(embedding="deterministic")
    await ctx.wait_idle()
    window.show_panel("tables")
    window.tables.tabs.setCurrentIndex(1)
    console = window.tables.console
    console.editor.setPlainText(QUERY)
    console.run()
    await ctx.wait_idle()
    await asyncio.sleep(0.3)
    app.processEvents()
    window.grab().save(sys.argv[1])
    await ctx.close()  # the demo folder goes with it


with loop:
    loop.run_until_complete(main())
