"""Automatic titles: after a new conversation's first reply, a few words a small model
writes in place of the first message's start (issue 23), never over a title the user
gave — checked again when the title comes, as the user may rename meanwhile."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from app.chat.runner import Job
from app.chat.state import ConversationState
from app.core.errors import StorageError, UserFacingError
from app.core.models import Message, MessageStatus, Role, Session
from app.core.summary import SummaryMode
from app.core.titles import ask_for_title, wants_a_title

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Asked:
    """A new conversation waiting for its first reply: its first words, and the title
    they gave it (what the user has not changed while it is still the title)."""

    session_id: str
    question: str
    first_title: str


class ConversationTitles:
    """Gives a new conversation a title written by the summarizer's model after its
    first reply (without a key, with offline summaries, or when no model answers, the
    first message's title stays).

    Attributes:
        running: a title is being written.
    """

    def __init__(self, state: ConversationState) -> None:
        self._state = state
        self._asked: _Asked | None = None
        self.running = False

    def started(self, session: Session, question: str) -> None:
        """The conversation was just created by its first message, `question`."""
        self._asked = _Asked(session.id, question, session.title)

    def reply_done(self, message: Message | None) -> None:
        """A reply ended: the first complete one of a new conversation gets it a title."""
        asked = self._asked
        if (
            asked is None
            or message is None
            or message.role is not Role.ASSISTANT
            or message.status is not MessageStatus.COMPLETE
            or message.session_id != asked.session_id
        ):
            return
        self._asked = None
        shared = self._state.shared
        provider, config = shared.provider(), shared.config()
        if provider is None or config.mode is SummaryMode.RULE or not config.summarizer_models:
            return  # no key, or the user keeps summaries (and so titles) off Claude
        if not wants_a_title(asked.question):
            return  # the first message is a good title as it is
        models, answer = list(config.summarizer_models), message.content
        self.running = True
        shared.runner.start(
            Job(
                "title",
                lambda _job: ask_for_title(
                    provider.complete_structured, models, asked.question, answer
                )[0],
                done=lambda title: self._written(asked, title),
                failed=self._failed,
            )
        )

    def _failed(self, error: UserFacingError) -> None:
        self.running = False
        log.info("No automatic title: %s", error.detail or error.message)

    def _written(self, asked: _Asked, title: str | None) -> None:
        self.running = False
        if title is None or title == asked.first_title:
            return
        shared = self._state.shared
        try:
            current = shared.store.get_session(asked.session_id)
            if current is None or current.title != asked.first_title:
                return  # deleted, or renamed by the user meanwhile: theirs stays
            session = shared.store.rename_session(asked.session_id, title)
        except StorageError as error:
            log.warning("The automatic title was not saved: %s", error.detail or error)
            return
        state = self._state
        if state.session is not None and state.session.id == session.id:
            state.session = session
        shared.session_changed(session)
