"""A message's header line: who spoke and when, its pin, "Writing…" while a reply
streams, and the message's bar (`message_bar`: versions and hover actions)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpacerItem,
    QToolButton,
    QWidget,
)

from app.core.dates import full_timestamp, timestamp
from app.ui.theme import muted_text_colour, scaled_font, set_text_colour

PINNED_TIP: Final = "Pinned — never summarized"
PIN_TIP: Final = "Pin: never summarize this message"
WRITING: Final = "Writing…"
# The user's message until it is on disk: nothing shows as sent that is not.
SENDING: Final = "Sending…"
PIN_SIZE: Final = QSize(20, 18)


class PinButton(QToolButton):
    """A small drawn pushpin: outlined when it offers to pin, filled when pinned.

    Drawn, not a glyph: an emoji pin is missing from many fonts.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the message's menu reaches it by keyboard
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(PIN_SIZE)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.underMouse():
            super().paintEvent(event)  # the button's hover frame, not a pressed look when pinned
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        colour = (
            palette.color(QPalette.ColorRole.Highlight)
            if self.isChecked()
            else muted_text_colour(palette)
        )
        centre_x = self.width() / 2
        top = (self.height() - 14) / 2
        # The needle, then the head (a round top on a collar).
        painter.setPen(QPen(colour, 1.4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(centre_x, top + 8), QPointF(centre_x, top + 14))
        head = QPainterPath()
        head.addEllipse(QRectF(centre_x - 3.5, top, 7, 6))
        head.addRoundedRect(QRectF(centre_x - 5, top + 5.5, 10, 2.5), 1, 1)
        if self.isChecked():
            painter.fillPath(head.simplified(), colour)
        else:
            painter.setPen(QPen(colour, 1.2))
            painter.drawPath(head.simplified())
        painter.end()


class MessageHeader:
    """The header row of one message (a layout in the message, not a widget of its own:
    a page of fifty messages opens faster with fewer widgets).

    The pin and "Writing…" are made only when first needed.

    Attributes:
        row: the layout, first in the message's column.
        name: "You" or "Claude".
        time: when it was written ("14:05"; the long form in its tooltip).
        pin: the pin, once first shown.
    """

    def __init__(
        self,
        owner: QWidget,
        *,
        is_user: bool,
        created_at: datetime,
        now: datetime,
        pin_clicked: Callable[[], None],
    ) -> None:
        self._owner = owner
        self._pin_clicked = pin_clicked
        self.row = QHBoxLayout()
        self.row.setSpacing(8)
        self.row.setContentsMargins(4 if is_user else 0, 0, 4 if is_user else 0, 0)
        self.name = QLabel("You" if is_user else "Claude", owner)
        name_font = QFont(owner.font())
        name_font.setWeight(QFont.Weight.DemiBold)
        self.name.setFont(name_font)
        self.time = QLabel(timestamp(created_at, now), owner)
        self.time.setToolTip(full_timestamp(created_at))
        self.time.setFont(scaled_font(owner.font(), 0.88))
        if is_user:
            self.row.addStretch(1)
        self.row.addWidget(self.name)
        self.row.addWidget(self.time)
        # The pin's place is kept from the start: shown on hover, it moves nothing
        # (the version arrows after it stay where the pointer is, issue 23).
        # (A spacer gets no spacing beside it, the pin does: the slot holds both.)
        self._pin_slot = QSpacerItem(
            PIN_SIZE.width() + self.row.spacing(),
            PIN_SIZE.height(),
            QSizePolicy.Policy.Fixed,
            QSizePolicy.Policy.Fixed,
        )
        self.row.addItem(self._pin_slot)
        if not is_user:
            self.row.addStretch(1)
        self._state: QLabel | None = None  # "Writing…"
        self._shown_state: str | None = None  # what `_state` shows (None: hidden or unmade)
        self.pin: PinButton | None = None
        self._bar_slot: QSpacerItem | None = None  # the place kept for the bar (`reserve_bar`)

    def set_time(self, created_at: datetime, now: datetime) -> None:
        """When the message was written (a row built ahead, given its message)."""
        self.time.setText(timestamp(created_at, now))
        self.time.setToolTip(full_timestamp(created_at))

    @property
    def said_by(self) -> str:
        """ "Claude, 14:05": who and when, as a screen reader says it."""
        return f"{self.name.text()}, {self.time.text()}"

    def reserve_bar(self, size: QSize) -> None:
        """Keep the place of a bar `size` big after the pin's place, for the bar made later
        (`add_bar`): making it then moves nothing (issue 23)."""
        if self._bar_slot is not None:
            return
        # A spacer gets no spacing beside it, the bar does: the slot holds both.
        self._bar_slot = QSpacerItem(
            size.width() + self.row.spacing(),
            size.height(),
            QSizePolicy.Policy.Fixed,
            QSizePolicy.Policy.Fixed,
        )
        self.row.insertItem(self._after_pin(), self._bar_slot)

    def add_bar(self, bar: QWidget) -> None:
        """The message's bar (versions, hover actions) goes after the pin's place, in the
        place kept for it if any."""
        if self._bar_slot is not None:
            self.row.takeAt(self.row.indexOf(self._bar_slot))
            self._bar_slot = None
        self.row.insertWidget(self._after_pin(), bar)
        bar.show()

    def _after_pin(self) -> int:
        pin = self.row.indexOf(self.pin) if self.pin is not None else -1
        return (pin if pin >= 0 else self.row.indexOf(self._pin_slot)) + 1

    def show_pin(self, *, pinned: bool, offered: bool) -> None:
        """Show the pin while pinned, or when pinning is offered (`pin`, once made)."""
        if not (pinned or offered):
            if self.pin is not None:
                self.pin.hide()
            return
        if self.pin is None:
            self.pin = PinButton(self._owner)
            self.pin.clicked.connect(self._pin_clicked)
            policy = self.pin.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            self.pin.setSizePolicy(policy)
            # In the place kept for it, beside the name and time.
            index = self.row.indexOf(self._pin_slot)
            self.row.takeAt(index)
            self.row.insertWidget(index, self.pin)
        self.pin.setChecked(pinned)
        tip = PINNED_TIP if pinned else PIN_TIP
        self.pin.setToolTip(tip)
        self.pin.setAccessibleName(tip)
        self.pin.show()

    def set_writing(self, writing: bool) -> None:
        """ "Writing…" beside the time while a reply's text streams in."""
        self._set_state(WRITING if writing else None)

    def set_sending(self, sending: bool) -> None:
        """ "Sending…" beside the time until the user's message is on disk."""
        self._set_state(SENDING if sending else None)

    def _set_state(self, text: str | None) -> None:
        if text == self._shown_state:
            return  # a reply's every delta asks for "Writing…" again: no call into Qt
        self._shown_state = text
        if self._state is None:
            self._state = QLabel(self._owner)
            self._state.setFont(scaled_font(self._owner.font(), 0.88))
            set_text_colour(self._state, muted_text_colour(self._owner.palette()))
            self.row.insertWidget(self.row.indexOf(self.time) + 1, self._state)
        if text is not None:
            self._state.setText(text)
        self._state.setVisible(text is not None)

    def menu_anchor(self) -> QPoint:
        """Where the message's menu opens from the keyboard: under the name."""
        return self._owner.mapToGlobal(self.name.geometry().bottomLeft())

    def apply_palette(self) -> None:
        muted = muted_text_colour(self._owner.palette())
        for label in (self.time, self._state):
            if label is not None:
                set_text_colour(label, muted)
