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

from dataclasses import dataclass, replace

from app.chat.attachments import Outgoing
from app.chat.events import Activity
from app.chat.lookups import tool_offer
from app.chat.state import ConversationState
from app.core.calibration import Calibration
from app.core.context import ContextState, RequestInputs
from app.core.errors import UserFacingError
from app.core.file_limits import FilePlan
from app.core.lookup import ToolOffer
from app.core.settings import RecallSettings
from app.core.summary import SummaryMode


@dataclass(frozen=True)
class _SendCheckKey:
    """Everything the checks before sending read: the same key, the same answer."""

    inputs: RequestInputs  # its summaries a tuple (the state's list changes in place)
    stored: bool  # the conversation has a session (a new one is never squeezed)
    recall: RecallSettings
    quoted: int
    calibration: Calibration | None
    today: int


class ConversationGauge:
    """Measures one conversation's next request, and tells the front end its figures.

    Attributes:
        draft: the composer's text as last told (the window debounces it).
        quoted: raw tokens the last request quoted from the archive (its recall block);
            0 before any, or when it quoted nothing.
    """

    def __init__(self, state: ConversationState, outgoing: Outgoing) -> None:
        self._state = state
        self._outgoing = outgoing
        self.draft = ""
        self.quoted = 0
        # The draft's figures as last measured (`measure`), with its tokens and the answer
        # of the checks before sending it: Enter then reads them instead of counting and
        # measuring the same request again on the window's thread (issue 20).
        self._counted: tuple[str, int] | None = None  # the text as stored, its count
        self._checked: tuple[_SendCheckKey, bool] | None = None
        # The archive tool offered, with what it was made of (`_offered_tool`).
        self._tool: tuple[tuple[bool, bool, bool], ToolOffer | None] | None = None

    def measure(self, draft: str | None = None) -> ContextState | None:
        """The gauge's figures for the next request with `draft` (None: the draft as
        last told) and the files attached; None until they can be known (opening, or
        no tokenizer yet)."""
        if self._state.activity is Activity.LOADING:
            return None
        text = self._outgoing.text(self.draft if draft is None else draft)
        if not text.strip() or not self._state.shared.counter.ready:
            return self.with_recall(text)
        # Counted as Enter counts it (`tokens`): the same figures as counting in
        # `estimate_state`, and what the checks before sending it read, kept.
        tokens = self.tokens(text)
        inputs, files = self._inputs(text, tokens, self._offered_tool())
        figures = self._estimate_with_recall(inputs)
        self._keep_check(inputs, figures)
        return replace(figures, files_left_out=files.left_out) if files.left_out else figures

    @property
    def measurable(self) -> bool:
        """Whether `measure` gives figures now (not while opening, nor without a tokenizer)."""
        return self._state.activity is not Activity.LOADING and self._state.shared.counter.ready

    def tokens(self, text: str) -> int:
        """The tokens of `text` (as it will be stored) with the files attached: the count
        of the draft last measured when it is the same text, else counted now."""
        counted = self._counted
        if counted is not None and counted[0] == text:
            count = counted[1]
        else:
            count = self._state.shared.counter.count(text)
            self._counted = (text, count)
        return count + sum(attachment.tokens for attachment in self._outgoing.draft)

    def with_recall(self, text: str, tokens: int | None = None) -> ContextState | None:
        """The figures of the next request with `text` as it will be stored, the tool and
        the recall block as the settings have them; None until they can be known (no
        tokenizer yet)."""
        if not self._state.shared.counter.ready:
            return None
        inputs, files = self._inputs(text, tokens, self._offered_tool())
        figures = self._estimate_with_recall(inputs)
        return replace(figures, files_left_out=files.left_out) if files.left_out else figures

    def set_draft(self, text: str) -> None:
        """The composer's text changed: the figures follow it. The same text as last told
        changes nothing (the composer cleared by a send: the figures shown are the
        request's, now on its way; the reply's end tells the next)."""
        if text == self.draft:
            return
        self.draft = text
        self.tell()

    def tell(self, figures: ContextState | None = None) -> None:
        """Tell the front end the figures; `figures` when the caller has them already."""
        if figures is None:
            figures = self.measure()
        self._state.tell(lambda events: events.context_changed(figures))
        # A summary is coming: its process warms now, while nothing streams (issue 20).
        shared = self._state.shared
        process = shared.summary_process
        idle = self._state.activity is Activity.IDLE
        if figures is not None and idle and process.near_trigger(figures):
            mode = shared.config().mode
            with_sdk = mode is not SummaryMode.RULE and shared.api_key() is not None
            process.warm_soon(shared.runner, with_sdk=with_sdk)

    def memory_changed(self) -> None:
        """The memory block changed: tell its summaries, and the figures that follow."""
        summaries = tuple(self._state.summaries)
        self._state.tell(lambda events: events.summaries_changed(summaries))
        self.tell()

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
        inputs, files = self._inputs(draft, draft_tokens, tools)
        figures = self._state.shared.builder.estimate_state(
            inputs,
            recall_budget_ratio=recall_budget_ratio,
            recall_quoted=recall_quoted,
            recall_elsewhere=recall_elsewhere,
        )
        return replace(figures, files_left_out=files.left_out) if files.left_out else figures

    def check_send(self, text: str, tokens: int) -> bool:
        """The checks before sending `text`, on one plan of the request's files.

        Raises, in plain words with the numbers, when `text` cannot be sent as things
        stand (without the tool and the recall block: they give way first). Else says
        whether sending it now would leave the recall block less than its floor: then
        the live tail gives way first (an emergency summary), when it can.
        """
        state = self._state
        # With the tool as measured (`check_fits` leaves it out: it gives way first).
        inputs, _files = self._inputs(text, tokens, self._offered_tool())
        checked = self._checked
        if (
            checked is not None
            and state.activity is not Activity.LOADING
            and checked[0] == self._check_key(inputs)
        ):
            return checked[1]  # measured as the draft, unchanged since
        state.shared.builder.check_fits(inputs)
        if state.session is None or state.activity is Activity.LOADING:
            return False
        if not state.shared.counter.ready:
            return False
        figures = self._estimate_with_recall(inputs)
        return figures.recall_floor > 0 and not figures.required.fits

    def _keep_check(self, inputs: RequestInputs, figures: ContextState) -> None:
        """Keep the answer of `check_send` for the draft just measured (`figures`, with
        the tool and recall), when it sends without raising; else forget it."""
        self._checked = None
        state = self._state
        try:
            state.shared.builder.check_fits(inputs)
        except UserFacingError:
            return  # Enter measures again, and says why it cannot be sent
        squeezed = state.session is not None and (
            figures.recall_floor > 0 and not figures.required.fits
        )
        key = self._check_key(inputs)
        # Its own copy of the settings: a change made in place would otherwise go unseen.
        self._checked = (replace(key, recall=key.recall.model_copy(deep=True)), squeezed)

    def _check_key(self, inputs: RequestInputs) -> _SendCheckKey:
        shared = self._state.shared
        calibrations = shared.builder.calibrations
        return _SendCheckKey(
            inputs=inputs,  # its summaries a tuple already (`_inputs`)
            stored=self._state.session is not None,
            recall=shared.recall(),
            quoted=self.quoted,
            calibration=None if calibrations is None else calibrations.for_model(inputs.model.id),
            today=shared.builder.today(),
        )

    def _offered_tool(self) -> ToolOffer | None:
        """The archive tool the settings offer now (`tool_offer`): the same object while
        what it depends on stays the same (compared at every check before sending)."""
        state = self._state
        settings = state.shared.recall()
        key = (settings.tool, settings.across_conversations, bool(state.summaries))
        offered = self._tool
        if offered is None or offered[0] != key:
            offered = self._tool = (key, tool_offer(settings, archived=key[2]))
        return offered[1]

    def _estimate_with_recall(self, inputs: RequestInputs) -> ContextState:
        """The figures of `inputs` (with the tool the settings offer: `_offered_tool`)
        with the recall block as the settings have it."""
        # Imported here: recall is loaded after the first paint (`AFTER_PAINT_IMPORTS`).
        from app.chat.recall import recall_budget

        state = self._state
        settings = state.shared.recall()
        return state.shared.builder.estimate_state(
            inputs,
            recall_budget_ratio=recall_budget(settings),
            recall_quoted=self.quoted,
            recall_elsewhere=settings.across_conversations,
        )

    def _inputs(
        self, draft: str, draft_tokens: int | None, tools: ToolOffer | None = None
    ) -> tuple[RequestInputs, FilePlan]:
        """What the next request with `draft` is made of, and the plan for its files."""
        state = self._state
        shared = state.shared
        model, known = shared.model_info(state.model_id)
        files = self._outgoing.plan(state.tail, model)
        inputs = RequestInputs(
            model=model,
            system_prompt=state.system_prompt,
            summaries=tuple(state.summaries),  # as it is now (the state's list changes)
            tail_tally=state.tail.tally,
            draft=draft,
            draft_tokens=draft_tokens,
            model_known=known,
            trigger_ratio=shared.config().trigger_ratio,
            tools=tools,
            files_saved=files.saved_tokens,
        )
        return inputs, files
