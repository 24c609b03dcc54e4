"""The store's own tables (contract §3–§4, §7–§8): migrations, storing and indexing events, notes and their tags,
the session summary, browsing pages of rows, importing JSON Lines, backups, and the checks on values a user
types (``inputs``). May import :mod:`..embeddings`, :mod:`..database` and :mod:`..errors`; never retrieval,
schedules, formats or the front doors."""
