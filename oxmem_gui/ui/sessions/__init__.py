"""The session browser: sessions, and for the selected one its events, summary state, chunks and context preview.

The pieces: :mod:`.state` (which session the right side shows and its words, without Qt), :mod:`.models` (the
paged tables), :mod:`.context_preview` (what the agent would see under a budget) and :mod:`.panel`, which wires them
to the store. (The package imports none of them, so the state is used without Qt.)
"""
