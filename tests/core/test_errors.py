"""The core's error types: one base for all, the standard bases plain Python callers catch (``ValueError``,
``LookupError``), every type exported from ``oxmem_gui.core``, and real errors raised as one line."""

from __future__ import annotations

import inspect

import pytest

import oxmem_gui.core
from oxmem_gui.core import errors
from oxmem_gui.core.errors import (
    ConflictError,
    DamagedError,
    EmbeddingError,
    InvalidInputError,
    KeyRequiredError,
    NotFoundError,
    OperationCancelled,
    OxmemError,
    ReadOnlyError,
    SequenceError,
    StoreBusyError,
    StoreOpenError,
)
from tests.conftest import open_sync, user


def test_every_error_type_is_an_oxmem_error_and_exported_from_the_core():
    defined = {name for name, cls in inspect.getmembers(errors, inspect.isclass) if issubclass(cls, Exception)}
    assert all(issubclass(getattr(errors, name), OxmemError) for name in defined)
    assert defined == set(oxmem_gui.core.__all__) - {"MemoryStore"}
    assert all(getattr(oxmem_gui.core, name) is getattr(errors, name) for name in defined)


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (InvalidInputError, (OxmemError, ValueError)),
        (SequenceError, (InvalidInputError, OxmemError, ValueError)),
        (NotFoundError, (OxmemError, LookupError)),
        (KeyRequiredError, (StoreOpenError, OxmemError)),
        (DamagedError, (StoreOpenError, OxmemError)),
    ],
)
def test_each_error_has_the_bases_callers_catch_it_by(error, bases):
    assert all(issubclass(error, base) for base in bases)


@pytest.mark.parametrize(
    "error", [StoreOpenError, ReadOnlyError, StoreBusyError, ConflictError, EmbeddingError, OperationCancelled]
)
def test_the_other_errors_are_neither_value_nor_lookup_errors(error):
    assert not issubclass(error, (ValueError, LookupError))


def test_a_conflict_error_carries_the_row_as_it_is_now_or_none():
    row = {"note_id": "note-1", "content": "theirs"}
    assert ConflictError("note note-1 was deleted").current is None
    caught = ConflictError("note note-1 was changed", current=row)
    assert caught.current is row and str(caught) == "note note-1 was changed"
    assert caught.args == ("note note-1 was changed",)


def test_a_repeated_sequence_is_caught_as_a_value_error_and_a_missing_note_as_a_lookup_error(store):
    store.store("s", 5, user("first"))
    with pytest.raises(ValueError) as caught:
        store.store("s", 5, user("again"))
    assert type(caught.value) is SequenceError
    assert str(caught.value) == "sequence 5 of session 's' is not greater than its last sequence 5"
    with pytest.raises(LookupError) as missing:
        store.get_note("u", "note-x")
    assert type(missing.value) is NotFoundError and str(missing.value) == "no note 'note-x' for user 'u'"


def test_a_write_to_a_store_opened_read_only_is_a_read_only_error_in_one_line(tmp_path, loop):
    path = tmp_path / "memory.db"
    open_sync(loop, path).aclose()
    reader = open_sync(loop, path, read_only=True)
    try:
        with pytest.raises(ReadOnlyError) as caught:
            reader.save_note("u", "a note")
    finally:
        reader.aclose()
    assert str(caught.value) == f"{path} is open read-only; enable editing to change it"
