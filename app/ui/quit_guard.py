"""Closing Cairn while a reply exists only in memory (issue 10 item 8).

A reply the full disk did not take is kept in memory and saved when space returns
(app.chat.unsaved). Closing the window would lose it, so the window makes one last
attempt to save it, and when that fails too it asks before closing, in plain words:
the user may free some space and keep Cairn open, or quit and lose that text. The
question is window-modal and does not block (`open`), so nothing waits on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMainWindow, QMessageBox

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController

QUESTION_TITLE: Final = "A reply isn't saved yet"
KEEP_OPEN: Final = "Keep Cairn open"
QUIT_ANYWAY: Final = "Quit and lose it"


def question_text(left: int) -> str:
    replies = "A reply from Claude is" if left == 1 else f"{left} replies from Claude are"
    return (
        f"{replies} only in memory: the disk is still full, so Cairn could not save "
        "it. If you quit now, that text is lost.\n\nFree some space on the disk and keep "
        "Cairn open: it saves the reply by itself as soon as there is room."
    )


class QuitGuard(QObject):
    """Stands between the window's close and a reply that would be lost.

    The window asks it in its `closeEvent` (`MainWindow.quit_guard`), not through an
    event filter: a filter on the window is a call into Python for each of its events,
    every repaint's update request among them (issue 20).

    Attributes:
        question: the question shown now, or None.
    """

    def __init__(self, window: QMainWindow, controller: ChatController) -> None:
        super().__init__(window)
        self._window = window
        self._controller = controller
        self._quitting = False
        self.question: QMessageBox | None = None

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def allows_close(self) -> bool:
        """Whether the window may close now: no reply is left only in memory once one
        last save was tried, or the user chose to lose it. When it may not, the question
        is shown (or raised)."""
        if self._quitting:
            return True
        left = self._chat.save_unsaved()
        if left:
            self._ask(left)
            return False
        return True

    def _ask(self, left: int) -> None:
        if self.question is not None:
            self.question.raise_()
            return
        box = QMessageBox(QMessageBox.Icon.Warning, QUESTION_TITLE, question_text(left))
        box.setParent(self._window, box.windowFlags())
        keep = box.addButton(KEEP_OPEN, QMessageBox.ButtonRole.RejectRole)
        lose = box.addButton(QUIT_ANYWAY, QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.finished.connect(lambda _result: self._answered(box, box.clickedButton() is lose))
        self.question = box
        box.open()

    def _answered(self, box: QMessageBox, quit_anyway: bool) -> None:
        self.question = None
        box.deleteLater()
        if quit_anyway:
            self._quitting = True
            self._window.close()
