"""The controller: the chat service's events as Qt signals.

All the conversation logic lives in `app.chat` (DESIGN §1); this class only
adapts it to Qt, as Dangerzone's GUI twins add nothing but signals. Widgets listen
to its signals and act on the parts of the chat service they need
(`controller.service.current.versions`, `controller.service.history`…: see
`ChatService`); they never reach into the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.chat.events import Activity, ChatEvents, SummaryPreview, SummaryReport
from app.core.paint_settings import PaintSettings, paint_settings_of
from app.ui.qt_loop import QtEventLoop

if TYPE_CHECKING:
    from app.chat.service import ChatService, ServiceDependencies
    from app.core.caching import CacheUse
    from app.core.catalog import ModelInfo
    from app.core.context import ContextState
    from app.core.errors import UserFacingError
    from app.core.lookup import Lookup
    from app.core.models import Message, Session
    from app.core.settings import AppSettings
    from app.core.summary import Summary


class ChatController(QObject):
    """Everything a conversation does, as the window sees it.

    Attributes:
        service: the chat service the window acts on.
        loop: the service's event loop (Qt's, on the GUI thread).

    Signals:
        sessions_listed(list, object): every conversation, and the current id (or None).
        session_changed(Session): one conversation was created, renamed or became active.
        session_removed(str): one conversation was deleted.
        conversation_opened(object, list, bool): session (None when new), newest page,
            whether earlier messages exist.
        message_sending(Message), message_stored(int, Message), message_not_sent(int, str):
            the user's message on its way to the disk (a stand-in id below zero), then
            on disk (its stand-in's id, the stored message), or not taken (its text).
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
        status_changed(str): a passing status line ("" clears it); only when it changes.
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
    message_sending = Signal(object)
    message_stored = Signal(int, object)
    message_not_sent = Signal(int, str)
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
    restore_progressed = Signal(object)
    # The chat service was just built (`service`): parts that need it from the start wire.
    service_built = Signal()

    def __init__(
        self,
        deps: ServiceDependencies | Callable[[], ServiceDependencies],
        parent: QObject | None = None,
        *,
        settings: AppSettings | None = None,
        paint: PaintSettings | None = None,
    ) -> None:
        """Given `deps`, the service is built at once; given what makes them, when first
        used (`service`): `cairn` paints first, with `paint` (the settings' theme and text
        size, read without their model), and `settings` when they were loaded already."""
        super().__init__(parent)
        self.loop = QtEventLoop(self)
        self._deps = deps
        self._settings = settings if settings is not None or callable(deps) else deps.settings
        self._paint = paint
        self._service: ChatService | None = None
        if not callable(deps):
            self._build()

    @property
    def built(self) -> bool:
        """Whether the chat service exists yet (the app builds it after the first paint)."""
        return self._service is not None

    @property
    def settings(self) -> AppSettings:
        """The settings: the service's, or before it is built those it will start with."""
        if self._service is not None or self._settings is None:
            return self.service.settings
        return self._settings.model_copy(deep=True)  # a copy, as the service's

    @property
    def paint_settings(self) -> PaintSettings:
        """What the first paint shows of the settings: before the service is built, what it
        was given (read without the settings' model), else the settings'."""
        if self._service is None and self._paint is not None:
            return self._paint
        return paint_settings_of(self.settings)

    @property
    def service(self) -> ChatService:
        """The chat service, built the first time it is asked for.

        Its modules (the chat side: core, store, chat) are imported then, not to paint the
        window: `cairn` asks for it once the window has painted (issue 20).
        """
        return self._service if self._service is not None else self._build()

    def _build(self) -> ChatService:
        from app.chat.service import ChatService

        deps = self._deps if not callable(self._deps) else self._deps()
        self._service = service = ChatService(deps, self.loop, _SignalEvents(self))
        self.service_built.emit()
        return service

    def shutdown(self) -> None:
        """Stop the reply (keeping its text) and every background task, and wait for them."""
        if self._service is not None:
            self._service.shutdown()
        self.loop.close()


class _SignalEvents(ChatEvents):
    """The service's events, emitted as the controller's signals."""

    def __init__(self, controller: ChatController) -> None:
        self._c = controller
        self._status = ""  # the status line as last emitted (the window starts with none)

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

    def message_sending(self, message: Message) -> None:
        self._c.message_sending.emit(message)

    def message_stored(self, sending_id: int, message: Message) -> None:
        self._c.message_stored.emit(sending_id, message)

    def message_not_sent(self, sending_id: int, text: str) -> None:
        self._c.message_not_sent.emit(sending_id, text)

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
        # The service clears the line at every step of a turn (each batch of a reply's
        # text, ~30 a second): only a change is emitted, for the window to show.
        if text == self._status:
            return
        self._status = text
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

    def restore_progressed(self, share: float | None) -> None:
        self._c.restore_progressed.emit(share)
