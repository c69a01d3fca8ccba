"""TriggerPolicy: when to summarize (DESIGN §5), replayed over simulated conversations."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from app.core.context import ContextBreakdown, ContextState
from app.core.policy import (
    SUMMARIZING_REASONS,
    Decision,
    PolicyInput,
    Reason,
    TriggerMemory,
    TriggerPolicy,
    nothing_to_condense,
    whole_conversation_tokens,
)
from app.core.summarization_config import SummarizationConfig

WINDOW = 200_000
RESERVED = 8_192
USABLE = WINDOW - RESERVED
SYSTEM = 1_000


def state_at(ratio: float, *, draft: int = 0) -> ContextState:
    """The next request's figures when it uses `ratio` of the usable window."""
    history = max(0, round(ratio * USABLE) - SYSTEM - draft)
    return ContextState(
        breakdown=ContextBreakdown(
            system=SYSTEM, history=history, draft=draft, reserved_output=RESERVED
        ),
        context_window=WINDOW,
    )


def ask(
    policy: TriggerPolicy,
    ratio: float,
    live: int,
    memory: TriggerMemory | None = None,
    **more: object,
) -> Decision:
    return policy.should_summarize(
        PolicyInput(
            state=state_at(ratio),
            live_messages=live,
            memory=memory if memory is not None else TriggerMemory(),
            **more,  # type: ignore[arg-type]
        )
    )


@dataclass
class Conversation:
    """A conversation driven the way the controller drives the policy.

    Messages carry token counts. A summary is written in the background while
    `summary_delay` more messages arrive (the policy is not asked meanwhile: one
    summary at a time); then it replaces everything but the newest
    `preserve_recent` messages with a memory block of at most max_summary_tokens
    (DESIGN §3) — or, when `summaries_fail`, changes nothing.
    """

    policy: TriggerPolicy
    summary_delay: int = 0
    summaries_fail: bool = False
    tail: list[int] = field(default_factory=list)
    memory_tokens: int = 0
    memory: TriggerMemory = field(default_factory=TriggerMemory)
    running: Decision | None = None
    running_for: int = 0
    covered_until: int = 0  # tail length when the running summary was planned
    decisions: list[tuple[int, float, Decision]] = field(default_factory=list)
    sent: int = 0
    summaries: int = 0

    def state(self) -> ContextState:
        return ContextState(
            breakdown=ContextBreakdown(
                system=SYSTEM,
                memory=self.memory_tokens,
                history=sum(self.tail),
                reserved_output=RESERVED,
            ),
            context_window=WINDOW,
        )

    def add(self, tokens: int) -> Decision | None:
        """Store a message, then ask the policy — unless a summary is still being written."""
        self.tail.append(tokens)
        self.sent += 1
        self.memory = self.policy.observe(self.memory, self.state(), new_messages=1)
        if self.running is not None:
            self.running_for += 1
            if self.running_for < self.summary_delay:
                return None
            self._finish()
        state = self.state()
        decision = self.policy.should_summarize(
            PolicyInput(
                state=state,
                live_messages=len(self.tail),
                memory=self.memory,
            )
        )
        self.memory = self.policy.after_decision(self.memory, decision)
        self.decisions.append((self.sent, state.ratio, decision))
        if decision.summarize:
            self.running, self.running_for = decision, 0
            self.covered_until = len(self.tail) - decision.preserve_recent
            if self.summary_delay == 0:
                self._finish()
        return decision

    def _finish(self) -> None:
        self.running = None
        if self.summaries_fail:
            return
        # Messages sent while it was written are outside the covered range (DESIGN §6.5).
        config = self.policy.config
        source = sum(self.tail[: self.covered_until])
        self.memory_tokens = min(
            config.max_summary_tokens, self.memory_tokens + config.target_summary_tokens(source)
        )
        self.tail = self.tail[self.covered_until :]
        self.summaries += 1
        self.memory = self.policy.after_summary(self.memory, self.state())

    def triggers(self) -> list[tuple[int, float, Decision]]:
        return [entry for entry in self.decisions if entry[2].summarize]


# --- whole conversations


def test_a_long_thread_triggers_exactly_once_at_about_80_percent() -> None:
    conversation = Conversation(TriggerPolicy())

    for _ in range(180):
        conversation.add(1_500)

    [(sent, ratio, decision)] = conversation.triggers()
    assert decision.reason is Reason.THRESHOLD
    assert 0.80 <= ratio < 0.81
    assert sent == 102  # (1,000 system + 102 × 1,500) / 191,808 usable = 0.803
    assert decision.preserve_recent == 6
    assert conversation.summaries == 1
    assert 0.5 < conversation.state().ratio < 0.8  # it grew again, not yet back to the trigger
    # Every other decision said why not, in words.
    others = [d for _, _, d in conversation.decisions if not d.summarize]
    assert {d.reason for d in others} == {Reason.NOT_DUE}
    assert all(d.explain() for d in others)


def test_a_thread_that_keeps_growing_triggers_again_only_when_room_runs_low_again() -> None:
    conversation = Conversation(TriggerPolicy(), summary_delay=2)

    for _ in range(300):
        conversation.add(1_500)

    triggers = conversation.triggers()
    assert [sent for sent, _, _ in triggers] == [102, 198, 294]
    assert all(0.80 <= ratio < 0.81 for _, ratio, _ in triggers)


def test_a_five_message_burst_across_the_threshold_yields_one_summary() -> None:
    """Replies arrive quickly, two of them while the summary is being written."""
    conversation = Conversation(TriggerPolicy(), summary_delay=2)
    for _ in range(100):
        conversation.add(1_500)
    assert conversation.state().ratio < 0.8

    burst = [conversation.add(2_500) for _ in range(5)]

    assert [d.summarize for d in burst if d is not None] == [True, False, False, False]
    assert [d.reason for d in burst if d is not None][1:] == [Reason.NOT_DUE] * 3
    assert conversation.summaries == 1
    assert conversation.state().ratio < 0.2


def test_the_policy_is_not_asked_while_a_summary_is_written() -> None:
    conversation = Conversation(TriggerPolicy(), summary_delay=10)
    for _ in range(102):
        conversation.add(1_500)
    assert conversation.running is not None

    assert [conversation.add(2_000) for _ in range(9)] == [None] * 9
    assert conversation.summaries == 0
    conversation.add(2_000)

    assert conversation.summaries == 1
    assert conversation.memory.messages_since_summary == 0


def test_hysteresis_stops_a_second_trigger_after_a_small_burst() -> None:
    """The summarizer failed, so nothing changed: it is not retried on every message."""
    conversation = Conversation(TriggerPolicy(), summaries_fail=True)
    for _ in range(102):
        conversation.add(1_500)
    assert len(conversation.triggers()) == 1

    burst = [conversation.add(500) for _ in range(3)]

    assert [d.reason for d in burst if d is not None] == [Reason.HYSTERESIS] * 3
    assert burst[0] is not None
    assert burst[0].explain() == (
        "A summary was started recently; the next waits until usage drops below 70 % "
        "or 4 messages more arrive."
    )
    retry = conversation.add(500)  # the cooldown's worth of messages re-arms it
    assert retry is not None and retry.reason is Reason.THRESHOLD


def test_the_same_state_never_triggers_twice_even_without_cooldown() -> None:
    policy = TriggerPolicy(SummarizationConfig(cooldown_messages=0))
    memory = TriggerMemory()
    first = ask(policy, 0.85, 40, memory)
    memory = policy.after_decision(memory, first)

    again = ask(policy, 0.85, 40, memory)
    memory = policy.observe(memory, state_at(0.86), new_messages=1)
    later = ask(policy, 0.86, 41, memory)

    assert (first.reason, again.reason, later.reason) == (
        Reason.THRESHOLD,
        Reason.HYSTERESIS,
        Reason.THRESHOLD,
    )


def test_usage_dropping_below_the_reset_level_re_arms() -> None:
    policy = TriggerPolicy()
    memory = policy.after_decision(TriggerMemory(), ask(policy, 0.82, 30))
    assert memory.armed is False

    memory = policy.observe(memory, state_at(0.72))
    assert memory.armed is False
    memory = policy.observe(memory, state_at(0.69))
    assert memory.armed is True


def test_a_summary_that_left_usage_high_does_not_re_arm() -> None:
    policy = TriggerPolicy()
    memory = policy.after_decision(TriggerMemory(), ask(policy, 0.82, 30))

    assert policy.after_summary(memory, state_at(0.75)).armed is False
    assert policy.after_summary(memory, state_at(0.40)).armed is True
    assert policy.after_summary(memory).messages_since_summary == 0


# --- one rule at a time


def test_cooldown_holds_automatic_summaries_for_a_few_messages() -> None:
    policy = TriggerPolicy()
    memory = policy.after_summary(TriggerMemory(), state_at(0.3))

    reasons = []
    for _ in range(5):
        memory = policy.observe(memory, state_at(0.9), new_messages=1)
        reasons.append(ask(policy, 0.9, 30, memory).reason)

    assert reasons == [Reason.COOLDOWN] * 3 + [Reason.THRESHOLD] * 2
    assert (
        "A summary was made 1 message ago"
        in ask(policy, 0.9, 30, TriggerMemory(messages_since_summary=1)).explain()
    )


def test_too_few_messages_are_never_summarized_automatically() -> None:
    policy = TriggerPolicy()

    held = ask(policy, 0.95, 11)

    assert (held.summarize, held.reason) == (False, Reason.TOO_FEW_MESSAGES)
    assert held.explain() == "Only 11 messages so far; automatic summaries wait for at least 12."
    assert ask(policy, 0.95, 12).reason is Reason.THRESHOLD


def test_below_the_threshold_nothing_is_due() -> None:
    decision = ask(TriggerPolicy(), 0.79, 100)

    assert (decision.summarize, decision.reason) == (False, Reason.NOT_DUE)
    assert decision.explain() == (
        "No summary needed: the conversation uses 79 % of what Claude can read "
        "(summaries start at 80 %)."
    )


def test_turned_off_means_no_automatic_summary() -> None:
    policy = TriggerPolicy(SummarizationConfig(auto_summarize=False))

    decision = ask(policy, 0.95, 100)

    assert (decision.summarize, decision.reason) == (False, Reason.DISABLED)


def test_the_message_count_trigger() -> None:
    policy = TriggerPolicy(SummarizationConfig(message_trigger=100))

    assert ask(policy, 0.2, 99).reason is Reason.NOT_DUE
    decision = ask(policy, 0.2, 100)
    assert (decision.summarize, decision.reason, decision.trigger) == (
        True,
        Reason.MESSAGE_COUNT,
        "auto",
    )
    assert decision.explain().startswith("There are 100 messages in the conversation")


def test_the_forced_refresh_counts_from_the_last_summary() -> None:
    policy = TriggerPolicy(SummarizationConfig(force_refresh_after_messages=20))

    assert ask(policy, 0.2, 40).reason is Reason.NOT_DUE  # no summary yet: nothing to refresh
    assert ask(policy, 0.2, 40, TriggerMemory(messages_since_summary=19)).reason is (Reason.NOT_DUE)
    decision = ask(policy, 0.2, 40, TriggerMemory(messages_since_summary=20))
    assert (decision.summarize, decision.reason) == (True, Reason.FORCE_REFRESH)
    assert decision.explain().startswith("20 messages arrived since the last summary")


def test_the_threshold_comes_before_the_optional_triggers() -> None:
    policy = TriggerPolicy(SummarizationConfig(message_trigger=50, force_refresh_after_messages=10))

    decision = ask(policy, 0.9, 60, TriggerMemory(messages_since_summary=30))

    assert decision.reason is Reason.THRESHOLD


# --- depth


def test_at_max_depth_only_what_needs_room_goes_ahead() -> None:
    policy = TriggerPolicy(SummarizationConfig(message_trigger=50))

    count = ask(policy, 0.3, 60, summary_depth=3)
    room = ask(policy, 0.85, 60, summary_depth=3)
    manual = ask(policy, 0.3, 60, summary_depth=3, manual=True)

    assert (count.summarize, count.reason) == (False, Reason.DEPTH)
    assert count.explain().startswith("Summaries are already 3 levels deep")
    assert (room.summarize, room.reason, room.at_max_depth) == (True, Reason.THRESHOLD, True)
    assert (manual.summarize, manual.at_max_depth) == (True, True)


def test_below_max_depth_the_optional_triggers_go_ahead() -> None:
    policy = TriggerPolicy(SummarizationConfig(message_trigger=50))

    decision = ask(policy, 0.3, 60, summary_depth=2)

    assert (decision.summarize, decision.reason, decision.at_max_depth) == (
        True,
        Reason.MESSAGE_COUNT,
        False,
    )


# --- manual


def test_manual_ignores_the_automatic_rules() -> None:
    policy = TriggerPolicy(SummarizationConfig(auto_summarize=False))
    held_back = TriggerMemory(armed=False, messages_since_summary=0)

    decision = ask(policy, 0.1, 8, held_back, manual=True)

    assert (decision.summarize, decision.reason, decision.trigger) == (
        True,
        Reason.MANUAL,
        "manual",
    )
    assert decision.preserve_recent == 6
    assert decision.explain() == (
        "You asked for a summary: older messages are summarized; the newest 6 stay as they are."
    )


def test_manual_needs_something_older_than_the_kept_messages() -> None:
    decision = ask(TriggerPolicy(), 0.1, 6, manual=True)

    assert (decision.summarize, decision.reason) == (False, Reason.TOO_FEW_MESSAGES)
    assert decision.explain() == "Nothing to summarize yet — summaries start after 6 messages."
    assert ask(TriggerPolicy(), 0.1, 7, manual=True).summarize


# --- emergency


def emergency_input(
    tail: list[int],
    *,
    draft: int = 0,
    memory_tokens: int = 0,
    calibration: float = 1.0,
    memory: TriggerMemory | None = None,
) -> PolicyInput:
    state = ContextState(
        breakdown=ContextBreakdown(
            system=SYSTEM,
            memory=memory_tokens,
            history=round(sum(tail) * calibration),
            draft=draft,
            reserved_output=RESERVED,
        ),
        context_window=WINDOW,
    )
    return PolicyInput(
        state=state,
        live_messages=len(tail),
        memory=memory if memory is not None else TriggerMemory(),
    )


def test_an_emergency_ignores_cooldown_hysteresis_minimum_and_the_switch() -> None:
    policy = TriggerPolicy(SummarizationConfig(auto_summarize=False))
    just_summarized = TriggerMemory(armed=False, messages_since_summary=0)

    decision = policy.should_summarize(
        emergency_input([60_000, 60_000, 60_000, 30_000], memory=just_summarized)
    )

    assert (decision.summarize, decision.reason, decision.trigger) == (
        True,
        Reason.EMERGENCY,
        "emergency",
    )
    assert decision.explain().startswith("The next message would not fit (110 % of what")


def test_an_emergency_needs_a_message_older_than_the_two_newest() -> None:
    decision = TriggerPolicy().should_summarize(emergency_input([150_000, 100_000]))

    assert (decision.summarize, decision.reason) == (False, Reason.TOO_FEW_MESSAGES)
    assert "Shorten the message or start a new conversation" in decision.explain()


def test_an_emergency_keeps_the_newest_two_and_lets_the_target_say_how_far() -> None:
    """Two is the floor; the engine condenses only as far as the target needs."""
    decision = TriggerPolicy().should_summarize(emergency_input([20_000] * 10, draft=30_000))

    assert (decision.reason, decision.preserve_recent) == (Reason.EMERGENCY, 2)


# --- how many stay as they are


def manual_input(live: int, keep_recent: int | None) -> PolicyInput:
    return PolicyInput(
        state=state_at(0.3), live_messages=live, manual=True, keep_recent=keep_recent
    )


def test_a_summary_asked_for_keeps_the_settings_number() -> None:
    decision = TriggerPolicy().should_summarize(manual_input(20, None))

    assert (decision.reason, decision.preserve_recent) == (Reason.MANUAL, 6)
    assert "the newest 6 stay as they are" in decision.explain()


def test_a_summary_asked_for_keeps_the_users_own_number() -> None:
    decision = TriggerPolicy().should_summarize(manual_input(20, 10))

    assert (decision.reason, decision.preserve_recent) == (Reason.MANUAL, 10)
    assert "the newest 10 stay as they are" in decision.explain()


def test_the_users_number_never_goes_below_two() -> None:
    decision = TriggerPolicy().should_summarize(manual_input(20, 0))

    assert decision.preserve_recent == 2


def test_keeping_every_message_leaves_nothing_to_condense() -> None:
    decision = TriggerPolicy().should_summarize(manual_input(16, 16))

    assert (decision.summarize, decision.reason) == (False, Reason.TOO_FEW_MESSAGES)
    assert (decision.preserve_recent, decision.explain()) == (16, nothing_to_condense(16))


# --- the records


def test_memory_round_trips_through_plain_values() -> None:
    memory = TriggerMemory(armed=False, messages_since_trigger=3, messages_since_summary=7)

    assert TriggerMemory.from_dict(memory.to_dict()) == memory
    assert TriggerMemory.from_dict({}) == TriggerMemory()


@pytest.mark.parametrize(
    "data",
    [
        {"armed": "yes"},
        {"messages_since_trigger": 1.5},
        {"messages_since_trigger": True},
        {"messages_since_summary": "3"},
        {"messages_since_summary": -1},
    ],
)
def test_damaged_memory_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        TriggerMemory.from_dict(data)


def test_inputs_are_checked() -> None:
    with pytest.raises(ValueError):
        PolicyInput(state=state_at(0.5), live_messages=-1)
    with pytest.raises(ValueError):
        policy = TriggerPolicy()
        policy.observe(TriggerMemory(), state_at(0.5), new_messages=-1)


def test_a_decision_cannot_contradict_its_reason() -> None:
    with pytest.raises(ValueError):
        Decision(summarize=True, reason=Reason.COOLDOWN, preserve_recent=6)
    with pytest.raises(ValueError):
        Decision(summarize=False, reason=Reason.THRESHOLD, preserve_recent=6)
    assert Decision(summarize=False, reason=Reason.NOT_DUE, preserve_recent=6).trigger is None


# --- properties

_config = st.builds(
    SummarizationConfig,
    trigger_ratio=st.sampled_from([0.6, 0.75, 0.8, 0.9]),
    reset_ratio=st.sampled_from([0.3, 0.5, 0.55]),
    min_messages=st.integers(min_value=7, max_value=20),
    preserve_recent=st.integers(min_value=2, max_value=6),
    cooldown_messages=st.integers(min_value=0, max_value=6),
    message_trigger=st.one_of(st.none(), st.integers(min_value=20, max_value=60)),
    force_refresh_after_messages=st.one_of(st.none(), st.integers(min_value=1, max_value=30)),
)


@st.composite
def _steps(draw: st.DrawFn) -> list[tuple[float, int, bool, float]]:
    """(usage after the message, new messages, summary succeeds, usage after the summary)."""
    return draw(
        st.lists(
            st.tuples(
                st.floats(min_value=0.0, max_value=0.99),
                st.integers(min_value=0, max_value=2),
                st.booleans(),
                st.floats(min_value=0.0, max_value=0.99),
            ),
            max_size=120,
        )
    )


@given(config=_config, steps=_steps())
def test_never_triggers_twice_without_re_arming(
    config: SummarizationConfig, steps: list[tuple[float, int, bool, float]]
) -> None:
    """Between two automatic triggers, usage was seen below the reset level or the
    cooldown's worth of messages arrived (and never twice on one state)."""
    policy = TriggerPolicy(config)
    memory = TriggerMemory()
    live = 0
    last_trigger: int | None = None
    dipped = False
    messages_since = 0
    for step, (ratio, new, succeeds, ratio_after) in enumerate(steps):
        live += new
        memory = policy.observe(memory, state_at(ratio), new_messages=new)
        messages_since += new
        dipped = dipped or ratio < config.reset_ratio
        decision = policy.should_summarize(
            PolicyInput(state=state_at(ratio), live_messages=live, memory=memory)
        )
        memory = policy.after_decision(memory, decision)
        if not decision.summarize:
            continue
        assert decision.reason in SUMMARIZING_REASONS - {Reason.EMERGENCY, Reason.MANUAL}
        assert live >= config.min_messages > decision.preserve_recent
        if last_trigger is not None:
            assert dipped or messages_since >= max(1, config.cooldown_messages), step
        last_trigger, dipped, messages_since = step, False, 0
        if succeeds:
            live = decision.preserve_recent
            memory = policy.after_summary(memory, state_at(ratio_after))
            dipped = ratio_after < config.reset_ratio


@given(
    config=_config,
    tail=st.lists(st.integers(min_value=0, max_value=120_000), min_size=3, max_size=40),
    draft=st.integers(min_value=0, max_value=150_000),
    memory_tokens=st.integers(min_value=0, max_value=20_000),
    calibration=st.floats(min_value=0.5, max_value=2.0),
    memory=st.builds(
        TriggerMemory,
        armed=st.booleans(),
        messages_since_trigger=st.integers(min_value=0, max_value=10),
        messages_since_summary=st.one_of(st.none(), st.integers(min_value=0, max_value=10)),
    ),
    depth=st.integers(min_value=0, max_value=5),
    manual=st.booleans(),
    auto=st.booleans(),
)
def test_an_emergency_always_fires_and_keeps_the_newest_two(
    config: SummarizationConfig,
    tail: list[int],
    draft: int,
    memory_tokens: int,
    calibration: float,
    memory: TriggerMemory,
    depth: int,
    manual: bool,
    auto: bool,
) -> None:
    policy = TriggerPolicy(config.with_changes(auto_summarize=auto))
    inp = emergency_input(
        tail, draft=draft, memory_tokens=memory_tokens, calibration=calibration, memory=memory
    )
    inp = PolicyInput(
        state=inp.state,
        live_messages=inp.live_messages,
        memory=memory,
        summary_depth=depth,
        manual=manual,
    )

    decision = policy.should_summarize(inp)

    if inp.state.fits:
        assert decision.reason is not Reason.EMERGENCY
        return
    assert (decision.summarize, decision.reason, decision.preserve_recent) == (
        True,
        Reason.EMERGENCY,
        2,
    )


def test_the_threshold_waits_while_the_whole_conversation_fits() -> None:
    """Verbatim beats any summary: the threshold holds while everything fits (issue 22)."""
    state = state_at(0.85)
    fits = PolicyInput(state=state, live_messages=40, whole_tokens=state.used)
    decision = TriggerPolicy().should_summarize(fits)
    assert not decision.summarize and decision.reason is Reason.FITS
    early = TriggerPolicy(SummarizationConfig(condense_while_it_fits=True))
    assert early.should_summarize(fits).reason is Reason.THRESHOLD
    # Once the archived originals would not fit back in, the threshold applies.
    archived = PolicyInput(state=state, live_messages=40, whole_tokens=state.usable + 1)
    assert TriggerPolicy().should_summarize(archived).reason is Reason.THRESHOLD


@given(
    config=_config,
    ratio=st.one_of(st.floats(min_value=0.55, max_value=0.95), st.floats(0.0, 1.0)),
    # Mostly a little archived (the whole then fits), now and then more than the window.
    archived=st.one_of(st.integers(0, USABLE // 20), st.integers(0, 2 * USABLE)),
    live=st.integers(min_value=0, max_value=400),
    memory=st.builds(
        TriggerMemory,
        armed=st.booleans(),
        messages_since_trigger=st.integers(min_value=0, max_value=400),
        messages_since_summary=st.one_of(st.none(), st.integers(min_value=0, max_value=400)),
    ),
    while_it_fits=st.booleans(),
)
def test_while_the_whole_conversation_fits_only_the_users_own_triggers_condense(
    config: SummarizationConfig,
    ratio: float,
    archived: int,
    live: int,
    memory: TriggerMemory,
    while_it_fits: bool,
) -> None:
    """Issue 22: verbatim beats any summary. While every message, archived ones included,
    fits the usable window, the threshold never condenses (unless the user asks for it
    in Settings); a count or refresh trigger the user set still may."""
    config = config.with_changes(condense_while_it_fits=while_it_fits)
    state = state_at(ratio)
    whole = whole_conversation_tokens(state, archived)
    decision = TriggerPolicy(config).should_summarize(
        PolicyInput(state=state, live_messages=live, memory=memory, whole_tokens=whole)
    )
    fits = whole is not None and whole <= state.usable
    event(f"{'fits' if fits else 'too long'}, {decision.reason}")
    if decision.summarize and fits:
        assert while_it_fits or decision.reason is not Reason.THRESHOLD
    if fits and not while_it_fits and decision.reason is Reason.FITS:
        assert not decision.summarize and config.auto_summarize


@given(
    config=_config,
    armed=st.booleans(),
    since_trigger=st.integers(0, 20),
    since_summary=st.none() | st.integers(0, 20),
    new=st.integers(0, 5),
    ratio=st.floats(0.0, 1.5),
)
def test_observe_without_the_usage_is_observe_with_any(
    config: SummarizationConfig,
    armed: bool,
    since_trigger: int,
    since_summary: int | None,
    new: int,
    ratio: float,
) -> None:
    """When `reads_usage` says the usage is not read, observing without it gives what
    observing with any usage gives (the window's thread then measures nothing, issue 20);
    when it is read, it is asked for."""
    policy = TriggerPolicy(config)
    memory = TriggerMemory(armed, since_trigger, since_summary)
    with_usage = policy.observe(memory, state_at(ratio), new_messages=new)
    if policy.reads_usage(memory, new_messages=new):
        with pytest.raises(ValueError, match="usage is needed"):
            policy.observe(memory, None, new_messages=new)
        # Read, it can decide: below the reset level re-arms, above it does not.
        assert with_usage.armed == (state_at(ratio).ratio < config.reset_ratio)
    else:
        assert policy.observe(memory, None, new_messages=new) == with_usage
        assert with_usage.armed
