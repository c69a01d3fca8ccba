"""The window's summaries: Summarize now, the preview, the banner after a summary, history."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QMessageBox, QToolButton, QWidget

from app.ui.banner import Banner, BannerKind
from app.ui.summary_history import (
    BANNER_TITLE,
    EXPLAIN_ACTION,
    EXPLANATION,
    UNDO_ACTION,
    SummaryHistoryDialog,
    banner_text,
)
from app.ui.summary_progress import SummaryProgress

if TYPE_CHECKING:
    from app.chat.events import SummaryPreview, SummaryReport
    from app.chat.service import ChatService
    from app.core.models import Message
    from app.core.summary import Summary
    from app.ui.controller import ChatController
    from app.ui.summarize_dialog import SummarizeDialog
    from app.ui.summary_preview import SummaryPreviewDialog
    from app.ui.transcript import TranscriptView

SUMMARIZE_NOW = "Summarize now"
SUMMARIZE_TIP = (
    "Summarize the older messages of this conversation now, so Claude "
    "keeps up with less to read. Nothing is deleted. (Ctrl+Shift+S)"
)
# Below this header width the button shows only its symbol (its name is in the tooltip).
SUMMARIZE_NARROW_BELOW = 760


class SummaryActions(QObject):
    """Everything the window does about summaries, and the state that goes with it.

    The window places `button` in its header and `progress` above the composer, puts
    the actions in its Conversation menu, and tells this object when the conversation
    on screen changes (`update_actions`, `close_preview`). Widgets, actions and dialogs
    are children of the window, as a dialog needs a widget for its parent.

    Attributes:
        summarize_action, summarize_with_action, history_action: the menu's actions.
        button: the header's "Summarize now" button (its menu: with instructions).
        progress: the strip shown while a summary is made, with Cancel.
        summarize_dialog, preview_dialog, explain_box, history_dialog: open now, if any
            (the preview from the turn of the event loop after it was built).
        running: a summary of the conversation on screen is being made.
    """

    def __init__(
        self,
        controller: ChatController,
        window: QWidget,
        banner: Banner,
        transcript: TranscriptView,
    ) -> None:
        super().__init__(window)
        self.controller = controller
        self._controller = controller
        self._window = window
        self._banner = banner
        self._header: QWidget | None = None
        self.summarize_dialog: SummarizeDialog | None = None
        self.preview_dialog: SummaryPreviewDialog | None = None
        self._preview_built: SummaryPreviewDialog | None = None  # opens on the next turn
        self.explain_box: QMessageBox | None = None
        self.history_dialog: SummaryHistoryDialog | None = None
        self.running = False
        self._undo_summary_id: str | None = None  # what the banner's Undo takes back

        self.summarize_action = QAction(SUMMARIZE_NOW, window)
        self.summarize_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.summarize_action.setToolTip(SUMMARIZE_TIP)
        self.summarize_action.triggered.connect(lambda: self.summarize_now())
        self.summarize_with_action = QAction("Summarize with instructions…", window)
        self.summarize_with_action.triggered.connect(self.ask_summary_instructions)
        # Summary history (reads the audit trail of the conversation on screen).
        self.history_action = QAction("&Summaries in this conversation…", window)
        self.history_action.triggered.connect(self.open_summary_history)
        self.button = QToolButton(window)
        self.button.setObjectName("summarizeButton")
        self.button.setDefaultAction(self.summarize_action)
        self.button.setAccessibleName(SUMMARIZE_NOW)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(self.button)
        menu.addAction(self.summarize_with_action)
        self.button.setMenu(menu)
        self.progress = SummaryProgress(window)

        banner.action_requested.connect(self._banner_action)
        controller.summaries_changed.connect(transcript.take_summaries)
        controller.summary_made.connect(self._summary_made)
        controller.summary_progress.connect(self._summary_progress)
        controller.summary_previewed.connect(self.show_summary_preview)
        self.progress.cancel_requested.connect(lambda: self._chat.current.condensing.cancel())
        self.update_actions()

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def follow_width_of(self, header: QWidget) -> None:
        """Show the button as a symbol only while `header` is narrow."""
        self._header = header
        header.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        header = self._header
        if header is not None and watched is header and event.type() == QEvent.Type.Resize:
            # A narrow header keeps the button as a symbol; its name stays in the tooltip.
            narrow = header.width() < SUMMARIZE_NARROW_BELOW
            self.summarize_action.setIconText("⇊" if narrow else SUMMARIZE_NOW)
        return super().eventFilter(watched, event)

    # -- summarize now -------------------------------------------------------------

    def summarize_now(
        self, instructions: str | None = None, keep_recent: int | None = None
    ) -> None:
        """Condense older messages now (the service says when there is nothing to condense)."""
        if self.summarize_action.isEnabled():
            self._banner.hide()
            self._chat.current.condensing.summarize(instructions, keep_recent)

    def ask_summary_instructions(self) -> SummarizeDialog | None:
        """Open "Summarize with instructions…" (or bring it forward); returns the dialog."""
        if not self.summarize_with_action.isEnabled():
            return None
        if self.summarize_dialog is not None:
            self.summarize_dialog.raise_()
            return self.summarize_dialog
        preserve = self._chat.settings.summarization.preserve_recent
        from app.ui.summarize_dialog import SummarizeDialog  # first opened: not to paint

        dialog = SummarizeDialog(preserve, self._window)
        dialog.finished.connect(lambda result: self._summary_instructions_given(dialog, result))
        self.summarize_dialog = dialog
        dialog.open()
        return dialog

    def _summary_instructions_given(self, dialog: SummarizeDialog, result: int) -> None:
        self.summarize_dialog = None
        if result == QDialog.DialogCode.Accepted:
            self.summarize_now(dialog.instructions, dialog.keep_recent)

    def update_actions(self) -> None:
        """Summarize now needs a stored conversation and no summary already running."""
        # No conversation yet while the service is not built (before the first paint).
        built = self._controller.built
        enabled = built and self._chat.current.state.session is not None and not self.running
        self.summarize_action.setEnabled(enabled)
        self.summarize_with_action.setEnabled(enabled)

    def _summary_progress(self, text: str | None) -> None:
        if text is None:
            self.close_preview()
        self.running = text is not None
        self.progress.show_stage(text)
        self.update_actions()

    # -- the preview -----------------------------------------------------------------

    def show_summary_preview(self, preview: SummaryPreview) -> SummaryPreviewDialog:
        """Open the preview of a summary (Accept, Edit, Discard); closing it discards.

        Built now, opened on the next turn of the event loop: building and showing it in
        one turn held the window ~10 ms while a reply streamed (issue 20)."""
        self.close_preview()
        from app.ui.summary_preview import SummaryPreviewDialog  # first preview: not to paint

        dialog = SummaryPreviewDialog(preview, self._window)
        dialog.finished.connect(lambda result: self._summary_checked(dialog, result))
        self._preview_built = dialog
        QTimer.singleShot(0, dialog, lambda: self._open_preview(dialog))
        return dialog

    def _open_preview(self, dialog: SummaryPreviewDialog) -> None:
        if dialog is not self._preview_built:
            return  # closed before it opened (its summary ended meanwhile)
        self._preview_built = None
        self.preview_dialog = dialog
        dialog.open()

    def _summary_checked(self, dialog: SummaryPreviewDialog, result: int) -> None:
        if dialog is not self.preview_dialog:
            return  # closed by the window, not answered by the user
        self.preview_dialog = None
        if result == QDialog.DialogCode.Accepted:
            self._chat.current.condensing.accept(dialog.drafts)
        else:
            self._chat.current.condensing.discard()

    def close_preview(self) -> None:
        """Close the preview without answering it (its summary ended, or another
        conversation is on screen)."""
        built, self._preview_built = self._preview_built, None
        if built is not None:
            built.deleteLater()
        dialog, self.preview_dialog = self.preview_dialog, None
        if dialog is not None:
            dialog.reject()
            dialog.deleteLater()

    # -- after a summary -----------------------------------------------------------------

    def _summary_made(self, report: SummaryReport) -> None:
        self._undo_summary_id = report.undo_id
        self._banner.show_message(
            BannerKind.INFO,
            BANNER_TITLE,
            banner_text(report),
            action=UNDO_ACTION if report.undo_id else None,
            second_action=EXPLAIN_ACTION,
            fades=True,  # its Undo stays on the summary's card
        )

    def _banner_action(self, action: str) -> None:
        """The banner's Undo and What happened? (its other actions are the window's)."""
        if action == UNDO_ACTION and self._undo_summary_id is not None:
            self._banner.hide()
            self._chat.current.condensing.undo(self._undo_summary_id)
            self._undo_summary_id = None
        elif action == EXPLAIN_ACTION:
            self.explain_box = QMessageBox(
                QMessageBox.Icon.Information, "What happened?", EXPLANATION, parent=self._window
            )
            self.explain_box.open()

    def open_summary_history(self) -> SummaryHistoryDialog:
        self.history_dialog = SummaryHistoryDialog(self._chat.summary_history(), self._window)
        self.history_dialog.open()
        return self.history_dialog


class CardActions:
    """What the transcript's summary cards ask of the chat service (their `CardHost`):
    the originals and parts they show, and what their buttons do."""

    def __init__(self, controller: ChatController, delete_originals: Callable[[str], None]) -> None:
        """`delete_originals` asks first (`OriginalsDeletion.ask_for_summary`)."""
        self._controller = controller
        self._delete_originals = delete_originals

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def originals(self, summary_id: str) -> tuple[Sequence[Message], datetime | None]:
        messages = self._chat.archive.originals(summary_id)
        # None left: say when they were deleted, if they were.
        deleted_on = None if messages else self._chat.backups.originals_deleted_on(summary_id)
        return messages, deleted_on

    def children(self, summary_id: str) -> Sequence[Summary]:
        return self._chat.summary_children(summary_id)

    def undo(self, summary_id: str) -> None:
        self._chat.current.condensing.undo(summary_id)

    def retry_with_claude(self, summary_id: str) -> None:
        self._chat.current.condensing.retry_with_claude(summary_id)

    def delete_originals(self, summary_id: str) -> None:
        self._delete_originals(summary_id)
