"""Start-up and shut-down: folders, logging, the single-instance lock, the
database, then the window — painted before anything slow (the SDK) loads."""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from app import APP_NAME, __version__
from app.core.errors import StorageError, UserFacingError
from app.core.paint_settings import paint_settings_of, read_paint_settings
from app.core.paths import FOLDER_ERROR_TITLE, AppPaths, describe_folder_error
from app.logs import setup_logging, teardown_logging
from app.store.backfill import pending as pending_backfills
from app.store.database import (
    CheckCancel,
    CheckOutcome,
    CheckResult,
    can_write,
    check_database,
    mark_clean_shutdown,
    open_database,
    open_read_only,
)
from app.store.instance_lock import InstanceLock
from app.store.transactions import (
    UPDATING,
    WRITES_HELD_TITLE,
    hold_writes,
    release_writes,
    translated_errors,
    writes_held,
)
from app.ui.controller import ChatController
from app.ui.main_window import MainWindow
from app.ui.quit_guard import QuitGuard
from app.ui.theme import apply_theme

# The chat side (app.chat, its stores, the key store) is imported when the controller
# builds the service, once the window has painted (`CairnSession.wire`, issue 20).
if TYPE_CHECKING:
    from app.chat.runner import Job
    from app.chat.service import ProviderFactory, ServiceDependencies
    from app.core.settings import SettingsLoadResult
    from app.llm.provider import ChatProvider
    from app.secrets.keystore import KeyStore
    from app.store.checksums import Repair
    from app.store.sessions import SessionStore
    from app.ui.upgrade import Upgrade

log = logging.getLogger(__name__)

READ_ONLY_PLACEHOLDER = "Read-only: Cairn can't save new messages here"


def read_only_notice(folder: Path) -> str:
    return (
        f"Cairn can't write to its data folder ({folder}), so it opened your conversations "
        "read-only: you can read, search and export them, but nothing new can be saved. "
        "Make the folder writable, then start Cairn again to write."
    )


DESKTOP_FILE_NAME = "io.github.cairn_chat.Cairn"
# app.ui.smoke.SMOKE_VARIABLE: that module is imported only when it is set.
SMOKE_VARIABLE = "CAIRN_SMOKE_MESSAGE"
# The integrity check that open_database skipped runs this long after the first
# paint, when filling the window is done.
BACKGROUND_CHECK_DELAY_SECONDS = 2.0
# Said while the check after a crash runs (the window is read-only meanwhile).
CHECKING_NOTICE = (
    "Cairn was not closed normally last time. You can read your conversations while "
    "it makes sure they are sound; writing comes back in a moment."
)
# What the warm-up loads (the tokenizer, the SDK) is set aside from the garbage
# collector's full passes this long after the first paint.
FREEZE_DELAY_SECONDS = 5.0
# A worker thread busy in Python keeps the GIL for this long each time the GUI
# thread asks for it, and every call from Qt into Python (a slot, a paint) asks.
GIL_SWITCH_INTERVAL_SECONDS = 0.001


def set_aside_from_collections() -> None:
    """Move every object alive now out of the garbage collector's full passes.

    A full collection walks every tracked object and stops every thread while it
    does: ~100-250 ms once pydantic and the SDK are loaded (bench/bench_stall.py).
    What start-up made — modules, classes, schemas, Qt's wrappers — lives as
    long as the app, so walking it again and again only costs stalls.
    """
    gc.freeze()


def default_provider_factory(api_key: str, base_url: str | None) -> ChatProvider:
    # Imported here: its module (the API's errors, the request body) is needed for the
    # first request, not to paint.
    from app.llm.anthropic_provider import AnthropicProvider

    return AnthropicProvider(api_key, base_url)


class _FirstPaint(QObject):
    """Calls `then` (on the next turn of the event loop) after `widget` first paints."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._then = then
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._then)
        return False


@dataclass
class CairnSession:
    """One running Cairn: what `open_cairn` set up and `close` tears down."""

    window: MainWindow
    controller: ChatController
    # The database's connection; the service's store owns it once built (`close` closes it).
    connection: sqlite3.Connection
    lock: InstanceLock
    database: Path
    checked_at_open: bool = True
    # Why the database is checked before anything is written (Cairn did not close
    # normally): the window shows at once, read-only, and the check runs first thing.
    check_first: str | None = None
    notices: list[tuple[str, str]] = field(default_factory=list)
    # The app sets this; tests, which open many windows in one process, do not.
    freeze_startup: bool = False
    # Where a read-only folder's database is read from (a copy), removed at close; set
    # only in read-only mode, where nothing is recorded at close.
    scratch: Path | None = None
    # An upgrade left walks over every message to do (app.store.backfill): they run after
    # the first paint, the window read-only meanwhile (app.ui.upgrade).
    upgrading: bool = False
    started: bool = False
    upgrade: Upgrade | None = None
    _first_paint: QObject | None = None

    @property
    def store(self) -> SessionStore:
        """The loop thread's store: the chat service's (built when first asked for)."""
        return self.controller.service.store

    def show(self) -> None:
        """Show the window empty, and fill it once it has painted once.

        Opening the newest conversation builds up to a page of message widgets;
        doing that after the first paint puts the window on screen sooner.
        """
        self._first_paint = _FirstPaint(self.window, self._after_first_paint)
        self.window.show()

    def _after_first_paint(self) -> None:
        # The first use of `controller.service` builds the chat service (and imports the
        # chat side): here, after the window has painted (issue 20).
        self.window.start(writable=self.check_first is None and not self.upgrading)
        for title, text in self.notices:
            self.window.show_notice(title, text)
        if self.upgrading:
            from app.ui.upgrade import Upgrade

            self.upgrade = Upgrade(
                self.window, self.controller, self.database, finished=self._upgraded
            )
        if self.check_first is not None:
            self.window.show_notice(WRITES_HELD_TITLE, CHECKING_NOTICE)
            self._check_database()  # then the upgrade's walks, once it passed
        elif self.upgrade is not None:
            self.upgrade.start()
        self.started = True
        self.window.settings.ask_for_key_if_missing()
        if self.freeze_startup:
            set_aside_from_collections()
            gc.enable()  # off since `cairn` started (app.__main__), nothing collected till now
            self.controller.loop.call_later(FREEZE_DELAY_SECONDS, set_aside_from_collections)
            # The SDK loads later, when the user starts typing (the model list loads it):
            # what it made is set aside once that list arrives, or the first turn's full
            # collection walks it (~100 ms of the GUI thread waiting, bench_path).
            self.controller.models_changed.connect(self._set_aside_the_sdk)
        # After an upgrade's walks instead (`_upgraded`): both read every message.
        if not self.checked_at_open and self.scratch is None and self.upgrade is None:
            self.controller.loop.call_later(BACKGROUND_CHECK_DELAY_SECONDS, self._check_database)

    def _set_aside_the_sdk(self, *_models: object) -> None:
        if "anthropic" in sys.modules:
            self.controller.models_changed.disconnect(self._set_aside_the_sdk)
            set_aside_from_collections()

    def _upgraded(self) -> None:
        """The upgrade's walks are done and nothing else holds writes."""
        if self.scratch is None:
            self.controller.service.writes_resumed()
        if not self.checked_at_open and self.scratch is None:
            self.checked_at_open = True  # checked once, now
            self._check_database()

    def _check_database(self) -> None:
        """The integrity check open_database skipped (a clean shutdown), then every text
        against its checksum, on a worker."""
        from app.chat.runner import Job
        from app.store.backup import mend_texts
        from app.store.checksums import Repair

        cancel, database = CheckCancel(), self.database

        def work(job: Job[tuple[CheckResult, Repair]]) -> tuple[CheckResult, Repair]:
            result = check_database(database, cancel=cancel)
            if result.outcome is not CheckOutcome.OK or job.cancelled:
                return result, Repair()
            # The file is sound: writes held since a crash may go on (the window is told
            # in `_database_checked`), and texts that no longer match are put back.
            release_writes(database)
            return result, mend_texts(database)

        self.controller.service.runner.start(
            Job(
                "check-database",
                work,
                done=self._database_checked,
                failed=lambda error: log.warning("Checking the texts failed: %s", error),
                on_cancel=cancel.cancel,
            )
        )

    def _database_checked(self, outcome: tuple[CheckResult, Repair]) -> None:
        result, repair = outcome
        log.info("Background database check: %s (%s)", result.outcome.name, result.detail)
        if result.damaged and result.message:
            # Writes stay held: the next start sets the file aside and salvages it.
            self.window.show_error(
                StorageError(result.message, title="Your conversations need attention")
            )
        elif self.check_first is not None:
            self.check_first = None
            release_writes(self.database)
            self.window.banner.dismiss_titled(WRITES_HELD_TITLE)
            if self.upgrade is not None and not self.upgrade.running:
                self.upgrade.start()
            if not writes_held(self.database):
                self.controller.service.writes_resumed()
        self.controller.service.backups.texts_mended(repair)

    def close(self) -> None:
        """Stop everything, then record a clean shutdown (the next start can skip the check)."""
        self.controller.shutdown()
        self.connection.close()
        release_writes(self.database, UPDATING)  # what is left goes on at the next start
        if self.scratch is None:
            mark_clean_shutdown(self.database)
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.lock.release()
        teardown_logging()


def open_cairn(
    paths: AppPaths,
    *,
    provider_factory: ProviderFactory = default_provider_factory,
    keystore: KeyStore | None = None,
) -> CairnSession:
    """Set everything up; raises `UserFacingError` (plain words) when Cairn cannot start."""
    try:
        paths.ensure()
    except OSError as error:
        raise StorageError(
            describe_folder_error(error), title=FOLDER_ERROR_TITLE, detail=repr(error)
        ) from error
    setup_logging(paths.log_dir)
    log.info("Starting %s %s", APP_NAME, __version__)
    paths.make_private()  # said once in the log, when something was open to others
    # The theme and text size, read without the settings' model (pydantic: a fifth of the
    # start's instructions, bench_startup --callgrind); the model validates the whole file
    # when the chat service is built, after the paint, and says then if it was damaged.
    # A value only the model can judge (a size written "12"): loaded now, as before.
    paint = read_paint_settings(paths.settings_file)
    loaded: SettingsLoadResult | None = None
    if paint is None:
        loaded = _load_settings(paths)
        paint = paint_settings_of(loaded.settings)
    app = QApplication.instance()
    if isinstance(app, QApplication):
        apply_theme(app, paint.theme)
    lock = InstanceLock(paths.data_dir)
    read_only = paths.database.exists() and not can_write(paths.database)
    scratch: Path | None = None
    if read_only:
        # Nothing can be written there, so no other Cairn can either: no lock to take.
        scratch = Path(tempfile.mkdtemp(prefix="cairn-read-only-"))
        opened = open_read_only(paths.database, scratch)
    else:
        lock.acquire()
        try:
            opened = open_database(paths.database, check_after_crash_later=True)
        except BaseException:
            lock.release()
            raise
    if opened.check_first is not None:
        hold_writes(opened.path)  # until the check passes (`CairnSession._database_checked`)
    with translated_errors("open your conversations", opened.path):
        upgrading = bool(pending_backfills(opened.connection))
    if upgrading:
        hold_writes(opened.path, UPDATING)  # until the walks are done (app.ui.upgrade)
    database = paths.database
    notices: list[tuple[str, str]] = []

    def dependencies() -> ServiceDependencies:
        # Imported here: the chat side is not needed to paint the window (issue 20).
        from app.chat.service import ServiceDependencies
        from app.secrets.keystore import KeyStore
        from app.store.calibration_file import CalibrationFile
        from app.store.model_cache import ModelCache
        from app.store.sessions import SessionStore
        from app.store.summaries import SummaryStore

        settings = loaded if loaded is not None else _load_settings(paths)
        if loaded is None and settings.notice:
            # Shown with the others, after the window is filled (`CairnSession`).
            notices.append(("Settings reset", settings.notice))
        return ServiceDependencies(
            store=SessionStore(opened.connection, database=opened.path),
            database=database,
            open_store=lambda: SessionStore.open(database),
            open_summaries=lambda: SummaryStore.open(database),
            keystore=keystore or KeyStore(),
            provider_factory=provider_factory,
            settings=settings.settings,
            settings_path=paths.settings_file,
            calibration_file=CalibrationFile.in_data_dir(paths),
            model_cache=ModelCache.in_data_dir(paths),
            read_only=read_only,
        )

    # The controller's signals only: its service is built when first used, after the paint.
    controller = ChatController(
        dependencies, settings=loaded.settings if loaded is not None else None, paint=paint
    )
    window = MainWindow(controller, paths)
    window.quit_guard = QuitGuard(window, controller)  # a reply only in memory is kept
    if read_only:
        window.composer.set_read_only(READ_ONLY_PLACEHOLDER)
        notices.append(("Read-only", read_only_notice(paths.data_dir)))
    if opened.notice:
        notices.append((opened.notice_title, opened.notice))
    if loaded is not None and loaded.notice:
        notices.append(("Settings reset", loaded.notice))
    return CairnSession(
        window,
        controller,
        opened.connection,
        lock,
        opened.path,
        checked_at_open=opened.checked or opened.check_first is not None,
        check_first=opened.check_first,
        notices=notices,
        scratch=scratch,
        upgrading=upgrading,
    )


def _load_settings(paths: AppPaths) -> SettingsLoadResult:
    # Imported here: pydantic and the settings' validators are not needed to paint.
    from app.core.settings import load_settings

    return load_settings(paths.settings_file)


def smoke_from_environment(
    controller: ChatController, window: QWidget, ready: Callable[[], bool]
) -> object:
    """The smoke run CAIRN_SMOKE_MESSAGE asks for (`app.ui.smoke.smoke_from_environment`),
    or None: its module (with the tokenizer's and the summary settings') is imported only
    then, not to paint. Benches put their driver here (bench/real_window.py)."""
    if not os.environ.get(SMOKE_VARIABLE):
        return None
    from app.ui.smoke import smoke_from_environment as smoke_run

    return smoke_run(controller, window, ready)


def startup_problem_box(error: UserFacingError) -> QMessageBox:
    """The dialog that says why Cairn cannot start, in plain words."""
    box = QMessageBox(QMessageBox.Icon.Critical, f"{APP_NAME} — {error.title}", error.message)
    box.setText(f"<b>{error.title}</b>")
    box.setInformativeText(error.message)
    return box


def launch(
    paths: AppPaths, *, show_problem: Callable[[QMessageBox], object] = QMessageBox.exec
) -> CairnSession | None:
    """Open Cairn, or explain in a dialog why it cannot start (None then).

    The dialog is shown with `show_problem`: `exec` in the app (nothing else runs
    yet, so it waits for the user); tests read it without showing it.
    """
    try:
        return open_cairn(paths)
    except UserFacingError as error:
        log.warning("Cannot start: %s (%s)", error.message, error.detail)
        teardown_logging()
        show_problem(startup_problem_box(error))
        return None


def run(argv: Sequence[str]) -> int:
    """The application's main loop; returns the process exit code."""
    # 1 ms instead of CPython's 5: while a worker computes (a summary's extraction),
    # each call from Qt into Python waits at most this long for the GIL.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)
    # Qt's raster engine hands every fill 96 or more lines tall (a scroll bar, a row's
    # background) to a pool of threads and waits for them: for the window's small repaints
    # waking them costs the GUI thread more than the fill (issue 20). Read once, before
    # the first paint; the pixels are the same.
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication(list(argv))
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    apply_theme(app, "system")
    icon = Path(__file__).resolve().parents[2] / "resources" / "cairn.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    session = launch(AppPaths.from_environment())
    if session is None:
        return 1
    follow_system = QGuiApplication.styleHints()
    follow_system.colorSchemeChanged.connect(
        lambda _scheme: apply_theme(app, session.controller.service.settings.theme)
    )
    session.freeze_startup = True
    session.show()
    _smoke = smoke_from_environment(session.controller, session.window, lambda: session.started)
    try:
        return app.exec()
    finally:
        session.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv))
