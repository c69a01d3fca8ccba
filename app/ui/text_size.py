"""The text size of the conversation: Ctrl+plus, Ctrl+minus, Ctrl+0, kept in settings.

The size (`AppSettings.font_size`, in points) applies to the transcript and the
composer at once. Secondary text (names, times, captions) is drawn smaller than
the text around it; it keeps its proportion as the size changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QMenuBar, QWidget

from app.core.paint_settings import DEFAULT_FONT_SIZE, LARGEST_FONT_SIZE, SMALLEST_FONT_SIZE

# The settings model (pydantic) is not needed to paint the window (issue 20).
if TYPE_CHECKING:
    from app.core.settings import AppSettings

DEFAULT_SIZE: Final = DEFAULT_FONT_SIZE
SMALLEST: Final = SMALLEST_FONT_SIZE
LARGEST: Final = LARGEST_FONT_SIZE
# Holding Ctrl+plus down changes the size many times; it is saved once it settles.
SAVE_AFTER_MS: Final = 400


def set_text_size(root: QWidget, points: float) -> None:
    """Give `root` a font of `points`; descendants with a font of their own (a smaller
    caption, a bigger title) keep their size relative to their parent's."""
    shares: list[tuple[QWidget, float]] = []
    # findChildren walks depth first, a parent before its children.
    for child in root.findChildren(QWidget):
        parent = child.parentWidget()
        if (
            child.testAttribute(Qt.WidgetAttribute.WA_SetFont)
            and parent is not None
            and parent.font().pointSizeF() > 0
            and child.font().pointSizeF() > 0
        ):
            shares.append((child, child.font().pointSizeF() / parent.font().pointSizeF()))
    font = QFont(root.font())
    font.setPointSizeF(points)
    root.setFont(font)
    for child, share in shares:
        parent = child.parentWidget()
        if parent is None:
            continue
        scaled = QFont(child.font())
        scaled.setPointSizeF(parent.font().pointSizeF() * share)
        child.setFont(scaled)


class TextSize(QObject):
    """Owns the shown text size: applies it, changes it on the shortcuts, saves it.

    Attributes:
        size: the size shown now, in points.
        larger_action, smaller_action, reset_action: in the View menu, with their keys.
    """

    def __init__(
        self,
        targets: Sequence[QWidget],
        settings: Callable[[], AppSettings],
        save: Callable[[AppSettings], None],
        parent: QWidget,
        *,
        size: int | None = None,
    ) -> None:
        """`settings` gives the settings in force; `save` puts new ones in force; `size`,
        the size to show first when they are not at hand yet (the first paint)."""
        super().__init__(parent)
        self._targets = list(targets)
        self._settings = settings
        self._save = save
        self.size = settings().font_size if size is None else size
        self.larger_action = self._action(
            "&Larger text", parent, self.larger, QKeySequence.StandardKey.ZoomIn, "Ctrl+="
        )
        self.smaller_action = self._action(
            "&Smaller text", parent, self.smaller, QKeySequence.StandardKey.ZoomOut
        )
        self.reset_action = self._action("&Default text size", parent, self.reset, "Ctrl+0")
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_AFTER_MS)
        self._save_timer.timeout.connect(self.save_now)
        self._apply()

    @staticmethod
    def _action(
        text: str,
        parent: QWidget,
        slot: Callable[[], None],
        *keys: QKeySequence.StandardKey | str,
    ) -> QAction:
        action = QAction(text, parent)
        action.setShortcuts([QKeySequence(key) for key in keys])
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        parent.addAction(action)  # the keys work even with the menu bar hidden
        return action

    def add_menu_to(self, bar: QMenuBar) -> None:
        """A View menu with the three sizes."""
        menu = bar.addMenu("&View")
        for action in (self.larger_action, self.smaller_action, self.reset_action):
            menu.addAction(action)

    def larger(self) -> None:
        self.set_size(self.size + 1)

    def smaller(self) -> None:
        self.set_size(self.size - 1)

    def reset(self) -> None:
        self.set_size(DEFAULT_SIZE)

    def set_size(self, size: int) -> None:
        """Show text at `size` points (kept within what settings allow), saved shortly."""
        size = max(SMALLEST, min(LARGEST, size))
        if size == self.size:
            return
        self.size = size
        self._apply()
        self._save_timer.start()

    def save_now(self) -> None:
        """Save the shown size, if the settings do not have it yet."""
        self._save_timer.stop()
        settings = self._settings()
        if settings.font_size != self.size:
            self._save(settings.model_copy(update={"font_size": self.size}))

    def _apply(self) -> None:
        for target in self._targets:
            set_text_size(target, self.size)
        self.larger_action.setEnabled(self.size < LARGEST)
        self.smaller_action.setEnabled(self.size > SMALLEST)
