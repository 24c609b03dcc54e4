"""The README's picture of the Tables panel's Execute SQL tab on a demo store at 1024×640 (a keyword highlighted,
the result's first page shown).

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/screenshots/sql_shot.py OUT.png
"""

from shot import take

QUERY = """-- where did the agent talk about the trip?
SELECT e.session_id, e.sequence, json_extract(e.payload_json, '$.role') AS role,
       substr(json_extract(e.payload_json, '$.content'), 1, 60) AS text
FROM conversation_events e
WHERE e.payload_json LIKE '%Lisbon%'
ORDER BY e.session_id, e.sequence"""


async def scene(window, ctx):
    await ctx.open_demo(embedding="deterministic")
    await ctx.wait_idle()
    window.show_panel("tables")
    window.tables.tabs.setCurrentIndex(1)
    console = window.tables.console
    console.editor.setPlainText(QUERY)
    console.run()


take(scene)
