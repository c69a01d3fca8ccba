"""The words and figures of the gauge: its text, its band and its tooltip.

The gauge only presents a `ContextState`; everything it says is decided here.
Plain words first, figures on request (issue 23): the label and the tooltip's
headline say how full in words; token counts appear only under the tooltip's
"Details" heading. Pure Python (no Qt), so it is tested on its own.
"""

from __future__ import annotations

import html
from enum import Enum
from typing import TYPE_CHECKING, Final

from app.core.pricing import PriceTable, bundled_prices, format_cost
from app.core.token_words import format_token_count, say_token_pair

if TYPE_CHECKING:
    from app.core.caching import CacheUse
    from app.core.context import ContextState

NO_STATE_TEXT: Final = ""
# What the gauge measures, in the words of someone who never heard of tokens.
GAUGE_NAME: Final = "How full the conversation is"
FIRST_EXPLANATION: Final = (
    "Claude rereads the whole conversation each time you send, and can read only so "
    "much at once. When it gets long, Cairn summarizes the oldest messages so the "
    "conversation can go on; nothing is deleted."
)
# Where figures may use the words "tokens" and "context": below this heading only.
DETAILS_HEADING: Final = "Details"
SEPARATOR: Final = " · "

# Below trigger_ratio by this much, the gauge warns that a summary is coming.
APPROACH_MARGIN: Final = 0.1
# Ratios are quotients of integers; 0.8 - 0.1 is 0.7000000000000001 in floats,
# so a boundary reached exactly must not be missed by a rounding error.
_EPSILON: Final = 1e-9


class Band(Enum):
    """How full the conversation is; each band has words, so colour is never the only signal."""

    OK = "Plenty of room"
    APPROACHING = "Getting long"
    SUMMARY_DUE = "Summarizing soon"
    FULL = "Full"

    @property
    def word(self) -> str:
        return self.value


def format_tokens(n: int) -> str:
    """A token count the way people say it: 950, 1.2k, 68k, 1.2M (half rounds up).

    The same formatter as the "too long to send" messages (`format_token_count`).
    """
    return format_token_count(n)


def format_percent(ratio: float) -> str:
    """A share as "34 %", rounded down: 100 % is only ever said when it is full."""
    return f"{max(0, int(ratio * 100 + _EPSILON))} %"


def band(state: ContextState) -> Band:
    """OK, then APPROACHING within 10 points of the trigger, SUMMARY_DUE from it, FULL at 100 %."""
    if _LAST_BAND and _LAST_BAND[0][0] is state:  # frozen figures: the same band
        return _LAST_BAND[0][1]
    found = _band(state)
    _LAST_BAND[:] = [(state, found)]
    return found


# The last figures asked about, and their band: the gauge's words, its spoken description,
# its colour at each paint and its breakdown all ask for the same figures' band (issue 20).
_LAST_BAND: list[tuple[ContextState, Band]] = []


def _band(state: ContextState) -> Band:
    ratio = state.ratio
    if not state.fits or ratio >= 1.0 - _EPSILON:
        return Band.FULL
    if ratio >= state.trigger_ratio - _EPSILON:
        return Band.SUMMARY_DUE
    if ratio >= state.trigger_ratio - APPROACH_MARGIN - _EPSILON:
        return Band.APPROACHING
    return Band.OK


def gauge_text(state: ContextState | None) -> str:
    """The gauge's visible text: the band's words ("Plenty of room"); nothing before
    there is a conversation. The figures are in the tooltip's Details."""
    if state is None:
        return NO_STATE_TEXT
    return band(state).word


def used_of_usable(state: ContextState) -> str:
    """ "68k of 192k": the one pair of figures the label, the tooltip and the
    "too long to send" message all say (exact when briefly both read the same)."""
    used, usable = say_token_pair(state.used, state.usable)
    return f"{used} of {usable}"


def widest_texts() -> tuple[str, ...]:
    """The texts the gauge shows; its width is kept for the widest, so it never jumps."""
    return tuple(member.word for member in Band)


def trigger_text(state: ContextState) -> str:
    return (
        f"Cairn summarizes older messages automatically at {format_percent(state.trigger_ratio)}."
    )


def band_explanation(state: ContextState) -> str:
    """One sentence on what the band means for the user."""
    current = band(state)
    if current is Band.FULL:
        return (
            "The next message would not fit. Cairn summarizes older messages before "
            "sending it; nothing is deleted."
        )
    if current is Band.SUMMARY_DUE:
        return "Cairn will summarize older messages soon to make room; nothing is deleted."
    if current is Band.APPROACHING:
        return "Cairn will summarize older messages when it is nearly full."
    return "There is plenty of room for this conversation."


def notes(state: ContextState) -> list[str]:
    """What the user should know about how far the figures can be trusted."""
    lines: list[str] = []
    if not state.model_known:
        lines.append(
            f"This model's limits are unknown; Cairn assumes {format_tokens(state.context_window)}."
        )
    if state.estimate_flagged:
        lines.append("Rough estimate: the tokenizer could not be loaded.")
    if state.counted_exactly:
        lines.append("Counted exactly by Claude's servers.")
    elif state.calibrated:
        lines.append("Counts are corrected with the figures Claude reported.")
    else:
        # Replies to very short requests teach nothing (calibration.MIN_SAMPLE_TOKENS).
        lines.append("Counts are estimates until Claude has answered a longer message.")
    return lines


def recall_notes(state: ContextState) -> list[str]:
    """What the figures count of the archive: the quotes recall adds to a message, and
    Claude's search tool (issue 12). Quotes are counted, not reserved: as much as the last
    message had, since what the next one gets depends on what it says."""
    parts = state.breakdown
    lines: list[str] = []
    if parts.recall or state.recall_allowed:
        had = f"{format_tokens(parts.recall)} tokens" if parts.recall else "none"
        lines.append(
            f"Quotes from the archive are counted as much as your last message had: {had}."
        )
    if state.recall_allowed:
        lines.append(
            "Your next message gets the earlier messages that match it, up to "
            f"{format_tokens(state.recall_allowed)} tokens, and only if there is room: "
            "they never stop a message from being sent."
        )
    if parts.tools:
        lines.append(
            f"Letting Claude search the archive takes {format_tokens(parts.tools)} tokens "
            "with every message."
        )
    return lines


def files_note(state: ContextState) -> str:
    """Which earlier files the next message does not re-send, in plain words ("" when
    every file goes): the API's limits hold for all of a message's files together."""
    names = [file.name for file in state.files_left_out]
    if not names:
        return ""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    which = "this earlier file" if len(names) == 1 else f"these {len(names)} earlier files"
    return (
        f"Not re-sent: {which} ({shown}). Together with the newer files they came to more "
        "than Claude takes in one message, so Claude now gets their names instead."
    )


def accessible_description(state: ContextState | None) -> str:
    """What a screen reader says: the band's words and what they mean, then the share."""
    if state is None:
        return "Nothing yet: the conversation starts with your first message."
    current = band(state)
    if current is Band.FULL:
        figures = "the next message would not fit."
    else:
        figures = f"{format_percent(state.ratio)} used."
    files = files_note(state)
    said = f"{current.word}: {figures} {band_explanation(state)}"
    return said + (f" {files}" if files else "")


def usage_rows(use: CacheUse | None) -> list[tuple[str, str]]:
    """What the conversation's replies used, as (label, figure) rows; none before any
    reply reported its figures."""
    if use is None or use.total <= 0:
        return []
    return [
        ("Sent to Claude", f"{use.total:,} tokens"),
        # Read back from the prompt cache, at a tenth of the price (caching.py).
        (
            "of which read again at a tenth of the price",
            f"{use.read:,} ({format_percent(use.read_share)})",
        ),
        ("Written by Claude", f"{use.output:,} tokens"),
        ("Estimated cost", cost_text(use)),
    ]


def cost_text(use: CacheUse) -> str:
    """The estimated cost, said as one; "no price known" when no reply has a price."""
    if use.unpriced and use.cost <= 0:
        return "no price known"
    said = f"about {format_cost(use.cost)} (estimate)"
    return f"{said}, some replies have no price known" if use.unpriced else said


def prices_note(prices: PriceTable | None = None) -> str:
    """Where the prices come from, and who bills for them."""
    table = prices if prices is not None else bundled_prices()
    dated = f" as of {table.checked}" if table.checked else ""
    return (
        f"Cost is estimated from Anthropic's list prices{dated}; Anthropic bills API use "
        "separately from any Claude subscription."
    )


# A grey rule reads in the light and the dark tooltip alike.
_RULE_ABOVE: Final = "border-top: 1px solid #8a8a94; padding-top: 2px;"


def _row(label: str, figure: str, style: str = "") -> str:
    return (
        f"<tr><td style='{style}'>{label}</td>"
        f"<td align='right' style='padding-left: 18px; {style}'>{figure}</td></tr>"
    )


def tooltip_html(
    state: ContextState | None, cache_use: CacheUse | None = None, *, first_time: bool = False
) -> str:
    """The hover text: the band's words and what they mean, what the conversation cost,
    then under "Details" the figures — where the tokens go, what was reused from
    Claude's cache — and notes. `first_time` leads with what the gauge measures."""
    explanation = f"<p style='margin-bottom: 4px'>{FIRST_EXPLANATION}</p>" if first_time else ""
    if state is None:
        return f"{explanation}<p>How full the conversation is will show here once it starts.</p>"
    current = band(state)
    parts = state.breakdown
    used = usage_rows(cache_use)
    cost = (
        f"<br/>So far this conversation cost {cost_text(cache_use)}."
        if used and cache_use is not None
        else ""
    )
    files = files_note(state)
    files_paragraph = f"<p style='margin-top: 6px'>{html.escape(files)}</p>" if files else ""
    plain = (
        f"{explanation}<p style='margin-bottom: 4px'><b>{current.word}</b><br/>"
        f"{band_explanation(state)}{cost}</p>{files_paragraph}"
    )
    rows = [("Instructions", parts.system)]
    if parts.tools:
        rows.append(("Archive search for Claude", parts.tools))
    rows.append(("Summaries (earlier messages)", parts.memory))
    if parts.recall or state.recall_allowed:  # counted as much as the last message had
        rows.append(("Quoted from the archive", parts.recall))
    rows += [("Recent messages", parts.history), ("Your draft", parts.draft)]
    cells = "".join(_row(label, format_tokens(value)) for label, value in rows)
    # The next request against what Claude can read, with the share it makes.
    total = f"<b>{used_of_usable(state)}</b> ({format_percent(state.ratio)})"
    cells += _row("<b>Total</b>", total, style=_RULE_ABOVE)
    room = (
        f"Claude can read {format_tokens(state.usable)} tokens at once; "
        f"{format_tokens(parts.reserved_output)} more are kept for its reply. "
        "A token is a piece of a word (about ¾ of a word)."
    )
    if used:  # in the same table, so that the figures line up
        cells += (
            "<tr><td colspan='2' style='padding-top: 8px'>"
            "<b>Used so far in this conversation</b></td></tr>"
        )
        cells += "".join(_row(label, figure) for label, figure in used)
    explained = "<br/>".join((trigger_text(state), room, *([prices_note()] if used else [])))
    noted = "<br/>".join(notes(state) + recall_notes(state))
    return (
        f"{plain}<p style='margin-top: 8px; margin-bottom: 2px'><b>{DETAILS_HEADING}</b></p>"
        "<table cellspacing='0' cellpadding='1' style='border-collapse: collapse'>"
        f"{cells}</table>"
        f"<p style='margin-top: 6px; margin-bottom: 0'>{explained}</p>"
        f"<p style='margin-top: 6px'><i>{noted}</i></p>"
    )
