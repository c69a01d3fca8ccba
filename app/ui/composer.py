"""The message box at the bottom: Enter sends, Shift+Enter adds a line, Esc stops."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.text import (
    BYTE_ORDER_MARK,
    has_visible_text,
    paste_problem,
    restore_pasted_line_breaks,
)
from app.ui.attachment_chips import paperclip_icon
from app.ui.attachment_tray import AttachmentTray, carries_files
from app.ui.contrast import readable_on

MAX_VISIBLE_LINES = 8


class MessageEdit(QPlainTextEdit):
    """A text box that grows with its content, up to a few lines.

    Signals:
        submitted: Enter was pressed (without Shift).
        started: a message was begun (the box was empty and now is not): the app gets
            ready to send it.

    Attributes:
        pasted: texts pasted with "\r" line breaks, which the box shows as "\n";
            `Composer.text` puts them back as pasted.
        up_in_empty: asked when Up (no modifier) is pressed while the box is empty; True
            when it used the key (app.ui.message_actions: edit your last message).
    """

    submitted = Signal()
    started = Signal()
    files_given = Signal(QMimeData)  # files or a picture pasted or dropped: attach them
    paste_noted = Signal(str, bool)  # what happened to a paste, in words; whether refused

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Message Claude…")
        self.setAccessibleName("Message")
        self.setAccessibleDescription(
            "Type your message. Enter sends, Shift+Enter starts a new line."
        )
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._height_kept = False
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._fit_height()
        self.pasted: list[str] = []
        self.up_in_empty: Callable[[], bool] | None = None
        self._empty = True
        self.textChanged.connect(self._note_start)

    def _note_start(self) -> None:
        empty = self.document().isEmpty()  # no reading of the text: asked per keystroke
        if self._empty and not empty:
            self.started.emit()
        self._empty = empty

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return carries_files(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if carries_files(source):
            self.files_given.emit(source)
            return
        text = pasted_text(source)
        if text is None:
            super().insertFromMimeData(source)
            return
        problem = paste_problem(text, self.document().characterCount() - 1)
        if problem is not None:
            self.paste_noted.emit(problem, True)
            return
        if text.startswith(BYTE_ORDER_MARK):
            # An invisible mark some programs put first; said, never silently dropped.
            text = text[len(BYTE_ORDER_MARK) :]
            self.paste_noted.emit(
                "An invisible byte-order mark at the start of the pasted text was left out.",
                False,
            )
        if "\r" in text:
            self.pasted.append(text)
        self.insertPlainText(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # The box's own override, not an event filter: only key presses reach Python, not
        # every event of the box (its key releases, shortcut checks, focus; issue 20).
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        if (
            key == Qt.Key.Key_Up
            and event.modifiers() == Qt.KeyboardModifier.NoModifier
            and self.up_in_empty is not None
            and self.document().isEmpty()
            and self.up_in_empty()
        ):
            return
        super().keyPressEvent(event)

    def keep_height(self) -> None:
        """Keep the box's height while it is empty (cleared at Enter): the window shrinks
        it with the turn's row (`release_height`), one layout of the page, not two."""
        self._height_kept = True

    def release_height(self, *_told: object) -> None:
        """Fit the box to its text again (`keep_height`)."""
        if self._height_kept:
            self._height_kept = False
            self._fit_height()

    def _line_height(self) -> int:
        return QFontMetrics(self.font()).lineSpacing()

    def _fit_height(self) -> None:
        if self._height_kept:
            if self.document().isEmpty():
                return
            self._height_kept = False  # typed into meanwhile: it fits its text at once
        lines = max(1, min(MAX_VISIBLE_LINES, round(self.document().size().height())))
        margins = self.contentsMargins()
        frame = 2 * self.frameWidth() + margins.top() + margins.bottom()
        padding = 2 * int(self.document().documentMargin())
        height = lines * self._line_height() + padding + frame
        if height != self.minimumHeight() or height != self.maximumHeight():
            self.setFixedHeight(height)

    def sizeHint(self) -> QSize:
        return QSize(400, self.height())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_height()  # the text size changed (Ctrl+plus): lines are taller


# The button while a reply is written: its text, accessible name, tooltip, and enabled.
_STOP = ("Stop", "Stop reply", "Stop Claude's reply (Esc). What arrived so far is kept.", True)


def pasted_text(source: QMimeData) -> str | None:
    """The text of a paste or drop as it was copied, or None when it carries none.

    Read from the bytes when there are some: Qt's own reading turns a half-character
    into U+FFFD and drops a leading byte-order mark, silently. A half-character
    (UTF-8 of a lone surrogate) comes back as one, for `paste_problem` to refuse.
    """
    for mime in ("text/plain;charset=utf-8", "text/plain"):
        if not source.hasFormat(mime):
            continue
        raw = bytes(source.data(mime).data())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            try:
                return raw.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                break  # another encoding: Qt knows the system's
    return source.text() if source.hasText() else None


class Composer(QWidget):
    """The text box, its paperclip and its Send/Stop button; attached files above them.

    Signals:
        send_requested(str): the user asked to send this text.
        stop_requested: the user asked to stop the reply being written.
        edit_requested(int, str): sent while `editing` a message (its id): the new version.

    Attributes:
        editing: the id of the message being edited (app.ui.message_actions), or None.
    """

    send_requested = Signal(str)
    stop_requested = Signal()
    edit_requested = Signal(int, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = MessageEdit(self)
        self.button = QPushButton("Send", self)
        self.button.setAccessibleName("Send message")
        self.button.setDefault(False)
        self.button.setAutoDefault(False)
        self.button.setMinimumWidth(84)
        self.attachments = AttachmentTray(self)
        self.paperclip = QToolButton(self)
        self.paperclip.setAutoRaise(True)
        self.paperclip.setAccessibleName("Attach files")
        self.paperclip.setToolTip("Attach pictures, PDFs or text files (or drop or paste them)")
        self.paperclip.clicked.connect(self.attachments.open_dialog)
        self._paint_paperclip()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 8, 12, 12)
        outer.setSpacing(6)
        outer.addWidget(self.attachments)
        layout = QHBoxLayout()
        outer.addLayout(layout)
        # What happened to the last paste, when it was not pasted as it was copied.
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Note about the pasted text")
        self.note.hide()
        outer.addWidget(self.note)
        # Why Send is off for a while (an upgrade updating the conversations): typing goes on.
        self.waiting_note = QLabel(self)
        self.waiting_note.setWordWrap(True)
        self.waiting_note.setAccessibleName("Why sending waits")
        self.waiting_note.hide()
        outer.addWidget(self.waiting_note)
        layout.setSpacing(8)
        layout.addWidget(self.paperclip, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        self._streaming = False
        self._shown: tuple[str, str, str, bool] | None = None  # the button as last set
        self._note_edits = 0
        self.read_only: str | None = None
        self.waiting: str | None = None
        self.editing: int | None = None
        self.editor.submitted.connect(self._submit)
        self.editor.textChanged.connect(self._update_button)
        self.button.clicked.connect(self._button_clicked)
        self.editor.files_given.connect(self.attachments.add_mime)
        self.editor.paste_noted.connect(self.show_note)
        self.editor.textChanged.connect(self._clear_note)
        self.attachments.changed.connect(self._update_button)
        self._update_button()

    @property
    def streaming(self) -> bool:
        return self._streaming

    def show_note(self, text: str, refused: bool) -> None:
        """Say under the box what happened to a paste (refused, or changed visibly)."""
        self.note.setText(("⚠ " if refused else "") + text)
        self.note.setProperty("refused", refused)
        # Readable (4.5:1) on the window behind it, in either theme.
        palette = self.palette()
        colour = readable_on(
            palette.color(QPalette.ColorRole.PlaceholderText),
            [palette.color(QPalette.ColorRole.Window)],
        )
        self.note.setStyleSheet(f"color: {colour.name()};")
        self.note.show()
        self._note_edits = 0 if refused else -1  # a kept paste's own change must not clear it

    def _clear_note(self) -> None:
        if not self.note.isVisible():
            return
        self._note_edits += 1
        if self._note_edits > 0:
            self.note.hide()

    def set_read_only(self, reason: str) -> None:
        """Nothing can be saved (a read-only data folder): the box says so, Send stays off."""
        self.read_only = reason
        self.editor.setReadOnly(True)
        self.editor.setPlaceholderText(reason)
        self.editor.setToolTip(reason)
        self.paperclip.setEnabled(False)
        self._update_button()

    def set_waiting(self, reason: str | None) -> None:
        """Sending waits (`reason`, said under the box) or may go again (None); what is
        typed meanwhile stays in the box."""
        self.waiting = reason
        self.waiting_note.setText(reason or "")
        if reason:
            palette = self.palette()
            colour = readable_on(
                palette.color(QPalette.ColorRole.PlaceholderText),
                [palette.color(QPalette.ColorRole.Window)],
            )
            self.waiting_note.setStyleSheet(f"color: {colour.name()};")
        self.waiting_note.setVisible(bool(reason))
        self._update_button()

    def set_streaming(self, streaming: bool) -> None:
        """While a reply is written, Send turns into Stop."""
        if streaming == self._streaming:
            return  # told at every busy or idle step (a turn shows twice): nothing changes
        self._streaming = streaming
        self._update_button()

    def text(self) -> str:
        """The message as typed and pasted (pasted line breaks kept as they were)."""
        return restore_pasted_line_breaks(self.editor.toPlainText(), self.editor.pasted)

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.editor.pasted = [text] if "\r" in text else []
        cursor = self.editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)

    def clear(self, *, keep_height: bool = False) -> None:
        """Empty the box; `keep_height`: at its height until `editor.release_height`."""
        if keep_height:
            self.editor.keep_height()
        self.editor.clear()
        self.editor.pasted = []
        self.attachments.clear()

    def focus_editor(self) -> None:
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def _has_text(self) -> bool:
        """Something to send: words, or files (once they are all read)."""
        if self.attachments.busy or self.read_only is not None or self.waiting is not None:
            return False
        document = self.editor.document()
        if document.isEmpty():  # the box cleared at Enter: no line to read
            return bool(self.attachments.attachments())
        # Asked on every keystroke: read up to the first line with something on it, not
        # the whole text (a paste of megabytes is copied out once, when sent).
        block = document.firstBlock()
        while block.isValid():
            if has_visible_text(block.text()):
                return True
            block = block.next()
        return bool(self.attachments.attachments())

    def _paint_paperclip(self) -> None:
        self.paperclip.setIcon(paperclip_icon(self.palette().color(QPalette.ColorRole.ButtonText)))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_paperclip()

    def _update_button(self) -> None:
        if self._streaming:
            shown = _STOP
        else:
            shown = (
                "Send" if self.editing is None else "Resend",
                "Send message",
                self.waiting
                or ("Reading the attached files…" if self.attachments.busy else "Send (Enter)"),
                self._has_text(),
            )
        if shown == self._shown:
            return  # asked on every keystroke: most often it says what it said
        self._shown = shown
        text, name, tip, enabled = shown
        # Only what changed is set, since each setter tells the button's event filters and
        # accessibility anew.
        button = self.button
        if button.text() != text:
            button.setText(text)
        if button.accessibleName() != name:
            button.setAccessibleName(name)
        if button.toolTip() != tip:
            button.setToolTip(tip)
        if button.testAttribute(Qt.WidgetAttribute.WA_Disabled) == enabled:  # as set, not
            button.setEnabled(enabled)  # as a disabled window would make it look

    def _submit(self) -> None:
        if self._streaming or not self._has_text():
            return
        if self.editing is not None:
            self.edit_requested.emit(self.editing, self.text())
            return
        self.send_requested.emit(self.text())

    def _button_clicked(self) -> None:
        if self._streaming:
            self.stop_requested.emit()
        else:
            self._submit()
