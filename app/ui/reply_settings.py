"""Settings → Replies: the instructions new conversations start with, "Think longer"
(offered where the chosen model has a setting for it), and whether Cairn says when a
reply is ready while its window is in the background."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.catalog import ModelInfo
from app.core.settings import MAX_INSTRUCTIONS_CHARS, AppSettings
from app.core.thinking import offers_think_longer
from app.ui.forms import hint, page_layout, switch_box
from app.ui.instructions_dialog import EXAMPLE, NEW_CONVERSATIONS_QUESTION


class ReplySettingsPage(QWidget):
    """The default instructions and the notification switch; `applied()` reads them back.

    Attributes:
        default_instructions: what a new conversation's instructions start as.
        notify: tell the user when a reply finishes in the background.
        think_longer: "Think longer" (a higher effort where the model takes one:
            app.core.thinking); disabled, and `think_longer_note` says why, for a model
            with no setting for it.
    """

    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        instructions = QGroupBox("Instructions for new conversations", self)
        self.default_instructions = QPlainTextEdit(instructions)
        self.default_instructions.setAccessibleName("Instructions for new conversations")
        self.default_instructions.setPlaceholderText(EXAMPLE)
        self.default_instructions.setPlainText(settings.default_instructions)
        self.default_instructions.setTabChangesFocus(True)
        lines = self.default_instructions.fontMetrics().lineSpacing()
        self.default_instructions.setMinimumHeight(lines * 5)
        instructions_layout = QVBoxLayout(instructions)
        # This page is about new conversations, not the one on screen.
        instructions_layout.addWidget(QLabel(NEW_CONVERSATIONS_QUESTION, instructions))
        instructions_layout.addWidget(self.default_instructions)
        instructions_layout.addWidget(
            hint(
                "Each new conversation starts with these; change them for one conversation "
                "with the Instructions button beside its title (Ctrl+I). Conversations you "
                "already have keep their own.",
                instructions,
            )
        )

        thinking, self.think_longer, thinking_layout = switch_box(
            "Thinking", "Think longer before answering", settings.think_longer, self
        )
        self.think_longer.setToolTip(
            "Claude takes more time and care over each reply, where the model allows it. "
            "Replies cost more and take longer."
        )
        self.think_longer_note = hint("", thinking)
        self.think_longer_note.hide()
        thinking_layout.addWidget(self.think_longer_note)

        told, self.notify, _told_layout = switch_box(
            "When Claude has replied",
            "Tell me when a reply is ready while Cairn is in the background",
            settings.notify_when_done,
            self,
        )

        layout = page_layout(self)
        layout.addWidget(instructions, 1)
        layout.addWidget(thinking)
        layout.addWidget(told)
        layout.addStretch(0)

    def set_model(self, model: ModelInfo | None) -> None:
        """Offer "Think longer" where `model` (the model for new messages) has a setting
        for how long it thinks; else disable it and say why in plain words. What was
        chosen is kept either way: it applies again with a model that has the setting."""
        offered = model is None or offers_think_longer(model)
        self.think_longer.setEnabled(offered)
        why = (
            ""
            if offered or model is None
            else f"{model.display_name} has no setting for how long it thinks, so this "
            "makes no difference with it. It applies again when you choose a model that "
            "has one (General → Model for new messages)."
        )
        self.think_longer_note.setText(why)
        self.think_longer_note.setVisible(bool(why))
        self.think_longer.setAccessibleDescription(why)

    def applied(self, settings: AppSettings) -> AppSettings:
        """`settings` with this page's values (the instructions trimmed to the limit)."""
        text = self.default_instructions.toPlainText().strip()[:MAX_INSTRUCTIONS_CHARS]
        return settings.model_copy(
            update={
                "default_instructions": text,
                "notify_when_done": self.notify.isChecked(),
                "think_longer": self.think_longer.isChecked(),
            }
        )
