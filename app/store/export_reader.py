"""Reading an export file as a stream, with limits, before anything is checked or written.

`json.loads` trusts what it reads: a file nested a thousand levels deep ends in a
RecursionError, a 5,000-digit number in a ValueError, a number past 2^63 in an
OverflowError when SQLite is handed it. Here the file is read event by event
(ijson, over yajl's C parser) and every value is checked as it arrives, so the
first thing wrong stops the reading with its place in the file:

- nesting at most `MAX_DEPTH` levels (Cairn's own files use 8);
- a text at most `MAX_TEXT_CHARACTERS` characters, with no half-characters
  (lone surrogates, which no file system or database can keep);
- whole numbers within SQLite's 64-bit range; no number written with 100 digits;
- valid UTF-8 and valid JSON throughout.

`ExportReadError` says what and where ("conversations → 3 → messages → 12 → seq").
"""

from __future__ import annotations

import re
from typing import IO, Any

import ijson
from ijson.backends import python as python_backend

MAX_DEPTH = 32
MAX_TEXT_CHARACTERS = 256 * 1024**2
MAX_NUMBER_DIGITS = 40
SMALLEST_INTEGER = -(1 << 63)
LARGEST_INTEGER = (1 << 63) - 1
_HALF_CHARACTER = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class ExportReadError(ValueError):
    """The file cannot be read as an export; `problem` says what, `place` where.

    Attributes:
        problem: plain words ("a number too large for Cairn to keep").
        place: where, as keys and positions counted from 1, or "" (the file itself).
        cut_short: the file ends before its JSON does.
    """

    def __init__(self, problem: str, place: str, *, cut_short: bool = False) -> None:
        super().__init__(f"{problem} ({place})" if place else problem)
        self.problem = problem
        self.place = place
        self.cut_short = cut_short


def read_json(stream: IO[bytes]) -> Any:
    """The JSON value `stream` holds, built as it is read; raises `ExportReadError`.

    yajl writes an escaped half-character (`\\ud800` alone) as "?", silently: a file
    that escapes any surrogate at all (Cairn's own never do) is read again from its
    start with ijson's Python reader, which keeps it, so it is refused with its place.
    """
    watch = _EscapeWatch(stream)
    try:
        value = _build(ijson.parse(watch, use_float=True))
    except ExportReadError:
        if not watch.seen:
            raise
    else:
        if not watch.seen:
            return value
    stream.seek(0)
    return _build(python_backend.parse(stream, use_float=True))


class _EscapeWatch:
    """Passes `stream`'s bytes through, noting whether a surrogate escape went by."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._tail = b""
        self.seen = False

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        if not self.seen and _SURROGATE_ESCAPE.search(self._tail + chunk):
            self.seen = True
        self._tail = chunk[-5:]
        return chunk


def _build(events: Any) -> Any:
    root: list[Any] = []
    containers: list[Any] = [root]
    path: list[str | int] = []
    key: str | None = None

    def attach(value: Any) -> None:
        parent = containers[-1]
        if isinstance(parent, dict):
            assert key is not None
            parent[key] = value
        else:
            parent.append(value)

    def place() -> str:
        return " → ".join(str(part) for part in path)

    def enter(value: Any) -> None:
        parent = containers[-1]
        if parent is not root:
            path.append(key if isinstance(parent, dict) else len(parent) + 1)  # type: ignore[arg-type]
        attach(value)
        containers.append(value)
        if len(containers) - 1 > MAX_DEPTH:
            raise ExportReadError(
                f"it is nested more than {MAX_DEPTH} levels deep, far more than a Cairn "
                "export ever is",
                place(),
            )

    def leave() -> None:
        containers.pop()
        if len(containers) > 1:
            path.pop()

    def here(name: str | None) -> str:
        parent = containers[-1]
        if parent is root:
            return place()
        part = name if isinstance(parent, dict) else len(parent) + 1
        return " → ".join(str(item) for item in (*path, part))

    try:
        for _prefix, event, value in events:
            if event == "map_key":
                key = value
            elif event == "start_map":
                enter({})
            elif event == "start_array":
                enter([])
            elif event in ("end_map", "end_array"):
                leave()
            else:
                _check_scalar(value, here(key))
                attach(value)
            if len(root) > 1:
                raise ExportReadError("it holds more than one JSON value", "")
    except ExportReadError:
        raise
    except ijson.JSONError as error:
        said = str(error).lower()
        if "utf8" in said or ("invalid char" in said and not path):
            raise ExportReadError("it is not a text file", place()) from error
        if "integer overflow" in said:  # past 2^63: yajl stops there
            raise ExportReadError(
                "it holds a number too large for Cairn to keep", here(key)
            ) from error
        cut = "incomplete" in said or "premature" in said
        raise ExportReadError(
            "it is cut short" if cut else "it is damaged or not a JSON file",
            place() if cut else here(key),
            cut_short=cut,
        ) from error
    except UnicodeError as error:  # a ValueError too: before the numbers' case
        raise ExportReadError("it is not UTF-8 text", place()) from error
    except (ValueError, OverflowError) as error:
        # A number Python refuses to read (thousands of digits) stops yajl's reading.
        raise ExportReadError("it holds a number too long to read", here(key)) from error
    if not root:
        raise ExportReadError("it is empty", "", cut_short=True)
    return root[0]


def _check_scalar(value: Any, place: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if not SMALLEST_INTEGER <= value <= LARGEST_INTEGER:
            raise ExportReadError("it holds a number too large for Cairn to keep", place)
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ExportReadError("it holds a number too large for Cairn to keep", place)
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARACTERS:
            raise ExportReadError(
                f"it holds a text of more than {MAX_TEXT_CHARACTERS:,} characters", place
            )
        if _HALF_CHARACTER.search(value):
            raise ExportReadError(
                "it holds a damaged character (half of an emoji or another sign)", place
            )
        return
    raise ExportReadError("it holds a value Cairn does not know", place)
