"""The note editor: a user's notes with tags, filtered and edited, with bulk tag changes, undo, export and import.

The pieces: :mod:`.model` (the list's table model), :mod:`.panes` (the list and the editor), :mod:`.edits` (every
write, with its undo) and :mod:`.panel`, which loads the notes and wires the panes together.
"""

from .panel import NotesPanel

__all__ = ["NotesPanel"]
