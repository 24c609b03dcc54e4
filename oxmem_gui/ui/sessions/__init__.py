"""The session browser: sessions, and for the selected one its events, summary state, chunks and context preview.

The pieces: :mod:`.models` (the paged tables), :mod:`.context_preview` (what the agent would see under a budget)
and :mod:`.panel`, which wires them to the store.
"""

from .panel import SessionsPanel

__all__ = ["SessionsPanel"]
