"""Reading an export as a stream with limits (app/store/export_reader.py): each hostile
value is refused with what and where, never a traceback, never silently altered."""

from __future__ import annotations

import io
from typing import Any

import pytest

from app.store.export_reader import ExportReadError, read_json


def read(raw: bytes) -> Any:
    return read_json(io.BytesIO(raw))


@pytest.mark.parametrize(
    ("raw", "problem", "place"),
    [
        (b'{"a": [1, 9223372036854775808]}', "number too large", "a"),
        (b'{"a": -9223372036854775809}', "number too large", "a"),
        (b'{"a": ' + b"7" * 5000 + b"}", "number too large", "a"),
        (b'{"a": {"b": NaN}}', "damaged or not a JSON file", "a → b"),
        (b"[" * 1000 + b"]" * 1000, "nested more than 32 levels", ""),
        # yajl would give "x?y": an escaped half-character is found all the same.
        (b'{"m": ["ok", "x\\ud800y"]}', "damaged character", "m → 2"),
        (b'{"m": "\\udc00 alone"}', "damaged character", "m"),
        (b'{"m": "\\ud83d\\ude00", "n": "\\ud800"}', "damaged character", "n"),
        (b'{"m": "\xed\xa0\xbd"}', "not UTF-8", ""),
    ],
)
def test_hostile_values_are_refused_with_their_place(raw: bytes, problem: str, place: str) -> None:
    with pytest.raises(ExportReadError) as refused:
        read(raw)
    assert problem in refused.value.problem
    assert refused.value.place.startswith(place)


def test_escaped_characters_are_read_exactly() -> None:
    """A whole emoji escaped as its two halves, and a backslash before "ud800" (which is
    text, not an escape), come back as written."""
    assert read(b'{"a": "\\ud83d\\ude00", "b": "\\\\ud800", "c": "caf\\u00e9"}') == {
        "a": "😀",
        "b": "\\ud800",
        "c": "café",
    }
