"""Readers of memory databases that other agents write (Omega, ZEKE, aidaemon, the OpenAI Agents SDK's sessions,
unknown SQLite), detection of the format, ``oxmem info``, and the table browser. The one interface they share is
:mod:`.base`; opening a file with the right reader is :func:`oxmem_gui.core.memory.open_memory`. May import every
group below it (:mod:`..retrieval`, :mod:`..schedules`, :mod:`..store`, :mod:`..embeddings`) and
:mod:`..database`; never the front doors."""
