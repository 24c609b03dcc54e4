"""The counts the panels say (ui/words.py): singular for exactly one, a regular or irregular plural otherwise, with
thousands separated."""

from __future__ import annotations

import pytest

from oxmem_gui.ui.words import plural


@pytest.mark.parametrize(("count", "said"), [(0, "0 notes"), (1, "1 note"), (2, "2 notes")])
def test_only_exactly_one_is_singular(count, said):
    assert plural(count, "note") == said


def test_large_counts_have_thousands_separators():
    assert plural(1200, "row") == "1,200 rows"
    assert plural(1_234_567, "event") == "1,234,567 events"


def test_an_irregular_plural_is_used_for_many_and_ignored_for_one():
    assert plural(3, "entry", "entries") == "3 entries"
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(1_000, "memory", "memories") == "1,000 memories"


def test_an_empty_irregular_plural_falls_back_to_adding_s():
    assert plural(2, "schedule", "") == "2 schedules"
