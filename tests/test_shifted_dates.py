"""The moment the suite's run across a DST change starts at, from a clock the test gives."""

from datetime import datetime, timezone

from tests.shifted_dates import before_next_change


def test_three_minutes_before_the_next_change_of_offset():
    winter = datetime(2037, 11, 26, 17, 25, tzinfo=timezone.utc)
    assert str(before_next_change(winter)) == "2038-03-28 01:57:00+01:00"  # clocks go forward at 02:00 CET
    summer = datetime(2038, 6, 1, tzinfo=timezone.utc)
    assert str(before_next_change(summer)) == "2038-10-31 02:57:00+02:00"  # and back at 03:00 CEST
    assert str(before_next_change(winter, "Australia/Sydney")) == "2038-04-04 02:57:00+11:00"


def test_a_moment_right_before_the_change_gives_that_change():
    just_before = datetime(2038, 3, 28, 0, 58, tzinfo=timezone.utc)  # 01:58 CET
    assert str(before_next_change(just_before)) == "2038-03-28 01:57:00+01:00"
