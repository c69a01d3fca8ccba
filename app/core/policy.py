"""When to summarize (DESIGN §5): `TriggerPolicy.should_summarize` and its memory.

The policy is a pure function of a `PolicyInput` — the figures of the next
request, how many live messages there are, and a small `TriggerMemory` — so the
controller can ask it after every stored message and tests can replay whole
conversations without Qt, a database or a clock.

How the pieces fit, in the order the controller calls them:

1. A message was stored: `memory = policy.observe(memory, state, new_messages=1)`.
   This counts the message and re-arms the trigger once usage dropped below
   `reset_ratio`, or once the cooldown's worth of messages arrived since the
   last trigger.
2. `decision = policy.should_summarize(PolicyInput(state, live, memory, ...))`.
3. `memory = policy.after_decision(memory, decision)`: a decision to summarize
   disarms the trigger (hysteresis), whether or not the summary then succeeds,
   so a failing summarizer is not retried on every message.
4. The summary was committed: `memory = policy.after_summary(memory, state_after)`,
   which starts the cooldown.

Hysteresis, explicitly: `TriggerMemory.armed` is False from a trigger until
usage is seen below `reset_ratio`, or `max(1, cooldown_messages)` messages have
arrived since the trigger ("or cooldown passed", DESIGN §5). The at-least-one
matters: with no cooldown the same state must still not trigger twice in a row.

Depth (DESIGN §5 `max_depth`): at the deepest allowed level of summaries of
summaries the engine no longer adds a tier; it trims the oldest compressed
content by rule, which loses detail from Claude's memory (never from the
archive). So at max depth only what *needs* room goes ahead — the threshold,
an emergency, the user's own request — flagged `at_max_depth` for the engine;
the optional triggers that are not about room (`message_count`,
`force_refresh`) are held back with reason `depth`.

While the whole conversation fits (every message verbatim, archived ones included,
within the usable window) the threshold does not condense (unless
`condense_while_it_fits` says so; the count triggers the user set still do): summaries exist to make
room, and verbatim beats any summary (issue 22). Reason `fits`; an emergency, or the
user's own request, still condenses.

Emergency (the next request would not fit): always on, even with automatic
summaries off; it ignores the cooldown, the hysteresis and `min_messages`. The
engine then condenses, in one pass, just enough to bring the request down to
`target_ratio` (at or under `reset_ratio`), keeping at least the newest 2.

How many of the newest messages stay as they are is decided here, and only here
(`Decision.preserve_recent`): the setting's number, the user's own number for a
summary they asked for (`PolicyInput.keep_recent`, never below 2), or 2 in an
emergency. The engine keeps what the decision says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from app.core.context import ContextState
from app.core.summarization_config import MIN_PRESERVE_RECENT, SummarizationConfig
from app.core.summary import SummaryTrigger


class Reason(StrEnum):
    """Why the policy decided as it did: the first five summarize, the rest do not."""

    THRESHOLD = "threshold"  # usage reached trigger_ratio
    MESSAGE_COUNT = "message_count"  # live messages reached message_trigger
    FORCE_REFRESH = "force_refresh"  # force_refresh_after_messages since the last summary
    EMERGENCY = "emergency"  # the next request would not fit
    MANUAL = "manual"  # the user asked
    NOT_DUE = "not_due"
    DISABLED = "disabled"
    TOO_FEW_MESSAGES = "too_few_messages"
    COOLDOWN = "cooldown"
    HYSTERESIS = "hysteresis"
    DEPTH = "depth"
    FITS = "fits"  # the whole conversation fits: nothing is condensed (issue 22)


SUMMARIZING_REASONS: frozenset[Reason] = frozenset(
    {
        Reason.THRESHOLD,
        Reason.MESSAGE_COUNT,
        Reason.FORCE_REFRESH,
        Reason.EMERGENCY,
        Reason.MANUAL,
    }
)
# Automatic triggers that are not about room: held back at max depth.
_OPTIONAL_TRIGGERS: frozenset[Reason] = frozenset({Reason.MESSAGE_COUNT, Reason.FORCE_REFRESH})


@dataclass(frozen=True)
class TriggerMemory:
    """What the policy remembers between messages of one conversation (serialisable).

    Attributes:
        armed: False from an automatic trigger until usage dropped below reset_ratio
            or the cooldown's worth of messages arrived (hysteresis).
        messages_since_trigger: messages stored since the policy last decided to summarize.
        messages_since_summary: messages stored since the last committed summary;
            None while this conversation has none (no cooldown applies then).
    """

    armed: bool = True
    messages_since_trigger: int = 0
    messages_since_summary: int | None = None

    def __post_init__(self) -> None:
        if self.messages_since_trigger < 0 or (
            self.messages_since_summary is not None and self.messages_since_summary < 0
        ):
            raise ValueError("message counts cannot be negative")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, for keeping the memory with the session."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TriggerMemory:
        """The memory `to_dict` wrote; missing keys take their defaults.

        Raises:
            ValueError: a value has the wrong type or is negative.
        """
        armed = data.get("armed", True)
        since_trigger = data.get("messages_since_trigger", 0)
        since_summary = data.get("messages_since_summary")
        if not isinstance(armed, bool):
            raise ValueError("armed must be true or false")
        if not _is_count(since_trigger):
            raise ValueError("messages_since_trigger must be a whole number")
        if since_summary is not None and not _is_count(since_summary):
            raise ValueError("messages_since_summary must be a whole number or null")
        return cls(
            armed=armed,
            messages_since_trigger=since_trigger,
            messages_since_summary=since_summary,
        )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def whole_conversation_tokens(state: ContextState, archived: int | None) -> int | None:
    """The tokens of `state`'s request with every archived original back in place of the
    summaries (`archived`: their tokens; 0 when nothing is archived), or None."""
    if archived is None:
        return None
    return state.used - state.breakdown.memory + archived


@dataclass(frozen=True)
class PolicyInput:
    """Everything `should_summarize` looks at.

    Attributes:
        state: the figures of the next request (ContextBuilder.estimate_state), draft included.
        live_messages: stored messages in the live tail (summary_id NULL) that a summary
            could cover: pinned messages and the draft being typed are not counted.
        memory: the hysteresis and cooldown state (see TriggerMemory).
        summary_depth: levels of summaries now active: 0 none, 1 condensed summaries only,
            and one more for each level of compressed summaries above them.
        manual: the user clicked Summarize now.
        keep_recent: for a summary the user asked for, how many of the newest messages
            they want kept as they are (at least 2); None keeps the setting's number.
        whole_tokens: tokens (calibrated) of a request carrying the whole conversation
            verbatim, archived originals included, when the caller knows them; None
            when it does not (then only the usual triggers apply).
    """

    state: ContextState
    live_messages: int
    memory: TriggerMemory = field(default_factory=TriggerMemory)
    summary_depth: int = 0
    manual: bool = False
    keep_recent: int | None = None
    whole_tokens: int | None = None

    @property
    def whole_fits(self) -> bool:
        """Whether every message, verbatim, would fit in the next request: summaries exist
        only to make room, and verbatim beats any summary (DESIGN §5)."""
        return self.whole_tokens is not None and self.whole_tokens <= self.state.usable

    def __post_init__(self) -> None:
        if self.live_messages < 0 or self.summary_depth < 0:
            raise ValueError("live_messages and summary_depth cannot be negative")


@dataclass(frozen=True)
class Decision:
    """The policy's answer: whether to summarize now, why, and how many messages to keep.

    Attributes:
        summarize: True to summarize now.
        reason: why (a trigger when summarize is True, else what held it back).
        preserve_recent: the newest messages to keep verbatim (fewer in an emergency).
        at_max_depth: summaries are at max_depth: trim the oldest compressed content by
            rule instead of adding a tier.
        explanation: the decision in plain words, for the event log and the UI.
    """

    summarize: bool
    reason: Reason
    preserve_recent: int
    at_max_depth: bool = False
    explanation: str = ""

    def __post_init__(self) -> None:
        if self.summarize != (self.reason in SUMMARIZING_REASONS):
            raise ValueError(f"reason {self.reason} does not fit summarize={self.summarize}")

    def explain(self) -> str:
        """The decision in plain words."""
        return self.explanation

    @property
    def trigger(self) -> SummaryTrigger | None:
        """What the summary row records as its trigger (DESIGN §2); None if not summarizing."""
        if not self.summarize:
            return None
        if self.reason is Reason.EMERGENCY:
            return SummaryTrigger.EMERGENCY
        if self.reason is Reason.MANUAL:
            return SummaryTrigger.MANUAL
        return SummaryTrigger.AUTO


def nothing_to_condense(keep: int) -> str:
    """What Summarize now says when the newest `keep` messages are all there is."""
    return f"Nothing to summarize yet — summaries start after {_messages(keep)}."


def _percent(ratio: float) -> str:
    return f"{round(ratio * 100)} %"


def _messages(count: int) -> str:
    return f"{count} message" if count == 1 else f"{count} messages"


class TriggerPolicy:
    """Decides when to summarize (DESIGN §5). Stateless: the state is the TriggerMemory.

    Attributes:
        config: the settings it applies.
    """

    def __init__(self, config: SummarizationConfig | None = None) -> None:
        self.config = config if config is not None else SummarizationConfig()

    # --- the memory

    @property
    def rearm_after_messages(self) -> int:
        """Messages after a trigger that re-arm it even if usage stayed high."""
        return max(1, self.config.cooldown_messages)

    def reads_usage(self, memory: TriggerMemory, *, new_messages: int = 0) -> bool:
        """Whether `observe` reads the usage: only to re-arm a trigger that is not armed,
        before its cooldown's worth of messages re-arms it anyway."""
        return (
            not memory.armed
            and memory.messages_since_trigger + new_messages < self.rearm_after_messages
        )

    def observe(
        self, memory: TriggerMemory, state: ContextState | None, *, new_messages: int = 0
    ) -> TriggerMemory:
        """The memory after `new_messages` were stored and usage is now `state.ratio`
        (`state` may be None when `reads_usage` says it is not read)."""
        if new_messages < 0:
            raise ValueError("new_messages cannot be negative")
        if state is None and self.reads_usage(memory, new_messages=new_messages):
            raise ValueError("the usage is needed to re-arm the trigger")
        since_trigger = memory.messages_since_trigger + new_messages
        since_summary = memory.messages_since_summary
        if since_summary is not None:
            since_summary += new_messages
        armed = (
            memory.armed
            or since_trigger >= self.rearm_after_messages
            or (state is not None and state.ratio < self.config.reset_ratio)
        )
        return TriggerMemory(
            armed=armed,
            messages_since_trigger=since_trigger,
            messages_since_summary=since_summary,
        )

    def after_decision(self, memory: TriggerMemory, decision: Decision) -> TriggerMemory:
        """The memory once the caller acted on `decision`: a summary attempt disarms."""
        if not decision.summarize:
            return memory
        return replace(memory, armed=False, messages_since_trigger=0)

    def after_summary(
        self, memory: TriggerMemory, state_after: ContextState | None = None
    ) -> TriggerMemory:
        """The memory once a summary was committed: the cooldown starts; usage that
        dropped below reset_ratio re-arms the trigger."""
        armed = memory.armed or (
            state_after is not None and state_after.ratio < self.config.reset_ratio
        )
        return replace(memory, armed=armed, messages_since_summary=0)

    # --- the decision

    def should_summarize(self, inp: PolicyInput) -> Decision:
        """Whether to summarize before the next request, and why (see the module notes)."""
        config = self.config
        state = inp.state
        at_max_depth = inp.summary_depth >= config.max_depth
        usage = _percent(state.ratio)

        if not state.fits:
            if inp.live_messages <= MIN_PRESERVE_RECENT:
                return self._hold(
                    Reason.TOO_FEW_MESSAGES,
                    f"The next message would not fit ({usage} of what Claude can read), but "
                    f"there are only {_messages(inp.live_messages)} to summarize. Shorten the "
                    "message or start a new conversation.",
                    at_max_depth,
                )
            return Decision(
                summarize=True,
                reason=Reason.EMERGENCY,
                preserve_recent=MIN_PRESERVE_RECENT,
                at_max_depth=at_max_depth,
                explanation=(
                    f"The next message would not fit ({usage} of what Claude can read), so "
                    "older messages are summarized now, enough to bring it down to "
                    f"{_percent(config.target_ratio)}; at least the newest "
                    f"{MIN_PRESERVE_RECENT} stay as they are."
                ),
            )

        if inp.manual:
            keep = (
                config.preserve_recent
                if inp.keep_recent is None
                else max(MIN_PRESERVE_RECENT, inp.keep_recent)
            )
            if inp.live_messages <= keep:
                return self._hold(
                    Reason.TOO_FEW_MESSAGES, nothing_to_condense(keep), at_max_depth, keep
                )
            return self._go(
                Reason.MANUAL,
                "You asked for a summary: older messages are summarized",
                at_max_depth,
                keep,
            )

        if not config.auto_summarize:
            return self._hold(
                Reason.DISABLED,
                "Automatic summaries are turned off; use Summarize now when you want one.",
                at_max_depth,
            )

        due = self._due(inp)
        # The threshold only: a count or refresh trigger is the user's own choice.
        if due is Reason.THRESHOLD and inp.whole_fits and not config.condense_while_it_fits:
            return self._hold(
                Reason.FITS,
                f"No summary needed: the whole conversation fits ({usage} of what Claude "
                "can read), so Claude reads every message word for word.",
                at_max_depth,
            )
        if due is None:
            return self._hold(
                Reason.NOT_DUE,
                f"No summary needed: the conversation uses {usage} of what Claude can read "
                f"(summaries start at {_percent(config.trigger_ratio)}).",
                at_max_depth,
            )
        if inp.live_messages < config.min_messages:
            return self._hold(
                Reason.TOO_FEW_MESSAGES,
                f"Only {_messages(inp.live_messages)} so far; automatic summaries wait for "
                f"at least {config.min_messages}.",
                at_max_depth,
            )
        since_summary = inp.memory.messages_since_summary
        if since_summary is not None and since_summary < config.cooldown_messages:
            return self._hold(
                Reason.COOLDOWN,
                f"A summary was made {_messages(since_summary)} ago; the next automatic one "
                f"waits for at least {config.cooldown_messages} new messages.",
                at_max_depth,
            )
        if not inp.memory.armed:
            return self._hold(
                Reason.HYSTERESIS,
                "A summary was started recently; the next waits until usage drops below "
                f"{_percent(config.reset_ratio)} or {_messages(self.rearm_after_messages)} "
                "more arrive.",
                at_max_depth,
            )
        if at_max_depth and due in _OPTIONAL_TRIGGERS:
            return self._hold(
                Reason.DEPTH,
                f"Summaries are already {config.max_depth} levels deep, the most allowed; "
                "the next one waits until the conversation needs the room.",
                at_max_depth,
            )
        return self._go(due, self._due_words(due, inp), at_max_depth)

    # --- inside

    def _due(self, inp: PolicyInput) -> Reason | None:
        """The automatic trigger that applies, if any: room first, then the optional ones."""
        config = self.config
        if inp.state.ratio >= config.trigger_ratio:
            return Reason.THRESHOLD
        if config.message_trigger is not None and inp.live_messages >= config.message_trigger:
            return Reason.MESSAGE_COUNT
        since_summary = inp.memory.messages_since_summary
        refresh = config.force_refresh_after_messages
        if refresh is not None and since_summary is not None and since_summary >= refresh:
            return Reason.FORCE_REFRESH
        return None

    def _due_words(self, due: Reason, inp: PolicyInput) -> str:
        config = self.config
        if due is Reason.THRESHOLD:
            return (
                f"The conversation uses {_percent(inp.state.ratio)} of what Claude can read "
                f"(summaries start at {_percent(config.trigger_ratio)}), so older messages "
                "are summarized"
            )
        if due is Reason.MESSAGE_COUNT:
            return (
                f"There are {_messages(inp.live_messages)} in the conversation (the limit is "
                f"{config.message_trigger}), so older ones are summarized"
            )
        return (
            f"{_messages(inp.memory.messages_since_summary or 0)} arrived since the last "
            f"summary (a refresh comes every {config.force_refresh_after_messages}), so "
            "they are summarized too"
        )

    def _go(
        self, reason: Reason, words: str, at_max_depth: bool, keep: int | None = None
    ) -> Decision:
        if keep is None:
            keep = self.config.preserve_recent
        if reason is Reason.THRESHOLD:
            # The engine condenses just far enough to reach the target (issue 8).
            words += f" down to {_percent(self.config.target_ratio)}"
            kept = f"at least the newest {keep}"
        else:
            kept = f"the newest {keep}"
        return Decision(
            summarize=True,
            reason=reason,
            preserve_recent=keep,
            at_max_depth=at_max_depth,
            explanation=f"{words}; {kept} stay as they are.",
        )

    def _hold(
        self, reason: Reason, words: str, at_max_depth: bool, keep: int | None = None
    ) -> Decision:
        return Decision(
            summarize=False,
            reason=reason,
            preserve_recent=self.config.preserve_recent if keep is None else keep,
            at_max_depth=at_max_depth,
            explanation=words,
        )
