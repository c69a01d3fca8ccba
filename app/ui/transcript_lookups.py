"""The archive searches of the replies on screen, each on its reply's `LookupLine`.

Lookups arrive as the controller says they happened (`lookup_made`), and those of a
page come with the page (read once when it is shown).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.core.errors import StorageError
from app.core.message_kinds import Role
from app.ui.history_source import Place

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.lookup import Lookup
    from app.core.models import Message
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

log = logging.getLogger(__name__)


class TranscriptLookups(QObject):
    """Puts each reply's lookups on its message in the transcript.

    Signals:
        open_requested(object): the user asked to see a message a lookup found (a Place).
    """

    open_requested = Signal(object)

    def __init__(self, controller: ChatController, transcript: TranscriptView) -> None:
        super().__init__(transcript)
        self._controller = controller
        self._transcript = transcript
        self._shown: dict[int, tuple[Lookup, ...]] = {}
        # Connected after the window's own slot: the page's widgets exist by then.
        controller.conversation_opened.connect(self._conversation_opened)
        controller.lookup_made.connect(self.add)
        # A page is built in slices after its first paint: each message as it is made.
        transcript.message_built.connect(self._built)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def page_shown(self, page: Iterable[Message]) -> None:
        """A page of messages is (about to be) put on screen: show its replies' lookups."""
        ids = [message.id for message in page if message.role is Role.ASSISTANT]
        for message_id, lookups in self._chat.archive.lookups(ids).items():
            self._show(message_id, lookups)

    def add(self, lookup: Lookup) -> None:
        """One more lookup of a reply (it happened just now)."""
        known = self._shown.get(lookup.message_id, ())
        if any(done.ordinal == lookup.ordinal for done in known):
            return
        self._show(lookup.message_id, (*known, lookup))

    def _conversation_opened(self, _session: object, page: list[Message], _more: bool) -> None:
        self._shown.clear()
        self.page_shown(page)

    def _built(self, widget: MessageWidget) -> None:
        lookups = self._shown.get(widget.message.id)
        if lookups:
            widget.set_lookups(lookups)
            self._wire(widget)

    def _show(self, message_id: int, lookups: tuple[Lookup, ...]) -> None:
        self._shown[message_id] = lookups
        widget = self._transcript.message_widget(message_id)
        if widget is not None:
            widget.set_lookups(lookups)
            self._wire(widget)

    def _wire(self, widget: MessageWidget) -> None:
        """Let the line's excerpts open their originals (once per line)."""
        line = widget.lookup_line
        if line is not None and not line.property("cairnOpensOriginals"):
            line.setProperty("cairnOpensOriginals", True)
            line.open_requested.connect(self._open)

    def _open(self, session_id: str, seq: int) -> None:
        """Open message `seq` of `session_id` ("": this conversation), unfolding the
        summary that covers it now."""
        if not session_id:
            session = self._chat.current.state.session
            if session is None:
                return
            session_id = session.id
        try:
            covering = self._chat.archive.covering(session_id, seq)
        except StorageError as error:  # the conversation still opens, at its newest
            log.warning("Could not read which summary covers message %s: %s", seq, error)
            covering = None
        self.open_requested.emit(Place(session_id, seq, covering))
