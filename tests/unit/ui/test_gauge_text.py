"""The gauge's words and figures: token counts, bands, the text and the tooltip."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.caching import CacheUse
from app.core.catalog import ModelInfo
from app.core.context import ContextBreakdown, ContextBuilder, ContextState, RequestInputs
from app.core.errors import ContextOverflowError, MessageTooLargeError
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Role
from app.ui.gauge_text import (
    DETAILS_HEADING,
    FIRST_EXPLANATION,
    Band,
    accessible_description,
    band,
    cost_text,
    format_percent,
    format_tokens,
    gauge_text,
    tooltip_html,
    usage_rows,
    used_of_usable,
)

# 200k window, 8k kept for the reply: 192k usable.
WINDOW = 200_000
RESERVED = 8_000
USABLE = WINDOW - RESERVED


def make_state(
    used: int,
    *,
    window: int = WINDOW,
    reserved: int = RESERVED,
    trigger_ratio: float = 0.8,
    model_known: bool = True,
    estimate_flagged: bool = False,
    calibrated: bool = False,
) -> ContextState:
    """A state whose request uses `used` tokens, all of them recent messages."""
    return ContextState(
        breakdown=ContextBreakdown(history=used, reserved_output=reserved),
        context_window=window,
        trigger_ratio=trigger_ratio,
        model_known=model_known,
        estimate_flagged=estimate_flagged,
        calibrated=calibrated,
    )


@pytest.mark.parametrize(
    ("tokens", "shown"),
    [
        (0, "0"),
        (950, "950"),
        (999, "999"),
        (1_000, "1k"),
        (1_049, "1k"),
        (1_050, "1.1k"),
        (1_200, "1.2k"),
        (9_949, "9.9k"),
        (9_950, "10k"),
        (68_000, "68k"),
        (68_499, "68k"),
        (68_500, "69k"),
        (999_499, "999k"),
        (999_500, "1M"),
        (1_200_000, "1.2M"),
        (9_950_000, "10M"),
        (12_345_678, "12M"),
        (-1_500, "-1.5k"),
    ],
)
def test_format_tokens(tokens: int, shown: str) -> None:
    assert format_tokens(tokens) == shown


@given(st.integers(min_value=0, max_value=10**10))
def test_format_tokens_is_short(tokens: int) -> None:
    assert len(format_tokens(tokens)) <= 6


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(0.0, "0 %"), (0.34, "34 %"), (0.57, "57 %"), (0.7999, "79 %"), (0.8, "80 %"), (1.0, "100 %")],
)
def test_format_percent_rounds_down(ratio: float, shown: str) -> None:
    assert format_percent(ratio) == shown


def test_gauge_text_says_how_full_in_words() -> None:
    assert gauge_text(make_state(65_280)) == "Plenty of room"
    assert gauge_text(make_state(140_000)) == "Getting long"
    assert gauge_text(make_state(160_000)) == "Summarizing soon"


def test_gauge_text_says_full_when_over_the_limit() -> None:
    assert gauge_text(make_state(205_000)) == "Full"
    assert gauge_text(make_state(USABLE)) == "Full"


def test_gauge_text_without_a_state_says_nothing() -> None:
    assert gauge_text(None) == ""


def test_tooltip_keeps_figures_under_details() -> None:
    """Plain words first: "token" only after the Details heading."""
    tip = tooltip_html(make_state(65_280), first_time=True)
    plain, details = tip.split(f"<b>{DETAILS_HEADING}</b>")
    assert "token" not in plain.lower()
    assert "Plenty of room" in plain
    assert "<b>65k of 192k</b> (34 %)" in details
    assert "tokens at once" in details


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        (0, Band.OK),
        (134_399, Band.OK),  # just below 70 %
        (134_400, Band.APPROACHING),  # exactly 70 % = trigger - 0.1
        (153_599, Band.APPROACHING),  # just below the trigger
        (153_600, Band.SUMMARY_DUE),  # exactly the trigger, 80 %
        (191_999, Band.SUMMARY_DUE),
        (USABLE, Band.FULL),  # 100 %: nothing left for the next message
        (USABLE + 1, Band.FULL),  # does not fit
    ],
)
def test_band_boundaries(used: int, expected: Band) -> None:
    assert band(make_state(used)) is expected


def test_band_follows_the_trigger_ratio() -> None:
    assert band(make_state(96_000, trigger_ratio=0.5)) is Band.SUMMARY_DUE  # 50 %
    assert band(make_state(76_800, trigger_ratio=0.5)) is Band.APPROACHING  # 40 %
    assert band(make_state(76_799, trigger_ratio=0.5)) is Band.OK


def test_band_is_full_when_the_request_does_not_fit() -> None:
    state = make_state(2, window=1, reserved=5)  # usable is clamped to 1
    assert not state.fits
    assert band(state) is Band.FULL


@given(
    st.integers(min_value=0, max_value=400_000),
    st.integers(min_value=0, max_value=400_000),
    st.floats(min_value=0.3, max_value=0.95),
)
def test_band_never_goes_down_as_usage_grows(first: int, second: int, trigger: float) -> None:
    low, high = sorted((first, second))
    order = list(Band)
    lower = band(make_state(low, trigger_ratio=trigger))
    higher = band(make_state(high, trigger_ratio=trigger))
    assert order.index(lower) <= order.index(higher)


def test_every_band_has_a_distinct_word() -> None:
    words = [member.word for member in Band]
    assert all(words)
    assert len(set(words)) == len(words)


def test_tooltip_shows_where_the_tokens_go() -> None:
    state = ContextState(
        breakdown=ContextBreakdown(
            system=1_200, memory=3_400, history=60_000, draft=150, reserved_output=8_000
        ),
        context_window=WINDOW,
    )
    html = tooltip_html(state)
    for label, figure in [
        ("Instructions", "1.2k"),
        ("Summaries (earlier messages)", "3.4k"),
        ("Recent messages", "60k"),
        ("Your draft", "150"),
        ("Total", "65k of 192k"),  # the label's figures: in use, of what Claude can read
        ("8k more are kept for its reply", ""),
    ]:
        assert label in html
        assert figure in html
    assert "<b>Plenty of room</b>" in html
    assert "<b>65k of 192k</b> (33 %)" in html
    assert "Cairn summarizes older messages automatically at 80 %." in html
    assert "Counts are estimates until Claude has answered a longer message." in html
    assert "limits are unknown" not in html
    assert "Rough estimate" not in html


def test_tooltip_headline_carries_the_band_word() -> None:
    assert "<b>Getting long</b>" in tooltip_html(make_state(138_240))
    assert "<b>Summarizing soon</b>" in tooltip_html(make_state(163_200))
    full = tooltip_html(make_state(205_000))
    assert "<b>Full</b><br/>The next message would not fit." in full


def test_tooltip_notes_an_unknown_model() -> None:
    html = tooltip_html(make_state(1_000, model_known=False))
    assert "This model's limits are unknown; Cairn assumes 200k." in html


def test_tooltip_notes_a_rough_estimate() -> None:
    html = tooltip_html(make_state(1_000, estimate_flagged=True))
    assert "Rough estimate: the tokenizer could not be loaded." in html


def test_tooltip_says_when_counts_are_calibrated() -> None:
    html = tooltip_html(make_state(1_000, calibrated=True))
    assert "Counts are corrected with the figures Claude reported." in html
    assert "estimates until" not in html


def test_tooltip_follows_the_trigger_ratio() -> None:
    html = tooltip_html(make_state(1_000, trigger_ratio=0.65))
    assert "automatically at 65 %" in html


def test_tooltip_without_a_state() -> None:
    assert "once it starts" in tooltip_html(None)


def test_accessible_description_has_the_word_and_the_figures() -> None:
    description = accessible_description(make_state(138_240))
    assert description.startswith("Getting long: 72 % used. Cairn will summarize")
    assert "token" not in description
    full = accessible_description(make_state(205_000))
    assert full.startswith("Full: the next message would not fit.")
    assert accessible_description(None).startswith("Nothing yet")


def test_tooltip_says_when_the_server_counted_exactly() -> None:
    state = ContextState(
        breakdown=ContextBreakdown(history=190_000, reserved_output=RESERVED),
        context_window=WINDOW,
        calibrated=True,
        counted_exactly=True,
    )
    html = tooltip_html(state)
    assert "Counted exactly by Claude's servers." in html
    assert "estimate" not in html.lower()


# --- one set of numbers: the label, the tooltip and the "too long to send" message ------


# No deadline: tests never assert on wall-clock time (a loaded machine took 500 ms).
@settings(deadline=None)
@given(
    st.integers(min_value=0, max_value=120),
    st.integers(min_value=1, max_value=3_000),
    st.sampled_from([2_500, 3_000, 4_000, 20_000]),
)
# A first message that fits alone but not with the request's framing, and no instructions:
# the words once blamed the instructions ("about 4 tokens") instead of giving the totals.
@example(messages=0, draft_words=1_983, window=2_500)
def test_label_tooltip_and_too_long_message_say_the_same_totals(
    messages: int, draft_words: int, window: int
) -> None:
    builder = ContextBuilder()
    model = ModelInfo(id="tiny", display_name="Tiny", max_input_tokens=window, max_tokens=500)
    tail = [
        TailEntry(
            id=n + 1,
            seq=n + 1,
            role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
            tokens=builder.counter.count(f"message {n} " + "word " * 20),
            sendable=True,
        )
        for n in range(messages)
    ]
    tally = LiveTail(tail).tally
    draft = "price " * draft_words
    state = builder.estimate_state(
        RequestInputs(model=model, tail_tally=tally, draft=draft, trigger_ratio=0.8)
    )
    pair = used_of_usable(state)
    assert f"<b>{pair}</b>" in tooltip_html(state)
    try:
        builder.check_fits(RequestInputs(model=model, tail_tally=tally, draft=draft))
    except (ContextOverflowError, MessageTooLargeError) as error:
        if not isinstance(error, MessageTooLargeError):
            used, usable = pair.split(" of ")
            assert f"about {used} tokens" in str(error)
            assert f"at most {usable} at once" in str(error)
        assert band(state) is Band.FULL
    else:
        assert state.fits


def test_the_reported_mismatch_is_gone() -> None:
    """The issue saw "607 of 2.5k" beside a tooltip total of "1.1k of 3k"."""
    state = ContextState(
        breakdown=ContextBreakdown(system=7, history=600, reserved_output=500),
        context_window=3_000,
    )
    assert "<b>607 of 2.5k</b>" in tooltip_html(state)
    assert "1.1k of 3k" not in tooltip_html(state)


def test_tooltip_says_what_was_reused_from_claudes_cache() -> None:
    use = CacheUse(read=12_400, written=1_500, total=14_000)

    html = tooltip_html(make_state(1_000), use)

    assert "of which read again at a tenth of the price" in html
    assert "12,400 (88 %)" in html


def test_before_any_reply_nothing_is_said_about_the_cache() -> None:
    assert "a tenth of the price" not in tooltip_html(make_state(1_000), None)
    assert "a tenth of the price" not in tooltip_html(make_state(1_000), CacheUse())


# --- recall's share (issue 12)


def test_the_gauge_counts_what_the_last_message_quoted_and_says_so() -> None:
    breakdown = ContextBreakdown(
        system=10, memory=900, history=5_000, recall=1_200, reserved_output=RESERVED
    )
    state = ContextState(breakdown=breakdown, context_window=WINDOW, recall_allowed=9_600)
    html = tooltip_html(state)
    assert "Quoted from the archive" in html and "1.2k" in html
    assert html.index("Summaries") < html.index("Quoted from the archive") < html.index("Recent")
    assert "are counted as much as your last message had: 1.2k tokens." in html
    assert "up to 9.6k tokens, and only if there is room" in html
    assert "not counted" not in html
    assert state.used == 10 + 900 + 5_000 + 1_200
    assert "7.1k of 192k" in html


def test_before_anything_was_quoted_the_gauge_says_it_counts_none() -> None:
    with_summaries = ContextState(
        breakdown=ContextBreakdown(memory=900, history=5_000, reserved_output=RESERVED),
        context_window=WINDOW,
        recall_allowed=9_600,
    )
    html = tooltip_html(with_summaries)
    assert "Quoted from the archive" in html, "the row is there, at 0"
    assert "are counted as much as your last message had: none." in html
    assert "up to 9.6k" in html
    plain = ContextState(
        breakdown=ContextBreakdown(history=5_000, reserved_output=RESERVED), context_window=WINDOW
    )
    assert "archive" not in tooltip_html(plain)


def test_the_archive_tool_has_its_own_row() -> None:
    breakdown = ContextBreakdown(
        system=10, tools=480, memory=900, history=5_000, reserved_output=RESERVED
    )
    state = ContextState(breakdown=breakdown, context_window=WINDOW)
    html = tooltip_html(state)
    assert (
        html.index("Instructions")
        < html.index("Archive search for Claude")
        < html.index("Summaries")
    )
    assert "search the archive takes 480 tokens with every message" in html
    assert state.used == 10 + 480 + 900 + 5_000


# --- what the conversation used and cost (issue 11, item 6)


def test_the_breakdown_says_what_the_conversation_used_and_what_it_cost() -> None:
    use = CacheUse(read=12_400, written=1_500, total=14_000, output=2_100, cost=52_300_000)

    html = tooltip_html(make_state(1_000), use)

    assert "Used so far in this conversation" in html
    for label, figure in usage_rows(use):
        assert label in html
        assert figure in html
    assert "about $0.05 (estimate)" in html
    assert "separately from any Claude subscription" in html


def test_a_model_without_a_price_says_so_instead_of_a_figure() -> None:
    assert cost_text(CacheUse(total=100, output=10, unpriced=("claude-small",))) == (
        "no price known"
    )
    mixed = CacheUse(total=100, output=10, cost=4_200_000, unpriced=("claude-small",))
    assert cost_text(mixed) == "about $0.0042 (estimate), some replies have no price known"


def test_before_any_reply_nothing_is_said_about_use_or_cost() -> None:
    assert usage_rows(None) == []
    assert "Used so far" not in tooltip_html(make_state(1_000), CacheUse())


def test_the_gauge_speaks_of_how_much_claude_can_read_at_once() -> None:
    html = tooltip_html(make_state(1_000))
    assert "Claude can read 192k tokens at once" in html
    assert FIRST_EXPLANATION not in html
    assert FIRST_EXPLANATION in tooltip_html(make_state(1_000), first_time=True)
    assert FIRST_EXPLANATION in tooltip_html(None, first_time=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2 * WINDOW), min_size=1, max_size=8), st.data())
def test_the_band_kept_for_the_last_figures_is_the_band_worked_out_afresh(
    used: list[int], data: st.DataObject
) -> None:
    """`band` keeps its answer for the figures last asked about (the words, the spoken
    description, each paint ask for the same, issue 20): asked in any order, about new
    figures or again about earlier ones, it says what working it out afresh says."""
    from app.ui.gauge_text import _band

    states = [make_state(tokens) for tokens in used]
    for _ in range(3 * len(states)):
        state = data.draw(st.sampled_from(states))
        assert band(state) is _band(state)
