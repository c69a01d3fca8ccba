"""A summary in the transcript, where the messages it summarized were (DESIGN §8).

A collapsible card: its header says how many messages it stands for and when they
were said; opened (with its sizes in a Details line), it shows what the summary says,
each point linked to the messages it came from. "Show original messages"
unfolds the originals in place, greyed and marked as not sent to Claude. The
card reads and changes nothing itself: it asks its `CardHost` (the window's, given
to the transcript), directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final, Protocol

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import (
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.dates import local, long_date, moment_range, short_date, timestamp
from app.core.message_kinds import Role
from app.core.summary_kinds import SummaryMode, SummaryTier, archived_facts_note, dated_text
from app.ui.landing_highlight import LandingHighlight
from app.ui.theme import (
    blend,
    code_background,
    code_border,
    muted_text_colour,
    paint_focus_ring,
    scaled_font,
    set_text_colour,
)
from app.ui.transcript_blocks import MarkdownView
from app.ui.transcript_frame import settle_layout

if TYPE_CHECKING:
    from app.core.models import Message
    from app.core.summary import ActionItem, LedgerFact, SourcedPoint, Summary, SummaryContent

NOT_SENT_NOTE: Final = "Original messages · not sent to Claude"
BASIC_BADGE: Final = "simpler summary"
RETRY_BUTTON: Final = "Try again with Claude"
DELETE_ORIGINALS_BUTTON: Final = "Delete original messages…"
RETRY_TOOLTIP: Final = (
    "Ask Claude to write this summary again; the messages it covers stay the same"
)
# An original longer than this shows its start; the whole text stays on disk.
_ORIGINAL_SHOWN_CHARS: Final = 20_000
_RADIUS: Final = 8.0


def compact_tokens(tokens: int) -> str:
    """1234 → "1.2k", 800 → "800"."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}k".replace(".0k", "k")


def header_text(summary: Summary, first: datetime | None, last: datetime | None) -> str:
    """ "Summary of 42 earlier messages · 3–5 March" (sizes are in `details_text`)."""
    count = summary.last_seq - summary.first_seq + 1
    parts = [f"Summary of {count} earlier message{'s' if count != 1 else ''}"]
    span = moment_range(first, last)
    if span:
        parts.append(span)
    return " · ".join(parts)


def details_text(summary: Summary) -> str:
    """The opened card's figures: "Details: 11.5k tokens of messages → 0.8k in the
    summary · written by Claude Haiku 4.5"."""
    from app.core.catalog import model_name  # a summary shown: after the first paint

    sizes = (
        f"{compact_tokens(summary.source_tokens)} tokens of messages → "
        f"{compact_tokens(summary.summary_tokens)} in the summary"
    )
    writer = (
        "made by Cairn's offline rules"
        if summary.mode is SummaryMode.RULE or not summary.model
        else f"written by {model_name(summary.model)}"
    )
    return f"Details: {sizes} · {writer}"


def summary_markdown(summary: Summary) -> str:
    """The summary as Markdown, for Copy."""
    content = summary.content
    lines = [f"**{header_text(summary, None, None)}**", "", content.narrative.strip()]

    def section(title: str, items: Sequence[str]) -> None:
        if items:
            lines.extend(["", f"**{title}**", *(f"- {item}" for item in items)])

    section("Key points", [_dated(p, content) for p in content.key_points])
    section("Decisions", [_dated(p, content) for p in content.decisions])
    section("Action items", [_dated(a, content) for a in content.action_items])
    section("Open questions", [_dated(p, content) for p in content.open_questions])
    section(FACTS_TITLE, [p.text for p in _fact_points(content)])
    section("Names, numbers and references", content.entities)
    if _notes(content):
        lines.extend(["", *_notes(content)])
    return "\n".join(lines).strip() + "\n"


FACTS_TITLE: Final = "Names, numbers and dates, exactly as written"
# A ledger entry's kind, in the card's words.
_FACT_KIND_WORDS: Final = {"money": "amount", "url": "link", "email": "email address"}


def _fact_points(content: SummaryContent) -> list[SourcedPoint]:
    """The fact ledger as the card lists it ("AX-7731 (code, 3 Mar 2026)"), each linked
    to its message; a bare number of one or two digits says nothing on its own."""
    from app.core.summary import SourcedPoint  # a summary shown: after the first paint

    return [
        SourcedPoint(text=_fact_line(fact), sources=[] if fact.seq is None else [fact.seq])
        for fact in content.facts
        if not (fact.kind == "number" and fact.value.isdigit() and len(fact.value) <= 2)
    ]


def _fact_line(fact: LedgerFact) -> str:
    about = [_FACT_KIND_WORDS.get(fact.kind, fact.kind)]
    if fact.day is not None:
        about.append(short_date(fact.day))
    return f"{fact.value} ({', '.join(about)})"


def _dated(item: SourcedPoint | ActionItem, content: SummaryContent) -> str:
    """A point with the day it was said, unless the whole summary is of one day."""
    from app.core.summary import SourcedPoint  # a summary shown: after the first paint

    text = item.text if isinstance(item, SourcedPoint) else _action_text(item)
    if content.first_day is not None and content.first_day == content.last_day:
        return text
    return dated_text(text, item.day)


def _notes(content: SummaryContent) -> list[str]:
    """The summary's notes, and how many of its facts were trimmed to the archive."""
    if content.archived_facts:
        return [*content.notes, archived_facts_note(content.archived_facts)]
    return list(content.notes)


def _action_text(item: ActionItem) -> str:
    return (
        item.task
        + (f" (owner: {item.owner})" if item.owner else "")
        + (f" (due: {item.due})" if item.due else "")
    )


class _Header(QWidget):
    """The card's clickable first line: Tab reaches it, Enter or Space opens and closes it."""

    toggled = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(8)
        self.arrow = QLabel("▸", self)
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        font = QFont(self.font())
        font.setWeight(QFont.Weight.DemiBold)
        self.title.setFont(font)
        self.badge = QLabel(BASIC_BADGE, self)
        self.badge.setFont(scaled_font(self.font(), 0.85))
        self.badge.setToolTip(
            "Claude could not write this summary when it was made, so Cairn made it "
            "itself: it keeps names, numbers and decisions but says less. "
            "“Try again with Claude” can redo it."
        )
        self.badge.hide()
        layout.addWidget(self.arrow, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.title, 1)
        layout.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignTop)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.toggled.emit()
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.toggled.emit()
            return
        super().keyPressEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.hasFocus():
            paint_focus_ring(self, 6)


class OriginalsView(MarkdownView):
    """A summary's archived originals, greyed and plain (they are read, not sent), as
    one document.

    One text document, not a widget per message: a card of 500 originals would
    otherwise be a thousand word-wrapped labels, each laid out by the column
    (seconds), where one document lays out in milliseconds. Each original is a
    header line ("You · 3 March 14:02") and its text, selectable as one.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._messages: list[Message] = []
        self._positions: dict[int, int] = {}  # seq -> where its header starts
        self._now = datetime.now().astimezone()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def show_messages(self, messages: Sequence[Message], now: datetime) -> None:
        """Show these originals, oldest first."""
        self._messages = list(messages)
        self._now = now
        self._render()

    @property
    def seqs(self) -> list[int]:
        return [message.seq for message in self._messages]

    def message(self, seq: int) -> Message | None:
        return next((m for m in self._messages if m.seq == seq), None)

    def top_of(self, seq: int) -> int | None:
        """The y, in this widget, where the original `seq` starts; None if not shown."""
        position = self._positions.get(seq)
        if position is None:
            return None
        document = self.document()
        block = document.findBlock(position)
        layout = document.documentLayout()
        return round(layout.blockBoundingRect(block).top()) + self.contentsMargins().top()

    def area_of(self, seq: int) -> QRect | None:
        """Where the original `seq` is (its header line and its text), in this widget."""
        top = self.top_of(seq)
        if top is None:
            return None
        following = [s for s in self.seqs if s > seq]
        bottom = self.top_of(following[0]) if following else None
        height = (bottom if bottom is not None else self.height()) - top
        return QRect(0, max(0, top - 4), self.width(), max(24, height + 4))

    def put_cursor_at(self, seq: int) -> None:
        """The caret to the start of original `seq`: a screen reader reads from there."""
        position = self._positions.get(seq)
        if position is not None:
            cursor = self.textCursor()
            cursor.setPosition(position)
            self.setTextCursor(cursor)

    def _render(self) -> None:
        self.render_count += 1
        document = self.document()
        page = document.pageSize()
        document.setPageSize(QSizeF(0, 0))  # no layout while building (see MarkdownView)
        try:
            document.clear()
            self._positions.clear()
            cursor = QTextCursor(document)
            cursor.beginEditBlock()
            muted = muted_text_colour(self.palette())
            header_format = QTextCharFormat()
            header_format.setForeground(muted)
            header_format.setFontWeight(QFont.Weight.DemiBold)
            header_format.setFontPointSize(max(1.0, self.font().pointSizeF() * 0.88))
            body_format = QTextCharFormat()
            body_format.setForeground(muted)
            spaced = QTextBlockFormat()
            spaced.setTopMargin(10)
            tight = QTextBlockFormat()
            for index, message in enumerate(self._messages):
                if index:
                    cursor.insertBlock(spaced)
                self._positions[message.seq] = cursor.position()
                who = "You" if message.role is Role.USER else "Claude"
                cursor.insertText(
                    f"{who} · {timestamp(message.created_at, self._now)}", header_format
                )
                text = message.content
                if len(text) > _ORIGINAL_SHOWN_CHARS:
                    text = (
                        text[:_ORIGINAL_SHOWN_CHARS]
                        + f"\n… ({len(text) - _ORIGINAL_SHOWN_CHARS:,} more characters, "
                        "kept on disk)"
                    )
                cursor.insertBlock(tight)
                cursor.insertText(text.strip("\n"), body_format)
            cursor.endEditBlock()
        finally:
            document.setPageSize(page)
        self._heights.clear()
        self._natural_width = None
        self._measure = None
        self.updateGeometry()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._messages:
            self._render()  # the grey follows the theme


class CardHost(Protocol):
    """What a summary card asks for, and asks to be done (`app.ui.summary_actions.CardActions`)."""

    def originals(self, summary_id: str) -> tuple[Sequence[Message], datetime | None]:
        """The original messages a summary stands for, oldest first; when there are none
        left, when they were deleted (None: not known)."""
        ...

    def children(self, summary_id: str) -> Sequence[Summary]:
        """The summaries a compressed summary folded in, oldest first."""
        ...

    def undo(self, summary_id: str) -> None:
        """Put the summary's originals back in what Claude reads."""
        ...

    def retry_with_claude(self, summary_id: str) -> None:
        """Ask Claude to write this basic summary again."""
        ...

    def delete_originals(self, summary_id: str) -> None:
        """Delete the summary's originals, after asking."""
        ...


class _NothingArchived:
    """The host of cards shown without a window (a transcript on its own): no originals,
    no parts, and nothing to do."""

    def originals(self, summary_id: str) -> tuple[Sequence[Message], datetime | None]:
        return (), None

    def children(self, summary_id: str) -> Sequence[Summary]:
        return ()

    def undo(self, summary_id: str) -> None:
        return None

    def retry_with_claude(self, summary_id: str) -> None:
        return None

    def delete_originals(self, summary_id: str) -> None:
        return None


NOTHING_ARCHIVED: CardHost = _NothingArchived()


class SummaryBlock(QWidget):
    """One summary as a collapsible card.

    Attributes:
        summary: the summary shown.
        expanded: whether the card is open.

    Signals:
        copied(str): the summary was copied (its Markdown).
    """

    copied = Signal(str)

    def __init__(
        self,
        summary: Summary,
        now: datetime,
        parent: QWidget | None = None,
        *,
        host: CardHost = NOTHING_ARCHIVED,
        unfolding: Callable[[SummaryBlock], None] = lambda _card: None,
        first_at: datetime | None = None,
        last_at: datetime | None = None,
        nested: bool = False,
    ) -> None:
        super().__init__(parent)
        self.summary = summary
        self.expanded = False
        self._host = host
        self._unfolding = unfolding  # told before the originals unfold in this card
        self._now = now
        self._nested = nested
        self._first_at, self._last_at = first_at, last_at
        self._body: QWidget | None = None
        self._originals_box: QWidget | None = None
        self._originals: OriginalsView | None = None
        self._pending_seq: int | None = None
        # The mark on the original a source link (or a jump) last brought into view.
        self.highlight: LandingHighlight | None = None
        self._children: list[SummaryBlock] = []
        self._children_box: QVBoxLayout | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

        self._root = QVBoxLayout(self)
        self._root.setContentsMargins(1, 1, 1, 1)
        self._root.setSpacing(0)
        self.header = _Header(self)
        self.header.toggled.connect(self.toggle)
        self._root.addWidget(self.header)
        self.header.badge.setVisible(summary.mode is SummaryMode.RULE)
        self._update_header()
        self._apply_palette()

    # --- public -----------------------------------------------------------------

    @property
    def sort_key(self) -> int:
        """Where it sits among the messages: before anything newer than its range."""
        return self.summary.first_seq

    def set_dates(self, first_at: datetime | None, last_at: datetime | None) -> None:
        self._first_at, self._last_at = first_at, last_at
        self._update_header()

    def header_text(self) -> str:
        return self.header.title.text()

    def toggle(self) -> None:
        self.set_expanded(not self.expanded)

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self.expanded:
            return
        self.expanded = expanded
        if expanded and self._body is None:
            self._build_body()
        if self._body is not None:
            self._body.setVisible(expanded)
        self._update_header()

    @property
    def originals_shown(self) -> bool:
        return self._originals_box is not None and self._originals_box.isVisibleTo(self)

    @property
    def originals_view(self) -> OriginalsView | None:
        """The originals, once shown."""
        return self._originals

    def child_blocks(self) -> Sequence[SummaryBlock]:
        """The condensed summaries a compressed one folded in (once opened)."""
        return tuple(self._children)

    def show_original_messages(self, scroll_to_seq: int | None = None) -> None:
        """Unfold the originals (read from the host the first time)."""
        self.set_expanded(True)
        self._pending_seq = scroll_to_seq
        self.highlight = None
        if self._originals_box is not None:
            self._originals_box.show()
            self._set_originals_button(shown=True)
            self._reveal_pending()
            return
        self._unfolding(self)
        self._show_originals(*self._host.originals(self.summary.id))

    def hide_original_messages(self) -> None:
        if self._originals_box is not None:
            self._originals_box.hide()
            self._set_originals_button(shown=False)

    def _show_originals(self, messages: Sequence[Message], deleted_on: datetime | None) -> None:
        """Build the originals, greyed, in place (or say when they were deleted)."""
        self.set_expanded(True)
        assert self._body is not None
        box = QWidget(self._body)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(12, 4, 12, 8)
        layout.setSpacing(10)
        note = QLabel(NOT_SENT_NOTE, box)
        note.setFont(scaled_font(self.font(), 0.88))
        set_text_colour(note, muted_text_colour(self.palette()))
        layout.addWidget(note)
        if messages:
            view = OriginalsView(box)
            view.setAccessibleName(
                f"{len(messages)} original message{'s' if len(messages) != 1 else ''}, "
                "not sent to Claude"
            )
            view.show_messages(messages, self._now)
            layout.addWidget(view)
            self._originals = view
            if self._first_at is None or self._last_at is None:
                self.set_dates(messages[0].created_at, messages[-1].created_at)
        if not messages:
            missing = "The original messages could not be found."
            if deleted_on is not None:
                day = long_date(local(deleted_on).date())
                missing = f"The original messages of this summary were deleted on {day}."
            layout.addWidget(QLabel(missing, box))
        self._originals_box = box
        self._body_layout.addWidget(box)
        box.show()
        self._set_originals_button(shown=True)
        self._reveal_pending()

    def forget_originals(self) -> None:
        """Drop the originals shown (they are being deleted): the next Show asks again."""
        if self._originals_box is not None:
            self._originals_box.deleteLater()
            self._originals_box, self._originals = None, None
            self._set_originals_button(shown=False)

    def _show_children(self, summaries: Sequence[Summary]) -> None:
        """A compressed summary's parts, each its own card."""
        if self._children_box is None or self._children:
            return
        for child in summaries:
            block = SummaryBlock(
                child, self._now, self, host=self._host, unfolding=self._unfolding, nested=True
            )
            block.copied.connect(self.copied)
            self._children.append(block)
            self._children_box.addWidget(block)

    def blocks(self) -> list[SummaryBlock]:
        """This card and every card inside it."""
        found = [self]
        for child in self._children:
            found.extend(child.blocks())
        return found

    def copy(self) -> None:
        text = summary_markdown(self.summary)
        QApplication.clipboard().setText(text)
        self.copy_button.setText("Copied")
        self.copied.emit(text)

    # --- building ----------------------------------------------------------------

    def _build_body(self) -> None:
        from app.core.summary import SourcedPoint  # a summary shown: after the first paint

        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 0, 12, 10)
        layout.setSpacing(6)
        self._body_layout = layout
        content = self.summary.content
        if content.narrative.strip():
            layout.addWidget(self._text(content.narrative.strip(), body))
        self._section(layout, body, "Key points", content.key_points)
        self._section(layout, body, "Decisions", content.decisions)
        if content.action_items:
            points = [
                SourcedPoint(text=_action_text(a), sources=a.sources, day=a.day)
                for a in content.action_items
            ]
            self._section(layout, body, "Action items", points)
        self._section(layout, body, "Open questions", content.open_questions)
        self._section(layout, body, FACTS_TITLE, _fact_points(content))
        if content.entities:
            layout.addWidget(self._title("Names, numbers and references", body))
            layout.addWidget(self._text("; ".join(content.entities), body))
        for note in (*_notes(content), details_text(self.summary)):
            label = self._text(note, body)
            set_text_colour(label, muted_text_colour(self.palette()))
            layout.addWidget(label)
        if self.summary.tier is SummaryTier.COMPRESSED:
            layout.addWidget(self._title("Summaries it brings together", body))
            self._children_box = QVBoxLayout()
            self._children_box.setSpacing(8)
            layout.addLayout(self._children_box)
        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        self.originals_button = QPushButton("Show original messages", body)
        self.originals_button.clicked.connect(self._toggle_originals)
        self.undo_button = QPushButton("Undo summary", body)
        self.undo_button.setToolTip("Put the original messages back in what Claude reads")
        self.undo_button.clicked.connect(lambda: self._host.undo(self.summary.id))
        # Only a whole summary is undone, not a part of a compressed one.
        self.undo_button.setVisible(not self._nested)
        # The rare, destructive act waits in a ⋯ menu, not beside the everyday buttons.
        self.more_button = QToolButton(body)
        self.more_button.setText("⋯")
        self.more_button.setAccessibleName("More actions")
        self.more_button.setToolTip("More actions")
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        more = QMenu(self.more_button)
        self.delete_action = more.addAction(DELETE_ORIGINALS_BUTTON)
        self.delete_action.triggered.connect(lambda: self._host.delete_originals(self.summary.id))
        self.more_button.setMenu(more)
        self.more_button.setVisible(not self._nested)
        self.retry_button = QPushButton(RETRY_BUTTON, body)
        self.retry_button.setToolTip(RETRY_TOOLTIP)
        self.retry_button.clicked.connect(lambda: self._host.retry_with_claude(self.summary.id))
        # Only a basic (rule-made) summary, and only a whole one, is written again.
        self.retry_button.setVisible(self.summary.mode is SummaryMode.RULE and not self._nested)
        self.copy_button = QPushButton("Copy", body)
        self.copy_button.setToolTip("Copy the summary as text")
        self.copy_button.clicked.connect(self.copy)
        for button in (
            self.originals_button,
            self.retry_button,
            self.undo_button,
            self.copy_button,
        ):
            button.setAccessibleName(button.text())
            buttons.addWidget(button)
        buttons.addWidget(self.more_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self._body = body
        self._root.addWidget(body)
        if self._children_box is not None:
            self._show_children(self._host.children(self.summary.id))

    def _section(
        self, layout: QVBoxLayout, parent: QWidget, title: str, points: Sequence[SourcedPoint]
    ) -> None:
        if not points:
            return
        layout.addWidget(self._title(title, parent))
        for point in points:
            label = QLabel(parent)
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            links = " ".join(f'<a href="seq:{seq}">#{seq}</a>' for seq in point.sources)
            label.setText(
                f"• {_escape(_dated(point, self.summary.content))}"
                + (f" &nbsp;<small>{links}</small>" if links else "")
            )
            label.setTextInteractionFlags(
                Qt.TextInteractionFlag.LinksAccessibleByMouse
                | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
                | Qt.TextInteractionFlag.TextSelectableByMouse
            )
            label.setOpenExternalLinks(False)
            label.linkActivated.connect(self._source_clicked)
            label.setAccessibleName(point.text)
            layout.addWidget(label)

    def _title(self, text: str, parent: QWidget) -> QLabel:
        label = QLabel(text, parent)
        font = QFont(self.font())
        font.setWeight(QFont.Weight.DemiBold)
        label.setFont(scaled_font(font, 0.92))
        return label

    def _text(self, text: str, parent: QWidget) -> QLabel:
        label = QLabel(text, parent)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # --- behaviour ----------------------------------------------------------------

    def source_clicked(self, seq: int) -> None:
        """A point's source: unfold the originals and bring that message into view."""
        self.show_original_messages(scroll_to_seq=seq)

    def _source_clicked(self, link: str) -> None:
        if link.startswith("seq:") and link[4:].isdigit():
            self.source_clicked(int(link[4:]))

    def _toggle_originals(self) -> None:
        if self.originals_shown:
            self.hide_original_messages()
        else:
            self.show_original_messages()

    def _set_originals_button(self, *, shown: bool) -> None:
        text = "Hide original messages" if shown else "Show original messages"
        self.originals_button.setText(text)
        self.originals_button.setAccessibleName(text)

    def _reveal_pending(self) -> None:
        seq, self._pending_seq = self._pending_seq, None
        if seq is None:
            return
        view = self._originals
        if view is None or view.top_of(seq) is None:
            return
        # Ask the nearest scroll area to bring it into view (after the layout settles).
        widget: QWidget | None = self.parentWidget()
        while widget is not None and not isinstance(widget, QScrollArea):
            widget = widget.parentWidget()
        if isinstance(widget, QScrollArea):
            settle_layout()
            top = view.top_of(seq)
            content = widget.widget()
            if top is not None and content is not None:
                y = view.mapTo(content, QPoint(0, top)).y()
                widget.ensureVisible(0, y, 0, 40)
                widget.verticalScrollBar().setValue(max(0, y - 40))
        # Marked for a moment, and the caret put there with the focus, so a screen
        # reader reads the message the link led to.
        self.highlight = LandingHighlight(view, view.area_of(seq))
        view.put_cursor_at(seq)
        view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _update_header(self) -> None:
        text = header_text(self.summary, self._first_at, self._last_at)
        self.header.title.setText(text)
        self.header.arrow.setText("▾" if self.expanded else "▸")
        state = "open" if self.expanded else "closed"
        basic = f", {BASIC_BADGE}" if self.summary.mode is SummaryMode.RULE else ""
        self.header.setAccessibleName(f"{text}{basic}, {state}")
        self.header.setToolTip("Open or close the summary (Enter)")

    # --- looks ----------------------------------------------------------------------

    def _apply_palette(self) -> None:
        set_text_colour(self.header.arrow, muted_text_colour(self.palette()))
        set_text_colour(self.header.badge, muted_text_colour(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = self.palette()
        background = code_background(palette)
        if self._nested:
            background = blend(background, palette.color(QPalette.ColorRole.Text), 0.03)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(code_border(palette), 1))
        painter.setBrush(background)
        painter.drawRoundedRect(
            QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), _RADIUS, _RADIUS
        )
        painter.end()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
