"""What the chat service tells the front end, always on the loop's thread.

The window's controller subclasses `ChatEvents` and turns each call into a Qt
signal; a test records them; the command line ignores most. Events about
messages, the gauge, the activity and the status concern the conversation on
screen (`ChatService.current`): a reply still streaming into a conversation
the user left is followed silently and shown again when they come back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

# Annotations only: the window imports this module to paint, and these pull in pydantic
# (issue 20).
if TYPE_CHECKING:
    from app.core.caching import CacheUse
    from app.core.catalog import ModelInfo
    from app.core.context import ContextState
    from app.core.errors import UserFacingError
    from app.core.lookup import Lookup
    from app.core.models import Message, Session
    from app.core.summary import Summary, SummaryDraft, SummaryEvent, SummaryTrigger


class Activity(StrEnum):
    """What the conversation on screen is busy with; one at a time."""

    LOADING = "loading"  # reading a long conversation's live tail; a send waits for it
    IDLE = "idle"  # ready to send
    REPLYING = "replying"  # Claude is writing a reply (Stop keeps what arrived)
    CONDENSING = "condensing"  # a message waits while earlier ones are condensed (Stop cancels)

    @property
    def busy(self) -> bool:
        """Sending is not possible now: the composer shows Stop instead of Send."""
        return self in (Activity.REPLYING, Activity.CONDENSING)


@dataclass(frozen=True)
class SummaryReport:
    """What one summary did, in the numbers the banner says.

    Attributes:
        summary_ids: the summaries it made (an undo takes back the newest condensed one).
        condensed: how many messages were newly condensed.
        messages_before, messages_after: live messages sent to Claude before and after.
        tokens_before, tokens_after: the next request's tokens before and after.
        trigger: why it was made (automatic, manual, emergency).
        basic: a rule-based "basic" summary stood in for Claude's.
    """

    summary_ids: tuple[str, ...]
    condensed: int
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    trigger: SummaryTrigger
    basic: bool = False

    @property
    def tokens_saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)

    @property
    def undo_id(self) -> str | None:
        """The summary an Undo takes back: the last one made."""
        return self.summary_ids[-1] if self.summary_ids else None


@dataclass(frozen=True)
class SummaryPreview:
    """A summary drafted but not saved yet, for the user to check (accept, edit, discard).

    Attributes:
        drafts: one per run of messages (a pinned message splits them), oldest first.
        condensed: how many messages it would condense.
        kept: how many live messages would stay as they are.
        tokens_before, tokens_after: the next request's tokens now, and about how many
            once the drafts are saved.
        trigger: why it is made (manual, automatic).
    """

    drafts: tuple[SummaryDraft, ...]
    condensed: int
    kept: int
    tokens_before: int
    tokens_after: int
    trigger: SummaryTrigger


@dataclass(frozen=True)
class HistoryEntry:
    """One line of a conversation's summary history: an audit event, and the model
    that wrote the summary it concerns (None when unknown or no model was used)."""

    event: SummaryEvent
    model: str | None = None


class ChatEvents:
    """Every method does nothing here; override the ones you listen to."""

    def sessions_listed(self, sessions: Sequence[Session], current_id: str | None) -> None:
        """The whole list of conversations (at start), newest first."""

    def session_changed(self, session: Session) -> None:
        """A conversation was created, renamed, or became the most recently active."""

    def session_removed(self, session_id: str) -> None:
        """A conversation was deleted."""

    def conversation_opened(
        self, session: Session | None, page: Sequence[Message], has_earlier: bool
    ) -> None:
        """The conversation on screen changed (None: a new one, not stored yet)."""

    def message_added(self, message: Message) -> None:
        """A message was stored: the user's, or the start of a reply."""

    def message_sending(self, message: Message) -> None:
        """The user's message, on its way to the disk: shown as sending (its id is a
        stand-in, below zero) until `message_stored` or `message_not_sent`."""

    def message_stored(self, sending_id: int, message: Message) -> None:
        """The message shown as sending (`sending_id`) is on disk, as `message`."""

    def message_not_sent(self, sending_id: int, text: str) -> None:
        """The disk did not take the message shown as sending: it goes, and its text goes
        back to the composer (the error is told apart)."""

    def message_text_changed(self, message_id: int, text: str) -> None:
        """A reply's text so far (at most about 30 times a second)."""

    def message_thinking_changed(self, message_id: int, thinking: str) -> None:
        """A reply's thinking so far (shown above it, collapsed), as its text is."""

    def reply_declined(self, message_id: int, explanation: str | None) -> None:
        """Claude declined a reply: the explanation the API gave (None: none), to show
        beside "Ask another model"."""

    def message_updated(self, message: Message) -> None:
        """A message changed: a reply finished, stopped or failed; a pin."""

    def message_removed(self, message_id: int) -> None:
        """A message is gone: a reply that failed before any of it arrived."""

    def unsaved_changed(self, message_id: int | None) -> None:
        """The reply on screen kept in memory because the disk did not take it (its id;
        mark its row "not saved yet"), or None: everything shown is saved now."""

    def activity_changed(self, activity: Activity) -> None:
        """The conversation on screen became busy or idle."""

    def context_changed(self, state: ContextState | None) -> None:
        """The gauge's figures for the next request; None while they cannot be known yet."""

    def cache_use_changed(self, use: CacheUse) -> None:
        """What the conversation on screen read from Claude's prompt cache, in all."""

    def summaries_changed(self, summaries: Sequence[Summary]) -> None:
        """The memory block of the conversation on screen changed (its active summaries)."""

    def summary_made(self, report: SummaryReport) -> None:
        """Earlier messages of the conversation on screen were condensed (after
        `summaries_changed`): say so quietly, with the numbers."""

    def error_raised(self, error: UserFacingError) -> None:
        """Something went wrong: say it in plain words (with Retry when `error.retryable`)."""

    def notice_raised(self, title: str, text: str) -> None:
        """A quiet notice."""

    def status_changed(self, text: str) -> None:
        """A passing status line ("Claude is busy — retrying…"); "" clears it."""

    def key_needed(self) -> None:
        """No API key is known: ask for one."""

    def models_changed(self, models: Sequence[ModelInfo], selected: str) -> None:
        """The models to offer, and the one selected."""

    def pending_sent(self) -> None:
        """A message that waited (while condensing or opening) was sent: clear the composer."""

    def summary_previewed(self, preview: SummaryPreview) -> None:
        """A summary of the conversation on screen waits for the user to check it: answer
        with `condensing.accept` or `condensing.discard` of the conversation on screen
        (nothing is saved until then)."""

    def summary_progress(self, text: str | None) -> None:
        """A summary is being made: what it does now ("Asking Claude for a summary");
        None once it ended (its outcome is said by a notice)."""

    def restore_progressed(self, share: float | None) -> None:
        """A restore is under way: how far (0 to 1); None once it ended (its outcome is
        said by a notice or an error)."""

    def lookup_made(self, lookup: Lookup) -> None:
        """Claude searched the archive while writing reply `lookup.message_id`, or recall
        quoted the user's other conversations for it (`lookup.automatic`); saved already:
        show the lookup on that reply."""
