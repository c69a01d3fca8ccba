"""Settings → Memory: how Claude reaches earlier messages, and whether other conversations.

Every `RecallSettings` field in plain words: quoting matching earlier messages
automatically (and how much room they may take), letting Claude search the archive
itself a few times per reply, and — off until the user turns it on — looking in their
other conversations too, for both.
"""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.settings import RecallSettings

# The most of the window recall may use, in percent (RecallSettings.budget_ratio ≤ 0.2).
MAX_BUDGET_PERCENT = 20


def _note(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # as the Summaries page's hints
    return label


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

        quoting = QGroupBox("Earlier messages in your questions", self)
        self.automatic = QCheckBox("Look up earlier messages automatically", quoting)
        self.automatic.setChecked(settings.automatic)
        self.budget = QSpinBox(quoting)
        self.budget.setRange(1, MAX_BUDGET_PERCENT)
        self.budget.setSuffix(" % of what Claude can read")
        self.budget.setValue(max(1, round(settings.budget_ratio * 100)))
        self.budget.setAccessibleName("Room for earlier messages")
        quoting_form = QFormLayout()
        quoting_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        quoting_form.addRow("Room for them:", self.budget)
        quoting_layout = QVBoxLayout(quoting)
        quoting_layout.addWidget(self.automatic)
        quoting_layout.addWidget(
            _note(
                "When older messages have been condensed, Cairn finds the ones that match "
                "what you ask and gives them to Claude word for word, with their dates. "
                "Nothing is sent anywhere else, and it costs no extra request.",
                quoting,
            )
        )
        quoting_layout.addLayout(quoting_form)

        searching = QGroupBox("Claude searching by itself", self)
        self.tool = QCheckBox("Let Claude search earlier messages while it answers", searching)
        self.tool.setChecked(settings.tool)
        self.max_lookups = QSpinBox(searching)
        self.max_lookups.setRange(1, 10)
        self.max_lookups.setValue(settings.max_lookups)
        self.max_lookups.setAccessibleName("Searches per reply")
        lookups_form = QFormLayout()
        lookups_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        lookups_form.addRow("At most this many searches per reply:", self.max_lookups)
        searching_layout = QVBoxLayout(searching)
        searching_layout.addWidget(self.tool)
        searching_layout.addWidget(
            _note(
                "Claude can look things up in your saved messages while it answers. "
                "The search runs on this computer; what it finds is shown in the reply.",
                searching,
            )
        )
        searching_layout.addLayout(lookups_form)

        elsewhere = QGroupBox("Your other conversations", self)
        self.across_conversations = QCheckBox(
            "Let Claude use what I said in my other conversations", elsewhere
        )
        self.across_conversations.setChecked(settings.across_conversations)
        elsewhere_layout = QVBoxLayout(elsewhere)
        elsewhere_layout.addWidget(self.across_conversations)
        elsewhere_layout.addWidget(
            _note(
                "Off (the standard): Claude only ever sees the conversation you are in. "
                "On: Cairn may also quote your other conversations to Claude, and Claude "
                "may search them. Each quote says which conversation and which day it "
                "comes from, and the reply shows what was used.",
                elsewhere,
            )
        )

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 8, 6, 4)
        layout.setSpacing(12)
        layout.addWidget(quoting)
        layout.addWidget(searching)
        layout.addWidget(elsewhere)
        layout.addStretch(1)

        self.automatic.toggled.connect(self._follow_switches)
        self.tool.toggled.connect(self._follow_switches)
        self._follow_switches()

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
