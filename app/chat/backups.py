"""Safekeeping, without Qt: the daily backup, restoring a backup, deleting archived originals.

`Backups` is owned by the chat service (one attribute, `service.backups`). Each act
runs as a background job on a connection of its own, so the window never waits
for the disk; outcomes come back as `ChatEvents` (a quiet notice, an error in plain
words, the conversation list and the summaries on screen told again).

Restore refuses while a reply or a summary runs ("Wait for Claude's reply to
finish…"), rather than stopping them: the user's reply is worth more than the
restore, which can simply be asked again a moment later.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import TypeVar

from app.chat.events import ChatEvents
from app.chat.runner import Job, JobRunner
from app.core.errors import UserFacingError
from app.store.backup import BackupInfo, list_backups, restore, take_daily_backup
from app.store.originals import OriginalsStore

log = logging.getLogger(__name__)
_T = TypeVar("_T")

BUSY_MESSAGE = (
    "Wait for Claude's reply to finish and be saved, or for the summary being made to end, then "
    "restore the backup. Nothing was changed."
)


class Backups:
    """The daily backup, restoring one, and deleting originals, for one chat service.

    Attributes:
        database: the live database file.
    """

    def __init__(
        self,
        database: Path,
        runner: JobRunner,
        events: ChatEvents,
        *,
        busy: Callable[[], bool],
        reload: Callable[[], None],
        summaries_touched: Callable[[str], None],
        today: Callable[[], date] = date.today,
        originals_deleted: Callable[[], None] = lambda: None,
    ) -> None:
        """`busy`: whether a reply or summary runs; `reload`: show the conversations
        afresh after a restore; `summaries_touched(session_id)`: tell the window
        about that conversation's summaries again; `originals_deleted`: archived
        messages were deleted (their files' uploads go too: app.chat.uploads)."""
        self.database = database
        self._runner = runner
        self._events = events
        self._busy = busy
        self._reload = reload
        self._summaries_touched = summaries_touched
        self._originals_deleted = originals_deleted
        self._today = today
        self._backup_job: Job[Path | None] | None = None
        self._restore_job: Job[Path] | None = None
        self._failure_said = False

    # --- the daily backup

    def start_daily(self) -> None:
        """Take today's backup in the background, unless it exists (after start-up)."""
        if self._backup_job is not None and not self._backup_job.finished:
            return
        database, today = self.database, self._today()
        self._backup_job = self._runner.start(
            Job(
                "backup",
                lambda job: take_daily_backup(
                    database, today=today, cancelled=lambda: job.cancelled
                ),
                done=self._backed_up,
                failed=self._backup_failed,
            )
        )

    def _backed_up(self, path: Path | None) -> None:
        if path is not None:
            log.info("Backed up the conversations to %s", path)

    def _backup_failed(self, error: UserFacingError) -> None:
        log.warning("The daily backup failed: %s (%s)", error.message, error.detail)
        if not self._failure_said:  # once a run: it is retried at the next start
            self._failure_said = True
            self._events.notice_raised(error.title, error.message)

    def list(self) -> list[BackupInfo]:
        """Every backup, newest first (a short folder listing)."""
        return list_backups(self.database)

    # --- restoring

    @property
    def restoring(self) -> bool:
        return self._restore_job is not None and not self._restore_job.finished

    def restore(self, backup: Path) -> bool:
        """Restore `backup` in the background; False (said in plain words) when not now."""
        if self._busy() or self.restoring:
            self._events.error_raised(UserFacingError(BUSY_MESSAGE, title="Not just now"))
            return False
        database, daily = self.database, self._backup_job

        def work(_job: Job[Path]) -> Path:
            if daily is not None:
                daily.wait()  # a backup being written finishes first
            return restore(database, backup)

        self._restore_job = self._runner.start(
            Job("restore", work, done=self._restored, failed=self._restore_failed)
        )
        return True

    def _restored(self, before: Path) -> None:
        self._reload()
        self._events.notice_raised(
            "Backup restored",
            "Your conversations are back as they were in the backup. What you had just "
            f"before is kept as a backup too ({before.name}), so you can go back to it.",
        )

    def _restore_failed(self, error: UserFacingError) -> None:
        log.warning("Restore failed: %s (%s)", error.message, error.detail)
        self._events.error_raised(error)

    # --- deleting archived originals

    def count_originals(self, summary_id: str) -> int:
        """How many originals the summary still covers (for the confirmation)."""
        return self._with_store(lambda store: store.count_of_summary(summary_id))

    def count_archived(self, session_id: str) -> int:
        """How many archived originals the conversation holds (for the confirmation)."""
        return self._with_store(lambda store: store.count_archived(session_id))

    def originals_deleted_on(self, summary_id: str) -> datetime | None:
        """When the summary's originals were deleted, or None."""
        return self._with_store(lambda store: store.deleted_on(summary_id))

    def delete_originals(self, session_id: str, summary_id: str | None) -> None:
        """Delete one summary's originals (or, with None, the conversation's archive)."""
        database = self.database

        def work(_job: Job[int]) -> int:
            store = OriginalsStore.open(database)
            try:
                if summary_id is None:
                    return store.delete_archived(session_id)
                return store.delete_of_summary(summary_id)
            finally:
                store.close()

        def done(deleted: int) -> None:
            self._summaries_touched(session_id)
            self._originals_deleted()
            self._events.notice_raised(
                "Original messages deleted",
                f"Deleted {deleted} original message{'s' if deleted != 1 else ''}. "
                "The summaries stay, and Claude keeps what they say.",
            )

        self._runner.start(
            Job("delete-originals", work, done=done, failed=self._events.error_raised)
        )

    def _with_store(self, read: Callable[[OriginalsStore], _T]) -> _T:
        store = OriginalsStore.open(self.database)
        try:
            return read(store)
        finally:
            store.close()
