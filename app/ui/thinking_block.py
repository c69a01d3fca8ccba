"""Claude's thinking above a reply: "Thought for 12 s", collapsed; open it to read.

The text is the summarized thinking the API returns (and, between archive searches, the
notes Claude writes as it goes); it is never part of the reply's text, nor sent back.
While the reply streams the line says "Thinking…".

For a screen reader (checked over AT-SPI): the line is a button named with its state
("Thought for 12 s, collapsed"), not a check box that says "not checked" beside it; the
text, once open, is the next stop of Tab after it, named and read out.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.core.thinking import thought_for
from app.ui.theme import keep_muted, scaled_font

THINKING_NOW = "Thinking…"


class ThinkingBlock(QWidget):
    """The collapsed thinking of one reply, expandable to read.

    Attributes:
        toggle: the line itself (a button that opens and closes the text).
        details: the thinking text (hidden while collapsed; reached by Tab when open).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.setSpacing(2)
        self._open = False
        self.toggle = QToolButton(self)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.toggle.setFont(scaled_font(self.font(), 0.9))
        self.toggle.clicked.connect(lambda: self._toggled(not self._open))
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setFont(scaled_font(self.font(), 0.9))
        self.details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        # After the interaction flags, which set a label's focus policy of their own.
        self.details.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.details.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.details.setContentsMargins(18, 0, 0, 4)
        self.details.setAccessibleName("Claude's thinking")
        self.details.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        self._muted = keep_muted(self, self.toggle, self.details)

    def set_thinking(self, text: str, seconds: float | None, *, streaming: bool) -> None:
        """Show `text` under a heading: "Thinking…" while the reply streams, else how
        long Claude thought."""
        self.toggle.setText(THINKING_NOW if streaming else thought_for(seconds))
        self.details.setText(text.strip())
        self.details.setAccessibleDescription(text.strip())  # what a screen reader reads out
        self._name()

    @property
    def is_open(self) -> bool:
        """Whether the thinking text shows."""
        return self._open

    def _toggled(self, open_: bool) -> None:
        self._open = open_
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.details.setVisible(open_)
        self._name()

    def _name(self) -> None:
        state = "expanded" if self._open else "collapsed"
        self.toggle.setAccessibleName(f"{self.toggle.text()}, {state}")
        self.toggle.setToolTip("Hide Claude's thinking" if self._open else "Show Claude's thinking")
