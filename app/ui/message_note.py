"""The line under a message that says how it ended ("Stopped", "Claude paused this
reply"…), with the action offered beside it ("Continue", "Retry", "Ask another model")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from app.core.message_kinds import MessageStatus, Role
from app.ui.theme import error_text_colour, muted_text_colour, scaled_font, set_text_colour

if TYPE_CHECKING:
    from app.core.models import Message

STATUS_NOTES: Final = {
    MessageStatus.STOPPED: "Stopped",
    MessageStatus.ERROR: "Reply failed",
    MessageStatus.CUT_OFF: "Claude's reply reached its length limit",
    MessageStatus.PAUSED: "Claude paused this reply",
    MessageStatus.DECLINED: "Claude declined — no longer sent to Claude",
}
# A question whose reply Claude declined: it stays here, but is not sent again.
DECLINED_QUESTION_NOTE: Final = "Left out of what Claude sees"
# Its text changed on the disk and no backup held it intact (app/store/checksums.py).
# Short enough for one line of the narrowest column (800 px wide window).
DAMAGED_NOTE: Final = "Damaged on the disk: may not be what was written"


class MessageNote:
    """The note row of one message, added to its column when first needed (most messages
    never show one), and the action offered beside it."""

    def __init__(
        self, owner: QWidget, column: QBoxLayout, *, is_user: bool, action: Callable[[], None]
    ) -> None:
        """`action` is called when the offered action is clicked."""
        self._owner = owner
        self._column = column
        self._is_user = is_user
        self._action = action
        self._offer = ("", "")  # an action beside the note ("Retry"), and a note for it
        self._label: QLabel | None = None
        self._row: QHBoxLayout | None = None
        self._button: QPushButton | None = None

    def offer(self, action: str, note: str = "") -> None:
        """Offer `action` beside the note ("" none); `note` shows when the status has none."""
        self._offer = (action, note)

    def show(self, message: Message) -> None:
        """The note `message`'s status calls for (none: hidden), with the action offered."""
        note = _note_for(message, self._offer[1])
        if note is not None:
            label = self._note_label()
            label.setText(("⚠ " if _warns(message) else "■ ") + note)
            label.setAccessibleName(note)
            self.apply_palette(message)
            label.show()
        elif self._label is not None:
            self._label.hide()
        if self._offer[0] or self._button is not None:
            self._show_action(self._offer[0] if note else "", note or "")

    def text(self) -> str:
        """The note shown ("" when none), as a screen reader says it."""
        if self._label is None or not self._label.isVisibleTo(self._owner):
            return ""
        return self._label.accessibleName()

    def apply_palette(self, message: Message) -> None:
        if self._label is None:
            return
        palette = self._owner.palette()
        colour = error_text_colour(palette) if _warns(message) else muted_text_colour(palette)
        set_text_colour(self._label, colour)

    def _note_label(self) -> QLabel:
        if self._label is None:
            self._label = QLabel(self._owner)
            self._label.setFont(scaled_font(self._owner.font(), 0.92))
            # A refusal's explanation can be long: it wraps, never widens the transcript.
            self._label.setWordWrap(True)
            self._label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
            row = QHBoxLayout()
            row.setContentsMargins(4 if self._is_user else 0, 0, 4 if self._is_user else 0, 0)
            if self._is_user:
                # The whole row, its text to the right under the bubble: a stretch beside
                # it would halve its width and wrap a note that fits (the damaged mark).
                self._label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            row.addWidget(self._label, 1)
            self._column.addLayout(row)
            self._row = row
        return self._label

    def _show_action(self, text: str, note: str) -> None:
        """The button of the action offered, beside the note; hidden when `text` is ""."""
        button = self._button
        if button is None:
            label = self._note_label()
            assert self._row is not None
            button = self._button = QPushButton(self._owner)
            button.clicked.connect(self._action)
            self._row.insertWidget(self._row.indexOf(label) + 1, button)
        button.setText(text)
        button.setAccessibleName(text)
        # Tab lands on the button, not the note: a screen reader hears the note with it.
        button.setAccessibleDescription(note)
        button.setVisible(bool(text))


def _note_for(message: Message, fallback: str) -> str | None:
    """The note under `message`: its status's, else `fallback` (an offer's), else none."""
    if message.damaged:
        return DAMAGED_NOTE
    if message.role is Role.USER and message.status is MessageStatus.DECLINED:
        return DECLINED_QUESTION_NOTE
    note = STATUS_NOTES.get(message.status)
    if note and fallback and message.status is MessageStatus.DECLINED:
        return f"{note}. {fallback}"  # the explanation, and "Ask another model"
    return note or fallback or None


def _warns(message: Message) -> bool:
    """A failed reply, or a text the disk altered: the note is a warning (⚠, in red)."""
    return message.status is MessageStatus.ERROR or message.damaged
