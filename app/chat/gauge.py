"""The figures of a conversation's next request: what the gauge shows, and the check
before sending (DESIGN §3, §4).

The gauge counts what the next request will carry: the system prompt, the memory
block, the live tail, the draft — and, once something is archived, the archive tool
(its definition and the API's tool-use prompt, when the request has room for them) and
the recall block, counted as much as the last request quoted (its exact size depends
on the message, known only when it is sent), within what the next one may quote. Files
of earlier messages the request will not re-send (the API's limits on a whole
request's files) count as their one-line note, and the figures name them. The
check before sending leaves both out: they are dropped before a request would not fit,
so they never stop a message from being sent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from app.chat.lookups import tool_offer
from app.chat.recall import recall_budget
from app.core.context import ContextState
from app.core.lookup import ToolOffer

if TYPE_CHECKING:
    from app.chat.conversation import Conversation, Shared


class ConversationGauge:
    """Measures one conversation's next request.

    Attributes:
        quoted: raw tokens the last request quoted from the archive (its recall block);
            0 before any, or when it quoted nothing.
    """

    def __init__(self, conversation: Conversation, shared: Shared) -> None:
        self._conversation = conversation
        self._shared = shared
        self.quoted = 0

    def state(self, draft: str, draft_tokens: int | None = None) -> ContextState | None:
        """The gauge's figures for the next request with `draft` (`draft_tokens` when its
        attachments make it more than its text); None until they can be known (no
        tokenizer yet)."""
        if not self._shared.counter.ready:
            return None
        settings = self._shared.recall()
        return self.required(
            draft,
            draft_tokens,
            tools=tool_offer(settings, archived=bool(self._conversation.summaries)),
            recall_budget_ratio=recall_budget(settings),
            recall_quoted=self.quoted,
            recall_elsewhere=settings.across_conversations,
        )

    def required(
        self,
        draft: str,
        draft_tokens: int | None = None,
        *,
        tools: ToolOffer | None = None,
        recall_budget_ratio: float = 0.0,
        recall_quoted: int = 0,
        recall_elsewhere: bool = False,
    ) -> ContextState:
        """The figures of the next request with `draft`; without the parts that give way
        (the tool, the quotes) unless they are given (as `estimate_state` takes them)."""
        shared, conversation = self._shared, self._conversation
        model, known = shared.model_info(conversation.model_id)
        files = conversation.outgoing.plan(conversation.tail, model)
        state = shared.builder.estimate_state(
            model=model,
            system_prompt=conversation.system_prompt,
            summaries=conversation.summaries,
            tail_tally=conversation.tail.tally,
            draft=draft,
            draft_tokens=draft_tokens,
            trigger_ratio=shared.config().trigger_ratio,
            model_known=known,
            tools=tools,
            recall_budget_ratio=recall_budget_ratio,
            recall_quoted=recall_quoted,
            recall_elsewhere=recall_elsewhere,
            files_saved=files.saved_tokens,
        )
        return replace(state, files_left_out=files.left_out) if files.left_out else state

    def squeezes_recall(self, text: str, tokens: int) -> bool:
        """Whether sending `text` now would leave the recall block less than its floor:
        then the live tail gives way first (an emergency summary), when it can."""
        state = self.state(text, tokens)
        return state is not None and state.recall_floor > 0 and not state.required.fits

    def check_fits(self, text: str, tokens: int) -> None:
        """Raise, in plain words with the numbers, when `text` cannot be sent as things
        stand (without the tool and the recall block: they give way first)."""
        conversation = self._conversation
        model, known = self._shared.model_info(conversation.model_id)
        files = conversation.outgoing.plan(conversation.tail, model)
        self._shared.builder.check_fits(
            model=model,
            system_prompt=conversation.system_prompt,
            summaries=conversation.summaries,
            tail_tally=conversation.tail.tally,
            draft=text,
            draft_tokens=tokens,
            model_known=known,
            files_saved=files.saved_tokens,
        )
