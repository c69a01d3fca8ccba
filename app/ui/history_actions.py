"""The window's ways to find what was said: History (Ctrl+Shift+H), Ctrl+F, the
sidebar's content filter, and opening a conversation at a message."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

from app.ui.export_actions import ExportActions
from app.ui.find_bar import FindBar
from app.ui.message_jump import MessageJump
from app.ui.restore_action import restore_action

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController
    from app.ui.history_source import HistorySource, Place
    from app.ui.history_window import HistoryWindow
    from app.ui.sidebar import Sidebar
    from app.ui.transcript import TranscriptView


def bring_forward(window: QWidget) -> None:
    """Raise and activate `window` (where the platform can: not offscreen, which says
    it cannot, as a warning)."""
    if QGuiApplication.platformName() != "offscreen":
        window.raise_()
        window.activateWindow()


# Changes to the conversations are taken into an open History window this long after
# the last one (a burst of them is read once).
FOLLOW_MS = 300


class HistoryActions(QObject):
    """Owns the History window, the find bar and the jump to a message.

    The main window puts `history_action` and `find_action` in its menus and `find_bar`
    above the composer; everything else is wired here.

    Attributes:
        source: where History, Ctrl+F and the sidebar find things.
        history_action, find_action: the menu actions.
        window: the History window, once opened.
        find_bar: Ctrl+F's bar. jump: goes to a place in the transcript.
    """

    def __init__(
        self,
        controller: ChatController,
        main_window: QMainWindow,
        transcript: TranscriptView,
        sidebar: Sidebar,
        load_earlier: Callable[[], None],
        source: HistorySource,
    ) -> None:
        super().__init__(main_window)
        self.source = source
        self._sidebar = sidebar
        self._controller = controller
        self._main_window = main_window
        self.window: HistoryWindow | None = None
        self.jump = MessageJump(controller, transcript, load_earlier, self)
        self.history_action = QAction("&History…", main_window)
        self.history_action.setShortcut(QKeySequence("Ctrl+Shift+H"))
        self.history_action.setToolTip("Every conversation, and search through everything said")
        self.history_action.triggered.connect(self.open_history)
        self.find_action = QAction("&Find in conversation…", main_window)
        self.find_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Find))
        self.find_action.triggered.connect(self.open_find)
        self.find_bar = FindBar(self._current_session_id, main_window)
        self.find_bar.place_requested.connect(self._find_step)
        self.jump.arrived.connect(self._arrived)
        controller.conversation_opened.connect(self._conversation_opened)
        # The History window follows conversations added, renamed or deleted while it is
        # open: read again once things settle (a reply renames nothing but moves its
        # conversation to the top).
        self._follow = QTimer(self)
        self._follow.setSingleShot(True)
        self._follow.setInterval(FOLLOW_MS)
        self._follow.timeout.connect(self._follow_changes)
        for signal in (
            controller.session_changed,
            controller.session_removed,
            controller.sessions_listed,
        ):
            signal.connect(self._changed)
        self._from_find = False
        self.set_source(source)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def set_source(self, source: HistorySource) -> None:
        """Find things through `source` (the chat service's History)."""
        self.source = source
        self.find_bar.source = source
        self._sidebar.set_content_search(source.matching_sessions)

    def open_history(self) -> HistoryWindow:
        """Show the History window (or bring it forward, read again); returns it."""
        if self.window is None:
            # Imported when first opened: the window paints sooner without it.
            from app.ui.history_window import HistoryWindow

            self.window = HistoryWindow(self.source, self._main_window)
            self.window.place_requested.connect(self.go)
            self._furnish(self.window)
        else:
            self.window.refresh()
        self.window.show()
        bring_forward(self.window)
        self.window.focus_search()
        return self.window

    def _furnish(self, window: HistoryWindow) -> None:
        """The History window's File menu: export everything, import, restore from a
        backup (their dialogs open over the History window), then Close."""
        menu = window.file_menu
        close = menu.actions()[0]
        self.exports = ExportActions(self._controller, window)
        for action in (
            self.exports.export_all_action,
            self.exports.import_action,
            self.exports.import_copy_action,
        ):
            menu.insertAction(close, action)
        menu.insertSeparator(close)
        menu.insertAction(close, restore_action(window, self._controller))
        menu.insertSeparator(close)

    def open_find(self) -> None:
        if self._chat.current.state.session is not None:
            self.find_bar.open_bar()

    def go(self, place: Place) -> None:
        """Open `place` in the main window, and bring that window forward."""
        self._from_find = False
        self.jump.go(place)
        window = self._main_window
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
        bring_forward(window)

    def _conversation_opened(self, *_: object) -> None:
        """Another conversation on screen: the bar finds its words in that one."""
        if self.find_bar.isVisible() and self.jump.pending is None:
            self.find_bar.run_search()

    def _changed(self, *_changed: object) -> None:
        """Read again soon, if the History window shows: else it reads when opened (a
        timer at every message sent and reply ended for nothing, issue 20)."""
        window = self.window
        if window is not None and window.isVisible():
            self._follow.start()

    def _follow_changes(self) -> None:
        window = self.window
        if window is not None and window.isVisible():
            window.refresh()

    def _find_step(self, place: Place) -> None:
        self._from_find = True
        self.jump.go(place, focus=False)

    def _arrived(self, _place: Place) -> None:
        """After a find step the words keep the focus, so Enter goes on to the next."""
        if self._from_find and self.find_bar.isVisible():
            self.find_bar.edit.setFocus(Qt.FocusReason.OtherFocusReason)
        self._from_find = False

    def _current_session_id(self) -> str | None:
        current = self._chat.current.state.session
        return current.id if current is not None else None
