"""ContextBuilder: the exact request, its figures, and DESIGN §3 invariants 2 and 3."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.core.calibration import UNCALIBRATED_RATIO, Calibration, Calibrations
from app.core.catalog import FALLBACK_MODELS, ModelInfo, model_limits
from app.core.context import (
    CACHE_CONTROL,
    MEMORY_HEADING,
    REPLY_TOKENS,
    BuiltRequest,
    ContextBuilder,
    ContextState,
    RequestInputs,
    format_token_count,
    memory_block_text,
    recall_allowance,
    reserved_output,
)
from app.core.conversation import DATE_LINE_TOKENS, ApiMessage, to_api_messages
from app.core.errors import (
    ContextOverflowError,
    InvalidInputError,
    MessageTooLargeError,
    ServerError,
    UserFacingError,
)
from app.core.live_tail import tally_messages
from app.core.lookup import TOOL_SYSTEM_PROMPT_TOKENS, ToolOffer, tool_definition
from app.core.models import Message, MessageStatus, Role
from app.core.recall import RECALL_HEADING, RecallBlock, RecallQuote, recall_block_text
from app.core.summary import Summary
from app.core.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    TokenCounter,
    default_counter,
)
from tests.fakes.summaries import make_summary

# The request's date line before a message, "[Thursday 5 March 2026]" and a blank line.
DATE_LINE = re.compile(r"\[[A-Z][a-z]+ \d{1,2} [A-Z][a-z]+ \d{4}\]\n\n")

# A model with a 200k window and 64k output (Claude Sonnet 4.5's limits): the figures
# below are worked out for it, whatever the bundled table's first row becomes.
SONNET = ModelInfo(
    id="claude-sonnet-4-5",
    display_name="Claude Sonnet 4.5",
    max_input_tokens=200_000,
    max_tokens=64_000,
    line="sonnet",
)
WHEN = datetime(2026, 3, 5, 9, 30, tzinfo=UTC)


def same_day() -> int:
    """Today is the day the test messages were written: the draft needs no date line."""
    return WHEN.date().toordinal()


COUNTER = default_counter()


class SpyCounter(TokenCounter):
    """The real counter, remembering every text it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def count(self, text: str) -> int:
        self.texts.append(text)
        return super().count(text)


def message(
    seq: int,
    role: Role,
    content: str,
    *,
    status: MessageStatus = MessageStatus.COMPLETE,
    estimate: int | bool | None = True,
) -> Message:
    """A stored message; `estimate=True` stores its real count, None leaves it uncounted."""
    token_estimate = COUNTER.count(content) if estimate is True else estimate
    return Message(
        id=seq,
        session_id="s",
        seq=seq,
        role=role,
        content=content,
        created_at=WHEN,
        token_estimate=token_estimate if not isinstance(token_estimate, bool) else None,
        status=status,
    )


def chat(*texts: str) -> list[Message]:
    """Alternating user/assistant messages, starting with the user."""
    roles = (Role.USER, Role.ASSISTANT)
    return [message(n + 1, roles[n % 2], text) for n, text in enumerate(texts)]


def summary(tier: str, first: int, last: int, text: str, estimate: int | None = None) -> Summary:
    return make_summary(tier, first, last, text, tokens=estimate, created_at=WHEN)


def text_of(turn: ApiMessage) -> str:
    """A turn's text, whether a string or blocks (the newest carries a cache breakpoint)."""
    content = turn["content"]
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content)


def tiny_model(window: int, output: int) -> ModelInfo:
    return ModelInfo(
        id="claude-tiny", display_name="Claude Tiny", max_input_tokens=window, max_tokens=output
    )


# --- the request ------------------------------------------------------------------------


def test_a_first_message_is_one_user_turn_with_a_plain_system_prompt() -> None:
    built = ContextBuilder(today=lambda: WHEN.date().toordinal()).build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", draft="What is a cairn?")
    )

    assert built.model == SONNET.id
    assert built.system == "Be brief."
    # The new message is sent today: it carries the date, as it will once stored.
    content = "[Thursday 5 March 2026]\n\nWhat is a cairn?"
    assert built.messages == [{"role": "user", "content": content}]
    assert built.max_tokens == REPLY_TOKENS == 8_192
    assert built.state.fits


def test_the_stored_history_is_sent_oldest_first_with_the_draft_last() -> None:
    tail = chat("What is a cairn?", "A pile of stones.", "Who builds them?", "Walkers.")

    built = ContextBuilder(today=same_day).build_request(
        RequestInputs(model=SONNET, tail=tail, draft="Why?")
    )

    assert [text_of(m) for m in built.messages] == [
        "[Thursday 5 March 2026]\n\nWhat is a cairn?",  # one day: one date line, first
        "A pile of stones.",
        "Who builds them?",
        "Walkers.",
        "Why?",
    ]
    assert built.messages[-1]["role"] == "user"


def test_a_draft_after_an_unanswered_question_joins_it() -> None:
    tail = [
        *chat("What is a cairn?"),
        message(2, Role.ASSISTANT, "Half a rep", status=MessageStatus.ERROR),
    ]

    built = ContextBuilder(today=same_day).build_request(
        RequestInputs(model=SONNET, tail=tail, draft="Hello?")
    )

    assert built.messages == [
        {"role": "user", "content": "[Thursday 5 March 2026]\n\nWhat is a cairn?\n\nHello?"}
    ]


def test_without_a_draft_the_stored_question_is_the_last_turn() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, tail=chat("Hi", "Hello!", "Go on"))
    )

    assert built.messages[-1] == {"role": "user", "content": "Go on"}


@pytest.mark.parametrize("draft", ["", "   ", "\n\t"])
def test_a_blank_draft_is_not_sent(draft: str) -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, tail=chat("Hi"), draft=draft)
    )

    assert built.messages == [{"role": "user", "content": "[Thursday 5 March 2026]\n\nHi"}]
    assert built.state.breakdown.draft == 0


def test_an_empty_conversation_has_nothing_to_send() -> None:
    builder = ContextBuilder()

    state = builder.estimate_state(RequestInputs(model=SONNET))
    with pytest.raises(InvalidInputError, match="type a message"):
        builder.build_request(RequestInputs(model=SONNET, draft="  "))
    with pytest.raises(InvalidInputError):
        builder.build_request(
            RequestInputs(model=SONNET, tail=[message(1, Role.ASSISTANT, "Hello!")])
        )

    assert state.fits
    assert state.breakdown.history == state.breakdown.draft == state.breakdown.memory == 0
    assert state.used == math.ceil(REQUEST_OVERHEAD_TOKENS * 1.0)


def test_to_api_messages_keeps_its_behaviour() -> None:
    history = [
        message(1, Role.ASSISTANT, "Welcome!"),
        message(2, Role.USER, "One"),
        message(3, Role.ASSISTANT, "Oops", status=MessageStatus.ERROR),
        message(4, Role.USER, "Two"),
        message(5, Role.ASSISTANT, "   "),
        message(6, Role.ASSISTANT, "Answer", status=MessageStatus.STOPPED),
        message(7, Role.ASSISTANT, "…", status=MessageStatus.STREAMING),
    ]

    assert to_api_messages(history) == [
        {"role": "user", "content": "[Thursday 5 March 2026]\n\nOne\n\nTwo"},
        {"role": "assistant", "content": "Answer"},
    ]


# --- the memory block -------------------------------------------------------------------


SUMMARIES = [
    summary("condensed", 61, 80, "They chose granite for the base. " * 200),
    summary("compressed", 1, 40, "They met and planned a walk."),
    summary("condensed", 41, 60, "They packed water and maps."),
]


def test_summaries_go_in_a_memory_block_with_a_cache_breakpoint_after_it() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", summaries=SUMMARIES, draft="Next?")
    )

    assert isinstance(built.system, list)
    first, memory = built.system
    assert first == {"type": "text", "text": "Be brief."}
    assert memory["type"] == "text"
    assert memory["cache_control"] == CACHE_CONTROL == {"type": "ephemeral"}
    assert memory["text"].startswith(f"# {MEMORY_HEADING}")
    assert built.state.breakdown.memory > 0


def test_the_memory_block_lists_compressed_then_condensed_oldest_first() -> None:
    text = memory_block_text(SUMMARIES)

    positions = [
        text.index("planned a walk"),
        text.index("packed water"),
        text.index("granite"),
    ]
    assert positions == sorted(positions)
    assert "## Messages 1–40" in text
    assert memory_block_text([]) == ""


def test_without_a_system_prompt_the_memory_block_stands_alone() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, summaries=SUMMARIES[:1], draft="Next?")
    )

    assert isinstance(built.system, list)
    assert len(built.system) == 1
    assert "cache_control" in built.system[0]


def test_without_summaries_there_is_no_breakpoint() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", draft="Hi")
    )

    assert built.system == "Be brief."
    assert built.state.breakdown.memory == 0


def test_the_memory_estimate_uses_stored_summary_counts() -> None:
    counter = SpyCounter()
    stored = [summary("condensed", 1, 10, "x " * 50_000, estimate=50_000)]

    state = ContextBuilder(counter).estimate_state(RequestInputs(model=SONNET, summaries=stored))

    assert "x " * 50_000 not in counter.texts
    assert 50_000 < state.breakdown.memory < 50_100


def test_the_memory_estimate_is_close_to_counting_the_block() -> None:
    summaries = [
        summary("compressed", 1, 40, "They met, planned a walk and " * 40),
        summary("condensed", 41, 60, "Granite, water, maps: 3 litres each. " * 30),
    ]

    state = ContextBuilder().estimate_state(RequestInputs(model=SONNET, summaries=summaries))

    exact = COUNTER.count(memory_block_text(summaries))
    assert exact <= state.breakdown.memory <= exact + 2 * len(summaries)


def test_a_summary_tier_is_checked() -> None:
    with pytest.raises(ValueError, match="medium"):
        summary("medium", 1, 2, "text")


# --- what it costs --------------------------------------------------------------------------


def test_stored_messages_are_never_tokenized_again() -> None:
    counter = SpyCounter()
    tail = chat(*(f"Message number {n} about stones." for n in range(40)))

    ContextBuilder(counter).estimate_state(
        RequestInputs(model=SONNET, system_prompt="Be brief.", tail=tail, draft="And then?")
    )

    assert sorted(counter.texts) == sorted(["Be brief.", "And then?"])


def test_a_message_without_a_stored_count_is_counted() -> None:
    counter = SpyCounter()
    tail = [message(1, Role.USER, "Counted now", estimate=None)]

    state = ContextBuilder(counter).estimate_state(RequestInputs(model=SONNET, tail=tail))

    assert "Counted now" in counter.texts
    assert state.breakdown.history == (
        COUNTER.count("Counted now") + MESSAGE_OVERHEAD_TOKENS + DATE_LINE_TOKENS
    )


def test_the_gauge_and_the_request_agree() -> None:
    builder = ContextBuilder(calibrations=Calibrations())
    inputs = RequestInputs(
        model=SONNET,
        system_prompt="Be brief.",
        summaries=SUMMARIES,
        tail=chat("Hi", "Hello!"),
        draft="Tell me more.",
    )

    assert builder.estimate_state(inputs) == builder.build_request(inputs).state


# --- calibration and models ----------------------------------------------------------------


def test_calibration_scales_every_part_but_not_the_raw_figure() -> None:
    calibrations = Calibrations({SONNET.id: Calibration(ratio=1.5, weight=1.0, samples=3)})
    tail = chat("What is a cairn? " * 20, "A pile of stones. " * 30)
    plain = ContextBuilder().build_request(RequestInputs(model=SONNET, tail=tail, draft="Why?"))

    built = ContextBuilder(calibrations=calibrations).build_request(
        RequestInputs(model=SONNET, tail=tail, draft="Why?")
    )

    assert built.state.calibrated is True
    assert built.raw_input_tokens == plain.raw_input_tokens == plain.state.used
    assert built.state.breakdown.history == math.ceil(plain.state.breakdown.history * 1.5)
    assert built.state.breakdown.draft == math.ceil(plain.state.breakdown.draft * 1.5)


def test_an_uncalibrated_model_assumes_the_high_side() -> None:
    calibrations = Calibrations({"claude-other": Calibration(ratio=0.9, weight=1.0, samples=1)})

    draft = "x " * 500

    state = ContextBuilder(calibrations=calibrations).estimate_state(
        RequestInputs(model=SONNET, draft=draft)
    )

    assert state.calibrated is False
    raw = COUNTER.count(draft) + MESSAGE_OVERHEAD_TOKENS + DATE_LINE_TOKENS
    assert state.breakdown.draft == math.ceil(raw * UNCALIBRATED_RATIO)


def test_an_unknown_model_uses_the_safe_default_and_says_so() -> None:
    info, known = model_limits("claude-mystery-9", FALLBACK_MODELS)

    state = ContextBuilder().estimate_state(
        RequestInputs(model=info, draft="Hi", model_known=known)
    )

    assert state.model_known is False
    assert state.context_window == 100_000
    assert state.breakdown.reserved_output == 4_096


def test_the_reserved_output_is_the_reply_limit() -> None:
    assert reserved_output(SONNET) == 8_192
    assert reserved_output(tiny_model(1_000, 300)) == 300
    state = ContextBuilder().estimate_state(RequestInputs(model=SONNET, max_output=100_000))
    assert state.breakdown.reserved_output == SONNET.max_tokens
    assert state.usable == SONNET.max_input_tokens - SONNET.max_tokens


def test_switching_model_changes_the_figures() -> None:
    builder = ContextBuilder()
    tail = chat("What is a cairn? " * 100)

    big = builder.estimate_state(RequestInputs(model=SONNET, tail=tail))
    small = builder.estimate_state(RequestInputs(model=tiny_model(4_000, 1_000), tail=tail))

    assert small.used == big.used
    assert small.ratio > big.ratio
    assert small.usable == 3_000


def test_a_missing_tokenizer_is_flagged_in_the_state() -> None:
    state = ContextBuilder(TokenCounter("no_such_encoding")).estimate_state(
        RequestInputs(model=SONNET, draft="abcdefgh")
    )

    assert state.estimate_flagged is True
    assert state.breakdown.draft == 2 + MESSAGE_OVERHEAD_TOKENS + DATE_LINE_TOKENS


# --- too much to send -------------------------------------------------------------------------


def test_a_message_larger_than_the_window_is_refused_with_the_numbers() -> None:
    draft = "stone " * 250_000  # about 250k tokens

    with pytest.raises(MessageTooLargeError) as caught:
        ContextBuilder().build_request(
            RequestInputs(model=SONNET, tail=chat("Hi", "Hello!"), draft=draft)
        )

    error = caught.value
    assert isinstance(error, UserFacingError)
    assert error.limit == 200_000 - 8_192
    assert error.tokens > error.limit
    assert (error.context_window, error.reserved_output) == (200_000, 8_192)
    assert "about 250k tokens" in error.message
    assert "at most 192k at once" in error.message
    assert "Claude Sonnet 4.5" in error.message
    assert "split it into parts" in error.message
    assert not error.retryable


def test_a_stored_message_too_large_is_refused_the_same_way() -> None:
    tail = [message(1, Role.USER, "big", estimate=300_000)]

    with pytest.raises(MessageTooLargeError, match="about 300k tokens"):
        ContextBuilder().build_request(RequestInputs(model=SONNET, tail=tail))


def test_a_conversation_that_outgrew_the_window_is_refused_before_sending() -> None:
    tail = [
        message(n + 1, (Role.USER, Role.ASSISTANT)[n % 2], "text", estimate=5_000)
        for n in range(40)
    ]

    with pytest.raises(ContextOverflowError) as caught:
        ContextBuilder().build_request(
            RequestInputs(model=SONNET, tail=tail, draft="One more question")
        )

    error = caught.value
    assert not isinstance(error, MessageTooLargeError)
    assert error.tokens > error.limit == 191_808
    assert "come to about 200k tokens" in error.message
    assert "at most 192k" in error.message


def test_counts_that_would_read_the_same_are_said_exactly() -> None:
    model = tiny_model(2_000, 100)  # 1,900 usable
    tail = [
        message(1, Role.USER, "x", estimate=1_000),
        message(2, Role.ASSISTANT, "y", estimate=895),
    ]

    with pytest.raises(ContextOverflowError) as caught:
        ContextBuilder().build_request(RequestInputs(model=model, tail=tail, draft="z"))

    assert "1,9" in caught.value.message
    assert "at most 1,900 at once" in caught.value.message


def test_the_state_says_when_it_does_not_fit() -> None:
    state = ContextBuilder().estimate_state(
        RequestInputs(model=tiny_model(1_000, 200), draft="stone " * 2_000)
    )

    assert state.fits is False
    assert state.ratio > 1


# --- an exact count near the limit ------------------------------------------------------------


class ExactCounter:
    """Stands in for the provider's count_tokens."""

    def __init__(self, answer: int | Exception) -> None:
        self.answer = answer
        self.asked: list[BuiltRequest] = []

    def __call__(self, built: BuiltRequest) -> int:
        self.asked.append(built)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def near_limit_tail(estimate: int) -> list[Message]:
    return [message(1, Role.USER, "big question", estimate=estimate)]


def test_far_from_the_limit_nobody_is_asked() -> None:
    exact = ExactCounter(10)

    ContextBuilder().build_request(RequestInputs(model=SONNET, draft="Hi"), exact_count=exact)

    assert exact.asked == []


def test_near_the_limit_the_exact_count_decides() -> None:
    model = tiny_model(10_000, 1_000)  # 9,000 usable
    exact = ExactCounter(8_900)

    built = ContextBuilder().build_request(
        RequestInputs(model=model, tail=near_limit_tail(9_100)), exact_count=exact
    )

    assert len(exact.asked) == 1
    assert built.state.counted_exactly is True
    assert built.state.used == built.exact_input_tokens == 8_900
    assert built.state.fits


def test_an_exact_count_over_the_limit_refuses() -> None:
    model = tiny_model(10_000, 1_000)

    with pytest.raises(MessageTooLargeError):
        ContextBuilder().build_request(
            RequestInputs(model=model, tail=near_limit_tail(8_800)), exact_count=ExactCounter(9_050)
        )


@pytest.mark.parametrize("answer", [ServerError("Claude had a problem"), 0])
def test_when_the_exact_count_fails_the_estimate_decides(answer: int | Exception) -> None:
    model = tiny_model(10_000, 1_000)

    built = ContextBuilder().build_request(
        RequestInputs(model=model, tail=near_limit_tail(8_700)), exact_count=ExactCounter(answer)
    )

    assert built.state.counted_exactly is False
    assert built.exact_input_tokens is None


def test_near_limit_is_five_percent_either_side() -> None:
    def state(used: int) -> ContextState:
        return ContextBuilder().estimate_state(
            RequestInputs(
                model=tiny_model(10_000, 1_000),
                tail=[
                    message(
                        1,
                        Role.USER,
                        "q",
                        estimate=used - REQUEST_OVERHEAD_TOKENS - 4 - DATE_LINE_TOKENS,
                    )
                ],
            )
        )

    assert not state(8_549).near_limit
    assert state(8_550).near_limit
    assert state(9_450).near_limit
    assert not state(9_451).near_limit


@pytest.mark.parametrize(
    ("tokens", "said"),
    [
        (0, "0"),
        (850, "850"),
        (1_000, "1k"),
        (1_234, "1.2k"),
        (68_400, "68k"),
        (191_808, "192k"),
        (1_000_000, "1M"),
        (1_500_000, "1.5M"),
    ],
)
def test_token_counts_are_said_briefly(tokens: int, said: str) -> None:
    assert format_token_count(tokens) == said


# --- invariants 2 and 3, over random conversations ------------------------------------------

ANY_CHAR = st.characters(codec=None, exclude_categories=())
CONTENT = st.one_of(
    st.just(""),
    st.sampled_from([" ", "\n\n", "\x00", "\ud800", "<|endoftext|>", "🧭 שלום"]),
    st.text(alphabet=ANY_CHAR, max_size=80),
    st.text(alphabet=st.sampled_from("ab 語\n"), min_size=200, max_size=2_000),
    # Huge: a message of several thousand tokens, now and then larger than a window.
    st.builds(
        lambda word, n: word * n,
        st.sampled_from(["stone ", "語", "x"]),
        st.integers(min_value=2_000, max_value=12_000),
    ),
)
STATUS = st.sampled_from(list(MessageStatus))


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    items = draw(
        st.lists(
            st.tuples(st.sampled_from(list(Role)), CONTENT, STATUS, st.booleans()),
            max_size=12,
        )
    )
    return [
        message(n + 1, role, content, status=status, estimate=True if stored else None)
        for n, (role, content, status, stored) in enumerate(items)
    ]


def sendable_texts(tail: Sequence[Message], draft: str) -> list[str]:
    """The oracle: what must reach Claude, in order, whatever the grouping into turns."""
    texts: list[str] = []
    started = False
    for item in tail:
        # Failed, declined and streaming replies are left out; cut-off ones go.
        if item.status not in (
            MessageStatus.COMPLETE,
            MessageStatus.STOPPED,
            MessageStatus.CUT_OFF,
            MessageStatus.PAUSED,
        ):
            continue
        if not item.content.strip():
            continue
        if not started and item.role is not Role.USER:
            continue
        started = True
        texts.append(item.content)
    if draft.strip():
        texts.append(draft)
    return texts


def build_or_refusal(
    builder: ContextBuilder, model: ModelInfo, tail: list[Message], draft: str, system: str
) -> BuiltRequest | Exception:
    try:
        return builder.build_request(
            RequestInputs(model=model, system_prompt=system, tail=tail, draft=draft)
        )
    except (ContextOverflowError, InvalidInputError) as error:
        return error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tail=conversations(), draft=CONTENT, system=st.sampled_from(["", "Be brief.", "\x00"]))
def test_turns_start_with_the_user_alternate_and_are_never_empty(
    tail: list[Message], draft: str, system: str
) -> None:
    """Invariant 2."""
    outcome = build_or_refusal(ContextBuilder(), SONNET, tail, draft, system)

    expected = sendable_texts(tail, draft)
    if isinstance(outcome, Exception):
        assert (
            expected == []
            or not isinstance(outcome, InvalidInputError)
            or isinstance(outcome, MessageTooLargeError)
        )
        return
    messages = outcome.messages
    assert messages[0]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(messages))
    assert all(text_of(turn).strip() for turn in messages)
    sent = "\n\n".join(text_of(turn) for turn in messages)
    assert DATE_LINE.sub("", sent) == "\n\n".join(expected)
    if draft.strip():
        assert messages[-1]["role"] == "user"
        assert text_of(messages[-1]).endswith(draft)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tail=conversations(),
    draft=CONTENT,
    window=st.integers(min_value=600, max_value=40_000),
    output_share=st.floats(min_value=0.01, max_value=0.45),
    ratio=st.sampled_from([None, 0.8, 1.0, 1.3]),
)
def test_the_request_and_the_reply_never_exceed_the_window(
    tail: list[Message], draft: str, window: int, output_share: float, ratio: float | None
) -> None:
    """Invariant 3: estimated request + max_tokens ≤ window, or a refusal with the numbers."""
    model = tiny_model(window, max(1, int(window * output_share)))
    calibrations = Calibrations(
        {model.id: Calibration(ratio=ratio, weight=1.0, samples=1)} if ratio else {}
    )
    builder = ContextBuilder(calibrations=calibrations)

    outcome = build_or_refusal(builder, model, tail, draft, "Be brief.")

    state = builder.estimate_state(
        RequestInputs(model=model, system_prompt="Be brief.", tail=tail, draft=draft)
    )
    event(type(outcome).__name__)
    if isinstance(outcome, MessageTooLargeError | ContextOverflowError):
        assert not state.fits
        assert outcome.tokens > outcome.limit == state.usable == window - reserved_output(model)
        assert format_token_count(outcome.limit) in outcome.message or f"{outcome.limit:,}" in (
            outcome.message
        )
        return
    if isinstance(outcome, InvalidInputError):
        assert sendable_texts(tail, draft) == []
        return
    assert outcome.state == state
    assert outcome.state.used + outcome.max_tokens <= window
    # The estimate is not a guess about some other request: counting what is
    # really sent gives the same figure, or a little less (joining two turns saves
    # the separator and may merge the whitespace around it: a few tokens a join).
    calibration = calibrations.for_model(model.id)
    recount = (
        REQUEST_OVERHEAD_TOKENS
        + COUNTER.count("Be brief.")
        + sum(COUNTER.count_message(text_of(turn)) for turn in outcome.messages)
    )
    joins = len(sendable_texts(tail, draft)) - len(outcome.messages)
    # A date line's blank line may merge with whitespace that starts the message too.
    date_lines = sum(len(DATE_LINE.findall(text_of(turn))) for turn in outcome.messages)
    slack = 3 * (joins + date_lines)
    assert outcome.raw_input_tokens - slack <= recount <= outcome.raw_input_tokens
    assert calibration.apply(recount) <= outcome.state.used


# --- checking a draft from the tail's tally -------------------------------------------------


def test_check_fits_agrees_with_building_the_request() -> None:
    builder = ContextBuilder()
    tail = chat(*(f"Message {n}: " + "word " * 150 for n in range(30)))
    tally = tally_messages(tail, builder.counter.count)
    small = tiny_model(4_000, 500)
    medium = tiny_model(20_000, 500)
    fits = builder.check_fits(RequestInputs(model=SONNET, tail_tally=tally, draft="And now?"))
    assert (
        fits
        == builder.build_request(RequestInputs(model=SONNET, tail=tail, draft="And now?")).state
    )
    with pytest.raises(ContextOverflowError) as raised:
        builder.build_request(RequestInputs(model=small, tail=tail, draft="And now?"))
    with pytest.raises(ContextOverflowError) as checked:
        builder.check_fits(RequestInputs(model=small, tail_tally=tally, draft="And now?"))
    assert str(checked.value) == str(raised.value)
    with pytest.raises(MessageTooLargeError):
        builder.check_fits(RequestInputs(model=small, tail_tally=tally, draft="huge " * 5_000))
    assert builder.check_fits(RequestInputs(model=medium, tail_tally=tally, draft="fits")).fits


# --- the recall block (issue 12) --------------------------------------------------------


def recall_block(tokens_of_filler: int = 0) -> RecallBlock:
    quote = RecallQuote(
        7, 3, Role.USER, WHEN, "The gate code is AX-7731." + " x" * tokens_of_filler
    )
    text = recall_block_text([quote])
    return RecallBlock(text, COUNTER.count(text), (quote,))


def test_the_recall_block_opens_the_newest_turn_after_the_cached_memory_block() -> None:
    recall = recall_block()
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", summaries=SUMMARIES, draft="Gate?"),
        recall=recall,
    )

    assert isinstance(built.system, list)
    first, memory = built.system
    assert first["text"] == "Be brief."
    assert RECALL_HEADING not in memory["text"]  # the system prompt stays the same turn after turn
    newest = built.messages[-1]
    assert newest["role"] == "user" and isinstance(newest["content"], list)
    quoted, asked = newest["content"]
    assert quoted == {"type": "text", "text": recall.text}
    assert quoted["text"].startswith(f"# {RECALL_HEADING}")
    assert asked["text"].endswith("Gate?")
    assert built.state.breakdown.recall == recall.tokens
    without = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", summaries=SUMMARIES, draft="Gate?")
    )
    assert built.state.used == without.state.used + recall.tokens
    assert built.raw_input_tokens == without.raw_input_tokens + recall.tokens


def test_the_gauge_estimate_leaves_recall_out_unless_asked() -> None:
    state = ContextBuilder().estimate_state(
        RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?")
    )
    assert state.breakdown.recall == 0 and state.recall_allowed == 0


def test_the_gauge_counts_what_the_last_request_quoted_within_the_allowance() -> None:
    builder = ContextBuilder(calibrations=Calibrations({SONNET.id: Calibration(ratio=1.1)}))
    plain = builder.estimate_state(RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?"))
    state = builder.estimate_state(
        RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?"),
        recall_budget_ratio=0.05,
        recall_quoted=800,
    )
    assert state.recall_allowed == recall_allowance(plain, 0.05) == 10_000  # 5 % of 200k
    assert state.breakdown.recall == Calibration(ratio=1.1).apply(800)
    assert state.used == plain.used + state.breakdown.recall
    # What summarizing goes by keeps recall's floor (the live tail gives way to it).
    floor = replace(plain.breakdown, recall=state.recall_floor)
    assert state.recall_floor == 800
    assert state.required == replace(state, breakdown=floor)
    assert state.required is state.required, "made once: the figures are frozen"
    assert replace(state, context_window=400_000).required.context_window == 400_000
    # Nothing archived (no summary): nothing can be quoted, whatever the last request had.
    none = builder.estimate_state(
        RequestInputs(model=SONNET, draft="Gate?"), recall_budget_ratio=0.05
    )
    assert none.breakdown.recall == 0 and none.recall_allowed == 0


def test_near_the_limit_the_quotes_counted_shrink_to_the_room_left() -> None:
    model = tiny_model(10_000, 1_000)  # 9,000 usable; recall stops at 95 % of it: 8,550
    tail = near_limit_tail(7_000)  # with the summaries' memory block: about 8.5k
    state = ContextBuilder().estimate_state(
        RequestInputs(model=model, tail=tail, summaries=SUMMARIES),
        recall_budget_ratio=0.05,
        recall_quoted=2_000,
    )
    room = math.floor(9_000 * 0.95) - (state.used - state.breakdown.recall)
    assert 0 < state.recall_allowed == room < 500 < state.recall_floor
    assert state.breakdown.recall == room
    assert state.fits and state.used == math.floor(9_000 * 0.95)


def test_a_request_that_fits_only_without_recall_goes_without_it() -> None:
    model = tiny_model(2_000, 200)  # 1,800 usable
    tail = [message(1, Role.USER, "big question", estimate=1_500)]
    recall = recall_block(tokens_of_filler=400)
    assert recall.tokens > 300

    built = ContextBuilder().build_request(RequestInputs(model=model, tail=tail), recall=recall)

    assert built.system == ""
    assert built.state.breakdown.recall == 0
    assert built.state.fits


def test_an_exact_count_over_the_limit_drops_recall_first() -> None:
    model = tiny_model(10_000, 1_000)  # 9,000 usable
    answers = iter([9_200, 8_900])  # with recall it would not fit; without, it does

    def exact(built: BuiltRequest) -> int:
        return next(answers)

    built = ContextBuilder().build_request(
        RequestInputs(model=model, tail=near_limit_tail(8_700)),
        exact_count=exact,
        recall=recall_block(50),
    )

    assert built.exact_input_tokens == 8_900
    assert built.state.breakdown.recall == 0
    assert isinstance(built.system, str)


def test_recall_never_makes_a_refusal_of_its_own() -> None:
    model = tiny_model(2_000, 200)
    tail = [message(1, Role.USER, "big question", estimate=1_900)]
    with pytest.raises(MessageTooLargeError) as refused:
        ContextBuilder().build_request(RequestInputs(model=model, tail=tail), recall=recall_block())
    with pytest.raises(MessageTooLargeError) as plain:
        ContextBuilder().build_request(RequestInputs(model=model, tail=tail))
    assert refused.value.message == plain.value.message  # the same words, recall or not


def test_the_exact_count_is_shared_out_to_recall_too() -> None:
    model = tiny_model(10_000, 1_000)
    recall = recall_block(20)
    built = ContextBuilder().build_request(
        RequestInputs(model=model, tail=near_limit_tail(8_600)),
        exact_count=ExactCounter(8_800),
        recall=recall,
    )
    parts = built.state.breakdown
    assert parts.recall > 0
    assert parts.system + parts.memory + parts.history + parts.draft + parts.recall == 8_800


# --- the archive tool (issue 12): counted in the request, inside invariant 3 --------------

TOOL = ToolOffer((tool_definition(across_conversations=False),), room_needed=400)


def tool_tokens() -> int:
    return COUNTER.count(TOOL.text) + TOOL_SYSTEM_PROMPT_TOKENS


def test_an_offered_tool_is_sent_and_counted_in_the_gauge_and_the_request() -> None:
    builder = ContextBuilder()
    without = builder.build_request(RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?"))
    built = builder.build_request(
        RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?", tools=TOOL)
    )
    gauge = builder.estimate_state(
        RequestInputs(model=SONNET, summaries=SUMMARIES, draft="Gate?", tools=TOOL)
    )

    assert built.tools == TOOL.definitions and without.tools == ()
    assert built.state.breakdown.tools == tool_tokens() > TOOL_SYSTEM_PROMPT_TOKENS
    assert built.state.used == without.state.used + tool_tokens()
    assert built.raw_input_tokens == without.raw_input_tokens + tool_tokens()
    assert gauge == built.state, "the gauge counts the tool exactly as it is sent"
    assert gauge.required == without.state


def test_a_tool_without_room_for_its_answer_is_not_offered_nor_counted() -> None:
    model = tiny_model(2_000, 200)  # 1,800 usable
    used = ContextBuilder().estimate_state(RequestInputs(model=model, draft="Gate?")).used
    # Room for the definition and the tool prompt, not for the turns it needs as well.
    tight = ToolOffer(TOOL.definitions, room_needed=1_800 - used - tool_tokens() + 1)
    built = ContextBuilder().build_request(RequestInputs(model=model, draft="Gate?", tools=tight))
    gauge = ContextBuilder().estimate_state(RequestInputs(model=model, draft="Gate?", tools=tight))
    assert built.tools == () and built.state.breakdown.tools == 0
    assert gauge.breakdown.tools == 0
    roomy = ToolOffer(TOOL.definitions, room_needed=tight.room_needed - 1)
    assert (
        ContextBuilder().build_request(RequestInputs(model=model, draft="Gate?", tools=roomy)).tools
    )


def test_an_exact_count_over_the_limit_drops_recall_then_the_tool() -> None:
    model = tiny_model(10_000, 1_000)  # 9,000 usable
    asked: list[BuiltRequest] = []
    answers = iter([9_300, 9_100, 8_900])  # with both, with the tool: too much; bare: fits
    # A small tool, so that the request with it still fits by the estimate, bare is near.
    small = ToolOffer(({"name": "x", "input_schema": {"type": "object"}},))

    def exact(built: BuiltRequest) -> int:
        asked.append(built)
        return next(answers)

    built = ContextBuilder().build_request(
        RequestInputs(model=model, tail=near_limit_tail(8_560), tools=small),
        exact_count=exact,
        recall=recall_block(),
    )

    assert [(b.raw_recall_tokens > 0, bool(b.tools)) for b in asked] == [
        (True, True),
        (False, True),
        (False, False),
    ]
    assert built.exact_input_tokens == 8_900 and built.tools == ()
    assert built.state.breakdown.tools == built.state.breakdown.recall == 0


def test_the_tool_never_makes_a_refusal_of_its_own() -> None:
    model = tiny_model(2_000, 200)
    tail = [message(1, Role.USER, "big question", estimate=1_900)]
    with pytest.raises(MessageTooLargeError) as refused:
        ContextBuilder().build_request(
            RequestInputs(model=model, tail=tail, tools=TOOL), recall=recall_block()
        )
    with pytest.raises(MessageTooLargeError) as plain:
        ContextBuilder().build_request(RequestInputs(model=model, tail=tail))
    assert refused.value.message == plain.value.message


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tail=conversations(),
    draft=CONTENT,
    window=st.integers(min_value=600, max_value=40_000),
    output_share=st.floats(min_value=0.01, max_value=0.45),
    ratio=st.sampled_from([None, 0.8, 1.3]),
    filler=st.integers(min_value=0, max_value=3_000),
    room_needed=st.integers(min_value=0, max_value=2_000),
    quoted=st.integers(min_value=0, max_value=5_000),
)
def test_with_recall_and_the_tool_the_request_still_never_exceeds_the_window(
    tail: list[Message],
    draft: str,
    window: int,
    output_share: float,
    ratio: float | None,
    filler: int,
    room_needed: int,
    quoted: int,
) -> None:
    """Invariant 3 with the optional parts: they fit with the room the tool needs, or
    they are left out; they never turn a request that fits into a refusal."""
    model = tiny_model(window, max(1, int(window * output_share)))
    calibrations = Calibrations(
        {model.id: Calibration(ratio=ratio, weight=1.0, samples=1)} if ratio else {}
    )
    builder = ContextBuilder(calibrations=calibrations)
    offer = ToolOffer(TOOL.definitions, room_needed=room_needed)
    recall = recall_block(filler)

    bare = build_or_refusal(builder, model, tail, draft, "Be brief.")
    try:
        built = builder.build_request(
            RequestInputs(
                model=model, system_prompt="Be brief.", tail=tail, draft=draft, tools=offer
            ),
            recall=recall,
        )
    except (ContextOverflowError, InvalidInputError) as error:
        assert isinstance(bare, Exception) and str(bare) == str(error)
        return
    assert isinstance(bare, BuiltRequest)
    state = built.state
    assert state.used + built.max_tokens <= window
    parts = state.breakdown
    assert (parts.tools > 0) == bool(built.tools)
    if built.tools:
        room = state.usable - state.used
        assert room >= calibrations.for_model(model.id).apply(room_needed)
    assert (parts.recall > 0) == (built.raw_recall_tokens > 0)
    assert state.required == bare.state
    # The gauge's estimate of the same request, its quotes as the last request's.
    gauge = builder.estimate_state(
        RequestInputs(
            model=model,
            system_prompt="Be brief.",
            tail=tail,
            draft=draft,
            tools=offer,
            summaries=(),
        ),
        recall_budget_ratio=0.05,
        recall_quoted=quoted,
    )
    assert gauge.breakdown.tools == parts.tools
    assert gauge.fits
