"""Settings → Memory: how Claude reaches earlier messages, and whether other conversations.

Every `RecallSettings` field in plain words: quoting matching earlier messages
automatically (and how much room they may take), letting Claude search the archive
itself a few times per reply, and — off until the user turns it on — looking in their
other conversations too, for both.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.settings import RecallSettings
from app.ui.forms import hint, page_layout, sized_row, switch_box

LOOK_BACK: Final = "Let Claude look back in earlier messages"
LOOK_BACK_NOTE: Final = (
    "When a conversation has been summarized, Claude can still find what was said word "
    "for word: Cairn quotes the earlier messages that match your question, and Claude "
    "may search them while it answers. It all happens on this computer."
)

# The most of the window recall may use, in percent (RecallSettings.budget_ratio ≤ 0.2).
MAX_BUDGET_PERCENT = 20


class RecallSettingsPage(QWidget):
    """The recall settings, edited on controls; `settings()` reads them back.

    Attributes:
        automatic, tool, across_conversations: the switches.
        budget: the room for quoted messages, in percent of what the model can read.
        max_lookups: how many searches Claude may make for one reply.
    """

    def __init__(self, settings: RecallSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._original = settings

        quoting, self.automatic, quoting_layout = switch_box(
            "Earlier messages in your questions",
            "Look up earlier messages automatically",
            settings.automatic,
            self,
        )
        self.budget = QSpinBox(quoting)
        self.budget.setRange(1, MAX_BUDGET_PERCENT)
        self.budget.setSuffix(" % of what Claude can read")
        self.budget.setValue(max(1, round(settings.budget_ratio * 100)))
        self.budget.setAccessibleName("Room for earlier messages")
        quoting_layout.addWidget(
            hint(
                "When older messages have been summarized, Cairn finds the ones that match "
                "what you ask and gives them to Claude word for word, with their dates. "
                "Nothing is sent anywhere else, and it costs no extra request.",
                quoting,
            )
        )
        quoting_layout.addLayout(sized_row("Room for quoted messages:", self.budget))

        searching, self.tool, searching_layout = switch_box(
            "Claude searching by itself",
            "Let Claude search earlier messages while it answers",
            settings.tool,
            self,
        )
        self.max_lookups = QSpinBox(searching)
        self.max_lookups.setRange(1, 10)
        self.max_lookups.setValue(settings.max_lookups)
        self.max_lookups.setAccessibleName("Searches per reply")
        searching_layout.addWidget(
            hint(
                "Claude can look things up in your saved messages while it answers. "
                "The search runs on this computer; what it finds is shown in the reply.",
                searching,
            )
        )
        searching_layout.addLayout(
            sized_row("At most this many searches per reply:", self.max_lookups)
        )

        elsewhere, self.across_conversations, elsewhere_layout = switch_box(
            "Your other conversations",
            "Let Claude use what I said in my other conversations",
            settings.across_conversations,
            self,
        )
        elsewhere_layout.addWidget(
            hint(
                "Off (the standard): Claude only ever sees the conversation you are in. "
                "On: Cairn may also quote your other conversations to Claude, and Claude "
                "may search them. Each quote says which conversation and which day it "
                "comes from, and the reply shows what was used.",
                elsewhere,
            )
        )

        # The page scrolls when the dialog is short (800×600 with Advanced open): its
        # wrapped hints keep their height instead of being squeezed into each other.
        content = QWidget(self)
        layout = page_layout(content)
        layout.addWidget(quoting)
        layout.addWidget(searching)
        layout.addWidget(elsewhere)
        layout.addStretch(1)

        self.automatic.toggled.connect(self._follow_switches)
        self.tool.toggled.connect(self._follow_switches)
        self._follow_switches()
        self._put_dials_under_advanced(layout, (quoting, searching))
        self.scroller = QScrollArea(self)
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Tab moves through the controls, and the page scrolls to the one focused.
        self.scroller.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroller.setAccessibleName("Memory settings")
        self.scroller.setWidget(content)
        self._content = content
        content.setAutoFillBackground(False)  # the tab's own background, as on the others
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroller)

    def _put_dials_under_advanced(self, layout: QVBoxLayout, dials: tuple[QWidget, ...]) -> None:
        """One switch a person can answer on top (`look_back`: either way of looking
        back on); the ways and their dials under an Advanced button (issue 23)."""
        self.look_back = QCheckBox(LOOK_BACK, self)
        self.look_back.setChecked(self.automatic.isChecked() or self.tool.isChecked())
        self.advanced_button = QToolButton(self)
        self.advanced_button.setCheckable(True)
        self.advanced_button.setAutoRaise(True)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setText("Advanced")
        self.advanced_button.setAccessibleName("Advanced: how Claude looks back")
        self._dials = dials
        for dial in dials:
            dial.hide()
        layout.insertWidget(0, self.look_back)
        layout.insertWidget(1, hint(LOOK_BACK_NOTE, self))
        layout.insertWidget(2, self.advanced_button, 0, Qt.AlignmentFlag.AlignLeft)
        self._ways = (self.automatic.isChecked(), self.tool.isChecked())
        self.look_back.toggled.connect(self._look_back_switched)
        self.advanced_button.toggled.connect(self._show_advanced)
        self.automatic.toggled.connect(self._way_switched)
        self.tool.toggled.connect(self._way_switched)

    def _show_advanced(self, shown: bool) -> None:
        for dial in self._dials:
            dial.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.advanced_button.setArrowType(arrow)
        if shown:
            self._grow_to_fit()

    def _grow_to_fit(self) -> None:
        """The dialog grows to show what Advanced opened, as far as its screen allows;
        past that the page scrolls."""
        dialog, content = self.window(), self._content
        screen = dialog.screen()
        width = self.scroller.viewport().width()
        needed = content.heightForWidth(width) if content.hasHeightForWidth() else -1
        extra = max(needed, content.sizeHint().height()) - self.scroller.viewport().height()
        if extra <= 0 or screen is None or not dialog.isWindow():
            return
        room = screen.availableGeometry().bottom() - dialog.frameGeometry().bottom()
        if room > 0:
            dialog.resize(dialog.width(), dialog.height() + min(extra, room))

    def _look_back_switched(self, on: bool) -> None:
        """Off turns both ways off; on puts back the ways that were on (both if none)."""
        automatic, tool = self._ways if on and any(self._ways) else (on, on)
        for box, value in ((self.automatic, automatic), (self.tool, tool)):
            box.blockSignals(True)
            box.setChecked(value)
            box.blockSignals(False)
        self._follow_switches()

    def _way_switched(self) -> None:
        self._ways = (self.automatic.isChecked(), self.tool.isChecked())
        self.look_back.blockSignals(True)
        self.look_back.setChecked(any(self._ways))
        self.look_back.blockSignals(False)

    def _follow_switches(self) -> None:
        """A setting that has no effect while its switch is off is shown greyed."""
        self.budget.setEnabled(self.automatic.isChecked())
        self.max_lookups.setEnabled(self.tool.isChecked())

    def settings(self) -> RecallSettings:
        """The settings as shown (unknown fields from a newer Cairn kept)."""
        return self._original.model_copy(
            update={
                "automatic": self.automatic.isChecked(),
                "budget_ratio": self.budget.value() / 100,
                "tool": self.tool.isChecked(),
                "across_conversations": self.across_conversations.isChecked(),
                "max_lookups": self.max_lookups.value(),
            }
        )
