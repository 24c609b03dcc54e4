"""What is particular to the Oxydra agent's files, which otherwise have the store's own tables (contract §3).

* Newer versions index ``chunks_vec`` with libSQL's ``libsql_vector_idx``: plain SQLite reads every table, but
  any write reaching ``chunks_vec`` (storing an event or note, a cascade from deleting a session) fails there,
  and a dummy function would corrupt the index. Those writes go through the libSQL engine in a child process
  (:mod:`..libsql_writer`); without the ``libsql`` package they are refused up front with the reason below.
  Schedules and summaries do not touch vectors and are written here as in any store.
* Its vectors are zero-padded to 512 float32 values; the vector leg reads the model's leading dimensions.
* Its cron library numbers weekdays 1–7 from Sunday = 1, so ``0 8 * * 1`` is Sunday 08:00 to the agent and
  Monday in standard cron (:mod:`..schedules.weekdays`).
"""

from __future__ import annotations

LIBSQL_REASON = (
    "this database has libSQL's vector index (newer Oxydra): storing events or notes, and deleting sessions, "
    "write to chunk vectors, which needs the libSQL engine (pip install 'oxmem-gui[libsql]')"
)
