"""Cron weekdays as newer Oxydra counts them (Sunday = 1): flagged when numeric, and moved to standard numbering
(Sunday = 0) value by value, steps, ``#`` occurrences, names and other fields left as written."""

from __future__ import annotations

import pytest

from oxmem_gui.core.schedules.weekdays import has_numeric_weekday, sunday_one_to_standard, weekday_field


@pytest.mark.parametrize(
    "oxydra, standard",
    [
        ("0 8 * * 1", "0 8 * * 0"),  # its Sunday
        ("0 8 * * 2-6", "0 8 * * 1-5"),  # Monday to Friday
        ("0 8 * * 7", "0 8 * * 6"),  # its Saturday
        ("0 8 * * 1,7", "0 8 * * 0,6"),
        ("0 8 * * */2", "0 8 * * */2"),  # a step alone: no value to move
        ("0 8 * * 2/2", "0 8 * * 1/2"),
        ("0 8 * * 6#3", "0 8 * * 5#3"),  # the third Friday
        ("0 8 * * MON-FRI", "0 8 * * MON-FRI"),
        ("0 1-7 1 * *", "0 1-7 1 * *"),  # other fields untouched
        ("not a cron", "not a cron"),
    ],
)
def test_sunday_one_to_standard(oxydra, standard):
    assert sunday_one_to_standard(oxydra) == standard


def test_which_expressions_have_a_numeric_weekday():
    assert [
        has_numeric_weekday(e) for e in ("0 8 * * 1", "0 8 * * MON", "0 8 * * *", "0 8 * * */2", "0 8 * * 1-5")
    ] == [
        True,
        False,
        False,
        False,
        True,
    ]
    assert weekday_field("0 8 * * 1") == "1" and weekday_field("0 8 * *") is None
