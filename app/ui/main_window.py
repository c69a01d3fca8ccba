"""The main window: conversations on the left, the transcript, the composer."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import APP_NAME, __version__
from app.chat.events import Activity
from app.core.catalog import ModelInfo
from app.core.errors import ApiKeyMissingError, ApiKeyRejectedError, UserFacingError
from app.core.models import Message, Session
from app.core.paths import AppPaths
from app.ui.attachment_tray import wire_attachments
from app.ui.banner import Banner, BannerKind
from app.ui.composer import Composer
from app.ui.confirm import ask_to_confirm
from app.ui.controller import ChatController
from app.ui.delete_originals_dialog import OriginalsDeletion
from app.ui.export_actions import ExportActions
from app.ui.history_actions import HistoryActions
from app.ui.instructions_actions import InstructionsActions
from app.ui.key_dialog import ApiKeyDialog
from app.ui.lookup_line import TranscriptLookups
from app.ui.message_actions import MessageActions
from app.ui.reading_layout import ReadingLayout
from app.ui.reply_actions import ReplyActions
from app.ui.reply_notifier import ReplyNotifier
from app.ui.restore_dialog import restore_action
from app.ui.settings_dialog import SettingsDialog
from app.ui.sidebar import Sidebar
from app.ui.summary_actions import SummaryActions
from app.ui.theme import apply_theme
from app.ui.token_gauge import TokenGauge
from app.ui.transcript import TranscriptView
from app.ui.unsaved_mark import TranscriptUnsaved

CHANGE_KEY_ACTION = "Change key…"
DRAFT_DEBOUNCE_MS = 150
TITLE_MIN_WIDTH = 90


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" instead of pushing its neighbours."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, self.width())
        super().setText(shown)


class MainWindow(QMainWindow):
    """Wires the widgets to a `ChatController`; holds no conversation logic itself.

    Dialogs are opened with `open()`, never `exec()`: the event loop keeps running
    (replies keep streaming), and nothing can wait on a dialog nobody closes.

    Attributes:
        key_dialog, settings_dialog, confirm_box: the dialog open now, if any.
        summaries: Summarize now, the preview, the banner after a summary, history.
        history: the History window, Ctrl+F, opening a conversation at a message.
    """

    def __init__(self, controller: ChatController, paths: AppPaths) -> None:
        super().__init__()
        self.controller = controller
        self.paths = paths
        self.key_dialog: ApiKeyDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.setObjectName("mainWindow")
        self.resize(1100, 740)
        self.setMinimumSize(720, 480)

        self.sidebar = Sidebar(self)
        self.transcript = TranscriptView(self)
        self.composer = Composer(self)
        self.banner = Banner(self)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("statusLine")
        self.status_label.setAccessibleName("Status")
        self.status_label.hide()

        self.title_label = ElidedLabel(self)
        title_font = self.title_label.font()
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        title_font.setBold(True)
        self.title_label.setFont(title_font)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.model_combo = QComboBox(self)
        self.model_combo.setAccessibleName("Model")
        self.model_combo.setToolTip("Which Claude model answers")
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_combo.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.gauge = TokenGauge(self)
        # In a narrow header the gauge's bar gives way first (down to its minimum), so the
        # title keeps a few words.
        self.gauge.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.title_label.setMinimumWidth(TITLE_MIN_WIDTH)
        self.settings_button = QToolButton(self)
        self.settings_button.setText("⚙")
        self.settings_button.setAccessibleName("Settings")
        self.settings_button.setToolTip("Settings (Ctrl+,)")
        self.settings_button.setAutoRaise(True)
        self.summaries = SummaryActions(controller, self, self.banner, self.transcript)
        self.exports = ExportActions(controller, self)
        self.history = HistoryActions(
            controller, self, self.transcript, self.sidebar, self._load_earlier, controller.history
        )

        header = QWidget(self)
        header.setObjectName("header")
        header_layout = QHBoxLayout(header)
        header_layout.setContentsMargins(16, 10, 10, 8)
        header_layout.setSpacing(10)
        header_layout.addWidget(self.title_label, 1)
        header_layout.addWidget(self.model_combo)
        header_layout.addWidget(self.gauge)
        header_layout.addWidget(self.summaries.button)
        header_layout.addWidget(self.settings_button)
        self.header = header
        self.summaries.follow_width_of(header)

        main = QWidget(self)
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        main_layout.setSpacing(0)
        main_layout.addWidget(header)
        main_layout.addWidget(self.transcript, 1)
        lower = QVBoxLayout()
        lower.setContentsMargins(12, 6, 12, 0)
        lower.setSpacing(6)
        lower.addWidget(self.banner)
        lower.addWidget(self.summaries.progress)
        lower.addWidget(self.status_label)
        lower.addWidget(self.history.find_bar)
        main_layout.addLayout(lower)
        main_layout.addWidget(self.composer)

        splitter = QSplitter(self)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(main)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)
        self._build_menu()
        self.reading = ReadingLayout(self.transcript, self.composer, controller, self)

        # user → controller
        self.composer.send_requested.connect(self._send)
        self.composer.stop_requested.connect(controller.stop)
        # The gauge follows the draft, at most a few times a second while typing.
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DEBOUNCE_MS)
        self._draft_timer.timeout.connect(lambda: controller.set_draft(self.composer.text()))
        self.composer.editor.textChanged.connect(self._draft_timer.start)
        self.sidebar.new_requested.connect(self._new_conversation)
        self.sidebar.session_selected.connect(controller.open_session)
        self.sidebar.rename_requested.connect(controller.rename_session)
        self.sidebar.delete_requested.connect(self._confirm_delete)
        self.transcript.earlier_requested.connect(self._load_earlier)
        self.transcript.pin_requested.connect(controller.pin)
        self.model_combo.activated.connect(self._model_picked)
        self.settings_button.clicked.connect(self.open_settings)
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
        self.files = wire_attachments(self, self.composer, self.transcript, controller)
        controller.message_added.connect(self.transcript.append_message)
        controller.message_text_changed.connect(self.transcript.update_message_text)
        controller.message_thinking_changed.connect(self.transcript.update_message_thinking)
        controller.message_updated.connect(self.transcript.update_message)
        controller.message_removed.connect(self.transcript.remove_message)
        self.reply_actions = ReplyActions(self.transcript, controller, self)  # Continue, Retry
        self.notifier = ReplyNotifier(controller, self)  # a reply ready while in the background
        self.message_actions = MessageActions(self.transcript, self.composer, controller, self)
        lower.addWidget(self.message_actions.edit_bar)  # copy, edit, regenerate, versions
        controller.activity_changed.connect(self._activity_changed)
        controller.error_raised.connect(self.show_error)
        controller.notice_raised.connect(self.show_notice)
        controller.status_changed.connect(self._status_changed)
        controller.key_needed.connect(self._ask_for_key)
        controller.models_changed.connect(self._models_changed)
        controller.context_changed.connect(self.gauge.set_state)
        controller.cache_use_changed.connect(self.gauge.set_cache_use)
        controller.pending_sent.connect(self.composer.clear)

    def _build_menu(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        new_action = QAction("&New conversation", self)
        new_action.setShortcut(QKeySequence(QKeySequence.StandardKey.New))
        new_action.triggered.connect(self._new_conversation)
        settings_action = QAction("&Settings…", self)
        settings_action.setShortcut(QKeySequence("Ctrl+,"))
        settings_action.triggered.connect(self.open_settings)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Quit))
        quit_action.triggered.connect(self.close)
        file_menu.addActions([new_action, settings_action])
        file_menu.addSeparator()
        self.exports.add_to(file_menu)
        file_menu.addAction(restore_action(self, self.controller))
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        conversation_menu, summaries = bar.addMenu("&Conversation"), self.summaries
        conversation_menu.addActions([summaries.summarize_action, summaries.summarize_with_action])
        conversation_menu.addSeparator()
        self.instructions = InstructionsActions(self, conversation_menu)  # beside the title
        conversation_menu.addActions([self.sidebar.rename_action, self.sidebar.delete_action])
        self.deletion = OriginalsDeletion(self.controller, self.transcript, self)
        conversation_menu.addAction(self.deletion.conversation_action)
        conversation_menu.addSeparator()
        history = self.history
        conversation_menu.addActions(
            [summaries.history_action, history.find_action, history.history_action]
        )
        bar.addMenu("&Help").addAction(f"&About {APP_NAME}", self._about)

    # -- start -------------------------------------------------------------------

    def start(self) -> None:
        """Called once the window is on screen: fill it, and ask for a key on first run."""
        self.controller.start()
        self.composer.focus_editor()

    # -- conversations -------------------------------------------------------------

    def _sessions_listed(self, sessions: Sequence[Session], current_id: str | None) -> None:
        self.sidebar.set_sessions(sessions, current_id)
        self._update_title()

    def _session_changed(self, session: Session) -> None:
        self.sidebar.upsert_session(session)
        current = self.controller.current
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
        page, has_earlier = self.controller.earlier_page(oldest)
        self.lookups.page_shown(page)
        self.transcript.prepend_messages(page, has_earlier=has_earlier)

    def _update_title(self) -> None:
        current = self.controller.current
        title = current.title if current is not None else "New conversation"
        self.title_label.setText(title)
        self.setWindowTitle(f"{title} — {APP_NAME}")

    def _new_conversation(self) -> None:
        self.controller.new_conversation()
        self.composer.focus_editor()

    def _confirm_delete(self, session_id: str) -> None:
        session = self.controller.session(session_id)
        if session is None:
            return
        self.confirm_box = ask_to_confirm(
            self,
            title="Delete conversation?",
            text=f"Delete “{session.title}”?",
            detail="The conversation and all its messages will be removed from this "
            "computer. This can't be undone.",
            action="Delete",
            on_confirm=lambda: self.controller.delete_session(session_id),
            closed=lambda: setattr(self, "confirm_box", None),
            icon=QMessageBox.Icon.Warning,
            role=QMessageBox.ButtonRole.DestructiveRole,
        )

    # -- sending -------------------------------------------------------------------

    def _send(self, text: str) -> None:
        self.banner.hide()
        if self.controller.send(text):
            self.composer.clear()

    def _retry(self) -> None:
        self.banner.hide()
        if self.controller.current is None or not self.controller.has_api_key():
            # Nothing stored yet (e.g. the key was missing): sending the draft is the retry.
            self._send(self.composer.text())
        else:
            self.controller.retry()

    def _escape(self) -> None:
        if self.controller.busy:
            self.controller.stop()
        elif self.banner.isVisible():
            self.banner.hide()

    def _activity_changed(self, activity: Activity) -> None:
        self.composer.set_streaming(activity.busy)
        if not activity.busy:
            self.composer.focus_editor()

    def _status_changed(self, text: str) -> None:
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    # -- models --------------------------------------------------------------------

    def _models_changed(self, models: Sequence[ModelInfo], selected: str) -> None:
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        for model in models:
            self.model_combo.addItem(model.display_name, model.id)
            self.model_combo.setItemData(
                self.model_combo.count() - 1, model.id, Qt.ItemDataRole.ToolTipRole
            )
        index = self.model_combo.findData(selected)
        if index < 0:
            self.model_combo.addItem(selected, selected)
            index = self.model_combo.count() - 1
        self.model_combo.setCurrentIndex(index)
        self.model_combo.blockSignals(False)

    def _model_picked(self, index: int) -> None:
        self.controller.select_model(str(self.model_combo.itemData(index)))

    # -- messages to the user ----------------------------------------------------------

    def show_error(self, error: UserFacingError) -> None:
        action = None
        if isinstance(error, ApiKeyRejectedError | ApiKeyMissingError):
            action = CHANGE_KEY_ACTION
        self.banner.show_message(
            BannerKind.ERROR,
            error.title,
            error.message,
            retry=error.retryable,
            action=action,
            link=error.link,
        )

    def show_notice(self, title: str, text: str) -> None:
        self.banner.show_message(BannerKind.INFO, title, text)

    def _banner_action(self, action: str) -> None:
        if action == CHANGE_KEY_ACTION:
            self.banner.hide()
            self._ask_for_key(first_run=False)

    # -- key and settings ----------------------------------------------------------------

    def _ask_for_key(self, first_run: bool = True) -> None:
        if self.key_dialog is not None:
            return
        dialog = ApiKeyDialog(self.controller, self, first_run=first_run)
        dialog.finished.connect(lambda result: self._key_dialog_done(dialog, result))
        self.key_dialog = dialog
        dialog.open()

    def _key_dialog_done(self, dialog: ApiKeyDialog, result: int) -> None:
        self.key_dialog = None
        if result == QDialog.DialogCode.Accepted:
            if not dialog.persistent:
                self.show_notice(
                    "Key kept for this session only",
                    "Your system has no password store Cairn can use, so the key will be "
                    "forgotten when Cairn closes.",
                )
            if self.composer.text().strip() and not self.controller.busy:
                self._send(self.composer.text())
        self.composer.focus_editor()

    def ask_for_key_if_missing(self) -> None:
        if not self.controller.has_api_key():
            self._ask_for_key(first_run=True)

    def open_settings(self) -> SettingsDialog:
        """Open Settings (or bring the open one forward); returns the dialog."""
        if self.settings_dialog is not None:
            self.settings_dialog.raise_()
            return self.settings_dialog
        controller = self.controller
        self.reading.text_size.save_now()  # a size just chosen shows in Settings
        dialog = SettingsDialog(
            controller.settings,
            models=controller.models,
            selected_model=controller.selected_model,
            keys=controller,
            paths=self.paths,
            parent=self,
        )
        dialog.finished.connect(lambda result: self._settings_done(dialog, result))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_done(self, dialog: SettingsDialog, result: int) -> None:
        self.settings_dialog = None
        new = dialog.result_settings
        if result != QDialog.DialogCode.Accepted or new is None:
            if dialog.key_changed:
                self.controller.refresh_models()
            return
        old_theme = self.controller.settings.theme
        self.controller.update_settings(new)
        if new.theme != old_theme and isinstance(app := QApplication.instance(), QApplication):
            apply_theme(app, new.theme)
        self.reading.text_size.set_size(new.font_size)  # Settings → Text size
        if dialog.key_changed:
            self.controller.refresh_models()

    def _about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle(f"About {APP_NAME}")
        box.setText(
            f"<b>{APP_NAME}</b> {__version__}<br><br>"
            "A chat client for Claude where a conversation never runs out of room, "
            "and nothing is ever lost.<br><br>"
            f"Your conversations are kept in:<br><tt>{self.paths.data_dir}</tt>"
        )
        box.setIconPixmap(self.windowIcon().pixmap(64, 64))
        box.open()

    # -- closing -------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        # A reply in progress is stopped and its text kept, as if Stop were pressed.
        self.controller.shutdown()
        event.accept()
