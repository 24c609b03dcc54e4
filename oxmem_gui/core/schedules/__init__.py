"""Schedules (contract §9): the schedules and runs tables, cadences (cron in a time zone, interval, one-shot)
and their next fires, and the calendar's occurrences. May import :mod:`..store` (the input checks),
:mod:`..embeddings` (its JSON writer), :mod:`..database` and :mod:`..errors`; never retrieval or formats."""
