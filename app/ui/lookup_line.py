"""The archive searches on a reply: "Looked in the archive: 2 earlier messages".

`LookupLine` is the collapsed line on a reply (a button, reachable by Tab, Space or
Enter opens it) that unfolds to what was sent to Claude: each query and the excerpts
returned (`app.ui.transcript_lookups` keeps the lines of the replies on screen up to
date).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.core.dates import timestamp
from app.core.lookup import Lookup, summary_line
from app.ui.theme import keep_muted, scaled_font

_AUTHORS = {"user": "You", "assistant": "Claude", "summary": "Summary"}


def details_text(lookups: Sequence[Lookup]) -> str:
    """What was sent to Claude, in plain words: each search and what it returned."""
    parts: list[str] = []
    for lookup in lookups:
        found = "nothing found" if not lookup.hits else f"{len(lookup.hits)} found"
        lines = [f"Searched for “{lookup.query}” — {found}"]
        for hit in lookup.hits:
            where = f" in “{hit.conversation}”" if hit.conversation else ""
            author = _AUTHORS.get(hit.author, hit.author)
            when = timestamp(hit.created_at)
            lines.append(f"#{hit.seq} · {author} · {when}{where}: {hit.text}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


class LookupLine(QWidget):
    """The collapsed lookup line of one reply, expandable to what was sent.

    Attributes:
        toggle: the line itself (a button; checked when open).
        details: the queries and excerpts (hidden while collapsed).
    """

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
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setFont(scaled_font(self.font(), 0.9))
        self.details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.details.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.details.setContentsMargins(18, 0, 0, 4)
        self.details.setAccessibleName("What Claude found in the archive")
        self.details.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        self._muted = keep_muted(self, self.toggle, self.details)

    @property
    def lookups(self) -> tuple[Lookup, ...]:
        return self._lookups

    def set_lookups(self, lookups: Sequence[Lookup]) -> None:
        self._lookups = tuple(lookups)
        self.toggle.setText(summary_line(self._lookups))
        self.details.setText(details_text(self._lookups))
        self._name()

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
