"""The README's picture of *Why not…?* at 1024×640 on a demo store: a search that did not recall the flight
options, the memory's row pinned at its true rank, the story under the list and the suggested change.

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/why_shot.py OUT.png
"""

from shot import settle, take


async def scene(window, ctx):
    await ctx.open_demo(embedding="deterministic")
    await ctx.wait_idle()
    window.show_panel("search")
    panel = window.search
    panel.controls.session.setCurrentText("telegram:alice:lisbon-trip")
    panel.controls.query.setText("which seat on the flight")
    panel.controls.top_k.setValue(3)
    panel.search()
    await settle(ctx, 0.2)
    panel.why_not("5")  # as the picker would give it: the event at sequence 5


take(scene)
