"""Reading event records from a JSON Lines file: records keep the file's line numbers (blank lines skipped but
counted), and every problem with the file itself is one error that names the file, the line and the byte."""

from __future__ import annotations

import pytest

from oxmem_gui.core.errors import InvalidInputError, NotFoundError
from oxmem_gui.core.store.jsonl import Record, parse_record, read_jsonl


def test_records_keep_their_line_numbers_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(
        '{"session_id": "s", "sequence": 1, "payload": {"role": "user", "content": "caf\u00e9"}}\n'
        "\n"
        "   \t\n"
        '{"payload": [1, {"k": null}], "sequence": -7, "session_id": "other"}\r\n',
        encoding="utf-8",
    )
    assert read_jsonl(path) == [
        Record("s", 1, {"role": "user", "content": "caf\u00e9"}, 1),
        Record("other", -7, [1, {"k": None}], 4),
    ]


def test_a_byte_order_mark_at_the_start_is_not_part_of_the_first_record(tmp_path):
    path = tmp_path / "saved-by-an-editor.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"session_id": "s", "sequence": 1, "payload": "hi"}\n')
    assert read_jsonl(path) == [Record("s", 1, "hi", 1)]


def test_an_empty_file_has_no_records(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    assert read_jsonl(path) == []


def test_the_first_bad_line_is_the_error_and_no_record_is_returned(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(
        '{"session_id": "s", "sequence": 1, "payload": {}}\n'
        '{"session_id": "s", "sequence": 2}\n'
        '{"session_id": "s", "sequence": false, "payload": {}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InvalidInputError) as caught:
        read_jsonl(path)
    assert str(caught.value) == "line 2: missing payload"


def test_bytes_that_are_not_utf8_are_named_by_line_and_byte(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"session_id": "s", "sequence": 1, "payload": {}}\n\n{"a": "ho\xfftel"}\n')
    with pytest.raises(InvalidInputError) as caught:
        read_jsonl(path)
    assert str(caught.value) == f"{path} is not UTF-8 text (line 3, byte 10: b'\\xff')"


def test_a_missing_file_or_a_folder_is_one_error_naming_it(tmp_path):
    with pytest.raises(NotFoundError) as caught:
        read_jsonl(tmp_path / "gone.jsonl")
    assert str(caught.value) == f"{tmp_path / 'gone.jsonl'} does not exist"
    with pytest.raises(InvalidInputError) as caught:
        read_jsonl(tmp_path)
    assert str(caught.value) == f"{tmp_path} is a directory"


def test_a_payload_may_be_any_json_value_and_a_record_built_in_code_has_no_line():
    line = '{{"session_id": "s", "sequence": 0, "payload": {}}}'
    payloads = [parse_record(line.format(p), 5).payload for p in ("null", '"text"', "2.5", "[]")]
    assert payloads == [None, "text", 2.5, []]
    assert Record("s", 1, {}).line is None
