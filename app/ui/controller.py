"""The controller: the chat service's events as Qt signals, user actions as its calls.

All the conversation logic lives in `app.chat` (DESIGN §1); this class only
adapts it to Qt, as Dangerzone's GUI twins add nothing but signals. Widgets
call the controller's public methods and listen to its signals; they never
reach into the service or the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence

from PySide6.QtCore import QObject, Signal

from app.chat.attachments import ComposerAttachments
from app.chat.backups import Backups
from app.chat.events import Activity, ChatEvents, HistoryEntry, SummaryPreview, SummaryReport
from app.chat.service import ChatService, ServiceDependencies
from app.core.attachments import Attachment
from app.core.caching import CacheUse
from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.errors import UserFacingError
from app.core.lookup import Lookup
from app.core.models import Message, Session
from app.core.settings import AppSettings
from app.core.summary import Summary, SummaryDraft
from app.ui.history_source import HistorySource
from app.ui.qt_loop import QtEventLoop


class ChatController(QObject):
    """Everything a conversation does, as the window sees it.

    Signals:
        sessions_listed(list, object): every conversation, and the current id (or None).
        session_changed(Session): one conversation was created, renamed or became active.
        session_removed(str): one conversation was deleted.
        conversation_opened(object, list, bool): session (None when new), newest page,
            whether earlier messages exist.
        message_added(Message), message_text_changed(int, str),
        message_thinking_changed(int, str), message_updated(Message),
            message_removed(int): a message shown, its text so far, its final state; gone.
        unsaved_changed(object): the reply on screen not saved yet (its id), or None.
        activity_changed(Activity): the conversation on screen became busy or idle.
        context_changed(object): the gauge's figures (ContextState), or None.
        cache_use_changed(object): what the conversation read from Claude's prompt cache
            (CacheUse).
        summaries_changed(object): the memory block's summaries (a sequence of Summary).
        error_raised(UserFacingError): show it in plain words (with Retry when it makes sense).
        notice_raised(str, str): a quiet notice (title, text).
        status_changed(str): a passing status line ("" clears it).
        key_needed(): no API key is known; the window asks for one.
        models_changed(list, str): models to offer, and the selected id.
        pending_sent(): a message that waited (condensing, opening) was sent.
        summary_made(SummaryReport): earlier messages were condensed (the numbers).
        summary_previewed(SummaryPreview): a summary waits for the user to check it.
        summary_progress(object): what the summary being made does now (str), or None
            once it ended.
        lookup_made(Lookup): Claude searched the archive while writing a reply on screen.
    """

    sessions_listed = Signal(list, object)
    session_changed = Signal(object)
    session_removed = Signal(str)
    conversation_opened = Signal(object, list, bool)
    message_added = Signal(object)
    message_text_changed = Signal(int, str)
    message_thinking_changed = Signal(int, str)
    reply_declined = Signal(int, object)
    message_updated = Signal(object)
    message_removed = Signal(int)
    unsaved_changed = Signal(object)
    activity_changed = Signal(object)
    context_changed = Signal(object)
    cache_use_changed = Signal(object)
    summaries_changed = Signal(object)
    error_raised = Signal(object)
    notice_raised = Signal(str, str)
    status_changed = Signal(str)
    key_needed = Signal()
    models_changed = Signal(list, str)
    pending_sent = Signal()
    summary_made = Signal(object)
    summary_progress = Signal(object)
    summary_previewed = Signal(object)
    lookup_made = Signal(object)

    def __init__(self, deps: ServiceDependencies, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loop = QtEventLoop(self)
        self.service = ChatService(deps, self.loop, _SignalEvents(self))
        self.database = deps.database
        self._attachments = ComposerAttachments(self.service, deps.database)

    # --- start and stop

    def start(self) -> None:
        self.service.start()

    def shutdown(self) -> None:
        """Stop the reply (keeping its text) and every background task, and wait for them."""
        self.service.shutdown()
        self._attachments.close()
        self.loop.close()

    def save_unsaved(self) -> int:
        """Try once more to save the replies the disk did not take; how many are left."""
        return self.service.save_unsaved()

    @property
    def running_tasks(self) -> int:
        """Background tasks and timers still alive (0 once shut down)."""
        return self.service.runner.running + self.loop.active_timers

    # --- conversations

    @property
    def current(self) -> Session | None:
        """The conversation on screen; None while it is new (nothing sent yet)."""
        return self.service.current.session

    def new_conversation(self) -> None:
        self.service.new_conversation()

    def open_session(self, session_id: str) -> None:
        self.service.open_session(session_id)

    def session(self, session_id: str) -> Session | None:
        return self.service.get_session(session_id)

    def instructions(self) -> str:
        """The instructions for Claude of the conversation on screen ("" for none)."""
        return self.service.instructions.text()

    def set_instructions(self, text: str) -> bool:
        """Make `text` the conversation's instructions; False when they were not saved."""
        return self.service.instructions.set(text)

    def rename_session(self, session_id: str, title: str) -> None:
        self.service.rename_session(session_id, title)

    def delete_session(self, session_id: str) -> None:
        self.service.delete_session(session_id)

    def earlier_page(self, before_seq: int) -> tuple[list[Message], bool]:
        return self.service.earlier_page(before_seq)

    def lookups(self, message_ids: Collection[int]) -> dict[int, tuple[Lookup, ...]]:
        """The archive searches Claude ran for these replies (when a page is shown)."""
        return self.service.archive.lookups(message_ids)

    @property
    def history(self) -> HistorySource:
        """Finding what was said: the service's History (the one place it is wired)."""
        return self.service.history

    # --- the conversation on screen

    @property
    def activity(self) -> Activity:
        return self.service.current.activity

    @property
    def busy(self) -> bool:
        """A reply is being written, or a message waits while earlier ones are condensed."""
        return self.activity.busy

    def send(self, text: str) -> bool:
        """Send `text` with the composer's files; False keeps them in the composer (the
        reason is said)."""
        self._attachments.hand_over()  # to the conversation on screen now
        return self.service.send(text)

    def prepare_attachment(
        self,
        name: str,
        read: Callable[[], bytes],
        done: Callable[[Attachment], None],
        failed: Callable[[UserFacingError], None],
    ) -> None:
        """Read, check and keep a file in the background; `done` or `failed` (in words)."""
        self._attachments.preparer.prepare(name, read, done, failed)

    def set_attachments(self, attachments: Sequence[Attachment]) -> None:
        """The composer's files now: they go with the next message (and the gauge counts them)."""
        self._attachments.set(attachments)

    def attachments_of(self, message_ids: Collection[int]) -> dict[int, tuple[Attachment, ...]]:
        """The files of these messages (when a page is shown)."""
        return self._attachments.of(message_ids)

    def retry(self) -> None:
        self.service.retry()

    def stop(self) -> None:
        self.service.stop()

    def continue_reply(self, message: Message) -> bool:
        return self.service.continue_reply(message)

    # Edit and resend, Regenerate, versions (app.chat.versions): refusals come as error_raised.

    def can_regenerate(self, message: Message) -> bool:
        return self.service.current.versions.can_regenerate(message)

    def regenerate(self, message: Message) -> bool:
        return self.service.current.versions.regenerate(message)

    def another_model(self, message: Message) -> ModelInfo | None:
        """The model "Ask another model" would ask for a declined reply (None: none)."""
        return self.service.current.versions.another_model(message)

    def ask_another_model(self, message: Message) -> bool:
        return self.service.current.versions.ask_another_model(message)

    def begin_edit(self, message: Message) -> bool:
        return self.service.current.versions.begin_edit(message)

    def edit_message(self, message_id: int, text: str) -> bool:
        return self.service.current.versions.edit(message_id, text)

    def show_version(self, message_id: int, number: int) -> None:
        self.service.current.versions.show(message_id, number)

    def can_continue(self, message: Message) -> bool:
        return self.service.current.endings.can_continue(message)

    def set_draft(self, text: str) -> None:
        self.service.set_draft(text)

    def context_state(self, draft: str | None = None) -> ContextState | None:
        return self.service.context_state(draft)

    def summarize(self, instructions: str | None = None, keep_recent: int | None = None) -> bool:
        return self.service.summarize(instructions, keep_recent)

    def cancel_summary(self) -> None:
        self.service.cancel_summary()

    def accept_summary(self, edited: Sequence[SummaryDraft] | None = None) -> None:
        self.service.accept_summary(edited)

    def discard_summary(self) -> None:
        self.service.discard_summary()

    def undo_summary(self, summary_id: str) -> None:
        self.service.undo_summary(summary_id)

    def retry_summary_with_claude(self, summary_id: str) -> None:
        """ "Try again with Claude" on a basic summary (the service says how it went)."""
        self.service.retry_summary_with_claude(summary_id)

    def pin(self, message_id: int, pinned: bool = True) -> None:
        self.service.pin(message_id, pinned)

    def originals(self, summary_id: str) -> list[Message]:
        return self.service.archive.originals(summary_id)

    def summary_children(self, summary_id: str) -> list[Summary]:
        return self.service.summary_children(summary_id)

    def summary_history(self) -> list[HistoryEntry]:
        return self.service.summary_history()

    @property
    def backups(self) -> Backups:
        """Backups, restoring one, deleting originals (outcomes come as notices/errors)."""
        return self.service.backups

    # --- models

    @property
    def models(self) -> list[ModelInfo]:
        return list(self.service.models)

    @property
    def selected_model(self) -> str:
        return self.service.selected_model

    def select_model(self, model_id: str) -> None:
        self.service.select_model(model_id)

    def refresh_models(self) -> None:
        self.service.refresh_models()

    # --- the API key (the dialogs' `KeyManager`)

    def has_api_key(self) -> bool:
        return self.service.has_api_key()

    def stored_key(self) -> str | None:
        return self.service.stored_key()

    @property
    def key_is_persistent(self) -> bool:
        return self.service.key_is_persistent

    @property
    def env_key_present(self) -> bool:
        return bool(os.environ.get("ANTHROPIC_API_KEY"))

    def save_key(self, key: str, *, session_only: bool = False) -> None:
        self.service.save_key(key, session_only=session_only)

    def remove_key(self) -> None:
        self.service.remove_key()

    def check_key(self, key: str, done: Callable[[UserFacingError | None], None]) -> None:
        self.service.check_key(key, done)

    # --- settings

    @property
    def settings(self) -> AppSettings:
        """A copy of the settings in force."""
        return self.service.settings

    def update_settings(self, settings: AppSettings) -> None:
        self.service.update_settings(settings)


class _SignalEvents(ChatEvents):
    """The service's events, emitted as the controller's signals."""

    def __init__(self, controller: ChatController) -> None:
        self._c = controller

    def sessions_listed(self, sessions: Sequence[Session], current_id: str | None) -> None:
        self._c.sessions_listed.emit(list(sessions), current_id)

    def session_changed(self, session: Session) -> None:
        self._c.session_changed.emit(session)

    def session_removed(self, session_id: str) -> None:
        self._c.session_removed.emit(session_id)

    def conversation_opened(
        self, session: Session | None, page: Sequence[Message], has_earlier: bool
    ) -> None:
        self._c.conversation_opened.emit(session, list(page), has_earlier)

    def message_added(self, message: Message) -> None:
        self._c.message_added.emit(message)

    def message_text_changed(self, message_id: int, text: str) -> None:
        self._c.message_text_changed.emit(message_id, text)

    def message_thinking_changed(self, message_id: int, thinking: str) -> None:
        self._c.message_thinking_changed.emit(message_id, thinking)

    def reply_declined(self, message_id: int, explanation: str | None) -> None:
        self._c.reply_declined.emit(message_id, explanation)

    def message_updated(self, message: Message) -> None:
        self._c.message_updated.emit(message)

    def message_removed(self, message_id: int) -> None:
        self._c.message_removed.emit(message_id)

    def unsaved_changed(self, message_id: int | None) -> None:
        self._c.unsaved_changed.emit(message_id)

    def activity_changed(self, activity: Activity) -> None:
        self._c.activity_changed.emit(activity)

    def context_changed(self, state: ContextState | None) -> None:
        self._c.context_changed.emit(state)

    def cache_use_changed(self, use: CacheUse) -> None:
        self._c.cache_use_changed.emit(use)

    def summaries_changed(self, summaries: Sequence[Summary]) -> None:
        self._c.summaries_changed.emit(tuple(summaries))

    def error_raised(self, error: UserFacingError) -> None:
        self._c.error_raised.emit(error)

    def notice_raised(self, title: str, text: str) -> None:
        self._c.notice_raised.emit(title, text)

    def status_changed(self, text: str) -> None:
        self._c.status_changed.emit(text)

    def key_needed(self) -> None:
        self._c.key_needed.emit()

    def models_changed(self, models: Sequence[ModelInfo], selected: str) -> None:
        self._c.models_changed.emit(list(models), selected)

    def pending_sent(self) -> None:
        self._c.pending_sent.emit()

    def summary_made(self, report: SummaryReport) -> None:
        self._c.summary_made.emit(report)

    def summary_progress(self, text: str | None) -> None:
        self._c.summary_progress.emit(text)

    def summary_previewed(self, preview: SummaryPreview) -> None:
        self._c.summary_previewed.emit(preview)

    def lookup_made(self, lookup: Lookup) -> None:
        self._c.lookup_made.emit(lookup)
