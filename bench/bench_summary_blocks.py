"""Summary cards in the transcript: unfolding 500 originals, opening 50 cards.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_summary_blocks.py [--runs 5]

Each figure is wall time from the call to the frame painted (`repaint` of the
view, then the events that follow), on a shown 1000×800 view. Targets (issue 8):
unfolding a card of 500 originals ≤ 200 ms; a page with 50 cards ≤ 300 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

from PySide6.QtWidgets import QApplication

from app.core.models import Message, Role
from app.core.summary import (
    SourcedPoint,
    Summary,
    SummaryContent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
)
from app.ui.transcript import TranscriptView

START = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
TEXTS = (
    "Could you check the quote for the kitchen? The fitter said 4,200 EUR including the "
    "worktop, but the first estimate was 3,650. ",
    "Sure. The difference is the worktop: quartz instead of laminate adds about 550 EUR, and "
    "the sink cut-out is charged separately. ",
)


def message(seq: int, summary_id: str | None = None) -> Message:
    text = TEXTS[seq % 2] * (1 + seq % 4)
    return Message(
        id=seq,
        session_id="s",
        seq=seq,
        role=Role.USER if seq % 2 else Role.ASSISTANT,
        content=f"{seq}. {text}",
        created_at=START + timedelta(minutes=7 * seq),
        summary_id=summary_id,
    )


def summary(first: int, last: int, index: int) -> Summary:
    points = [
        SourcedPoint(text=f"Point {n} about the kitchen quote", sources=(first + n,))
        for n in range(min(6, last - first + 1))
    ]
    return Summary(
        id=f"s{index}",
        session_id="s",
        tier=SummaryTier.CONDENSED,
        parent_id=None,
        first_seq=first,
        last_seq=last,
        content=SummaryContent(
            narrative="They compared quotes and chose quartz. " * 4, key_points=points
        ),
        source_tokens=11_500,
        summary_tokens=800,
        mode=SummaryMode.LLM,
        model="claude-haiku-4-5",
        trigger=SummaryTrigger.AUTO,
        instructions=None,
        state=SummaryState.ACTIVE,
        depth=1,
        created_at=START,
    )


def painted(app: QApplication, view: TranscriptView, started: float) -> float:
    view.repaint()
    app.processEvents()
    return (time.perf_counter() - started) * 1000


def unfold_500(app: QApplication) -> float:
    view = TranscriptView()
    view.resize(1000, 800)
    view.show()
    covered = [message(seq, "s0") for seq in range(1, 501)]
    live = [message(seq) for seq in range(501, 551)]
    # The store's page holds condensed messages too: the card stands in for them.
    view.set_messages([*covered[-10:], *live], has_earlier=True)
    view.set_summaries([summary(1, 500, 0)])
    view.originals_requested.connect(lambda sid: view.show_originals(sid, covered))
    app.processEvents()
    (block,) = view.summary_blocks()
    block.set_expanded(True)
    app.processEvents()
    started = time.perf_counter()
    block.show_original_messages()
    took = painted(app, view, started)
    view.close()
    view.deleteLater()
    app.processEvents()
    return took


def open_50(app: QApplication) -> float:
    view = TranscriptView()
    view.resize(1000, 800)
    view.show()
    app.processEvents()
    page: list[Message] = []
    summaries: list[Summary] = []
    for index in range(50):
        base = index * 12
        summaries.append(summary(base + 1, base + 10, index + 1))
        page += [message(base + j, f"s{index + 1}") for j in range(1, 11)]
        page += [message(base + 11), message(base + 12)]
    started = time.perf_counter()
    view.set_messages(page, has_earlier=False)
    view.set_summaries(summaries)
    took = painted(app, view, started)
    assert len(view.summary_blocks()) == 50
    view.close()
    view.deleteLater()
    app.processEvents()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = QApplication([])
    for label, bench, target in (
        ("unfold a card of 500 originals", unfold_500, 200),
        ("open a page with 50 cards", open_50, 300),
    ):
        figures = sorted(bench(app) for _ in range(args.runs))
        print(
            f"{label:<32} median {statistics.median(figures):7.1f} ms  "
            f"min {figures[0]:7.1f}  max {figures[-1]:7.1f}  (target ≤ {target} ms, "
            f"{args.runs} runs)"
        )


if __name__ == "__main__":
    main()
