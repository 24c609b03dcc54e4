"""The schedule calendar: every schedule's future fires and past runs on a month, week or agenda view, beside a
filterable list, the selected schedule's details, and create / edit / pause / resume / delete.

The pieces: :mod:`.state` (what is listed and selected, the calendar's date and clock, the actions' states, without
Qt), :mod:`.model` (the list's table model), :mod:`.calendar_views` (the month, week and agenda views and the day
list), :mod:`.panes` (the calendar pane and the list pane), :mod:`.dialog` (the create/edit dialog), :mod:`.edits`
(every write, each checked against the row as loaded) and :mod:`.panel`, which wires them. (The package imports
none of them, so the state is used without Qt.)
"""
