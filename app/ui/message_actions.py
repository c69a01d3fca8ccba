"""What a user can do with a message: copy, edit and resend, regenerate, continue, and
browse its versions ("‹ 2 / 3 ›") — on hover, in its menu, and by keyboard (issue 11).

`MessageActions` puts a `MessageBar` in each message's header as the transcript builds
it (the version arrows always, when there are versions; Copy and Edit or Regenerate
while the pointer or the keyboard is on the message), and gives every message one menu: a
right-click on its text opens it too, in place of the text box's own. Ctrl+R writes
Claude's latest reply again; Up in an empty composer edits your last message, Esc
cancels. The service decides and refuses in words (app.chat.versions); this only asks.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, QMimeData, QObject, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QWidget,
)

from app.core.message_kinds import Role
from app.ui.message_bar import (
    COPY_ACTION,
    EDIT_ACTION,
    NEXT_VERSION,
    PREVIOUS_VERSION,
    REGENERATE_ACTION,
    REGENERATE_SHORTCUT,
    MessageBar,
    version_label,
)
from app.ui.reply_actions import CONTINUE_ACTION

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.models import Message
    from app.ui.composer import Composer
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

COPY_MARKDOWN_ACTION: Final = "Copy as Markdown"
COPY_SELECTION_ACTION: Final = "Copy selected text"
EDITING_NOTE: Final = "Editing your message — Enter sends it as a new version, Esc cancels."


def message_mime(message: Message) -> QMimeData:
    """What Copy puts on the clipboard: Claude's Markdown as HTML (bold stays bold in a
    mail or a document) and as clean text without its marks (for plain editors); the
    user's own words exactly as typed."""
    mime = QMimeData()
    if message.role is Role.ASSISTANT:
        document = QTextDocument()
        document.setMarkdown(message.content)
        mime.setHtml(document.toHtml())
        mime.setText(document.toPlainText())
    else:
        mime.setText(message.content)
    return mime


class MessageActions(QObject):
    """Copy, Edit, Regenerate, Continue and versions for every message on screen.

    Attributes:
        editing: the message being edited in the composer, or None.
        edit_bar: the line above the composer that says a message is being edited.
    """

    def __init__(
        self,
        transcript: TranscriptView,
        composer: Composer,
        controller: ChatController,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self._composer = composer
        self._controller = controller
        self._bars: dict[MessageWidget, MessageBar] = {}
        # The size of a bar with nothing shown, by its kind (`_bar_kind`): the place kept
        # for a bar not made yet.
        self._bar_sizes: dict[tuple[Role, str], QSize] = {}
        self.editing: Message | None = None
        self._draft = ""  # the composer's text before an edit began, given back on Esc
        self.edit_bar = _EditBar(parent)
        self.edit_bar.cancel.clicked.connect(self.cancel_edit)
        transcript.message_built.connect(self._attach)
        composer.edit_requested.connect(self._send_edit)
        # Up in the empty box: the box's own key press asks (no event filter on it: one
        # would be a call into Python for each of its events; issue 20). Esc while editing
        # is this object's filter, installed only while an edit is open (`begin_edit`).
        composer.editor.up_in_empty = self._up_in_empty
        # A bar not pointed at shows only its message's versions and whether it is being
        # edited: a change of activity touches the bars pointed at, an update its message's.
        controller.message_updated.connect(self._message_updated)
        controller.activity_changed.connect(self._refresh_pointed_at)
        controller.conversation_opened.connect(self.cancel_edit)
        controller.message_removed.connect(self._removed)
        regenerate = QShortcut(QKeySequence(REGENERATE_SHORTCUT), parent)
        regenerate.setContext(Qt.ShortcutContext.WindowShortcut)
        regenerate.activated.connect(self.regenerate_latest)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    # --- what the keyboard and the menu reach

    def menu_for(self, widget: MessageWidget) -> QMenu:
        """The message's menu: copying, the actions that apply, versions, then its pin."""
        menu = widget.context_menu()  # pin or unpin
        message, first = widget.message, menu.actions()[0]
        selected = _selected_text_view(widget)
        if selected is not None:
            copy_selected = getattr(selected, "copy_selection", selected.copy)
            menu.insertAction(first, _action(menu, COPY_SELECTION_ACTION, copy_selected))
        copy = _action(menu, COPY_ACTION, lambda: self.copy_message(widget))
        copy.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        menu.insertAction(first, copy)
        if message.role is Role.ASSISTANT:
            marked = _action(menu, COPY_MARKDOWN_ACTION, lambda: _copy(message.content))
            menu.insertAction(first, marked)
        menu.insertSeparator(first)
        if message.role is Role.USER:
            edit = _action(menu, f"{EDIT_ACTION} message", lambda: self.begin_edit(widget))
            edit.setEnabled(not self._chat.current.state.activity.busy)
            menu.insertAction(first, edit)
        else:
            regenerate = _action(
                menu,
                f"{REGENERATE_ACTION} reply",
                lambda: self._chat.current.versions.regenerate(message),
            )
            regenerate.setShortcut(QKeySequence(REGENERATE_SHORTCUT))
            regenerate.setEnabled(self._chat.current.versions.can_regenerate(message))
            menu.insertAction(first, regenerate)
            if self._chat.current.endings.can_continue(message):
                go_on = _action(
                    menu,
                    f"{CONTINUE_ACTION} reply",
                    lambda: self._chat.current.endings.continue_reply(message),
                )
                menu.insertAction(first, go_on)
        if message.version_count > 1:
            number = message.version_number
            for text, target in ((PREVIOUS_VERSION, number - 1), (NEXT_VERSION, number + 1)):
                shown = _action(
                    menu,
                    f"{text} ({version_label(message)})",
                    partial(self._show_version, widget, target),
                )
                shown.setEnabled(1 <= target <= message.version_count)
                menu.insertAction(first, shown)
        menu.insertSeparator(first)
        return menu

    def regenerate_latest(self) -> None:
        """Ctrl+R: Claude's latest reply, written again."""
        widgets = self._transcript.message_widgets()
        if widgets and widgets[-1].message.role is Role.ASSISTANT:
            self._chat.current.versions.regenerate(widgets[-1].message)

    def edit_latest(self) -> bool:
        """Up in an empty composer: edit your last message."""
        for widget in reversed(self._transcript.message_widgets()):
            if widget.message.role is Role.USER:
                return self.begin_edit(widget)
        return False

    # --- editing

    def begin_edit(self, widget: MessageWidget) -> bool:
        """Put the message in the composer to edit it; Enter sends it as a new version."""
        if not self._chat.current.versions.begin_edit(widget.message):
            return False
        if self.editing is None:
            self._draft = self._composer.text()
            self._composer.editor.installEventFilter(self)  # Esc cancels the edit
        self.editing = widget.message
        self._bar(widget)  # its "Editing" shows on its bar
        self._composer.editing = widget.message.id
        self._composer.set_text(widget.message.content)
        self._composer.focus_editor()
        self.edit_bar.show()
        self.refresh()
        return True

    def cancel_edit(self, *_opened: object) -> None:
        """Esc: the message stays as it was, the composer gets its earlier text back."""
        if self.editing is None:
            return
        self._leave_edit()
        self._composer.set_text(self._draft)
        self._draft = ""

    def _send_edit(self, message_id: int, text: str) -> None:
        if self._chat.current.versions.edit(message_id, text):
            self._leave_edit()
            self._composer.set_text(self._draft)
            self._draft = ""

    def _leave_edit(self) -> None:
        self._composer.editor.removeEventFilter(self)
        self.editing = None
        self._composer.editing = None
        self._composer.editor.textChanged.emit()  # the button says Send again
        self.edit_bar.hide()
        self.refresh()

    def _removed(self, message_id: int) -> None:
        if self.editing is not None and self.editing.id == message_id:
            self.cancel_edit()

    def copy_message(self, widget: MessageWidget) -> None:
        """Copy the message (rich and plain) and say "Copied" on its bar for a moment."""
        QGuiApplication.clipboard().setMimeData(message_mime(widget.message))
        self._bar(widget).say_copied()

    # --- the bars

    def refresh(self, *_changed: object) -> None:
        """Bring every bar up to date with its message and what the conversation allows."""
        for widget, bar in self._bars.items():
            self._refresh(widget, bar)

    def _refresh_pointed_at(self, *_changed: object) -> None:
        """The bars whose buttons show (pointed at, or with the keyboard on them): what
        the conversation allows changed. O(1), whatever the page holds."""
        for widget, bar in self._bars.items():
            if widget.pointed_at:
                self._refresh(widget, bar)

    def _message_updated(self, message: Message) -> None:
        widget = self._transcript.message_widget(message.id)
        if widget is not None:
            bar = self._bar(widget) if self._wants_bar(widget) else self._bars.get(widget)
            if bar is not None:
                self._refresh(widget, bar)
        self._refresh_pointed_at()  # the newest reply may have changed

    def _attach(self, widget: MessageWidget) -> None:
        widget.pointer_changed.connect(lambda: self._refresh(widget, self._bar(widget)))
        widget.copy_requested.connect(lambda: self.copy_message(widget))
        widget.menu_for = self.menu_for
        widget.destroyed.connect(lambda: self._bars.pop(widget, None))
        # A right-click on the text opens the message's menu, not the text box's own.
        bubble = widget.body
        bubble.installEventFilter(self)
        for view in bubble.findChildren(QAbstractScrollArea):
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)
        # The bar is made when first needed (pointed at, versions, an edit, a copy): most
        # messages on a page never are, and one costs more to make than its message's text.
        # Until then its place is kept, the size a bar of its kind has with nothing shown.
        size = self._bar_sizes.get(_bar_kind(widget))
        if size is None or self._wants_bar(widget):
            self._bar(widget)
        else:
            widget.header.reserve_bar(size)

    def _bar(self, widget: MessageWidget) -> MessageBar:
        """The message's bar, made now if it has none yet."""
        bar = self._bars.get(widget)
        if bar is not None:
            return bar
        bar = MessageBar(widget)
        bar.copy_requested.connect(lambda: self.copy_message(widget))
        bar.edit_requested.connect(lambda: self.begin_edit(widget))
        bar.regenerate_requested.connect(
            lambda: self._chat.current.versions.regenerate(widget.message)
        )
        bar.version_requested.connect(lambda number: self._show_version(widget, number))
        self._bars[widget] = bar
        kind = _bar_kind(widget)
        if kind not in self._bar_sizes:
            bar.refresh(hovered=False, can_edit=False, can_regenerate=False)
            bar.ensurePolished()
            self._bar_sizes[kind] = bar.sizeHint()
        self._refresh(widget, bar)  # in the layout as it shows
        widget.header.add_bar(bar)
        return bar

    def _wants_bar(self, widget: MessageWidget) -> bool:
        """Whether the message shows something on its bar with the pointer away."""
        editing = self.editing is not None and self.editing.id == widget.message.id
        return editing or widget.message.version_count > 1 or widget.pointed_at

    def _refresh(self, widget: MessageWidget, bar: MessageBar) -> None:
        message = widget.message
        bar.refresh(
            editing=self.editing is not None and self.editing.id == message.id,
            hovered=widget.pointed_at,
            can_edit=message.role is Role.USER and not self._chat.current.state.activity.busy,
            can_regenerate=message.role is Role.ASSISTANT
            and self._chat.current.versions.can_regenerate(message),
        )

    def _show_version(self, widget: MessageWidget, number: int) -> None:
        self.cancel_edit()
        self._chat.current.versions.show(widget.message.id, number)

    # --- events

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc in the composer while an edit is open (filtered only then), and a message's
        text growing a block (its own text box must not offer its menu); the message
        itself tells by its signals."""
        if watched is self._composer.editor:
            return self._escape_while_editing(event)
        if event.type() == QEvent.Type.ChildPolished:
            for view in watched.findChildren(QAbstractScrollArea):  # a block added as text grew
                view.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)
        return False

    def _escape_while_editing(self, event: QEvent) -> bool:
        if (
            self.editing is None
            or not isinstance(event, QKeyEvent)
            or event.key() != Qt.Key.Key_Escape
            or event.modifiers() != Qt.KeyboardModifier.NoModifier
        ):
            return False
        if event.type() == QEvent.Type.ShortcutOverride:
            event.accept()  # Esc cancels the edit here, not the window's Stop
            return True
        if event.type() == QEvent.Type.KeyPress:
            self.cancel_edit()
            return True
        return False

    def _up_in_empty(self) -> bool:
        """Up in the empty composer: edit your last message (unless an edit is open or
        Claude is busy); False lets the box have the key."""
        if self.editing is not None or self._chat.current.state.activity.busy:
            return False
        return self.edit_latest()


def _bar_kind(widget: MessageWidget) -> tuple[Role, str]:
    """What a bar's size depends on: whose message (Edit or Regenerate), and the font."""
    return widget.message.role, widget.font().key()


class _EditBar(QWidget):
    """ "Editing your message…" with Cancel, above the composer while an edit is open."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 0, 12, 0)
        self.note = QLabel(EDITING_NOTE, self)
        self.note.setWordWrap(True)
        self.cancel = QPushButton("Cancel edit", self)
        self.cancel.setAccessibleName("Cancel edit")
        self.cancel.setToolTip("Keep the message as it was (Esc)")
        layout.addWidget(self.note, 1)
        layout.addWidget(self.cancel)
        self.hide()


def _action(menu: QMenu, text: str, slot: Callable[[], object]) -> QAction:
    action = QAction(text, menu)
    action.triggered.connect(lambda _checked=False: slot())
    return action


def _copy(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def _selected_text_view(widget: MessageWidget) -> QTextEdit | QPlainTextEdit | None:
    for view in widget.findChildren(QTextEdit) + widget.findChildren(QPlainTextEdit):
        if view.textCursor().hasSelection():
            return view
    return None
