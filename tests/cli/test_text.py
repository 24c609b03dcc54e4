"""What ``oxmem sql`` prints is safe for a terminal and valid JSON whatever the file holds: control characters in
values and column names come out escaped (table and CSV), and a float JSON cannot hold is a string."""

from __future__ import annotations

import json

import pytest

from tests.cli._support import build_demo, run

HOSTILE = "SELECT 'a' || char(27) || ']0;pwned' || char(7) || 'b' AS \"c\x1b[31m\", 1e999 AS big, -1e999, 0.5"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return str(build_demo(tmp_path_factory.mktemp("sql-output")))


@pytest.mark.parametrize("form", [[], ["--csv"], ["--json"]])
def test_no_control_character_reaches_the_terminal(capsys, demo, form):
    code, out, err = run(capsys, "--db", demo, "sql", HOSTILE, *form)
    assert code == 0 and err == ("" if form == ["--json"] else "1 row\n")
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07" in out or "\\u001b]0;pwned\\u0007" in out


def test_the_table_and_csv_escape_values_and_column_names(capsys, demo):
    _, out, _ = run(capsys, "--db", demo, "sql", HOSTILE)
    assert out.splitlines() == [
        "c\\x1b[31m           big  -1e999  0.5",
        "a\\x1b]0;pwned\\x07b  inf  -inf    0.5",
    ]
    _, out, _ = run(capsys, "--db", demo, "sql", HOSTILE, "--csv")
    assert out == "c\\x1b[31m,big,-1e999,0.5\na\\x1b]0;pwned\\x07b,inf,-inf,0.5\n"


def test_json_is_valid_and_says_infinity_as_a_string(capsys, demo):
    _, out, _ = run(capsys, "--db", demo, "sql", HOSTILE + ", 'line\nbreak'", "--json")
    document = json.loads(out)  # Python's json accepts Infinity; a strict parser would not: there is none
    assert "Infinity" not in out and "NaN" not in out
    assert document["rows"] == [["a\x1b]0;pwned\x07b", "inf", "-inf", 0.5, "line\nbreak"]]
    assert document["columns"][0] == "c\x1b[31m"
