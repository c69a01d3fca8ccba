"""A reply the disk did not take (issue 10 item 8): kept in memory until it can be saved.

When a reply's final save fails (the disk is full, the database busy), `ReplyJob`
hands back a `NotSaved`: the reply as it ended. `UnsavedReply` shows it, marks its
row "not saved yet" (`ChatEvents.unsaved_changed`), and writes it as soon as it can:
every few seconds, on Retry or Continue, and before the next message is stored (so
the next request is asked with it on disk). The conversation stays open while it
keeps one, so switching away and back shows the kept text with its mark, never the
row's state on disk (`over`, `opened`). If Cairn quits first, the start-up repair
(`SessionStore.recover_interrupted`) marks the row stopped with the text last saved
while it streamed (Continue goes on from there), or removes it if nothing was saved
(the question then offers Retry).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from app.chat.loop import Timer
from app.chat.state import ConversationState
from app.core.errors import StorageError
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Message
from app.store.errors import RecordNotFoundError

log = logging.getLogger(__name__)

# How often a kept reply is tried again while the disk is full.
SAVE_AGAIN_SECONDS = 5.0

NOT_SAVED_TITLE = "This reply isn't saved yet"
# Said when the periodic attempt succeeds: it replaces the "not saved yet" banner.
SAVED_TITLE = "Reply saved"
SAVED_TEXT = "There is room on the disk again: Claude's reply is saved."


@dataclass(frozen=True)
class NotSaved:
    """A reply's end that could not be written.

    Attributes:
        message: the reply as it ended (its text, final status, usage and model), as
            shown; on disk its row still holds what the last save wrote.
        error: why it could not be written, in plain words.
    """

    message: Message
    error: StorageError


def not_saved_error(error: StorageError) -> StorageError:
    """The words shown for a reply the disk did not take: what went wrong, and that
    nothing is lost as long as Cairn is open."""
    return StorageError(
        f"{error.message} Claude's reply stays on screen, and Cairn will save it as "
        "soon as it can.",
        title=NOT_SAVED_TITLE,
        retryable=True,
        detail=error.detail,
    )


class UnsavedReply:
    """Takes a conversation's finished replies in; keeps the one the disk refused.

    Attributes:
        kept: the reply waiting to be saved; None when everything shown is on disk.
    """

    def __init__(self, state: ConversationState) -> None:
        self._state = state
        self._shared = state.shared
        self.kept: NotSaved | None = None
        self._timer: Timer | None = None

    def take(self, message: Message | None, not_saved: NotSaved | None) -> Message | None:
        """Show a finished reply: `message` as saved, or the one `not_saved` keeps (tried
        again every few seconds). Returns the reply as shown; None when there is none."""
        if not_saved is not None:
            self.kept, message = not_saved, not_saved.message
            self._save_later()
        if message is not None:
            self._show(message)
        if not_saved is not None:
            self.opened()
        return message

    def over(self, page: Sequence[Message]) -> list[Message]:
        """`page` as read from disk, with the kept reply as it is shown instead of its row."""
        kept = self.kept
        if kept is None:
            return list(page)
        return [kept.message if message.id == kept.message.id else message for message in page]

    def over_tail(self, tail: LiveTail) -> LiveTail:
        """`tail` as read from disk, with the kept reply's entry as it is shown."""
        if self.kept is not None:
            tail.replace(TailEntry.of(self.kept.message, self._shared.counter.count))
        return tail

    def opened(self) -> None:
        """Tell the front end which reply is not saved yet (the conversation was opened,
        or a reply was just kept)."""
        kept = self.kept
        if kept is not None:
            message_id = kept.message.id
            self._state.tell(lambda events: events.unsaved_changed(message_id))

    def save(self) -> None:
        """Write the kept reply now, if there is one (before anything else is stored).

        Raises:
            StorageError: it still cannot be written; it stays kept.
        """
        kept = self.kept
        if kept is None:
            return
        reply = kept.message
        try:
            saved = self._shared.store.finish_message(
                reply.id, reply.content, reply.status, usage=reply.usage, model=reply.model
            )
        except RecordNotFoundError:
            self._drop()  # the conversation was deleted meanwhile
            return
        except StorageError as error:
            raise not_saved_error(error) from error
        self._drop()
        self._show(saved)

    def saved(self) -> bool:
        """`save`, telling the user when it fails; whether nothing is left unsaved."""
        try:
            self.save()
        except StorageError as error:
            self._state.error(error)
            return False
        return True

    def _save_later(self) -> None:
        if self._timer is None:
            self._timer = self._shared.loop.call_later(SAVE_AGAIN_SECONDS, self._save_again)

    def _save_again(self) -> None:
        self._timer = None
        if self.kept is None or self._state.deleted:
            return
        try:
            self.save()
        except StorageError as error:
            log.info("The kept reply still can't be saved: %s", error.detail or error)
            self._save_later()
            return
        self._state.tell(lambda events: events.notice_raised(SAVED_TITLE, SAVED_TEXT))

    def _drop(self) -> None:
        if self.kept is not None:
            self._state.tell(lambda events: events.unsaved_changed(None))
        self.kept = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _show(self, message: Message) -> None:
        state = self._state
        entry = TailEntry.of(message, self._shared.counter.count)
        if not state.tail.replace(entry):
            state.tail.append(entry)
        state.tell(lambda events: events.message_updated(message))
