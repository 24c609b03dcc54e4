"""English stopwords are left out of the keyword leg's terms, compared without case — unless every term is one,
and then the query still searches for its words."""

from __future__ import annotations

from oxmem_gui.core.retrieval.stopwords import ENGLISH, content_terms


def test_stopwords_are_dropped_case_insensitively_in_order():
    assert content_terms(["Where", "is", "the", "Lisbon", "hotel", "THE"]) == (
        ["Lisbon", "hotel"],
        ["Where", "is", "the", "THE"],
    )


def test_a_query_of_only_stopwords_keeps_them():
    assert content_terms(["to", "be", "or", "the"]) == (["to", "be", "or", "the"], [])  # ("not" is kept: it means)
    assert content_terms(["to", "be", "or", "not"]) == (["not"], ["to", "be", "or"])
    assert content_terms([]) == ([], [])


def test_the_list_is_lowercase_words():
    assert all(w == w.lower() and w.isalpha() for w in ENGLISH) and {"the", "wouldn", "yourselves"} <= ENGLISH
