"""The ``oxmem`` command line: argument parsing and printing over the core's API (:mod:`oxmem_gui.core.api`: the
store, or another agent's file opened by :func:`~oxmem_gui.core.memory.open_memory`).

Global options (``--db``, ``--embedding``, ``--json``) are accepted before or after the command. Errors print
one line ``oxmem: error: …`` on stderr and exit with status 2. Commands that only read open the store
read-only, so they never change a file (an agent's live database included).

Where things are: :mod:`.commands` is the table of commands (one entry each: arguments, whether it writes, its
handler); the handlers are in :mod:`.session_commands`, :mod:`.file_commands`, :mod:`.searching`,
:mod:`.notes_commands` and :mod:`.schedule_commands`; :mod:`.parser` builds the parser from the table and
:mod:`.running` opens the file as the entry says; :mod:`.program` is ``main``; :mod:`.arguments`, :mod:`.text`
and :mod:`.reports` are the shared parts.
"""

from .parser import build_parser
from .program import main

__all__ = ["build_parser", "main"]
