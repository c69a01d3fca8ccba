"""What the window says about summaries: the banner after one, "What happened?",
and the conversation's summary history (every summary and undo, in plain words)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.chat.events import HistoryEntry, SummaryReport
from app.core.dates import full_timestamp
from app.core.summary_kinds import EventKind, EventOutcome

if TYPE_CHECKING:
    from app.core.summary import SummaryEvent

BANNER_TITLE: Final = "Earlier messages summarized"
UNDO_ACTION: Final = "Undo"
EXPLAIN_ACTION: Final = "What happened?"
EXPLANATION: Final = (
    "Claude can only read so much of a conversation at once. When this one got close "
    "to that limit, Cairn wrote a short summary of the oldest messages and now sends "
    "Claude the summary instead of those messages, so the conversation can go on.\n\n"
    "Nothing was deleted: every message is still on this computer. You can read the "
    "summary and the original messages in the card where they were, and Undo puts the "
    "original messages back."
)
HISTORY_EMPTY: Final = "Nothing has been summarized in this conversation yet."

_REASONS: Final = {
    "threshold": "Automatic (the conversation was getting full)",
    "message_count": "Automatic (many messages)",
    "force_refresh": "Automatic (many messages since the last summary)",
    "emergency": "Automatic (a message would not fit)",
    "manual": "You asked",
    "budget": "Keeping the summaries small",
}
_OUTCOMES: Final = {
    EventOutcome.OK: "Done",
    EventOutcome.FALLBACK: "Done, a simpler summary made by Cairn (Claude could not write it)",
    EventOutcome.FAILED: "Failed, nothing changed",
    EventOutcome.ABORTED: "Stopped, nothing changed",
    EventOutcome.CONFLICT: "Skipped, the conversation changed meanwhile",
    EventOutcome.PARTIAL: "Partly undone, only the newest messages fit",
}


def banner_text(report: SummaryReport) -> str:
    """ "Cairn summarized 42 older messages so Claude can keep up. Nothing was deleted." """
    count = report.condensed
    text = (
        f"Cairn summarized {count} older message{'s' if count != 1 else ''} so Claude can "
        "keep up. Nothing was deleted."
    )
    if report.basic:
        # Not "could not be reached": the summarizer may also have answered badly.
        text += (
            " Claude could not write the summary just now, so Cairn made a simpler one "
            "itself; “Try again with Claude” on the summary can redo it."
        )
    return text


def _reason(event: SummaryEvent) -> str:
    if event.kind is EventKind.UNDO:
        return "Undo"
    if event.kind is EventKind.DELETE_ORIGINALS:
        return "Originals deleted"
    return _REASONS.get(event.reason.strip().lower(), "Summary")


def _fullness(event: SummaryEvent) -> str:
    """How full the conversation was before and after, as shares: "85 % → 40 %"."""
    if event.ratio_before is None or event.ratio_after is None:
        return ""
    return f"{event.ratio_before:.0%} → {event.ratio_after:.0%}".replace("%", " %")


def history_rows(entries: Sequence[HistoryEntry]) -> list[tuple[str, str, str, str, str]]:
    """(when, why, how full before → after, who wrote it, outcome), newest first."""
    from app.core.catalog import model_name  # the history shown: after the first paint

    rows = []
    for entry in reversed(entries):
        event = entry.event
        when = full_timestamp(event.created_at) if event.created_at is not None else ""
        made = event.kind is EventKind.SUMMARIZE and event.summary_id is not None
        model = (
            model_name(entry.model) if entry.model else ("Cairn's offline rules" if made else "")
        )
        rows.append((when, _reason(event), _fullness(event), model, _OUTCOMES[event.outcome]))
    return rows


class SummaryHistoryDialog(QDialog):
    """Every summary and undo of a conversation, newest first."""

    def __init__(self, events: Sequence[HistoryEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Summaries in this conversation")
        # Wide enough for every column; never wider than the screen it opens on.
        screen = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        self.resize(min(960, screen.width() - 40), min(440, screen.height() - 40))
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Every time earlier messages of this conversation were summarized or put back.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTreeWidget(self)
        self.table.setAccessibleName("Summaries in this conversation")
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(
            ["When", "Why", "How full before → after", "Written by", "Outcome"]
        )
        rows = history_rows(events)
        for row, entry in zip(rows, reversed(events), strict=True):
            item = QTreeWidgetItem(list(row))
            item.setToolTip(1, row[1])
            if entry.event.created_at is not None:
                item.setToolTip(0, row[0])
            self.table.addTopLevelItem(item)
        for column in range(5):
            self.table.resizeColumnToContents(column)
        self.empty = QLabel(HISTORY_EMPTY, self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table.setVisible(bool(rows))
        self.empty.setVisible(not rows)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def rows(self) -> list[list[str]]:
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [[item.text(c) for c in range(5)] for item in items if item is not None]
