"""A message's bar, in its header: the version arrows ("‹ 2 / 3 ›") when it has versions,
and Copy, Edit or Regenerate while the pointer or the keyboard is on it
(`message_actions` says what they do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from app.core.message_kinds import Role
from app.ui.theme import muted_text_colour, scaled_font, set_text_colour
from app.ui.transcript_message import MessageWidget

if TYPE_CHECKING:
    from app.core.models import Message

COPY_ACTION: Final = "Copy"
EDIT_ACTION: Final = "Edit"
REGENERATE_ACTION: Final = "Regenerate"
PREVIOUS_VERSION: Final = "Previous version"
NEXT_VERSION: Final = "Next version"
REGENERATE_SHORTCUT: Final = "Ctrl+R"
COPIED: Final = "Copied"
COPIED_FOR_MS: Final = 1500
EDITING_LABEL: Final = "✎ Editing"


def version_label(message: Message) -> str:
    return f"{message.version_number} / {message.version_count}"


class MessageBar(QWidget):
    """A message's header bar: version arrows, and actions while it is pointed at.

    Signals:
        copy_requested(), edit_requested(), regenerate_requested(): the buttons.
        version_requested(int): show that version (its number, from 1).
    """

    copy_requested = Signal()
    edit_requested = Signal()
    regenerate_requested = Signal()
    version_requested = Signal(int)

    def __init__(self, widget: MessageWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.previous = self._button("‹", PREVIOUS_VERSION, self._previous)
        self.versions = QLabel(self)
        self.versions.setFont(scaled_font(self.font(), 0.88))
        self.next = self._button("›", NEXT_VERSION, self._next)
        self.copy = self._button(COPY_ACTION, "Copy this message", self.copy_requested.emit)
        self.edit = self._button(EDIT_ACTION, "Edit this message and send it again", None)
        self.edit.clicked.connect(self.edit_requested)
        self.regenerate = self._button(
            REGENERATE_ACTION, f"Ask Claude to write this reply again ({REGENERATE_SHORTCUT})", None
        )
        self.regenerate.clicked.connect(self.regenerate_requested)
        self.editing_label = QLabel(EDITING_LABEL, self)
        self.editing_label.setFont(scaled_font(self.font(), 0.88))
        self.editing_label.setAccessibleName("Being edited in the message box")
        for child in (
            self.editing_label,
            self.previous,
            self.versions,
            self.next,
            self.copy,
            self.edit,
        ):
            layout.addWidget(child)
        layout.addWidget(self.regenerate)
        # The hover actions keep their place while hidden, so showing them moves nothing
        # under the pointer (issue 23); only the ones this kind of message can have.
        own = self.edit if widget.message.role is Role.USER else self.regenerate
        for button in (self.copy, own):
            policy = button.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            button.setSizePolicy(policy)
        # "Copied" on the Copy button for a moment after a copy.
        self._copied = QTimer(self)
        self._copied.setSingleShot(True)
        self._copied.setInterval(COPIED_FOR_MS)
        self._copied.timeout.connect(self._copy_again)
        # Always there, a line (and a pin) high: the header never changes height on hover.
        self.setFixedHeight(18)
        for label in (self.versions, self.editing_label):
            set_text_colour(label, muted_text_colour(self.palette()))

    def _button(self, text: str, tip: str, slot: Callable[[], object] | None) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip if len(text) == 1 else text)
        button.setAutoRaise(True)
        # The message's menu reaches every action by keyboard, as with its pin.
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        # One line's height, as the pin's: showing the bar on hover must not move the text.
        button.setFixedHeight(18)
        button.setFont(scaled_font(self.font(), 1.15 if len(text) == 1 else 0.88))
        if slot is not None:
            button.clicked.connect(slot)
        return button

    def refresh(
        self, *, hovered: bool, can_edit: bool, can_regenerate: bool, editing: bool = False
    ) -> None:
        """Show what applies to the message now."""
        message = self._widget.message
        self.editing_label.setVisible(editing)
        several = message.version_count > 1
        for part in (self.previous, self.versions, self.next):
            part.setVisible(several)
        if several:
            self.versions.setText(version_label(message))
            self.versions.setAccessibleName(
                f"Version {message.version_number} of {message.version_count}"
            )
            self.previous.setEnabled(message.version_number > 1)
            self.next.setEnabled(message.version_number < message.version_count)
        self.copy.setVisible(hovered or self._copied.isActive())
        self.edit.setVisible(hovered and can_edit and not editing)
        self.regenerate.setVisible(hovered and can_regenerate)

    def say_copied(self) -> None:
        """ "Copied" on the Copy button (shown even without the pointer) for a moment."""
        self.copy.setText(COPIED)
        self.copy.setAccessibleName(f"{COPY_ACTION}: copied to the clipboard")
        self.copy.setVisible(True)
        self._copied.start()

    def _copy_again(self) -> None:
        self.copy.setText(COPY_ACTION)
        self.copy.setAccessibleName(COPY_ACTION)
        self.copy.setVisible(self._widget.underMouse())

    def _previous(self) -> None:
        self.version_requested.emit(self._widget.message.version_number - 1)

    def _next(self) -> None:
        self.version_requested.emit(self._widget.message.version_number + 1)
