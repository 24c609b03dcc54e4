"""The hybrid-search panel: why each hit ranked where it did, and tuning the weights with evidence.

Every number comes from the core's :class:`QueryResult`; moving the weight slider re-ranks the candidates
already fetched (:func:`rerank`, no new query) and shows how each hit moved. Hits can be graded 0–3 into named
query sets (kept in the inspector's own file), and a set's recall@k, MRR and nDCG@k are computed for the current
settings and for a weight sweep, drawn as a chart.

The pieces: :mod:`.state` (what is shown and what it answers, without Qt), :mod:`.controls` (what is asked),
:mod:`.results` (the hits' table), :mod:`.explanation` (the selected hit in words), :mod:`.tools` (default, pin,
compare, export, judge), :mod:`.metrics` (the query set's metrics and sweep chart) and :mod:`.panel`, which wires
them to the store. (The package imports none of them, so the state is used without Qt.)
"""
