"""The README's picture of *Why not…?* at 1024×640 on a demo store: a search that did not recall the flight
options, the memory's row pinned at its true rank, the story under the list and the suggested change.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/why_shot.py OUT.png
"""

import asyncio
import sys

import qasync
from PySide6.QtWidgets import QApplication

from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.main_window import MainWindow

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
    window.show_panel("search")
    panel = window.search
    panel.session.setCurrentText("telegram:alice:lisbon-trip")
    panel.query.setText("which seat on the flight")
    panel.top_k.setValue(3)
    panel.search()
    await ctx.wait_idle()
    await asyncio.sleep(0.2)
    panel.why_not("5")  # as the picker would give it: the event at sequence 5
    await ctx.wait_idle()
    await asyncio.sleep(0.3)
    app.processEvents()
    window.grab().save(sys.argv[1])
    await ctx.close()  # the demo folder goes with it


with loop:
    loop.run_until_complete(main())
