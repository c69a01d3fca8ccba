"""The transcript a summarizer model reads, within its token budget (DESIGN §6).

Messages and older summaries become blocks (a header with number, author and time,
then the redacted text). The newest blocks that fit `transcript_budget_tokens` are
shown; a block too large for what is left is cut (head and tail kept) rather than
split into several calls, and everything older is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo

from app.core.attachments import split_attachment_line
from app.core.dates import stamp
from app.core.models import Message
from app.core.redaction import redact_secrets
from app.core.summary import Summary
from app.core.tokens import TokenCounter

# A message is shown cut (head and tail) only when at least this much budget is left for it.
MIN_CUT_TOKENS = 256


@dataclass(frozen=True)
class Block:
    """One item of the transcript: a message or an older summary."""

    header: str
    content: str
    tokens: int  # of the content (an estimate is fine: the budget is a soft cap)
    label: str  # how a note names it ("Message #12")


@dataclass(frozen=True)
class Transcript:
    """The text the model reads, and what of the blocks it does not show in full."""

    text: str
    left_out: int  # the oldest blocks, not shown
    cut: tuple[int, ...]  # indexes of the blocks shown only in part


class TranscriptBuilder:
    """Turns messages and summaries into blocks and blocks into a transcript.

    Keeps no state between calls beyond its settings.
    """

    def __init__(self, counter: TokenCounter, budget_tokens: int, tz: tzinfo | None) -> None:
        """`budget_tokens` is the transcript's cap (at least 1); `tz` the time zone
        times are shown in (None: the machine's own)."""
        self._counter = counter
        self._budget = max(1, budget_tokens)
        self._tz = tz

    def message_block(self, message: Message) -> Block:
        content = redact_secrets(message.content)
        when = self.when(message.created_at)
        return Block(
            header=f"[#{message.seq} · {message.role.value} · {when}]",
            content=content,
            # A message's estimate counts its attached files; the transcript has only its
            # text, which names them ("[attached: a.pdf]").
            tokens=(
                self._counter.count_message(content)
                if split_attachment_line(message.content)[1]
                else self.message_tokens(message)
            ),
            label=f"Message #{message.seq}",
        )

    def summary_block(self, summary: Summary) -> Block:
        text = redact_secrets(summary.text())
        return Block(
            header=f"[Summary of messages #{summary.first_seq}–#{summary.last_seq}]",
            content=text,
            tokens=summary.summary_tokens or self._counter.count(text),
            label=f"The summary of messages #{summary.first_seq}–#{summary.last_seq}",
        )

    def build(self, blocks: Sequence[Block]) -> Transcript:
        """The newest blocks that fit the budget; a block too large for what is left is
        cut (head and tail kept) when enough is left, and everything older is left out."""
        budget = self._budget
        used = 0
        shown: list[str] = []
        cut: list[int] = []
        first_shown = len(blocks)
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            header_tokens = self._counter.count(block.header) + 2
            cost = header_tokens + block.tokens
            if used + cost <= budget:
                shown.append(f"{block.header}\n{block.content}")
                used += cost
                first_shown = index
                continue
            room = budget - used - header_tokens
            if room >= MIN_CUT_TOKENS or not shown:
                content = head_and_tail(block.content, max(room, 32), self._counter)
                if content != block.content:
                    cut.append(index)
                shown.append(f"{block.header}\n{content}")
                first_shown = index
            break
        shown.reverse()
        if first_shown:
            shown.insert(0, f"(The {first_shown} oldest items are not shown here.)")
        return Transcript("\n\n".join(shown), first_shown, tuple(sorted(cut)))

    def when(self, moment: datetime) -> str:
        """ "2026-03-05 14:05" (app.core.dates.stamp), in the transcript's zone."""
        if moment.tzinfo is not None:
            moment = moment.astimezone(self._tz).replace(tzinfo=None)
        return stamp(moment)

    def day(self, moment: datetime) -> date:
        """The calendar day of `moment` as the transcript shows it (a point's date)."""
        if moment.tzinfo is not None:
            moment = moment.astimezone(self._tz)
        return moment.date()

    def message_tokens(self, message: Message) -> int:
        if message.token_estimate is not None:
            return message.token_estimate
        return self._counter.count_message(message.content)


def cut_detail(transcript: Transcript) -> str | None:
    """For the log: how much of the transcript was capped (None: nothing was)."""
    if not transcript.left_out and not transcript.cut:
        return None
    return f"transcript capped: {transcript.left_out} left out, {len(transcript.cut)} cut"


def head_and_tail(text: str, tokens: int, counter: TokenCounter) -> str:
    """`text` within about `tokens`: its head and tail, the middle replaced by a marker."""
    total = counter.count(text)
    if total <= tokens:
        return text
    keep = max(16, tokens - 24)  # room for the marker
    characters = max(2, int(len(text) * keep / total))
    while True:
        head = text[: characters // 2]
        tail = text[len(text) - (characters - characters // 2) :]
        if counter.count(head) + counter.count(tail) <= keep or characters <= 2:
            break
        characters = int(characters * 0.85)
    left_out = total - counter.count(head) - counter.count(tail)
    marker = f"\n[… about {left_out:,} tokens of this message are left out here …]\n"
    return head + marker + tail
