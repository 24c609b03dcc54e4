"""What the README's picture scripts share: the inspector's window at 1024×640 on a qasync loop.

:func:`take` runs a scene — it opens a store and brings the window to what the picture shows — then lets the
window settle and saves the widget the scene returns (the window itself when None) to the path given as the
script's argument, and closes the store.
"""

import asyncio
import sys
from collections.abc import Awaitable, Callable

import qasync
from PySide6.QtWidgets import QApplication, QWidget

from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.main_window import MainWindow

Scene = Callable[[MainWindow, StoreContext], Awaitable[QWidget | None]]


async def settle(ctx: StoreContext, seconds: float = 0.3) -> None:
    """Every pending operation done, then a moment for Qt to lay out and paint."""
    await ctx.wait_idle()
    await asyncio.sleep(seconds)
    QApplication.processEvents()


def take(scene: Scene) -> None:
    app = QApplication(sys.argv)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def main() -> None:
        ctx = StoreContext()
        window = MainWindow(ctx)
        window.resize(1024, 640)
        window.show()
        shown = await scene(window, ctx)
        await settle(ctx)
        (shown or window).grab().save(sys.argv[1])
        await ctx.close()  # a demo's folder goes with it

    with loop:
        loop.run_until_complete(main())
