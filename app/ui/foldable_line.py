"""A muted line on a reply that unfolds to a text below it: the shape of Claude's
thinking (`ThinkingBlock`) and of its archive searches (`LookupLine`).

For a screen reader the line is a button named with its state ("…, collapsed"), its
tooltip says what opening or closing it does, and the text shown under it is named.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.ui.theme import scaled_font, set_muted


class FoldableLine(QWidget):
    """A line (a button) that shows or hides `details` below it; both in the muted colour.

    Attributes:
        toggle: the line itself (a button that opens and closes the text).
        details: the text under the line (hidden while collapsed); its format, and how it
            is read and reached, are the subclass's.
    """

    def __init__(
        self,
        details_name: str,
        what: str,
        parent: QWidget | None = None,
        *,
        checkable: bool = False,
    ) -> None:
        """`details_name`: what a screen reader calls the text; `what`: what the tooltip
        offers to show or hide ("Claude's thinking"); `checkable`: the line is checked
        while open."""
        super().__init__(parent)
        self._what = what
        self._open = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.setSpacing(2)
        self.toggle = QToolButton(self)
        self.toggle.setCheckable(checkable)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.toggle.setFont(scaled_font(self.font(), 0.9))
        self.toggle.clicked.connect(lambda: self._toggled(not self._open))
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setFont(scaled_font(self.font(), 0.9))
        self.details.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.details.setContentsMargins(18, 0, 0, 4)
        self.details.setAccessibleName(details_name)
        self.details.hide()
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        set_muted(self, self.toggle, self.details)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # a theme switch
            set_muted(self, self.toggle, self.details)

    @property
    def is_open(self) -> bool:
        """Whether the text under the line shows."""
        return self._open

    def _toggled(self, open_: bool) -> None:
        self._open = open_
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.details.setVisible(open_)
        self._name()

    def _name(self) -> None:
        """Name the line with its text and state, and say in its tooltip what a click does."""
        state = "expanded" if self._open else "collapsed"
        self.toggle.setAccessibleName(f"{self.toggle.text()}, {state}")
        self.toggle.setToolTip(f"{'Hide' if self._open else 'Show'} {self._what}")
