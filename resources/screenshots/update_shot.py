"""The README's picture of the update step at 1024×640: a user states a preference, later changes it, and the
search panel ranks the newer statement first, saying which older statement it updates.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/update_shot.py OUT.png
"""

import asyncio
import sys
import tempfile
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from oxmem_gui.core import MemoryStore
from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.main_window import MainWindow

SESSION = "telegram:alice:travel"
TURNS = [
    ("user", "I prefer aisle seats on flights, and I'm vegetarian."),
    ("assistant", "Noted: aisle seats and vegetarian meals from now on."),
    ("user", "Book the Lisbon flight for the 12th of March."),
    ("assistant", "Booked easyJet EZY7Q2K, seat 14C, with a vegetarian meal."),
    ("user", "Thanks. What's the weather like in Lisbon in March?"),
    ("assistant", "Mild: 12–19 °C, some rain; bring a light jacket."),
    ("user", "I prefer window seats on flights now, and I'm still vegetarian, thanks for asking."),
    ("assistant", "Updated: window seats from your next booking."),
]

app = QApplication(sys.argv)
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)


async def main(folder: Path) -> None:
    path = folder / "memory.db"
    store = await MemoryStore.open(path, embedding="semantic")
    await store.store_many([(SESSION, i, {"role": r, "content": t}) for i, (r, t) in enumerate(TURNS, 1)])
    await store.aclose()
    ctx = StoreContext()
    window = MainWindow(ctx)
    window.resize(1024, 640)
    window.show()
    await ctx.open(path, read_only=True, embedding="semantic")
    await ctx.wait_idle()
    window.show_panel("search")
    search = window.search
    search.session.setCurrentText(SESSION)
    search.query.setText("which seats do I prefer on flights")
    search.search()
    await ctx.wait_idle()
    await asyncio.sleep(0.3)
    search.view.selectRow(0)
    app.processEvents()
    view = search.explain_view
    view.find("update: restates")  # the step's line, scrolled to the top of the explanation
    view.verticalScrollBar().setValue(view.verticalScrollBar().value() + view.cursorRect().top() - 4)
    app.processEvents()
    window.grab().save(sys.argv[1])
    await ctx.close()


with loop, tempfile.TemporaryDirectory() as tmp:
    loop.run_until_complete(main(Path(tmp)))
