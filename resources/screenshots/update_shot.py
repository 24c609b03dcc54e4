"""The README's picture of the update step at 1024×640: a user states a preference, later changes it, and the
search panel ranks the newer statement first, saying which older statement it updates.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/update_shot.py OUT.png
"""

import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication
from shot import settle, take

from oxmem_gui.core import MemoryStore

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


async def scene(window, ctx):
    path = Path(FOLDER.name) / "memory.db"
    store = await MemoryStore.open(path, embedding="semantic")
    await store.store_many([(SESSION, i, {"role": r, "content": t}) for i, (r, t) in enumerate(TURNS, 1)])
    await store.aclose()
    await ctx.open(path, read_only=True, embedding="semantic")
    await ctx.wait_idle()
    window.show_panel("search")
    search = window.search
    search.controls.session.setCurrentText(SESSION)
    search.controls.query.setText("which seats do I prefer on flights")
    search.search()
    await settle(ctx)
    search.view.selectRow(0)
    QApplication.processEvents()
    view = search.explain_view
    view.find("update: restates")  # the step's line, scrolled to the top of the explanation
    view.verticalScrollBar().setValue(view.verticalScrollBar().value() + view.cursorRect().top() - 4)


FOLDER = tempfile.TemporaryDirectory()
with FOLDER:
    take(scene)
