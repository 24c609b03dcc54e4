"""Searching and ranking (contract §6): the BM25 index, the vector cache, the hybrid query with its breakdown,
the ranking profiles and which one a file uses, the explanation of a hit, evaluation with relevance judgments
and its metrics, stopwords, and note search. May import :mod:`..store`, :mod:`..embeddings`,
:mod:`..database` and :mod:`..errors`; never schedules, formats or the front doors."""
