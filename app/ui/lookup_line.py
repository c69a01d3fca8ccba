"""The archive searches on a reply: "Looked in earlier messages: 2 found".

`LookupLine` is the collapsed line on a reply (a button, reachable by Tab, Space or
Enter opens it) that unfolds to what was sent to Claude: each query and the excerpts
returned. `TranscriptLookups` keeps the lines of the replies on screen up to date:
lookups arrive as the controller says they happened (`lookup_made`), and those of a
page come with the page (read once when it is shown).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.core.lookup import Lookup, summary_line
from app.core.models import Message, Role
from app.ui.history_source import Place
from app.ui.transcript_blocks import muted_text_colour, scaled_font, set_text_colour

if TYPE_CHECKING:
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

_AUTHORS = {"user": "You", "assistant": "Claude", "summary": "Summary"}


def details_html(lookups: Sequence[Lookup]) -> str:
    """`details_text` with each excerpt of this conversation a link that opens it."""
    parts: list[str] = []
    for lookup in lookups:
        found = "nothing found" if not lookup.hits else f"{len(lookup.hits)} found"
        lines = [html.escape(f"Searched for “{lookup.query}” — {found}")]
        for hit in lookup.hits:
            where = f" in “{hit.conversation}”" if hit.conversation else ""
            author = _AUTHORS.get(hit.author, hit.author)
            when = f"{hit.created_at.astimezone():%d %b %Y %H:%M}"
            label = html.escape(f"#{hit.seq} · {author} · {when}{where}")
            if not hit.conversation and hit.seq > 0:
                label = f'<a href="seq:{hit.seq}">{label}</a>'
            lines.append(f"{label}: {html.escape(hit.text)}")
        parts.append("<br>".join(lines))
    return "<br><br>".join(parts)


def details_text(lookups: Sequence[Lookup]) -> str:
    """What was sent to Claude, in plain words: each search and what it returned."""
    parts: list[str] = []
    for lookup in lookups:
        found = "nothing found" if not lookup.hits else f"{len(lookup.hits)} found"
        lines = [f"Searched for “{lookup.query}” — {found}"]
        for hit in lookup.hits:
            where = f" in “{hit.conversation}”" if hit.conversation else ""
            author = _AUTHORS.get(hit.author, hit.author)
            when = f"{hit.created_at.astimezone():%d %b %Y %H:%M}"
            lines.append(f"#{hit.seq} · {author} · {when}{where}: {hit.text}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


class LookupLine(QWidget):
    """The collapsed lookup line of one reply, expandable to what was sent.

    Attributes:
        toggle: the line itself (a button; checked when open).
        details: the queries and excerpts (hidden while collapsed); an excerpt of this
            conversation is a link that opens the original.

    Signals:
        open_requested(int): the user asked to see message `seq` of this conversation.
    """

    open_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lookups: tuple[Lookup, ...] = ()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.setSpacing(2)
        self.toggle = QToolButton(self)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.toggle.setFont(scaled_font(self.font(), 0.9))
        self.toggle.toggled.connect(self._toggled)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setOpenExternalLinks(False)
        self.details.linkActivated.connect(self._link)
        self.details.setFont(scaled_font(self.font(), 0.9))
        self.details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.details.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.details.setContentsMargins(18, 0, 0, 4)
        self.details.setAccessibleName("What Claude found in the archive")
        self.details.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        self._apply_palette()

    @property
    def lookups(self) -> tuple[Lookup, ...]:
        return self._lookups

    def set_lookups(self, lookups: Sequence[Lookup]) -> None:
        self._lookups = tuple(lookups)
        self.toggle.setText(summary_line(self._lookups))
        self.details.setText(details_html(self._lookups))
        self._name()

    def _link(self, target: str) -> None:
        if target.startswith("seq:") and target[4:].isdigit():
            self.open_requested.emit(int(target[4:]))

    def _toggled(self, open_: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.details.setVisible(open_)
        self._name()

    def _name(self) -> None:
        state = "expanded" if self.toggle.isChecked() else "collapsed"
        self.toggle.setAccessibleName(f"{self.toggle.text()}, {state}")
        self.toggle.setToolTip(
            "Hide what Claude looked up"
            if self.toggle.isChecked()
            else "Show what Claude looked up"
        )

    def _apply_palette(self) -> None:
        muted = muted_text_colour(self.palette())
        set_text_colour(self.toggle, muted)
        set_text_colour(self.details, muted)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


class TranscriptLookups(QObject):
    """Puts each reply's lookups on its message in the transcript.

    Signals:
        open_requested(object): the user asked to see a message a lookup found (a Place).
    """

    open_requested = Signal(object)

    def __init__(self, controller: ChatController, transcript: TranscriptView) -> None:
        super().__init__(transcript)
        self._controller = controller
        self._transcript = transcript
        self._shown: dict[int, tuple[Lookup, ...]] = {}
        # Connected after the window's own slot: the page's widgets exist by then.
        controller.conversation_opened.connect(self._conversation_opened)
        controller.lookup_made.connect(self.add)
        # A page is built in slices after its first paint: each message as it is made.
        transcript.message_built.connect(self._built)

    def page_shown(self, page: Iterable[Message]) -> None:
        """A page of messages is (about to be) put on screen: show its replies' lookups."""
        ids = [message.id for message in page if message.role is Role.ASSISTANT]
        for message_id, lookups in self._controller.lookups(ids).items():
            self._show(message_id, lookups)

    def add(self, lookup: Lookup) -> None:
        """One more lookup of a reply (it happened just now)."""
        known = self._shown.get(lookup.message_id, ())
        if any(done.ordinal == lookup.ordinal for done in known):
            return
        self._show(lookup.message_id, (*known, lookup))

    def _conversation_opened(self, _session: object, page: list[Message], _more: bool) -> None:
        self._shown.clear()
        self.page_shown(page)

    def _built(self, widget: MessageWidget) -> None:
        lookups = self._shown.get(widget.message.id)
        if lookups:
            widget.set_lookups(lookups)
            self._wire(widget)

    def _show(self, message_id: int, lookups: tuple[Lookup, ...]) -> None:
        self._shown[message_id] = lookups
        widget = self._transcript.message_widget(message_id)
        if widget is not None:
            widget.set_lookups(lookups)
            self._wire(widget)

    def _wire(self, widget: MessageWidget) -> None:
        """Let the line's excerpts open their originals (once per line)."""
        line = widget.lookup_line
        if line is not None and not line.property("cairnOpensOriginals"):
            line.setProperty("cairnOpensOriginals", True)
            line.open_requested.connect(self._open)

    def _open(self, seq: int) -> None:
        current = self._controller.current
        if current is None:
            return
        covering = next(
            (
                block.summary.id
                for block in self._transcript.summary_blocks()
                if block.summary.first_seq <= seq <= block.summary.last_seq
            ),
            None,
        )
        self.open_requested.emit(Place(current.id, seq, covering))
