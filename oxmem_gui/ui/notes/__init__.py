"""The note editor: a user's notes with tags, filtered and edited, with bulk tag changes, undo, export and import.

The pieces: :mod:`.state` (what the panel shows, without Qt: the list read a page at a time, the note in the
editor, undo records), :mod:`.model` (the list's table model), :mod:`.panes` (the list and the editor),
:mod:`.edits` (every write, with its undo) and :mod:`.panel`, which wires them to the store. (The package imports
none of them, so the state is used without Qt.)
"""
