"""The `cairn` command line: `cairn export`, `cairn import`, `cairn search`.

Works without a display and never imports Qt. It uses the data folder of
`app.core.paths` (CAIRN_HOME honoured). Exporting may run while the window is
open (it only reads; SQLite's WAL lets it); importing writes, so it takes the
instance lock and refuses plainly when Cairn is open.

Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 wrong usage.

Adding a subcommand is one `Command` in `COMMANDS`: a name, a one-line help, a
function adding its arguments, and a function running it.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app import APP_NAME, __version__
from app.core.dates import stamp
from app.core.errors import AlreadyRunningError, CairnError, StorageError, UserFacingError
from app.core.paths import AppPaths
from app.core.platform import utf8_stream
from app.core.search import Author, SearchOrder, SearchQuery
from app.store.database import (
    can_write,
    connect,
    mark_clean_shutdown,
    open_database,
    open_read_only,
)
from app.store.export import (
    AlreadyImportedError,
    ExportFormat,
    export_conversations,
    import_conversations,
    read_export,
)
from app.store.instance_lock import InstanceLock
from app.store.search import ArchiveSearch

OK, FAILED, USAGE = 0, 1, 2
CAIRN_IS_OPEN = "Cairn is open; close it and try again."


@dataclass(frozen=True)
class Context:
    """What a command runs with: the data folders and where to print."""

    paths: AppPaths
    out: TextIO
    err: TextIO


@dataclass(frozen=True)
class Command:
    """One subcommand: `run` returns the exit code, or raises a `UserFacingError`."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], int]


# --- export ----------------------------------------------------------------------------


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--conversation",
        metavar="ID",
        action="append",
        help="export this conversation (repeat for several)",
    )
    which.add_argument("--all", action="store_true", help="export every conversation (default)")
    parser.add_argument(
        "--format",
        choices=[fmt.value for fmt in ExportFormat],
        help="json: complete, can be imported back; markdown: for reading "
        "(default: from FILE's extension, .md for markdown, else json)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace FILE if it exists (default: refuse)"
    )
    parser.add_argument("file", metavar="FILE", type=Path, help="the file to write")


def _export(args: argparse.Namespace, context: Context) -> int:
    target: Path = args.file
    if args.format is not None:
        fmt = ExportFormat(args.format)
    else:
        is_markdown = target.suffix.lower() in (".md", ".markdown")
        fmt = ExportFormat.MARKDOWN if is_markdown else ExportFormat.JSON
    with _reading(context.paths) as connection:
        result = export_conversations(
            connection,
            target,
            fmt=fmt,
            session_ids=args.conversation,
            database=context.paths.database,
            replace=args.force,
        )
    noun = "conversation" if result.conversations == 1 else "conversations"
    print(
        f"Exported {result.conversations} {noun} to {result.path} ({_size(result.size)}).",
        file=context.out,
    )
    return OK


# --- import ----------------------------------------------------------------------------


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as-copy",
        action="store_true",
        help="import conversations already in Cairn again, under new names ending in (copy)",
    )
    parser.add_argument("file", metavar="FILE", type=Path, help="a JSON file made by cairn export")


def _import(args: argparse.Namespace, context: Context) -> int:
    export = read_export(args.file)  # checked before touching the data folder
    with _writing(context.paths) as connection:
        result = import_conversations(
            connection, export, as_copy=args.as_copy, database=context.paths.database
        )
    count = len(result.titles)
    if count == 0:
        print(f"{args.file} holds no conversations; nothing was imported.", file=context.out)
        return OK
    shown = ", ".join(f"“{title}”" for title in result.titles[:5])
    more = f" and {count - 5} more" if count > 5 else ""
    noun = "conversation" if count == 1 else "conversations"
    print(f"Imported {count} {noun}: {shown}{more}.", file=context.out)
    return OK


# --- search ----------------------------------------------------------------------------

_AUTHOR_NAMES = {"you": Author.YOU, "claude": Author.CLAUDE, "summary": Author.SUMMARY}
_AUTHOR_LABELS = {Author.YOU: "You", Author.CLAUDE: "Claude", Author.SUMMARY: "Summary"}


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", metavar="WORDS", nargs="+", help="the words to find (all of them)")
    parser.add_argument("--conversation", metavar="ID", help="only in this conversation")
    parser.add_argument(
        "--author",
        choices=sorted(_AUTHOR_NAMES),
        action="append",
        help="only what this author wrote (repeat for several; default: everyone)",
    )
    parser.add_argument("--newest", action="store_true", help="newest first (default: best match)")
    parser.add_argument(
        "--limit", type=int, default=20, metavar="N", help="show at most N results (default 20)"
    )


def _search(args: argparse.Namespace, context: Context) -> int:
    if args.limit < 1:
        raise UserFacingError("--limit must be 1 or more.", title="Nothing to show")
    query = SearchQuery(
        text=" ".join(args.words),
        session_id=args.conversation,
        authors=frozenset(_AUTHOR_NAMES[name] for name in args.author or ()),
        order=SearchOrder.NEWEST if args.newest else SearchOrder.BEST,
        limit=args.limit,
    )
    with _reading(context.paths, nothing="There are no conversations to search yet") as connection:
        page = ArchiveSearch(connection, database=context.paths.database).search(query)
    if not page.hits:
        print(f"Nothing found for “{query.text}”.", file=context.out)
        return OK
    for hit in page.hits:
        when = stamp(hit.created_at)
        author = _AUTHOR_LABELS[hit.author] + (" (archived)" if hit.archived else "")
        place = f" #{hit.seq}" if hit.seq is not None else ""
        snippet = "".join(f"[{p.text}]" if p.matched else p.text for p in hit.snippet)
        print(
            f"{hit.session_title} ({hit.session_id}){place} · {when} · {author}", file=context.out
        )
        print(f"    {' '.join(snippet.split())}", file=context.out)
    shown = len(page.hits)
    if page.has_more:
        total = f"{page.total:,}{'+' if page.at_least else ''}"
        print(f"{shown} of {total} results; --limit shows more.", file=context.out)
    return OK


COMMANDS: list[Command] = [
    Command("export", "save conversations to a JSON or Markdown file", _export_arguments, _export),
    Command("import", "add the conversations of a JSON export", _import_arguments, _import),
    Command("search", "find words in every conversation", _search_arguments, _search),
]


def command_names() -> frozenset[str]:
    """The subcommands `python -m app` hands to this module."""
    return frozenset(command.name for command in COMMANDS)


# --- the data folder -------------------------------------------------------------------


@contextmanager
def _reading(
    paths: AppPaths, *, nothing: str = "There are no conversations to export yet"
) -> Iterator[sqlite3.Connection]:
    """A connection for reading: beside a running Cairn, or on its own when it is closed."""
    if not paths.database.is_file():
        raise StorageError(f"{nothing} (no database in {paths.data_dir}).")
    if not can_write(paths.database):
        # Reading needs no write: a read-only folder (a backup disk, a locked share) is read
        # as it is, nothing written beside it. No lock: no one can write there either.
        with tempfile.TemporaryDirectory(prefix="cairn-read-only-") as scratch:
            opened = open_read_only(paths.database, Path(scratch))
            try:
                yield opened.connection
            finally:
                opened.connection.close()
        return
    lock = InstanceLock(paths.data_dir)
    try:
        lock.acquire()
    except AlreadyRunningError:
        # The window owns the database and has brought it up to date: just read beside it.
        connection = connect(paths.database)
        try:
            yield connection
        finally:
            connection.close()
        return
    with _opened(paths, lock) as connection:
        yield connection


@contextmanager
def _writing(paths: AppPaths) -> Iterator[sqlite3.Connection]:
    """The database, with the instance lock held: no window writes meanwhile."""
    try:
        paths.ensure()
        paths.make_private()
    except OSError as error:
        raise StorageError(
            f"Cairn can't create its folders ({error.strerror}: {error.filename}). "
            "Check that you may write there, or set CAIRN_HOME to another folder."
        ) from error
    lock = InstanceLock(paths.data_dir)
    try:
        lock.acquire()
    except AlreadyRunningError as error:
        raise AlreadyRunningError(CAIRN_IS_OPEN, detail=error.detail) from error
    with _opened(paths, lock) as connection:
        yield connection


@contextmanager
def _opened(paths: AppPaths, lock: InstanceLock) -> Iterator[sqlite3.Connection]:
    """Open as the window does (checks, migrations) and close as it does; then release
    `lock` (held by the caller), whether or not the database opened."""
    try:
        opened = open_database(paths.database)
        try:
            yield opened.connection
        finally:
            opened.connection.close()
            mark_clean_shutdown(opened.path)
    finally:
        lock.release()


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024**2:
        return f"{size / 1024:.0f} KB"
    return f"{size / 1024**2:.1f} MB"


# --- the parser ------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn",
        description=f"{APP_NAME} from the command line. Run `cairn` alone to open the window.",
        epilog="Environment: CAIRN_HOME (one folder for data, settings and logs).",
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    paths: AppPaths | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one subcommand; returns the exit code (0 done, 1 refused or failed, 2 usage)."""
    # UTF-8 whatever the console: a redirect on Windows is cp1252 otherwise.
    out = out or utf8_stream(sys.stdout)
    err = err or utf8_stream(sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as stop:  # --help, --version, or a usage error
        return stop.code if isinstance(stop.code, int) else USAGE
    context = Context(paths or AppPaths.from_environment(), out, err)
    run: Callable[[argparse.Namespace, Context], int] = args.run
    try:
        return run(args, context)
    except AlreadyImportedError as error:
        print(f"{error.message} (cairn import --as-copy FILE)", file=err)
    except UserFacingError as error:
        print(error.message, file=err)
    except CairnError as error:
        print(f"Something went wrong: {error}", file=err)
    except OSError as error:
        print(f"Cairn couldn't finish: {error.strerror or error}.", file=err)
    return FAILED
