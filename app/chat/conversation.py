"""One open conversation, assembled from its parts (DESIGN §1).

A `Conversation` holds no logic of its own: it makes the conversation's state
(`app.chat.state`) and each part that owns a concern of it, and hands each part the
ones below it. Every change is applied incrementally — a message stored is one
append to the live tail, a reply finished one replace, a summary one removal of what
it covered, an undo one restore — so a turn costs the same whatever the history, and
nothing is re-read to find out what changed. Background work (the reply, a summary,
an undo, reading a long conversation) runs as jobs; the parts take in their results
on the loop's thread.

From the bottom up (each part may use those listed before it):
- `state`: the session, the model, the live tail, the memory block, the activity,
  what waits, and telling the front end;
- `outgoing`: the files of the next message (`app.chat.attachments`);
- `gauge`: the draft, and the figures of the next request;
- `unsaved`: a reply the disk did not take, kept until it can be;
- `condensing`: summaries — the trigger, the job, its preview, undo;
- `pins`: messages never condensed;
- `model`, `instructions`: the model it uses, Claude's instructions;
- `versions`: edit, regenerate, other versions;
- `endings`: Continue, and a reply that ended other than complete;
- `titles`: a new conversation's automatic title, after its first reply;
- `turns`: sending, and the reply on its way;
- `opening`: reading a stored conversation's live tail and memory block.
"""

from __future__ import annotations

from app.chat.attachments import Outgoing
from app.chat.events import Activity
from app.chat.gauge import ConversationGauge
from app.chat.instructions import ConversationInstructions
from app.chat.model_use import ModelInUse
from app.chat.opening import ConversationOpening
from app.chat.pins import Pins
from app.chat.reply_endings import ReplyEndings
from app.chat.state import ConversationState, Shared
from app.chat.summaries import ConversationSummaries
from app.chat.titles import ConversationTitles
from app.chat.turns import ConversationTurns
from app.chat.unsaved import UnsavedReply
from app.chat.versions import MessageVersions
from app.core.models import Session


class Conversation:
    """A conversation on screen, or one with a job still running: its state and parts
    (see the module notes for what each owns)."""

    def __init__(self, shared: Shared, session: Session | None, model_id: str) -> None:
        self.state = state = ConversationState(shared, session, model_id)
        self.outgoing = Outgoing(shared, lambda: self.gauge.tell())
        self.gauge = ConversationGauge(state, self.outgoing)
        self.unsaved = UnsavedReply(state)
        self.condensing = ConversationSummaries(state, self.gauge)
        self.pins = Pins(state)
        self.model = ModelInUse(state, self.gauge)
        self.instructions = ConversationInstructions(state, self.gauge)
        self.versions = MessageVersions(state, self.gauge, self.condensing, self.model)
        self.endings = ReplyEndings(state, self.versions, self.condensing, self.unsaved)
        self.titles = ConversationTitles(state)
        self.turns = ConversationTurns(
            state,
            outgoing=self.outgoing,
            gauge=self.gauge,
            unsaved=self.unsaved,
            condensing=self.condensing,
            model=self.model,
            versions=self.versions,
            endings=self.endings,
            titles=self.titles,
        )
        self.opening = ConversationOpening(
            state,
            outgoing=self.outgoing,
            gauge=self.gauge,
            unsaved=self.unsaved,
            condensing=self.condensing,
        )

    @property
    def has_jobs(self) -> bool:
        """Work is still running for it (a reply, a summary, opening), so it must stay
        open off screen."""
        return (
            self.turns.replying
            or self.condensing.running
            or self.condensing.saving  # the trigger's memory, being written
            or self.titles.running
            or self.state.activity is Activity.LOADING
        )
