"""The preview of a summary: what Claude will remember in place of the older messages,
checked by the user before anything is saved (Accept, Edit, Discard).

Opened with `open()` (never `exec()`): the window stays responsive, and closing the
dialog discards the summary, as Discard does.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.chat.events import SummaryPreview
from app.core.summary import MAX_KEY_POINTS, SourcedPoint, SummaryContent, SummaryDraft

EMPTY_NARRATIVE = "Write a few words about what was said: a summary can't be empty."
TOO_MANY_POINTS = f"Keep it to {MAX_KEY_POINTS} key points at most."


def figures_text(preview: SummaryPreview) -> str:
    """ "Condenses 42 messages · the newest 12 stay · about 11,500 → 800 tokens"."""
    condensed = f"Condenses {preview.condensed:,} message{'s' if preview.condensed != 1 else ''}"
    kept = f"the newest {preview.kept:,} stay" if preview.kept != 1 else "the newest message stays"
    tokens = f"about {preview.tokens_before:,} → {preview.tokens_after:,} tokens"
    return " · ".join((condensed, kept, tokens))


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"• {line}" for line in lines)


def _as_error(label: QLabel) -> None:
    dark = label.palette().color(QPalette.ColorRole.Window).lightness() < 128
    label.setStyleSheet(f"color: {'#ff8a8a' if dark else '#b91c1c'};")


class DraftSection(QFrame):
    """One draft: its narrative and points, read-only until Edit."""

    def __init__(self, draft: SummaryDraft, title: str | None, parent: QWidget) -> None:
        super().__init__(parent)
        self.draft = draft
        self.setFrameShape(QFrame.Shape.StyledPanel)
        content = draft.content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        if title is not None:
            heading = QLabel(title, self)
            font = heading.font()
            font.setBold(True)
            heading.setFont(font)
            layout.addWidget(heading)

        self.narrative_heading = self._heading("Summary")
        self.narrative_heading.hide()
        self.narrative_label = self._text(content.narrative)
        self.narrative_edit = QPlainTextEdit(content.narrative, self)
        self.narrative_edit.setAccessibleName("What was said (the summary's narrative)")
        self.narrative_edit.setTabChangesFocus(True)
        self.narrative_edit.setMinimumHeight(90)
        self.narrative_edit.setMaximumHeight(180)
        self.narrative_edit.hide()
        self.narrative_error = QLabel(self)
        self.narrative_error.setWordWrap(True)
        _as_error(self.narrative_error)
        self.narrative_error.hide()
        layout.addWidget(self.narrative_heading)
        layout.addWidget(self.narrative_label)
        layout.addWidget(self.narrative_edit)
        layout.addWidget(self.narrative_error)

        points = [p.text for p in content.key_points]
        self.points_heading = self._heading("Key points")
        self.points_label = self._text(_bullets(points))
        self.points_edit = QPlainTextEdit("\n".join(points), self)
        self.points_edit.setAccessibleName("Key points, one per line")
        self.points_edit.setPlaceholderText("One key point per line")
        self.points_edit.setTabChangesFocus(True)
        self.points_edit.setMinimumHeight(70)
        self.points_edit.setMaximumHeight(150)
        self.points_edit.hide()
        self.points_error = QLabel(self)
        self.points_error.setWordWrap(True)
        _as_error(self.points_error)
        self.points_error.hide()
        self.points_heading.setVisible(bool(points))
        self.points_label.setVisible(bool(points))
        for widget in (
            self.points_heading,
            self.points_label,
            self.points_edit,
            self.points_error,
        ):
            layout.addWidget(widget)

        others = (
            ("Decisions", [p.text for p in content.decisions]),
            ("To do", [item.task for item in content.action_items]),
            ("Open questions", [p.text for p in content.open_questions]),
        )
        for name, lines in others:
            if lines:
                layout.addWidget(self._heading(name))
                layout.addWidget(self._text(_bullets(lines)))

    def _heading(self, text: str) -> QLabel:
        label = QLabel(text, self)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    def _text(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def edit(self) -> None:
        """Turn the narrative and the key points into editable fields."""
        self.narrative_label.hide()
        self.narrative_heading.show()
        self.narrative_edit.show()
        self.points_label.hide()
        self.points_heading.show()
        self.points_edit.show()

    @property
    def editing(self) -> bool:
        return not self.narrative_edit.isHidden()

    def edited(self) -> SummaryDraft | None:
        """The draft with what the user wrote, or None (the reason shown under its field)."""
        if not self.editing:
            return self.draft
        self.narrative_error.hide()
        self.points_error.hide()
        narrative = self.narrative_edit.toPlainText().strip()
        if not narrative:
            self.narrative_error.setText(EMPTY_NARRATIVE)
            self.narrative_error.show()
            return None
        # A point left as it was keeps the messages it came from.
        sources = {p.text: p.sources for p in self.draft.content.key_points}
        lines = [line.strip() for line in self.points_edit.toPlainText().splitlines()]
        points = [SourcedPoint(text=t, sources=sources.get(t, [])) for t in lines if t]
        update = {"narrative": narrative, "key_points": points}
        try:
            content = SummaryContent.model_validate({**self.draft.content.model_dump(), **update})
        except ValidationError:
            self.points_error.setText(TOO_MANY_POINTS)
            self.points_error.show()
            return None
        return self.draft.model_copy(update={"content": content})


class SummaryPreviewDialog(QDialog):
    """The draft summary with its figures; Accept (default), Edit, Discard.

    Attributes:
        drafts: once accepted, what to save (edited or as drafted).
    """

    def __init__(self, preview: SummaryPreview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = preview
        self.drafts: tuple[SummaryDraft, ...] = preview.drafts
        self.setWindowTitle("Check the summary")
        self.setMinimumWidth(480)

        intro = QLabel(
            "This is what Claude will remember in place of the older messages. "
            "Nothing is deleted: the originals stay on this computer.",
            self,
        )
        intro.setWordWrap(True)
        self.figures = QLabel(figures_text(preview), self)
        self.figures.setWordWrap(True)
        self.figures.setAccessibleName("What the summary does")

        host = QWidget(self)
        sections = QVBoxLayout(host)
        sections.setContentsMargins(0, 0, 0, 0)
        sections.setSpacing(10)
        count = len(preview.drafts)
        self.sections: list[DraftSection] = []
        for index, draft in enumerate(preview.drafts):
            title = f"Part {index + 1} of {count}" if count > 1 else None
            section = DraftSection(draft, title, host)
            sections.addWidget(section)
            self.sections.append(section)
        sections.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(host)

        buttons = QDialogButtonBox(self)
        self.accept_button = buttons.addButton("Accept", QDialogButtonBox.ButtonRole.AcceptRole)
        self.edit_button: QPushButton = buttons.addButton(
            "Edit", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.discard_button = buttons.addButton("Discard", QDialogButtonBox.ButtonRole.RejectRole)
        self.accept_button.setDefault(True)
        self.accept_button.setAutoDefault(True)
        self.edit_button.setAutoDefault(False)
        self.discard_button.setAutoDefault(False)
        self.edit_button.clicked.connect(self.edit)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(10)
        layout.addWidget(intro)
        layout.addWidget(self.figures)
        layout.addWidget(scroll, 1)
        layout.addWidget(buttons)
        self.resize(640, 560)
        self.accept_button.setFocus()

    def edit(self) -> None:
        """Make every draft's narrative and key points editable."""
        for section in self.sections:
            section.edit()
        self.edit_button.setEnabled(False)
        self.sections[0].narrative_edit.setFocus()

    def _accept(self) -> None:
        edited = [section.edited() for section in self.sections]
        if any(draft is None for draft in edited):
            return  # the reason is shown under the field
        self.drafts = tuple(draft for draft in edited if draft is not None)
        self.accept()
