"""Code the standard library compiles from text at each start, compiled once and kept
(issue 20).

A dataclass's `__init__`, `__repr__`, `__eq__`, `__setattr__`… are Python source that
`dataclasses` writes and compiles as each class is made: ~750 functions for the classes
the window imports, ~60 ms of CPU before the first paint (their `_create_fn` timed); and
`typing` compiles each string annotation it meets (~900 in pydantic's schema types,
~10 ms). Compiled code depends on the text alone, so it is kept as Python keeps a
module's bytecode: in the package's `__pycache__`, for this interpreter's bytecode
version only, not written where Python would not write bytecode (PYTHONDONTWRITEBYTECODE,
a read-only or frozen install). A file that does not read back is ignored and written
anew; each text still runs exactly the code it compiles to, only the compiling is
skipped. The file keeps what the last start used, so what an upgrade left unused goes.

Only `cairn` (app.__main__) installs it, before the window's imports; once the window
has painted, the app writes what was new and lets go of it (`finish`): what is compiled
later is not on the way to a paint, and the texts (~0.7 MB) are not kept in memory.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import typing
from pathlib import Path
from types import CodeType
from typing import Any

from app.core.platform import replace_file

_FILE_NAME = f"compiled-texts.{sys.implementation.cache_tag}.bin"


class _Cache:
    """Mode and source text (`"exec\0def …"`) → its compiled code."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = {}
        self.used: set[str] = set()
        self.compiled_here = 0  # texts this process compiled (not in the file it read)
        self.new = 0  # of them, not written yet

    def load(self) -> None:
        if self.path is None:
            return
        try:
            data = self.path.read_bytes()
        except OSError:
            return
        magic = importlib.util.MAGIC_NUMBER
        if not data.startswith(magic):
            return
        try:
            codes = marshal.loads(data[len(magic) :])
        except (EOFError, ValueError, TypeError):
            return  # torn or foreign: compiled again, then written anew
        if isinstance(codes, dict):
            self.codes = {
                text: code
                for text, code in codes.items()
                if isinstance(text, str) and isinstance(code, CodeType)
            }

    def compiled(self, text: str, mode: str = "exec") -> CodeType:
        """What `compile(text, "<string>", mode)` returns (a SyntaxError is raised, not
        kept)."""
        key = f"{mode}\0{text}"
        code = self.codes.get(key)
        if code is None:
            code = compile(text, "<string>", mode)
            self.codes[key] = code
            self.compiled_here += 1
            self.new += 1
        self.used.add(key)
        return code

    def save(self) -> None:
        """Write the file when something was compiled that it did not hold."""
        if self.path is None or not self.new:
            return
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            used = {key: code for key, code in self.codes.items() if key in self.used}
            temporary.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(used))
            # No fsync: a file torn by a crash does not read back and is written anew.
            replace_file(temporary, self.path)
            self.new = 0
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


_installed: _Cache | None = None


def cache_file() -> Path | None:
    """Where the code is kept: beside this package's bytecode, where Python keeps it."""
    if sys.dont_write_bytecode or getattr(sys, "frozen", False):
        return None
    package = Path(__file__).resolve().parent
    if sys.pycache_prefix:
        folder = Path(sys.pycache_prefix) / package.relative_to(package.anchor)
    else:
        folder = package / "__pycache__"
    return folder / _FILE_NAME


def install(path: Path | None = None) -> bool:
    """Compile dataclasses' methods and typing's string annotations through the cache
    from now on (False: not installed, something else already stands in for them)."""
    global _installed
    if _installed is not None:
        return True
    if "exec" in vars(dataclasses) or "compile" in vars(typing):
        return False  # someone else's already
    cache = _Cache(path if path is not None else cache_file())
    cache.load()

    # dataclasses compiles each method's text with the builtin exec, looked up among
    # its module's globals first: an `exec` there takes the text's code from the cache.
    def cached_exec(
        source: str | CodeType,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
    ) -> None:
        code = cache.compiled(source) if isinstance(source, str) else source
        builtins.exec(code, globals, locals)

    # typing.ForwardRef compiles each string annotation with the builtin compile, looked
    # up the same way.
    def cached_compile(
        source: Any, filename: Any, mode: str, flags: int = 0, *arguments: Any, **options: Any
    ) -> Any:
        if (
            isinstance(source, str)
            and filename == "<string>"
            and mode == "eval"
            and not flags
            and not arguments
            and not options
        ):
            return cache.compiled(source, mode)
        return builtins.compile(source, filename, mode, flags, *arguments, **options)

    setattr(dataclasses, "exec", cached_exec)  # noqa: B010 - a module global, not an attribute
    setattr(typing, "compile", cached_compile)  # noqa: B010 - the same
    _installed = cache
    return True


def save() -> None:
    """Keep what was compiled since the cache was read (a no-op when not installed)."""
    if _installed is not None:
        _installed.save()


def finish() -> None:
    """Keep what was compiled, then compile as the standard library does again and free
    the cache."""
    global _installed
    if _installed is None:
        return
    _installed.save()
    for module, name in ((dataclasses, "exec"), (typing, "compile")):
        with contextlib.suppress(AttributeError):
            delattr(module, name)
    _installed = None
