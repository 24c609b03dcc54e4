"""English function words that the tuned ranking leaves out of its full-text query.

In terms mode every word of a question is an OR-ed FTS term, so "what did I say about the trip" matches every
chunk containing "the" or "I", and BM25 gives those matches a small but non-zero score that crowds real
matches out of the candidate list. The list is the usual English stopword list (articles, pronouns,
auxiliaries, prepositions, conjunctions, question words), written as the alphanumeric runs that
:func:`~oxmem_gui.core.retrieval.fts_terms` makes of them ("don't" → "don", "t"). Kept, because they carry
meaning in a question to an agent's memory:

* "no" and "not" ("which city did I not visit");
* the first person — "i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves": the user's own
  facts are told in the first person ("I graduated in business administration"), so "my" in a question points
  at the user's turns. Dropping them too cost 0.03 nDCG@10 on LongMemEval and changed nothing on LoCoMo
  (``bench/bench_quality.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

ENGLISH: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren as at be because been before being below
    between both but by can cannot could couldn d did didn do does doesn doing don down during each few for from
    further had hadn has hasn have haven having he her here hers herself him himself his how if in into is isn it
    its itself let ll m more most mustn nor of off on once only or other ought out over own re s same shan she
    should shouldn so some such t than that the their theirs them themselves then there these they this those
    through to too under until up ve very was wasn were weren what when where which while who whom why with won
    would wouldn you your yours yourself yourselves""".split()
)


def content_terms(terms: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(kept, dropped)``: the terms that are not stopwords (compared case-insensitively), and those that are.

    When every term is a stopword nothing is dropped — a query of only such words still searches for them."""
    dropped = [t for t in terms if t.lower() in ENGLISH]
    if len(dropped) == len(terms):
        return list(terms), []
    return [t for t in terms if t.lower() not in ENGLISH], dropped
