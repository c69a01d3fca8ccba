"""Tells the user when Claude's reply finishes while Cairn's window is in the
background (Settings → "Tell me when a reply is ready", on by default).

`QApplication.alert` asks the desktop to draw attention to the window (a taskbar
flash, a dock bounce) and goes away when the window is activated; where a system
tray exists, a tray message says it in words too. Neither warns where there is
no desktop (offscreen, in tests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from app.chat.events import Activity

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.models import Session
    from app.ui.controller import ChatController

TITLE = "Claude has replied"
FAILED_TITLE = "Claude could not reply"
TRAY_MESSAGE_MS = 6_000


class ReplyNotifier(QObject):
    """Watches the conversation on screen: a reply that ends while the window is not
    active is announced.

    Signals:
        notified(str, str): the user was told (title, text), for tests and the log.
    """

    notified = Signal(str, str)

    def __init__(self, controller: ChatController, window: QWidget) -> None:
        super().__init__(window)
        self._controller = controller
        self._window = window
        self._replying = False
        self._failed = False  # the reply that just ended ended with an error
        self._title = ""
        self._tray: QSystemTrayIcon | None = None
        controller.activity_changed.connect(self._activity_changed)
        controller.conversation_opened.connect(self._opened)
        controller.session_changed.connect(self._session_changed)
        controller.error_raised.connect(self._error_raised)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def _opened(self, session: Session | None, _page: object, _has_earlier: bool) -> None:
        # Another conversation on screen: its idle state is not the end of a reply here.
        self._replying = False
        self._title = session.title if session is not None else ""

    def _session_changed(self, session: Session) -> None:
        current = self._chat.current.state.session
        if current is not None and current.id == session.id:
            self._title = session.title

    def _error_raised(self, _error: object) -> None:
        self._failed = True

    def _activity_changed(self, activity: Activity) -> None:
        ended = self._replying and activity is not Activity.REPLYING
        self._replying = activity is Activity.REPLYING
        if self._replying:
            self._failed = False
        if ended:
            # A failed reply's error is told just after it goes idle: say it once both are in.
            QTimer.singleShot(0, self, self._announce)

    def _announce(self) -> None:
        if self._window.isActiveWindow() or not self._chat.settings.notify_when_done:
            return
        where = f" in “{self._title}”" if self._title else ""
        if self._failed:
            title, text = FAILED_TITLE, f"The reply{where} stopped with a problem; see Cairn."
        else:
            title, text = TITLE, f"The reply{where} is ready."
        QApplication.alert(self._window)
        self._tray_message(title, text)
        self.notified.emit(title, text)

    def _tray_message(self, title: str, text: str) -> None:
        if not QSystemTrayIcon.isSystemTrayAvailable() or not QSystemTrayIcon.supportsMessages():
            return
        if self._tray is None:
            self._tray = QSystemTrayIcon(self._window.windowIcon() or QIcon(), self)
            self._tray.messageClicked.connect(self._bring_back)
            self._tray.activated.connect(lambda _reason: self._bring_back())
        self._tray.show()
        self._tray.showMessage(
            title, text, QSystemTrayIcon.MessageIcon.Information, TRAY_MESSAGE_MS
        )

    def window_activated(self) -> None:
        """The window is in front again: the tray icon goes. Called by the window's
        `changeEvent`, not an event filter on it (a call into Python for each of its
        events, every repaint's update request among them; issue 20)."""
        if self._tray is not None:
            self._tray.hide()

    def _bring_back(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()
        if self._tray is not None:
            self._tray.hide()
