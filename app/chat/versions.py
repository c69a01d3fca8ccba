"""Edit and resend, Regenerate, and browsing a message's versions (DESIGN §8, issue 11).

`MessageVersions` belongs to one conversation and runs on the loop's thread. Every
version stays in the archive (app.store.versions); the conversation's live tail and
the transcript are told exactly what left the shown path and what joined it, so
nothing is re-read. A regeneration changes nothing until Claude's new reply has a row:
if it fails before any text arrives (offline, say), the earlier reply is shown again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.chat.events import Activity, ChatEvents
from app.chat.gauge import ConversationGauge
from app.chat.model_use import ModelInUse
from app.chat.state import ConversationState
from app.chat.summaries import ConversationSummaries
from app.core.catalog import ModelInfo
from app.core.errors import InvalidInputError, StorageError, UserFacingError
from app.core.live_tail import TailEntry
from app.core.models import Message, MessageStatus, Role
from app.core.text import validate_message_text
from app.store.versions import SUMMARIZED_TITLE, SUMMARIZED_WORDS, BranchChange

if TYPE_CHECKING:
    from app.chat.reply import ReplyOutcome

BUSY_TITLE = "Claude is busy"
BUSY_WORDS = {
    Activity.REPLYING: "Claude is still writing a reply. Stop it (Esc) or wait for it to finish, "
    "then try again.",
    Activity.CONDENSING: "Cairn is summarizing earlier messages. Try again when it is done.",
    Activity.LOADING: "The conversation is still opening. Try again in a moment.",
}


class MessageVersions:
    """The conversation's version changes: edit, regenerate, show another version.

    Attributes:
        replacing: Claude's reply being written again (shown until the new one starts).
    """

    def __init__(
        self,
        state: ConversationState,
        gauge: ConversationGauge,
        condensing: ConversationSummaries,
        model: ModelInUse,
    ) -> None:
        self._state = state
        self._shared = state.shared
        self._gauge = gauge
        self._condensing = condensing
        self._model = model
        self.replacing: Message | None = None

    # --- reading

    def can_regenerate(self, message: Message) -> bool:
        """Claude's newest shown reply, not declined, while nothing else runs."""
        conversation = self._state
        entry = conversation.tail.find(message.id)
        return (
            conversation.activity is Activity.IDLE
            and message.role is Role.ASSISTANT
            and message.status is not MessageStatus.STREAMING
            and message.status is not MessageStatus.DECLINED
            and entry is not None
            and entry.seq == conversation.tail.last_seq
        )

    def can_edit(self, message: Message) -> bool:
        """One of the user's messages in the live context."""
        return message.role is Role.USER and self._state.tail.find(message.id) is not None

    def another_model(self, message: Message) -> ModelInfo | None:
        """The model "Ask another model" asks for a declined reply: the next listed one
        (the catalog's ranking); None when the reply is not Claude's latest declined
        one, or no other model is listed."""
        conversation = self._state
        entry = conversation.tail.find(message.id)
        if (
            message.status is not MessageStatus.DECLINED
            or message.role is not Role.ASSISTANT
            or entry is None
            or entry.seq != conversation.tail.last_seq
        ):
            return None
        following = self._model.fallback()
        return None if following is None else following[0]

    def ask_another_model(self, message: Message) -> bool:
        """Claude declined `message`: ask the same question of the next listed model,
        as a new version of the reply ("retry on a fallback model":
        https://platform.claude.com/docs/build-with-claude/handling-stop-reasons)."""
        if not self._idle() or self._state.session is None:
            return False
        model = self.another_model(message)
        if model is None:
            return self._refuse(
                "No other model is available to your API key, so this question can't be "
                "asked again. Edit your message to ask differently.",
                "Can't ask another model",
            )
        if self._shared.provider() is None:
            self._shared.events.key_needed()
            return False
        conversation, shared = self._state, self._shared
        try:
            restored = shared.store.messages_by_id(
                shared.store.replies.restore_declined(message.id)
            )
        except StorageError as error:
            conversation.error(error)
            return False
        for question in restored:
            conversation.tail.replace(TailEntry.of(question, shared.counter.count))
            conversation.tell(_message_updated(question))
        self._model.use_here(model.id)
        self.replacing = message
        conversation.start_reply(replacing=message.id)
        return True

    def begin_edit(self, message: Message) -> bool:
        """Whether `message` can be edited now; if not, say why in words."""
        if not self._idle():
            return False
        if message.role is not Role.USER:
            return self._refuse("Only your own messages can be edited.", "Can't edit this message")
        if message.summary_id is not None or not self.can_edit(message):
            return self._refuse(SUMMARIZED_WORDS, SUMMARIZED_TITLE)
        return True

    # --- changing

    def regenerate(self, message: Message) -> bool:
        """Ask Claude to write its latest reply again; the earlier one stays a version."""
        if not self._idle() or self._state.session is None:
            return False
        if message.status is MessageStatus.DECLINED:
            return self._refuse(
                "Claude declined this question. Another model often answers it: use "
                "Ask another model, or edit your message to ask differently.",
                "Can't regenerate this reply",
            )
        if not self.can_regenerate(message):
            return self._refuse(
                "Only Claude's latest reply can be written again. To change an earlier part "
                "of the conversation, edit one of your messages.",
                "Can't regenerate this reply",
            )
        if self._shared.provider() is None:
            self._shared.events.key_needed()
            return False
        self.replacing = message
        self._state.start_reply(replacing=message.id)
        return True

    def edit(self, message_id: int, text: str) -> bool:
        """Send `text` as a new version of the user's message `message_id`: what followed
        it leaves the conversation (kept as the earlier version's branch). False (said in
        words) keeps the text in the composer."""
        conversation, shared = self._state, self._shared
        if not self._idle():
            return False
        try:
            validate_message_text(text)
        except UserFacingError as error:
            conversation.error(error)
            return False
        if shared.provider() is None:
            shared.events.key_needed()
            return False
        try:
            change = shared.store.versions.edit(message_id, text, shared.counter.count(text))
            (question,) = shared.store.messages_by_id(change.shown)
        except (StorageError, InvalidInputError) as error:
            conversation.error(error)
            return False
        self._take(change, [question])
        self._condensing.observe(1)
        conversation.start_reply()
        return True

    def show(self, message_id: int, number: int) -> None:
        """Show version `number` of a message, with the conversation that followed it."""
        if not self._idle():
            return
        store = self._shared.store
        try:
            change = store.versions.show(message_id, number)
            rows = store.messages_by_id(change.shown)
        except (StorageError, InvalidInputError) as error:
            self._state.error(error)
            return
        self._take(change, rows)
        self._gauge.memory_changed()  # the gauge: the context changed

    # --- a regeneration's reply

    def started(self, placeholder: Message) -> None:
        """A reply's row is streaming: a regeneration's takes the place of the earlier one
        (before the new row joins the live tail)."""
        replaced = self.replacing
        if replaced is not None and placeholder.version_of is not None:
            self._state.tail.remove({replaced.id})
            self._state.tell(lambda events: events.message_removed(replaced.id))

    def reply_done(self, outcome: ReplyOutcome) -> None:
        """A regeneration that received nothing shows the earlier reply again."""
        replaced, self.replacing = self.replacing, None
        if replaced is None or outcome.discarded is None:
            return
        self._state.tail.append(TailEntry.of(replaced, self._shared.counter.count))
        self._state.tell(lambda events: events.message_added(replaced))

    # --- inside

    def _take(self, change: BranchChange, shown: list[Message]) -> None:
        """Tell the live tail and the transcript what left the shown path and what joined."""
        conversation, count = self._state, self._shared.counter.count
        conversation.tail.remove(set(change.shelved))
        conversation.tail.restore(TailEntry.of(message, count) for message in shown)
        events = self._shared.events
        if not self._shared.is_current(conversation) or conversation.deleted:
            return
        for message_id in reversed(change.shelved):
            events.message_removed(message_id)
        for message in shown:
            events.message_added(message)

    def _idle(self) -> bool:
        activity = self._state.activity
        if activity is Activity.IDLE:
            return True
        return self._refuse(BUSY_WORDS.get(activity, BUSY_WORDS[Activity.REPLYING]), BUSY_TITLE)

    def _refuse(self, words: str, title: str) -> bool:
        self._state.error(InvalidInputError(words, title=title))
        return False


def _message_updated(message: Message) -> Callable[[ChatEvents], None]:
    return lambda events: events.message_updated(message)
