"""A small session of word lists, for the retrieval tests."""

import pytest

from tests.conftest import user


@pytest.fixture
def filled(store):
    words = [
        "apple pie recipe",
        "apple tree",
        "pie chart",
        "banana bread",
        "tree house",
        "recipe book",
        "apple apple apple",
        "bread and butter",
        "chart of apples",
        "house of pies",
    ]
    store.store_many([("s", i, user(w)) for i, w in enumerate(words, 1)])
    return store
