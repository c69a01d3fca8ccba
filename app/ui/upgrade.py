"""After an upgrade: the walks over every message its migrations left (the search index,
the checksums: app.store.backfill) run on a worker once the window has painted.

Meanwhile the window is as after a crash, while "Checking your conversations…" runs:
the conversations can be read, opened and searched in History (which says its results
may miss a few), writes are held (app.store.transactions.UPDATING), and a calm notice
says how far the update is. Sending waits, and the composer says why. A failure is
said in plain words; nothing is lost, the window stays readable, and the next start
goes on from where the update stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from app.chat.runner import Job
from app.core.errors import StorageError, UserFacingError
from app.store.backfill import Progress, run_backfills
from app.store.transactions import UPDATING, release_writes, writes_held
from app.ui.banner import BannerKind
from app.ui.controller import ChatController
from app.ui.main_window import MainWindow

log = logging.getLogger(__name__)

UPDATING_TEXT = (
    "You can read your conversations and History meanwhile; search may miss a few matches "
    "until this is done. If you quit, nothing is lost: it goes on the next time Cairn starts."
)
SENDING_WAITS = "Sending waits until Cairn has finished updating your conversations."
FAILED_TITLE = "Cairn couldn't finish updating your conversations"
FAILED_TEXT = (
    "Nothing was lost, and you can keep reading your conversations. Cairn will try again "
    "the next time it starts."
)
SENDING_OFF = (
    "Sending is off until Cairn has finished updating your conversations: it tries again "
    "the next time it starts."
)


def updating_title(percent: int) -> str:
    """ "Updating your conversations for this version… 34 %"."""
    return f"{UPDATING.title} {percent} %"


class Upgrade:
    """Runs the back-fills of `database` after the first paint and shows how far they are.

    Attributes:
        running: the update has started and not ended.
        percent: how far it is (what the notice says).
    """

    def __init__(
        self,
        window: MainWindow,
        controller: ChatController,
        database: Path,
        *,
        finished: Callable[[], None],
    ) -> None:
        """`finished`: called on the GUI thread once every back-fill is done."""
        self._window = window
        self._controller = controller
        self._database = database
        self._finished = finished
        self.running = False
        self.percent = 0
        self._closed_by_user = False  # the notice's ✕: not shown again for each percent
        window.banner.dismissed.connect(self._dismissed)

    def start(self) -> None:
        """Say so, hold sending, and run the back-fills on a worker."""
        self.running = True
        self._window.composer.set_waiting(SENDING_WAITS)
        self._show(0)
        database, post = self._database, self._controller.loop.post

        def work(job: Job[bool]) -> bool:
            def told(progress: Progress) -> None:
                post(lambda: self._told(progress))

            return run_backfills(database, told=told, stop=lambda: job.cancelled)

        self._controller.service.runner.start(
            Job("upgrade-backfill", work, done=self._done, failed=self._failed)
        )

    def _told(self, progress: Progress) -> None:
        if self.running and progress.percent != self.percent:
            self._show(progress.percent)

    def _show(self, percent: int) -> None:
        """The notice, unless the user closed it or something else (an error) is shown."""
        banner = self._window.banner
        self.percent = percent
        if self._closed_by_user or (banner.isVisible() and not self._showing()):
            return
        self._window.show_notice(updating_title(percent), UPDATING_TEXT)

    def _showing(self) -> bool:
        banner = self._window.banner
        return banner.isVisible() and banner.title_label.text().startswith(UPDATING.title)

    def _dismissed(self) -> None:
        if self.running and self._window.banner.title_label.text().startswith(UPDATING.title):
            self._closed_by_user = True  # the composer still says why sending waits

    def _done(self, complete: bool) -> None:
        if not complete:
            return  # stopped for the quit: the next start goes on
        self.running = False
        self.percent = 100
        log.info("The update of the conversations for this version is done.")
        if self._showing():
            self._window.banner.hide()
        release_writes(self._database, UPDATING)
        self._window.composer.set_waiting(None)
        if not writes_held(self._database):
            self._finished()

    def _failed(self, error: UserFacingError) -> None:
        self.running = False
        log.warning("Updating the conversations failed: %s (%s)", error.message, error.detail)
        self._window.composer.set_waiting(SENDING_OFF)
        self._window.banner.show_message(
            BannerKind.ERROR, FAILED_TITLE, f"{_what_went_wrong(error)} {FAILED_TEXT}"
        )


def _what_went_wrong(error: UserFacingError) -> str:
    """What went wrong, in the error's plain words."""
    if isinstance(error, StorageError) and error.message:
        return error.message
    return "Something went wrong while updating them."
