"""The main window: conversations on the left; on the right the header, the transcript,
the notes above the composer, and the composer.

The window lays out those panes and wires them to the controller's signals and the
chat service. What each part shows or does lives with that part: the header
(`window_header`), the menus (`window_menus`), Settings and the key
(`settings_actions`), summaries (`summary_actions`), messages' actions
(`message_actions`, `reply_actions`), history and search (`history_actions`)…
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeySequence,
    QResizeEvent,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QSplitter, QVBoxLayout, QWidget

from app import APP_NAME
from app.core.errors import ApiKeyMissingError, ApiKeyRejectedError, UserFacingError
from app.core.message_kinds import MessageStatus, Role
from app.store.export_file import AlreadyImportedError
from app.ui.banner import Banner, BannerKind
from app.ui.composer import Composer
from app.ui.confirm import ask_to_confirm
from app.ui.delete_originals_dialog import OriginalsDeletion
from app.ui.export_actions import ExportActions
from app.ui.history_actions import HistoryActions
from app.ui.instructions_actions import InstructionsActions
from app.ui.message_actions import MessageActions
from app.ui.reading_layout import ReadingLayout
from app.ui.reading_order import Pane, ReadingOrder
from app.ui.reply_actions import ReplyActions
from app.ui.reply_notifier import ReplyNotifier
from app.ui.restore_action import restore_action
from app.ui.settings_actions import SettingsActions
from app.ui.sidebar import Sidebar
from app.ui.summary_actions import CardActions, SummaryActions
from app.ui.transcript import TranscriptView
from app.ui.transcript_lookups import TranscriptLookups
from app.ui.unsaved_mark import TranscriptUnsaved
from app.ui.window_attachments import FileDrops, TranscriptAttachments, wire_attachments
from app.ui.window_header import WindowHeader
from app.ui.window_menus import build_menus

if TYPE_CHECKING:
    from app.chat.events import Activity
    from app.chat.service import ChatService
    from app.core.models import Message, Session
    from app.core.paths import AppPaths
    from app.core.search import ConversationOverview, SearchPage, SearchQuery, TimelineEntry
    from app.ui.controller import ChatController
    from app.ui.quit_guard import QuitGuard

CHANGE_KEY_ACTION = "Change key…"
IMPORT_COPY_ACTION = "Import as a copy"
DRAFT_DEBOUNCE_MS = 150

log = logging.getLogger(__name__)


class _ServiceHistory:
    """The chat service's History (a `HistorySource`), looked up when first asked: the
    window is built, and painted, before the service exists (issue 20)."""

    def __init__(self, controller: ChatController) -> None:
        self._controller = controller

    def search(self, query: SearchQuery, done: Callable[[SearchPage], None]) -> None:
        self._controller.service.history.search(query, done)

    def matching_sessions(self, text: str, done: Callable[[list[str]], None]) -> None:
        self._controller.service.history.matching_sessions(text, done)

    def conversations(self) -> list[ConversationOverview]:
        return self._controller.service.history.conversations()

    def timeline(self, session_id: str) -> list[TimelineEntry]:
        return self._controller.service.history.timeline(session_id)


class _ConversationPane(QWidget):
    """The right-hand pane (header, transcript, notes, composer): says when it was
    resized or shown, its children laid out, for the composer's alignment (an override,
    not an event filter, which would call into Python for each of its events)."""

    laid_out = Signal()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.laid_out.emit()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.laid_out.emit()


class MainWindow(QMainWindow):
    """Lays out the panes and wires them; holds no conversation logic itself.

    Dialogs are opened with `open()`, never `exec()`: the event loop keeps running
    (replies keep streaming), and nothing can wait on a dialog nobody closes.

    Attributes:
        chat: the chat service the window acts on (`controller.service`).
        header: the title, the model picker, the gauge and the header's buttons.
        settings: Settings and the API key dialog.
        summaries: Summarize now, the preview, the banner after a summary, history.
        history: the History window, Ctrl+F, opening a conversation at a message.
        confirm_box: the "Delete conversation?" box open now, if any.
        quit_guard: asks before a close would lose a reply kept only in memory (set by
            the app).
        drops: files dropped on the window go to the composer's tray (once the chat
            service is built).

    The window's events reach Python only through its own overrides (closing, drops,
    activation), never an event filter: a filter on the window is a call into Python,
    waiting for the GIL, for each of its events, every repaint's update request among
    them (issue 20).
    """

    def __init__(self, controller: ChatController, paths: AppPaths) -> None:
        super().__init__()
        self.controller = controller
        self.paths = paths
        self.confirm_box: QMessageBox | None = None
        self.quit_guard: QuitGuard | None = None
        self.drops: FileDrops | None = None
        self._copy_source: Path | None = None  # a file "Already in Cairn" (Import as a copy)
        self._title_shown: tuple[str, bool] | None = None  # the header's title, its gauge shown
        self.setObjectName("mainWindow")
        self.resize(1100, 740)
        self.setMinimumSize(720, 480)

        self.sidebar = Sidebar(self)
        self.header = WindowHeader(self)
        # A summary card's "Delete original messages…" asks first (`deletion`).
        cards = CardActions(
            controller, lambda summary_id: self.deletion.ask_for_summary(summary_id)
        )
        self.transcript = TranscriptView(self, cards=cards)
        self.composer = Composer(self)
        self.banner = Banner(self)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("statusLine")
        self.status_label.setAccessibleName("Status")
        self.status_label.hide()
        self.summaries = SummaryActions(controller, self, self.banner, self.transcript)
        self.exports = ExportActions(controller, self)
        self.history = HistoryActions(
            controller,
            self,
            self.transcript,
            self.sidebar,
            self._load_earlier,
            _ServiceHistory(controller),
        )
        self.history.jump.missed.connect(self.show_notice)  # a place gone: said so
        self.instructions = InstructionsActions(controller, self.header, self)
        self.header.add_before_settings(self.summaries.button)
        self.summaries.follow_width_of(self.header)
        self.deletion = OriginalsDeletion(controller, self.transcript, self)
        self._notes = self._lay_out_panes()
        self.reading = ReadingLayout(
            self.transcript, self.composer, controller, self, self._pane.laid_out
        )
        self.settings = SettingsActions(controller, self, paths, self.reading.text_size)
        new_conversation = QAction("&New conversation", self)
        new_conversation.triggered.connect(self._new_conversation)
        summaries, sidebar, history = self.summaries, self.sidebar, self.history
        build_menus(
            self,
            new_conversation=new_conversation,
            settings=self.settings.action,
            exports=self.exports,
            restore=restore_action(self, controller),
            conversation=[
                [summaries.summarize_action, summaries.summarize_with_action],
                [
                    self.instructions.action,
                    sidebar.rename_action,
                    sidebar.delete_action,
                    self.deletion.conversation_action,
                ],
                [summaries.history_action, history.find_action, history.history_action],
            ],
            text_size=self.reading.text_size,
            paths=paths,
        )

        # user → chat
        self.composer.send_requested.connect(self._send)
        self.composer.stop_requested.connect(lambda: self.chat.current.turns.stop())
        # The gauge follows the draft, at most a few times a second while typing.
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DEBOUNCE_MS)
        self._draft_timer.timeout.connect(
            lambda: self.chat.current.gauge.set_draft(self.composer.text())
        )
        self.composer.editor.textChanged.connect(self._draft_timer.start)
        # The SDK loads (the models are listed) once the user starts typing, not at start.
        self.composer.editor.started.connect(lambda: self.chat.prepare_network())
        self.sidebar.new_requested.connect(self._new_conversation)
        self.sidebar.session_selected.connect(lambda session_id: self.chat.open_session(session_id))
        self.sidebar.rename_requested.connect(
            lambda session_id, title: self.chat.rename_session(session_id, title)
        )
        self.sidebar.delete_requested.connect(self._confirm_delete)
        self.transcript.earlier_requested.connect(self._load_earlier)
        self.transcript.empty_state.example_chosen.connect(self._example_chosen)
        self.transcript.pin_requested.connect(
            lambda message_id, pinned: self.chat.current.pins.pin(message_id, pinned)
        )
        self.header.model_picked.connect(lambda model_id: self.chat.current.model.select(model_id))
        self.header.settings_button.clicked.connect(self.settings.open_settings)
        self.settings.key_dialog_opened.connect(lambda: self.transcript.empty_state.set_quiet(True))
        self.settings.key_dialog_closed.connect(self._key_dialog_closed)
        self.banner.retry_requested.connect(self._retry)
        self.banner.action_requested.connect(self._banner_action)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.setContext(Qt.ShortcutContext.WindowShortcut)
        escape.activated.connect(self._escape)

        # controller → widgets
        controller.sessions_listed.connect(self._sessions_listed)
        controller.session_changed.connect(self._session_changed)
        controller.session_removed.connect(self.sidebar.remove_session)
        controller.conversation_opened.connect(self._conversation_opened)
        self.lookups = TranscriptLookups(controller, self.transcript)  # after: widgets exist
        self.lookups.open_requested.connect(self.history.go)  # an excerpt's original
        self.unsaved = TranscriptUnsaved(controller, self.transcript)  # "not saved yet"
        # The files' parts need the chat service's: wired once it is built (issue 20).
        self.files: TranscriptAttachments | None = None
        if controller.built:
            self._wire_files()
        else:
            controller.service_built.connect(self._wire_files)
        controller.message_added.connect(self.transcript.append_message)
        controller.message_sending.connect(self.transcript.append_sending)
        # The composer kept its height from Enter until the turn shows (`_send`).
        release_height = self.composer.editor.release_height
        for told in (
            controller.message_sending,
            controller.message_added,
            controller.message_not_sent,
            controller.activity_changed,
            controller.error_raised,
            controller.conversation_opened,
        ):
            told.connect(release_height)
        controller.message_stored.connect(self.transcript.message_stored)
        controller.message_not_sent.connect(self._not_sent)
        controller.message_text_changed.connect(self.transcript.update_message_text)
        controller.message_thinking_changed.connect(self.transcript.update_message_thinking)
        controller.message_updated.connect(self.transcript.update_message)
        controller.message_removed.connect(self.transcript.remove_message)
        self.reply_actions = ReplyActions(self.transcript, controller, self)  # Continue, Retry
        self.reply_actions.offer_changed.connect(lambda _action: self._one_retry())
        controller.message_updated.connect(self._reply_arrived)
        self.notifier = ReplyNotifier(controller, self)  # a reply ready while in the background
        self.message_actions = MessageActions(self.transcript, self.composer, controller, self)
        self._notes.addWidget(self.message_actions.edit_bar)  # copy, edit, regenerate, versions
        controller.activity_changed.connect(self._activity_changed)
        controller.error_raised.connect(self.show_error)
        controller.notice_raised.connect(self.show_notice)
        controller.status_changed.connect(self._status_changed)
        controller.key_needed.connect(self.settings.ask_for_key)
        controller.models_changed.connect(self.header.show_models)
        controller.context_changed.connect(self.header.gauge.set_state)
        controller.cache_use_changed.connect(self.header.gauge.set_cache_use)
        controller.pending_sent.connect(self.composer.clear)
        self.reading_order = ReadingOrder(
            self,
            [
                Pane(self.sidebar),
                Pane(self.header, row=True),
                Pane(self.transcript),
                Pane(self.banner),
                Pane(self.summaries.progress, row=True),
                Pane(self.history.find_bar, row=True),
                Pane(self.message_actions.edit_bar, row=True),
                Pane(self.composer, row=True),
            ],
        )

    def _wire_files(self) -> None:
        self.files, self.drops = wire_attachments(
            self, self.composer, self.transcript, self.controller
        )

    @property
    def chat(self) -> ChatService:
        """The chat service the window acts on (`controller.service`).

        Looked up when used, never while the window is built: the controller builds the
        service when first asked, after the first paint in the app (issue 20).
        """
        return self.controller.service

    def _lay_out_panes(self) -> QVBoxLayout:
        """The sidebar beside the conversation's column (header, transcript, the notes
        above the composer, the composer); returns the notes' column."""
        main = self._pane = _ConversationPane(self)
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        main_layout.setSpacing(0)
        main_layout.addWidget(self.header)
        main_layout.addWidget(self.transcript, 1)
        notes = QVBoxLayout()
        notes.setContentsMargins(12, 6, 12, 0)
        notes.setSpacing(6)
        notes.addWidget(self.banner)
        notes.addWidget(self.summaries.progress)
        notes.addWidget(self.status_label)
        notes.addWidget(self.history.find_bar)
        main_layout.addLayout(notes)
        main_layout.addWidget(self.composer)
        splitter = QSplitter(self)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(main)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)
        return notes

    # -- start -------------------------------------------------------------------

    def start(self, *, writable: bool = True) -> None:
        """Called once the window is on screen: fill it, and ask for a key on first run
        (not `writable` while the database's check after a crash runs)."""
        self.chat.start(writable=writable)
        self.composer.focus_editor()

    # -- conversations -------------------------------------------------------------

    def _sessions_listed(self, sessions: Sequence[Session], current_id: str | None) -> None:
        self.sidebar.set_sessions(sessions, current_id)
        self._update_title()

    def _session_changed(self, session: Session) -> None:
        self.sidebar.upsert_session(session)
        current = self.chat.current.state.session
        if current is not None and current.id == session.id:
            self.sidebar.set_current(session.id)
            self._update_title()
            self.summaries.update_actions()

    def _conversation_opened(
        self, session: Session | None, page: Sequence[Message], has_earlier: bool
    ) -> None:
        self.transcript.set_messages(page, has_earlier=has_earlier)
        self.sidebar.set_current(session.id if session is not None else None)
        self.banner.hide()
        self.summaries.close_preview()  # it waits in its conversation; shown again on return
        self._update_title()
        self.summaries.update_actions()
        self.composer.focus_editor()

    def _load_earlier(self) -> None:
        oldest = self.transcript.oldest_seq
        if oldest is None:
            return
        page, has_earlier = self.chat.earlier_page(oldest)
        self.lookups.page_shown(page)
        self.transcript.prepend_messages(page, has_earlier=has_earlier)

    def _update_title(self) -> None:
        current = self.chat.current.state.session
        title = current.title if current is not None else "New conversation"
        shown = (title, current is not None)
        if shown == self._title_shown:
            return  # told at every message sent and reply ended: most often the same
        self._title_shown = shown
        self.header.title_label.setText(title)
        # No figures before there is a conversation (issue 23).
        self.header.gauge.setVisible(current is not None)
        self.setWindowTitle(f"{title} — {APP_NAME}")

    def _example_chosen(self, text: str) -> None:
        """An example prompt goes in the message box, to send as it is or change."""
        self.composer.set_text(text)
        self.composer.focus_editor()

    def _new_conversation(self) -> None:
        self.chat.new_conversation()
        self.composer.focus_editor()

    def _confirm_delete(self, session_id: str) -> None:
        session = self.sidebar.model.session(session_id)  # as the list shows it
        if session is None:
            return
        self.confirm_box = ask_to_confirm(
            self,
            title="Delete conversation?",
            text=f"Delete “{session.title}”?",
            detail="The conversation and all its messages will be removed from this "
            "computer. This can't be undone.",
            action="Delete",
            on_confirm=lambda: self.chat.delete_session(session_id),
            closed=lambda: setattr(self, "confirm_box", None),
            icon=QMessageBox.Icon.Warning,
            role=QMessageBox.ButtonRole.DestructiveRole,
        )

    # -- sending -------------------------------------------------------------------

    def _send(self, text: str) -> None:
        self.banner.hide()
        self.chat.attachments.hand_over()  # to the conversation on screen now
        if self.chat.send(text):
            # The box empties at once; it shrinks with the turn's row, shown once the
            # request has left (or 50 ms passed): one layout of the page, after the
            # request, not one before it and one after (issue 20).
            self.composer.clear(keep_height=self.chat.current.turns.row_pending)
            # The gauge's draft is the empty box's already (sent): the debounce that the
            # clearing started would tell it again for nothing, mid-turn.
            self._draft_timer.stop()

    def _not_sent(self, sending_id: int, text: str) -> None:
        """The disk did not take a message: it leaves the transcript, its words come back
        to the composer, before whatever was typed since."""
        self.transcript.remove_message(sending_id)
        typed = self.composer.text()
        self.composer.set_text(f"{text}\n\n{typed}" if typed.strip() else text)

    def _retry(self) -> None:
        self.banner.hide()
        chat = self.chat
        if chat.current.state.session is None or not chat.credentials.has_key():
            # Nothing stored yet (e.g. the key was missing): sending the draft is the retry.
            self._send(self.composer.text())
        else:
            chat.current.turns.retry()

    def _escape(self) -> None:
        if self.chat.current.state.activity.busy:
            self.chat.current.turns.stop()
        elif self.banner.isVisible():
            self.banner.hide()

    def _activity_changed(self, activity: Activity) -> None:
        if activity.busy:
            self.banner.hide_error()  # tried again (a Retry in the transcript too)
        self.composer.set_streaming(activity.busy)
        if not activity.busy:
            self.composer.focus_editor()

    def _status_changed(self, text: str) -> None:
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    # -- messages to the user ----------------------------------------------------------

    def show_error(self, error: UserFacingError) -> None:
        # What the user was told, for whoever reads the log to help them (redacted there).
        log.info("Told the user: %s — %s", error.title, error.message)
        action = None
        if isinstance(error, ApiKeyRejectedError | ApiKeyMissingError):
            action = CHANGE_KEY_ACTION
        if isinstance(error, AlreadyImportedError) and error.source is not None:
            # Harmless, and the way on is one click: not an error, and not in red.
            self._copy_source = error.source
            self.banner.show_message(
                BannerKind.INFO, error.title, error.message, action=IMPORT_COPY_ACTION
            )
            return
        self.banner.show_message(
            BannerKind.ERROR,
            error.title,
            error.message,
            retry=error.retryable,
            action=action,
            link=error.link,
        )
        self._one_retry()

    def _one_retry(self) -> None:
        """One Retry per failure: the banner's goes while the transcript offers one (or
        Continue) on the message it concerns."""
        if self.banner.kind is BannerKind.ERROR and self.reply_actions.offered:
            self.banner.retry_button.hide()

    def _reply_arrived(self, message: Message) -> None:
        """A reply came through: an error shown before it is over."""
        if message.role is Role.ASSISTANT and message.status is MessageStatus.COMPLETE:
            self.banner.hide_error()

    def show_notice(self, title: str, text: str) -> None:
        self.banner.show_message(BannerKind.INFO, title, text)

    def _banner_action(self, action: str) -> None:
        if action == CHANGE_KEY_ACTION:
            self.banner.hide()
            self.settings.ask_for_key(first_run=False)
        elif action == IMPORT_COPY_ACTION and self._copy_source is not None:
            self.banner.hide()
            self.chat.exports.import_file(self._copy_source, as_copy=True)
            self._copy_source = None

    def _key_dialog_closed(self, saved: bool, persistent: bool) -> None:
        self.transcript.empty_state.set_quiet(False)
        if saved:
            if not persistent:
                self.show_notice(
                    "Key kept for this session only",
                    "Your system has no password store Cairn can use, so the key will be "
                    "forgotten when Cairn closes.",
                )
            if self.composer.text().strip() and not self.chat.current.state.activity.busy:
                self._send(self.composer.text())
        self.composer.focus_editor()

    # -- keyboard ------------------------------------------------------------------

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab in reading order (`ReadingOrder`), not in the order widgets were made."""
        target = self.reading_order.next_stop(next)
        if target is None:
            return super().focusNextPrevChild(next)
        reason = Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason
        target.setFocus(reason)
        return True

    # -- closing -------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.quit_guard is not None and not self.quit_guard.allows_close():
            event.ignore()  # it asks the user first
            return
        self.reading.window_closing()
        # A reply in progress is stopped and its text kept, as if Stop were pressed.
        self.controller.shutdown()
        event.accept()

    # -- the window's other events -----------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.drops is None or not self.drops.enter(event):
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self.drops is None or not self.drops.enter(event):
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if self.drops is None or not self.drops.drop(event):
            super().dropEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.notifier.window_activated()
