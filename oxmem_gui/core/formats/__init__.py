"""Readers of memory databases that other agents write (Omega, ZEKE, aidaemon, unknown SQLite), detection of
the format, ``oxmem info``, and the table browser. The one interface they share is :mod:`.base`; opening a file
with the right reader is :func:`oxmem_gui.core.memory.open_memory`."""
