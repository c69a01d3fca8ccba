"""A quiet strip above the composer for errors (with Retry) and notices."""

from __future__ import annotations

import html
from enum import Enum

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QHideEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QWidget,
)

# Narrower than this, the actions go below the text.
_NARROW_WIDTH = 640
# The words of a banner's link: today only errors about billing carry one.
_LINK_TEXT = "Open the billing page"
# A notice that reports something done (a summary made) goes by itself after this
# long; what it offered stays where it belongs (Undo on the summary's card).
FADE_AFTER_MS = 30_000


class BannerKind(Enum):
    ERROR = "error"
    INFO = "info"


class Banner(QFrame):
    """Shows one message in plain words with up to two actions.

    Attributes:
        fade_timer: hides a notice shown with `fades=True` (single-shot).

    Signals:
        retry_requested: the Retry button was pressed.
        action_requested(str): the extra action (its name) was pressed.
        dismissed: the close button was pressed.
    """

    retry_requested = Signal()
    action_requested = Signal(str)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAccessibleName("Notice")
        self.title_label = QLabel(self)
        self.title_label.setObjectName("bannerTitle")
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A web page where the user can fix the cause (the billing page), opened in the browser.
        self.link_label = QLabel(self)
        self.link_label.setTextFormat(Qt.TextFormat.RichText)
        self.link_label.setOpenExternalLinks(True)
        self.link_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setAccessibleName("Retry")
        self.action_button = QPushButton(self)
        self.second_action_button = QPushButton(self)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAccessibleName("Dismiss notice")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAutoRaise(True)
        # The title above the text, the actions beside them; on a narrow window the
        # actions go below, so the text keeps a readable width.
        self._actions = QWidget(self)
        actions = QHBoxLayout(self._actions)
        actions.setContentsMargins(0, 0, 0, 0)
        actions.setSpacing(8)
        actions.addWidget(self.action_button)
        actions.addWidget(self.second_action_button)
        actions.addWidget(self.retry_button)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(12, 8, 8, 8)
        self._grid.setHorizontalSpacing(10)
        self._grid.setVerticalSpacing(4)
        self._grid.addWidget(self.title_label, 0, 0)
        self._grid.addWidget(self.text_label, 1, 0)
        self._grid.addWidget(self.link_label, 3, 0)
        self._grid.addWidget(self.close_button, 0, 2, Qt.AlignmentFlag.AlignTop)
        self._grid.setColumnStretch(0, 1)
        self._narrow: bool | None = None
        self._place_actions()
        self._action = ""
        self.kind = BannerKind.INFO
        self.retry_button.clicked.connect(self.retry_requested)
        self.action_button.clicked.connect(lambda: self.action_requested.emit(self._action))
        self.second_action_button.clicked.connect(
            lambda: self.action_requested.emit(self.second_action_button.text())
        )
        self.close_button.clicked.connect(self._dismiss)
        self.fade_timer = QTimer(self)
        self.fade_timer.setSingleShot(True)
        self.fade_timer.setInterval(FADE_AFTER_MS)
        self.fade_timer.timeout.connect(self.hide)
        self.hide()

    def show_message(
        self,
        kind: BannerKind,
        title: str,
        text: str,
        *,
        retry: bool = False,
        action: str | None = None,
        second_action: str | None = None,
        link: str | None = None,
        fades: bool = False,
    ) -> None:
        """Show `text`; the kind is told by the title's words too, never by colour alone.

        `link`: a web page shown under the text as "Open the billing page".
        `fades`: the notice goes by itself after `FADE_AFTER_MS` (a thing done, not a
        problem: nothing is lost when it goes).
        """
        self.fade_timer.stop()
        if fades:
            self.fade_timer.start()
        self.kind = kind
        self.title_label.setText(title)
        self.text_label.setText(text)
        self.link_label.setVisible(link is not None)
        self.link_label.setText(
            f'<a href="{html.escape(link, quote=True)}">{_LINK_TEXT}</a>' if link else ""
        )
        self.retry_button.setVisible(retry)
        self._action = action or ""
        self.action_button.setVisible(bool(action))
        self.action_button.setText(action or "")
        self.second_action_button.setVisible(bool(second_action))
        self.second_action_button.setText(second_action or "")
        self.setAccessibleDescription(f"{title}. {text}")
        self.show()
        self.update()

    def dismiss_titled(self, title: str) -> None:
        """Hide the banner if it still says `title` (a state that is over)."""
        if self.isVisible() and self.title_label.text() == title:
            self.hide()

    def _colours(self) -> tuple[QColor, QColor]:
        """Background and border: a little of the accent mixed into the window colour,
        so the strip reads on light and dark palettes alike."""
        base = self.palette().color(QPalette.ColorRole.Window)
        accent = QColor("#c0392b") if self.kind is BannerKind.ERROR else QColor("#2e7dbd")
        mix = 0.14
        background = QColor(
            round(base.red() * (1 - mix) + accent.red() * mix),
            round(base.green() * (1 - mix) + accent.green() * mix),
            round(base.blue() * (1 - mix) + accent.blue() * mix),
        )
        return background, accent

    def paintEvent(self, event: QPaintEvent) -> None:
        # Painted rather than styled: a style sheet would pin the palette at polish
        # time, and the banner would keep its old colours after a theme switch.
        background, border = self._colours()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 1))
        painter.setBrush(background)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6)
        painter.end()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_actions()

    def _place_actions(self) -> None:
        narrow = self.width() < _NARROW_WIDTH
        if narrow == self._narrow:
            return
        self._narrow = narrow
        self._grid.removeWidget(self._actions)
        if narrow:
            self._grid.addWidget(self._actions, 2, 0, Qt.AlignmentFlag.AlignLeft)
        else:
            self._grid.addWidget(self._actions, 0, 1, 2, 1, Qt.AlignmentFlag.AlignVCenter)

    def hideEvent(self, event: QHideEvent) -> None:
        self.fade_timer.stop()
        super().hideEvent(event)

    def hide_error(self) -> None:
        """Hide the banner if it shows an error: what it reported is over."""
        if self.kind is BannerKind.ERROR:
            self.hide()

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
