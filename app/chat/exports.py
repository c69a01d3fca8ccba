"""Export and import for the window, as jobs off the loop's thread (`ChatService.exports`).

Each job opens its own connection (`app.store.export` does the work). When it
ends the front end is told through `ChatEvents`: a notice saying what was done,
an error in plain words, and after an import the whole list of conversations
(`sessions_listed`), so the sidebar shows the new ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.chat.events import ChatEvents
from app.chat.runner import Job, JobRunner
from app.core.errors import UserFacingError
from app.store.database import connect
from app.store.export_file import AlreadyImportedError, ExportFormat
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.store.export import ExportResult, ImportResult

__all__ = ["ExportFormat", "Exports"]

T = TypeVar("T")


class Exports:
    """Runs each export or import as a job; what it did comes back as events.

    Attributes:
        running: how many exports or imports are under way.
    """

    def __init__(
        self,
        runner: JobRunner,
        events: ChatEvents,
        store: SessionStore,
        database: Path,
        current_id: Callable[[], str | None],
    ) -> None:
        self._runner = runner
        self._events = events
        self._store = store
        self._database = database
        self._current_id = current_id
        self.running = 0

    def export(
        self,
        destination: Path,
        fmt: ExportFormat,
        session_ids: Sequence[str] | None = None,
        *,
        replace: bool = False,
    ) -> None:
        """Write the conversations `session_ids` (None: all) to `destination`; an existing
        file is replaced only with `replace` (the user said so), else refused in words."""
        database = self._database
        wanted = None if session_ids is None else list(session_ids)

        def work(_job: Job[ExportResult]) -> ExportResult:
            # Imported on the worker: its models are not needed until a file is written.
            from app.store.export import export_conversations

            connection = connect(database)
            try:
                return export_conversations(
                    connection,
                    destination,
                    fmt=fmt,
                    session_ids=wanted,
                    database=database,
                    replace=replace,
                )
            finally:
                connection.close()

        self._start(Job("export", work, done=self._exported, failed=self._failed))

    def import_file(self, source: Path, *, as_copy: bool = False) -> None:
        """Add the conversations of the JSON export `source` (all of them, or none)."""
        database = self._database

        def work(_job: Job[ImportResult]) -> ImportResult:
            from app.store.export import import_conversations, read_export

            export = read_export(source)
            connection = connect(database)
            try:
                return import_conversations(connection, export, as_copy=as_copy, database=database)
            finally:
                connection.close()

        def failed(error: UserFacingError) -> None:
            if isinstance(error, AlreadyImportedError):
                error.source = source  # the window offers "Import as a copy" of this file
            self._failed(error)

        self._start(Job("import", work, done=self._imported, failed=failed))

    def _start(self, job: Job[T]) -> None:
        self.running += 1
        self._runner.start(job)

    def _exported(self, result: ExportResult) -> None:
        self.running -= 1
        noun = "conversation" if result.conversations == 1 else "conversations"
        self._events.notice_raised(
            "Export done", f"Exported {result.conversations} {noun} to {result.path}."
        )

    def _imported(self, result: ImportResult) -> None:
        self.running -= 1
        self._events.sessions_listed(self._store.list_sessions(), self._current_id())
        count = len(result.titles)
        if count == 0:
            self._events.notice_raised("Import done", "The file held no conversations.")
            return
        shown = ", ".join(f"“{title}”" for title in result.titles[:3])
        more = f" and {count - 3} more" if count > 3 else ""
        noun = "conversation" if count == 1 else "conversations"
        self._events.notice_raised("Import done", f"Imported {count} {noun}: {shown}{more}.")

    def _failed(self, error: UserFacingError) -> None:
        self.running -= 1
        self._events.error_raised(error)
