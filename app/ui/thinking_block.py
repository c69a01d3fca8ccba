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
from PySide6.QtWidgets import QWidget

from app.core.thinking import thought_for
from app.ui.foldable_line import FoldableLine

THINKING_NOW = "Thinking…"


class ThinkingBlock(FoldableLine):
    """The collapsed thinking of one reply, expandable to read (`details`, reached by Tab
    when open)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Claude's thinking", "Claude's thinking", parent)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        # After the interaction flags, which set a label's focus policy of their own.
        self.details.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def set_thinking(self, text: str, seconds: float | None, *, streaming: bool) -> None:
        """Show `text` under a heading: "Thinking…" while the reply streams, else how
        long Claude thought."""
        self.toggle.setText(THINKING_NOW if streaming else thought_for(seconds))
        self.details.setText(text.strip())
        self.details.setAccessibleDescription(text.strip())  # what a screen reader reads out
        self._name()
