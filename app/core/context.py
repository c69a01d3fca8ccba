"""What is sent to Claude, and how full the context window is (DESIGN §3, §4).

`ContextBuilder` turns a conversation (system prompt, summaries, live tail,
draft) into the exact request and a `ContextState` for the gauge. It enforces
invariants 2 and 3 of DESIGN §3: turns start with the user and alternate, and
the estimated request plus the reserved output never exceed the window — a
request that would not fit raises `ContextOverflowError` (or
`MessageTooLargeError` when the new message alone is too large) before
anything is sent.

Cost: stored messages carry their token estimate (`Message.token_estimate`,
counted once when stored), so building costs O(live tail) plus tokenizing the
draft; the archive is never read, and history is never re-tokenized.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from app.core.caching import (
    CACHE_CONTROL,
    cached_text_block,
    minimum_cacheable_tokens,
    with_recall_turn,
    with_turn_breakpoint,
)
from app.core.calibration import Calibration, Calibrations
from app.core.catalog import ModelInfo
from app.core.conversation import (
    DATE_LINE_TOKENS,
    TURN_SEPARATOR,
    ApiMessage,
    TailTurns,
    TurnCache,
    dated,
    local_day,
    to_api_messages,
)
from app.core.errors import (
    ApiError,
    ContextOverflowError,
    InvalidInputError,
    MessageTooLargeError,
)
from app.core.file_limits import LeftOutFile
from app.core.live_tail import SEPARATOR_TOKENS, TailTallies, TailTally
from app.core.lookup import TOOL_SYSTEM_PROMPT_TOKENS, ToolOffer
from app.core.models import Message, Role
from app.core.ratios import DEFAULT_TRIGGER_RATIO
from app.core.summary import Summary, SummaryTier

# Kept here too (old import path): app.core.token_words holds them for the gauge (issue 20).
from app.core.token_words import format_token_count as format_token_count
from app.core.token_words import say_token_pair as say_token_pair
from app.core.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    TokenCounter,
    default_counter,
)

if TYPE_CHECKING:
    from app.core.recall import RecallBlock

log = logging.getLogger(__name__)

# The most a chat reply may write (the controller's REPLY_TOKENS): kept free in the window.
REPLY_TOKENS = 8_192
# A reply that thinks first: its thinking shares the limit (`reserved_output`).
THINKING_REPLY_TOKENS = 32_000
# Within this share of the usable window (either side), an exact count is worth a request.
NEAR_LIMIT_MARGIN = 0.05


MEMORY_HEADING = "Conversation so far"
MEMORY_PREAMBLE = (
    f"# {MEMORY_HEADING}\n\n"
    "Summaries of the earlier part of this conversation, oldest first. The original "
    "messages are archived; the recent ones follow as the conversation itself."
)


@dataclass(frozen=True)
class ContextBreakdown:
    """Estimated tokens of each part of the next request (calibrated)."""

    system: int = 0  # the user's instructions (system prompt), with the request's framing
    memory: int = 0  # the "Conversation so far" block of summaries
    history: int = 0  # the live tail of recent messages
    draft: int = 0  # what is being typed in the composer
    reserved_output: int = 0  # max_tokens kept free for the reply
    # The recall block: archived messages quoted. In a built request, what it quotes; in
    # the gauge's estimate, what the last request quoted (capped to what fits): a count.
    recall: int = 0
    tools: int = 0  # the archive tool's definition and the API's tool-use system prompt


@dataclass(frozen=True)
class ContextState:
    """How full the next request would make the model's context window.

    Attributes:
        breakdown: tokens per part.
        context_window: the model's max_input_tokens.
        trigger_ratio: the share of `usable` at which an automatic summary starts.
        model_known: False when the model is missing from the catalog (a safe default is used).
        estimate_flagged: True when no tokenizer loaded and a rough ~4 chars/token estimate is used.
        calibrated: True once real usage from the API has corrected the estimates for this model.
        counted_exactly: True when the server counted this request (near the limit), so
            `used` is its figure, not an estimate.
        model_name: the model's display name, for explanations.
        recall_allowed: the most the next request may quote from the archive (its budget,
            capped to the room left); 0 when recall is off or nothing is archived.
        recall_floor: the least room the recall block must keep (calibrated) when recall
            is on and something is archived: summarizing goes by it, so the live tail
            gives way before recall is squeezed below it (issue 22).
        files_left_out: earlier files the next request does not re-send (the API's limits
            on a whole request's files), each named in a one-line note instead.
    """

    breakdown: ContextBreakdown
    context_window: int
    trigger_ratio: float = DEFAULT_TRIGGER_RATIO
    model_known: bool = True
    estimate_flagged: bool = False
    calibrated: bool = False
    counted_exactly: bool = False
    model_name: str = ""
    recall_allowed: int = 0
    recall_floor: int = 0
    files_left_out: tuple[LeftOutFile, ...] = ()

    @property
    def used(self) -> int:
        """Tokens of the next request: system + tools + memory + recall + history + draft."""
        b = self.breakdown
        return b.system + b.tools + b.memory + b.recall + b.history + b.draft

    @cached_property
    def required(self) -> ContextState:
        """The figures without what a request drops before it would not fit (the archive
        tool, the quotes beyond recall's floor): what summarizing goes by, as the engine
        measures. Recall's floor stays: the live tail gives way first. Made once per
        figures (frozen): a reply's end reads it for the trigger twice (issue 20)."""
        breakdown = self.breakdown
        if breakdown.recall == self.recall_floor and not breakdown.tools:
            return self
        return replace(self, breakdown=replace(breakdown, recall=self.recall_floor, tools=0))

    @property
    def usable(self) -> int:
        """The window minus the room kept for the reply."""
        return max(1, self.context_window - self.breakdown.reserved_output)

    @property
    def ratio(self) -> float:
        return self.used / self.usable

    @property
    def fits(self) -> bool:
        return self.used <= self.usable

    @property
    def near_limit(self) -> bool:
        """Within NEAR_LIMIT_MARGIN of the usable window, either side: worth an exact count."""
        return abs(self.used - self.usable) <= NEAR_LIMIT_MARGIN * self.usable


# The least recall may use when it is on, whatever the window: a few whole messages with
# the turns they answer (issue 22: at 150 tokens, 4-5 short quotes, the natural-question
# evidence at 4k was 0.62; at 800, 0.75-0.77, as at a 20 % share; 8k and 16k did not
# move beyond it). At 5 % windows under 16k reach it; the live tail gives way to it
# (`ContextState.required`), yet it is never more than the room the request leaves, and
# the block is counted in the request like any other part.
RECALL_FLOOR_TOKENS = 800


# A small window keeps at most this share of its usable room for recall's floor, so the
# floor never leaves the live tail too little (a 4k window: 700 of its 3,500).
RECALL_FLOOR_SHARE = 0.2


def recall_floor(state: ContextState) -> int:
    """Recall's floor for the request `state` measures: `RECALL_FLOOR_TOKENS`, at most
    `RECALL_FLOOR_SHARE` of the usable window."""
    return min(RECALL_FLOOR_TOKENS, math.floor(state.usable * RECALL_FLOOR_SHARE))


def recall_allowance(state: ContextState, budget_ratio: float, *, kept: int = 0) -> int:
    """Tokens (calibrated) a recall block may add to the request `state` measures without
    one: `budget_ratio` of the window (at least `RECALL_FLOOR_TOKENS`; none when the ratio
    is 0, recall off), and never past the margin where an exact count would be asked
    (less `kept`, the room the tool turns need), so recall never makes a request fail,
    or lose its tool, that would fit without it."""
    if budget_ratio <= 0:
        return 0
    room = math.floor(state.usable * (1 - NEAR_LIMIT_MARGIN)) - state.used - kept
    share = max(math.floor(budget_ratio * state.context_window), recall_floor(state))
    return max(0, min(share, room))


def ordered_summaries(summaries: Sequence[Summary]) -> list[Summary]:
    """Compressed summaries, then condensed ones, each oldest first (DESIGN §3)."""
    tier_order = {SummaryTier.COMPRESSED: 0, SummaryTier.CONDENSED: 1}
    return sorted(summaries, key=lambda s: (tier_order[s.tier], s.first_seq, s.created_at))


def memory_block_text(summaries: Sequence[Summary]) -> str:
    """The "Conversation so far" block; "" when there are no summaries."""
    if not summaries:
        return ""
    sections = [MEMORY_PREAMBLE]
    sections.extend(f"{s.label}\n{s.text()}" for s in ordered_summaries(summaries))
    return TURN_SEPARATOR.join(sections)


def reserved_output(model: ModelInfo) -> int:
    """Tokens kept free for a chat reply (its `max_tokens`): REPLY_TOKENS, or
    THINKING_REPLY_TOKENS on a model that thinks by default, since "the tokens Claude
    spends reasoning … count toward max_tokens alongside the response text"
    (https://platform.claude.com/docs/build-with-claude/thinking); never more than the
    model writes, nor more than an eighth of its window, so the conversation keeps
    the room (DESIGN §3, invariant 3: request + max_tokens ≤ the window)."""
    wanted = THINKING_REPLY_TOKENS if model.thinking in ("always", "adaptive") else REPLY_TOKENS
    return max(1, min(model.max_tokens, wanted, max(REPLY_TOKENS, model.max_input_tokens // 8)))


@dataclass(frozen=True)
class BuiltRequest:
    """The exact request for the Messages API, and how full it makes the window.

    Attributes:
        model: the model id to send to.
        system: the system prompt as a plain string (possibly "") when there are no
            summaries; else a list of text blocks, the memory block last (with a
            cache_control breakpoint when long enough to be cached: caching.py).
        messages: alternating turns starting with the user; the draft is the last user turn.
        max_tokens: the reply's limit (the reserved output).
        state: the figures for the gauge; `state.fits` is always True here.
        raw_input_tokens: the uncalibrated cl100k estimate (the tools' cost included): give
            it, with the reply's usage, to `Calibrations.learn_usage`.
        tools: the client tools offered (empty when none were asked for, or they did not fit).
        raw_recall_tokens: the uncalibrated tokens of the recall block sent (0: none).
    """

    model: str
    system: str | list[dict[str, Any]]
    messages: list[ApiMessage]
    max_tokens: int
    state: ContextState
    raw_input_tokens: int = 0
    exact_input_tokens: int | None = None
    tools: tuple[dict[str, Any], ...] = ()
    raw_recall_tokens: int = 0


@dataclass
class _Tally:
    """Raw (uncalibrated) tokens of the parts, from one walk over the tail."""

    system: int = 0
    memory: int = 0
    history: int = 0
    draft: int = 0
    recall: int = 0
    tools: int = 0
    # The raw tokens of the new user message (the draft, or the last stored user turn).
    new_message: int = 0
    turns: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.memory + self.recall + self.history + self.draft


@dataclass(frozen=True)
class RequestInputs:
    """What a conversation's next request is made of: what `ContextBuilder` measures,
    builds and checks, what the gauge counts and what recall measures its room against.

    Attributes:
        model: the model the request goes to.
        system_prompt: the user's instructions for Claude ("" for none).
        summaries: the active summaries (the memory block).
        tail: the live tail's messages (not read when `tail_tally` is given and nothing
            is built from them).
        tail_tally: `tally_messages(tail)` when the caller has it already (a `LiveTail`'s,
            or one walk shared by recall and the request).
        draft: the new user message, when not blank (not yet stored).
        draft_tokens: the draft's tokens when the caller knows better (its attachments).
        model_known: False when the model is missing from the catalog.
        trigger_ratio: the share of the usable window at which a summary starts.
        max_output: the reply's limit when not the model's default (`reserved_output`).
        tools: the client tools to offer when they fit (the archive tool).
        files_saved: raw tokens the tail's stored estimates count for files the request
            will not re-send (app/core/file_limits.py), less their notes'.
    """

    model: ModelInfo
    system_prompt: str = ""
    summaries: Sequence[Summary] = ()
    tail: Sequence[Message] = ()
    tail_tally: TailTally | None = None
    draft: str = ""
    draft_tokens: int | None = None
    model_known: bool = True
    trigger_ratio: float = DEFAULT_TRIGGER_RATIO
    max_output: int | None = None
    tools: ToolOffer | None = None
    files_saved: int = 0


class ContextBuilder:
    """Builds the next request and measures it (DESIGN §3, §4).

    Thread-safe as long as its counter and calibrations are (the shipped ones are).

    Attributes:
        counter: counts the draft, and any text without a stored estimate.
        calibrations: per-model corrections; None means uncalibrated estimates.
        today: the local calendar day now (`local_day`): the draft, stored on it, carries
            its date line when the day changed since the last message (the gauge counts it).
    """

    def __init__(
        self,
        counter: TokenCounter | None = None,
        calibrations: Calibrations | None = None,
        today: Callable[[], int] | None = None,
    ) -> None:
        self.counter = counter if counter is not None else default_counter()
        self.calibrations = calibrations
        self.today = today if today is not None else _today
        self._counts: dict[str, int] = {}
        self._turns = TurnCache()  # the turns of earlier requests, sent again as they were
        # The turns and the tally of the last few tails, resumed where a tail changed.
        self._tail_turns = TailTurns(self._turns)
        self._tallies = TailTallies(self.counter.count)

    # --- public

    def estimate_state(
        self,
        inputs: RequestInputs,
        *,
        recall_budget_ratio: float = 0.0,
        recall_quoted: int = 0,
        recall_elsewhere: bool = False,
    ) -> ContextState:
        """The gauge's figures for the next request, without building it.

        O(len(tail)) additions plus tokenizing the draft: cheap enough for every
        (debounced) keystroke. With `inputs.tail_tally` (a `LiveTail`'s, kept up to date
        as messages come and go) the tail costs O(1) and `tail` is not read.
        `tools` count as `build_request` would offer them (only when they fit). With a
        `recall_budget_ratio` (recall on), the recall block counts as `recall_quoted`
        raw tokens (what the last request quoted) within what the next one may quote.
        `recall_elsewhere`: recall may quote the user's other conversations (Settings →
        Memory), so it has room even before this one has a summary.
        """
        tally = self._tally(inputs, self._history(inputs))
        offered = self._offer(tally, inputs)
        state = self._state(tally, inputs)
        if recall_budget_ratio <= 0 or not (inputs.summaries or recall_elsewhere):
            return state  # nothing archived without a summary: nothing to quote
        calibration = self._calibration(inputs.model)
        kept = calibration.apply(offered.room_needed) if offered is not None else 0
        allowed = recall_allowance(state, recall_budget_ratio, kept=kept)
        ratio = calibration.ratio
        tally.recall = min(max(0, recall_quoted), math.floor(allowed / max(ratio, 1e-6)))
        final = self._state(tally, inputs)
        return replace(final, recall_allowed=allowed, recall_floor=recall_floor(final))

    def build_request(
        self,
        inputs: RequestInputs,
        *,
        exact_count: Callable[[BuiltRequest], int] | None = None,
        recall: RecallBlock | None = None,
        files: Mapping[int, Sequence[dict[str, Any]]] | None = None,
    ) -> BuiltRequest:
        """The exact request to send, or an error saying why it cannot be sent.

        `draft`, when not blank, becomes the last user turn. `exact_count` (the
        provider's `count_tokens`, from a worker thread) is asked only when the
        estimate is within NEAR_LIMIT_MARGIN of the limit; its figure then
        decides whether the request fits. `recall` opens the newest user turn
        (caching.py says why); `tools` are offered only when they fit with the room they
        need; recall goes first, then the tools: a request that fits without them never
        fails with them. `files`: the attachments' blocks by message id (counted in the
        messages' stored estimates, less `inputs.files_saved` for the files left out as a
        note).

        Raises:
            InvalidInputError: there is no user message to send.
            MessageTooLargeError: the new message alone exceeds what the model can read.
            ContextOverflowError: the conversation with the new message would not fit.
        """
        history = self._history(inputs)
        tally = self._tally(inputs, history)
        if tally.turns == 0:
            raise InvalidInputError("There is nothing to send yet: type a message first.")
        offered = self._offer(tally, inputs)
        messages = self._messages(inputs.tail, inputs.draft, files, history.last_day)
        tools_cost = tally.tools
        choices = [(recall, offered), (None, offered), (None, None)]
        for recall_now, tools_now in [c for n, c in enumerate(choices) if c not in choices[:n]]:
            tally.recall = recall_now.tokens if recall_now is not None else 0
            tally.tools = tools_cost if tools_now is not None else 0
            built = self._assemble(tally, inputs, messages, recall_now, tools_now)
            if exact_count is not None and built.state.near_limit:
                built = self._with_exact_count(built, exact_count)
            if self._fits(built.state, tools_now, inputs.model):
                return built
            if recall_now is not None or tools_now is not None:
                log.info("The request does not fit with recall or the tools; it goes without")
        raise self._overflow(built.state, tally, inputs.model, built.exact_input_tokens)

    def check_fits(self, inputs: RequestInputs) -> ContextState:
        """The figures of the request `draft` would make, or the error `build_request`
        would raise for it — from the tail's tally, without building anything.

        What the send path asks on the GUI thread: O(draft), whatever the history;
        nothing at all when the caller counted the draft already (`draft_tokens`). The
        tools are left out: they give way before a request would not fit.
        """
        tally = self._tally(inputs, self._history(inputs))
        if tally.turns == 0:
            raise InvalidInputError("There is nothing to send yet: type a message first.")
        state = self._state(tally, inputs)
        if not state.fits:
            raise self._overflow(state, tally, inputs.model, None)
        return state

    def tally(self, tail: Sequence[Message]) -> TailTally:
        """The tally of the turns `tail` sends (one walk; give it as `tail_tally` in the
        `RequestInputs` of both `build_request` and `estimate_state` when both measure
        the same tail)."""
        return self._tallies.tally(tail)

    # --- inside

    def _history(self, inputs: RequestInputs) -> TailTally:
        """The tally of `inputs`' tail: the one it carries, else one walk over it."""
        return inputs.tail_tally if inputs.tail_tally is not None else self.tally(inputs.tail)

    def _offer(self, tally: _Tally, inputs: RequestInputs) -> ToolOffer | None:
        """`inputs.tools` when the request has room for them and the turns they need (their
        cost then counts in `tally`), else None."""
        tally.tools = 0
        tools = inputs.tools
        if tools is None or not tools.definitions:
            return None
        tally.tools = self._cached_count(tools.text) + TOOL_SYSTEM_PROMPT_TOKENS
        if not self._fits(self._state(tally, inputs), tools, inputs.model):
            tally.tools = 0
            return None
        return tools

    def _fits(self, state: ContextState, tools: ToolOffer | None, model: ModelInfo) -> bool:
        """Whether a request fits, with the room its tools need for their turns."""
        needed = self._calibration(model).apply(tools.room_needed) if tools is not None else 0
        return state.used + needed <= state.usable

    def _assemble(
        self,
        tally: _Tally,
        inputs: RequestInputs,
        messages: list[ApiMessage],
        recall: RecallBlock | None,
        tools: ToolOffer | None,
    ) -> BuiltRequest:
        """The request with these optional parts, as estimated."""
        state = self._state(tally, inputs)
        # Prompt-cache breakpoints only where the prefix reaches the model's minimum
        # (caching.py); the tools come first in that prefix.
        minimum = minimum_cacheable_tokens(inputs.model.id)
        prefix = tally.tools + tally.system + tally.memory
        return BuiltRequest(
            model=inputs.model.id,
            system=self._system(inputs.system_prompt, inputs.summaries, cached=prefix >= minimum),
            messages=self._cached_turns(messages, recall, cached=tally.total >= minimum),
            max_tokens=state.breakdown.reserved_output,
            state=state,
            raw_input_tokens=tally.total,
            tools=tools.definitions if tools is not None else (),
            raw_recall_tokens=tally.recall,
        )

    def memory_tokens(self, summaries: Sequence[Summary]) -> int:
        """Raw tokens of the memory block holding `summaries` (0 for none).

        Each section costs the blank line before it, its label line and its text,
        whose count was stored with the summary; label counts are remembered.
        """
        if not summaries:
            return 0
        return self._cached_count(MEMORY_PREAMBLE) + sum(
            SEPARATOR_TOKENS + self._cached_count(f"{s.label}\n") + s.summary_tokens
            for s in summaries
        )

    def _cached_count(self, text: str) -> int:
        """Tokens of a text that recurs unchanged (labels, the system prompt): counted once."""
        tokens = self._counts.get(text)
        if tokens is None:
            if len(self._counts) > 4_096:
                self._counts.clear()
            tokens = self._counts[text] = self.counter.count(text)
        return tokens

    def _calibration(self, model: ModelInfo) -> Calibration:
        if self.calibrations is None:
            return _NO_CALIBRATION
        return self.calibrations.for_model(model.id)

    def _tally(self, inputs: RequestInputs, history: TailTally) -> _Tally:
        """The raw tokens of `inputs`' parts, the tail's from `history` (its tally)."""
        tally = _Tally(system=REQUEST_OVERHEAD_TOKENS + self._cached_count(inputs.system_prompt))
        tally.memory = self.memory_tokens(inputs.summaries)
        tally.history = max(0, history.history - inputs.files_saved)
        tally.turns = history.turns
        last_role, last_turn = history.last_role, history.last_turn
        draft, draft_tokens = inputs.draft, inputs.draft_tokens
        if draft.strip():
            if draft_tokens is None:
                draft_tokens = self.counter.count(draft)
            if self.today() != history.last_day:
                draft_tokens += DATE_LINE_TOKENS
            if last_role is Role.USER:
                tally.draft = draft_tokens + SEPARATOR_TOKENS
            else:
                tally.draft = draft_tokens + MESSAGE_OVERHEAD_TOKENS
                tally.turns += 1
            tally.new_message = tally.draft
        elif last_role is Role.USER:
            tally.new_message = last_turn
        return tally

    def _state(self, tally: _Tally, inputs: RequestInputs) -> ContextState:
        model, max_output = inputs.model, inputs.max_output
        calibration = self._calibration(model)
        reserved = reserved_output(model)
        if max_output is not None:
            reserved = max(1, min(max_output, model.max_tokens))
        breakdown = ContextBreakdown(
            system=calibration.apply(tally.system),
            memory=calibration.apply(tally.memory),
            history=calibration.apply(tally.history),
            draft=calibration.apply(tally.draft),
            reserved_output=reserved,
            recall=calibration.apply(tally.recall),
            # The API's tool-use prompt is counted in its own tokens already.
            tools=calibration.apply(tally.tools - TOOL_SYSTEM_PROMPT_TOKENS)
            + TOOL_SYSTEM_PROMPT_TOKENS
            if tally.tools
            else 0,
        )
        return ContextState(
            breakdown=breakdown,
            context_window=model.max_input_tokens,
            trigger_ratio=min(1.0, max(0.01, inputs.trigger_ratio)),
            model_known=inputs.model_known,
            estimate_flagged=self.counter.flagged,
            calibrated=calibration.calibrated,
            model_name=model.display_name,
        )

    @staticmethod
    def _system(
        system_prompt: str, summaries: Sequence[Summary], *, cached: bool = False
    ) -> str | list[dict[str, Any]]:
        """The system prompt; with `cached`, a breakpoint after its last stable block.

        The memory block changes only when a summary does, so every request in
        between reads it from the cache. Nothing that changes every turn goes in the
        system prompt: the recall block opens the newest user turn instead.
        """
        if not summaries:
            if cached and system_prompt.strip():
                return [cached_text_block(system_prompt)]
            return system_prompt
        blocks: list[dict[str, Any]] = []
        if system_prompt.strip():
            blocks.append({"type": "text", "text": system_prompt})
        memory: dict[str, Any] = {"type": "text", "text": memory_block_text(summaries)}
        if cached:
            memory["cache_control"] = dict(CACHE_CONTROL)
        blocks.append(memory)
        return blocks

    @staticmethod
    def _cached_turns(
        messages: list[ApiMessage], recall: RecallBlock | None, *, cached: bool
    ) -> list[ApiMessage]:
        """The turns with their cache breakpoint (caching.py) and the recall block, if any."""
        if recall is not None:
            with_recall = with_recall_turn(messages, recall.text)
            if cached:
                return with_recall
            newest = with_recall[-1]
            return [*messages[:-1], newest]
        return with_turn_breakpoint(messages) if cached else messages

    def _messages(
        self,
        tail: Sequence[Message],
        draft: str,
        files: Mapping[int, Sequence[dict[str, Any]]] | None = None,
        last_day: int = 0,
    ) -> list[ApiMessage]:
        """The turns of `tail`, the draft last; `last_day` is the day of the last message
        sent (the tally's), which dates the draft when the day changed since."""
        if files:
            messages = to_api_messages(tail, files, self._turns)
        else:
            messages = self._tail_turns.messages(tail)
        if draft.strip():
            today = self.today()
            text = dated(draft, today if today != last_day else None)
            last = messages[-1] if messages else None
            if last is not None and last["role"] == Role.USER.value:
                content = last["content"]
                if isinstance(content, str):
                    joined: str | list[dict[str, Any]] = content + TURN_SEPARATOR + text
                else:  # a turn with attached files: its text is the last block
                    joined = [*content, {"type": "text", "text": text}]
                messages[-1] = {"role": Role.USER.value, "content": joined}
            else:
                messages.append({"role": Role.USER.value, "content": text})
        return messages

    def _with_exact_count(
        self, built: BuiltRequest, exact_count: Callable[[BuiltRequest], int]
    ) -> BuiltRequest:
        try:
            exact = exact_count(built)
        except ApiError as error:
            log.info("Could not count the request exactly (%s); the estimate decides", error)
            return built
        if exact <= 0:
            log.info("The server counted %d tokens; the estimate decides", exact)
            return built
        state = replace(
            built.state,
            breakdown=_scaled(built.state.breakdown, exact),
            counted_exactly=True,
        )
        return replace(built, state=state, exact_input_tokens=exact)

    def _overflow(
        self, state: ContextState, tally: _Tally, model: ModelInfo, exact_input_tokens: int | None
    ) -> ContextOverflowError | MessageTooLargeError:
        reserved = state.breakdown.reserved_output
        limits = (
            f"{model.display_name} can read at most {{limit}} at once "
            f"({format_token_count(state.context_window)} in all, with "
            f"{format_token_count(reserved)} kept for its reply)"
        )
        if exact_input_tokens is not None and tally.total > 0:
            # The server's figure for the whole request, shared out in proportion.
            message_tokens = math.ceil(tally.new_message * exact_input_tokens / tally.total)
        else:
            message_tokens = self._calibration(model).apply(tally.new_message)
        if message_tokens > state.usable:
            said, limit = say_token_pair(message_tokens, state.usable)
            return MessageTooLargeError(
                f"This message is about {said} tokens, but {limits.format(limit=limit)}. "
                "Shorten it or split it into parts.",
                tokens=message_tokens,
                limit=state.usable,
                context_window=state.context_window,
                reserved_output=reserved,
            )
        instructions = self._calibration(model).apply(tally.system)
        # No summary can make room; said only when there are instructions to shorten (the
        # request's own framing alone is not the user's to shorten).
        has_instructions = tally.system > REQUEST_OVERHEAD_TOKENS
        if has_instructions and instructions + message_tokens > state.usable:
            said, limit = say_token_pair(instructions, state.usable)
            return ContextOverflowError(
                f"This conversation's instructions for Claude alone come to about {said} "
                f"tokens, too many with your message: {limits.format(limit=limit)}. "
                "Shorten them (Conversation → Instructions for Claude…).",
                tokens=state.used,
                limit=state.usable,
                context_window=state.context_window,
                reserved_output=reserved,
            )
        said, limit = say_token_pair(state.used, state.usable)
        return ContextOverflowError(
            f"This conversation and your message come to about {said} tokens, but "
            f"{limits.format(limit=limit)}. Shorten your message, or start a new conversation.",
            tokens=state.used,
            limit=state.usable,
            context_window=state.context_window,
            reserved_output=reserved,
        )


def _scaled(breakdown: ContextBreakdown, total: int) -> ContextBreakdown:
    """The parts rescaled so that they add up to `total` (the server's exact count)."""
    parts = [
        breakdown.system,
        breakdown.memory,
        breakdown.history,
        breakdown.draft,
        breakdown.recall,
        breakdown.tools,
    ]
    estimated = sum(parts)
    if estimated <= 0:
        return replace(breakdown, system=total, memory=0, history=0, draft=0, recall=0, tools=0)
    scaled = [math.floor(part * total / estimated) for part in parts]
    # The rounding remainder goes to the largest part.
    scaled[parts.index(max(parts))] += total - sum(scaled)
    system, memory, history, draft, recall, tools = scaled
    return replace(
        breakdown,
        system=system,
        memory=memory,
        history=history,
        draft=draft,
        recall=recall,
        tools=tools,
    )


_NO_CALIBRATION = Calibration(ratio=1.0)


def _today() -> int:
    return local_day(datetime.now(UTC))
