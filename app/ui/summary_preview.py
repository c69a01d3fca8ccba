"""The preview of a summary: what Claude will remember in place of the older messages,
checked by the user before anything is saved (Accept, Edit, Discard).

Opened with `open()` (never `exec()`): the window stays responsive, and closing the
dialog discards the summary, as Discard does.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pydantic import ValidationError
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.chat.events import SummaryPreview
from app.core.summary import MAX_KEY_POINTS, SourcedPoint, SummaryContent, SummaryDraft
from app.ui.forms import dialog_layout

EMPTY_NARRATIVE = "Write a few words about what was said: a summary can't be empty."
TOO_MANY_POINTS = f"Keep it to {MAX_KEY_POINTS} key points at most."


def figures_text(preview: SummaryPreview) -> str:
    """ "Summarizes 42 messages · the newest 12 stay · about 1/14 of their length"."""
    count = preview.condensed
    condensed = f"Summarizes {count:,} message{'s' if count != 1 else ''}"
    kept = f"the newest {preview.kept:,} stay" if preview.kept != 1 else "the newest message stays"
    parts = [condensed, kept]
    if preview.tokens_before > 0 and 0 < preview.tokens_after < preview.tokens_before:
        parts.append(
            f"about 1/{round(preview.tokens_before / preview.tokens_after)} of their length"
        )
    return " · ".join(parts)


def _as_error(label: QLabel) -> None:
    dark = label.palette().color(QPalette.ColorRole.Window).lightness() < 128
    label.setStyleSheet(f"color: {'#ff8a8a' if dark else '#b91c1c'};")


def drafts_html(drafts: Sequence[SummaryDraft]) -> str:
    """The drafts as one read-only document: narrative, key points, decisions, to-dos
    and open questions, each draft under "Part i of n" when there are several.

    One document lays out in one pass; a word-wrapped label per paragraph measured
    itself at several widths (60-100 ms for a long draft while a reply streamed).
    """
    parts: list[str] = []
    count = len(drafts)
    for index, draft in enumerate(drafts):
        content = draft.content
        if count > 1:
            parts.append(f"<h3>Part {index + 1} of {count}</h3>")
        parts.append(f"<p>{escape(content.narrative)}</p>")
        lists = (
            ("Key points", [p.text for p in content.key_points]),
            ("Decisions", [p.text for p in content.decisions]),
            ("To do", [item.task for item in content.action_items]),
            ("Open questions", [p.text for p in content.open_questions]),
        )
        for name, lines in lists:
            if lines:
                items = "".join(f"<li>{escape(line)}</li>" for line in lines)
                parts.append(f"<p><b>{name}</b></p><ul>{items}</ul>")
    return "".join(parts)


class DraftSection(QFrame):
    """One draft's narrative and key points as editable fields (built on Edit)."""

    def __init__(self, draft: SummaryDraft, title: str | None, parent: QWidget) -> None:
        super().__init__(parent)
        self.draft = draft
        self.setFrameShape(QFrame.Shape.StyledPanel)
        content = draft.content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        if title is not None:
            layout.addWidget(self._heading(title))

        layout.addWidget(self._heading("Summary"))
        self.narrative_edit = QPlainTextEdit(content.narrative, self)
        self.narrative_edit.setAccessibleName("What was said (the summary's narrative)")
        self.narrative_edit.setTabChangesFocus(True)
        self.narrative_edit.setMinimumHeight(90)
        self.narrative_edit.setMaximumHeight(180)
        self.narrative_error = self._error()
        layout.addWidget(self.narrative_edit)
        layout.addWidget(self.narrative_error)

        points = [p.text for p in content.key_points]
        layout.addWidget(self._heading("Key points"))
        self.points_edit = QPlainTextEdit("\n".join(points), self)
        self.points_edit.setAccessibleName("Key points, one per line")
        self.points_edit.setPlaceholderText("One key point per line")
        self.points_edit.setTabChangesFocus(True)
        self.points_edit.setMinimumHeight(70)
        self.points_edit.setMaximumHeight(150)
        self.points_error = self._error()
        layout.addWidget(self.points_edit)
        layout.addWidget(self.points_error)
        if content.decisions or content.action_items or content.open_questions:
            kept = QLabel("Decisions, to-dos and open questions stay as drafted.", self)
            kept.setWordWrap(True)
            layout.addWidget(kept)

    def _heading(self, text: str) -> QLabel:
        label = QLabel(text, self)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    def _error(self) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        _as_error(label)
        label.hide()
        return label

    def edited(self) -> SummaryDraft | None:
        """The draft with what the user wrote, or None (the reason shown under its field)."""
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

        self.view = QTextBrowser(self)
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.view.setOpenLinks(False)
        self.view.setAccessibleName("The draft summary")
        self.view.document().setDocumentMargin(10)
        self.view.setHtml(drafts_html(preview.drafts))
        # The edit fields are built when Edit is clicked: most previews are accepted as
        # they are, and building them costs the window a moment while a reply streams.
        self.sections: list[DraftSection] = []
        self._pages = QStackedWidget(self)
        self._pages.addWidget(self.view)

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

        layout = dialog_layout(self)
        layout.addWidget(intro)
        layout.addWidget(self.figures)
        layout.addWidget(self._pages, 1)
        layout.addWidget(buttons)
        self.resize(640, 560)
        self.accept_button.setFocus()

    def edit(self) -> None:
        """Make every draft's narrative and key points editable."""
        if not self.sections:
            host = QWidget(self)
            sections = QVBoxLayout(host)
            sections.setContentsMargins(0, 0, 0, 0)
            sections.setSpacing(10)
            count = len(self.preview.drafts)
            for index, draft in enumerate(self.preview.drafts):
                title = f"Part {index + 1} of {count}" if count > 1 else None
                section = DraftSection(draft, title, host)
                sections.addWidget(section)
                self.sections.append(section)
            sections.addStretch(1)
            scroll = QScrollArea(self)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(host)
            self._pages.addWidget(scroll)
            self._pages.setCurrentWidget(scroll)
        self.edit_button.setEnabled(False)
        self.sections[0].narrative_edit.setFocus()

    @property
    def editing(self) -> bool:
        return bool(self.sections)

    def _accept(self) -> None:
        if not self.editing:
            self.accept()
            return
        edited = [section.edited() for section in self.sections]
        if any(draft is None for draft in edited):
            return  # the reason is shown under the field
        self.drafts = tuple(draft for draft in edited if draft is not None)
        self.accept()
