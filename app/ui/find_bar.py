"""Ctrl+F: find in the open conversation, archived messages included ("3 of 12")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from app.ui.history_source import HistorySource, Place

if TYPE_CHECKING:
    from app.core.search import SearchHit, SearchPage, SearchQuery

FIND_DEBOUNCE_MS = 200
FIND_LIMIT = 1000  # hits fetched at once; "3 of 12" counts them all


class FindBar(QWidget):
    """A line over the composer: the words, "3 of 12", previous, next, close.

    Enter and F3 go to the next hit, Shift+Enter and Shift+F3 to the previous one, Esc
    closes. Hits come from `HistorySource.search` in conversation order.

    Attributes:
        source: where to search (None: nothing is found).
        edit, count_label, previous_button, next_button, close_button.
        hits: the hits of the words typed; current: the one gone to (-1: none yet).

    Signals:
        place_requested(Place): go to this hit.
        closed(): the bar was closed (the window gives the focus back).
    """

    place_requested = Signal(object)
    closed = Signal()

    def __init__(
        self,
        current_session: Callable[[], str | None],
        parent: QWidget | None = None,
        source: HistorySource | None = None,
    ) -> None:
        super().__init__(parent)
        self.source = source
        self._current_session = current_session
        self._query: SearchQuery | None = None
        self._go_when_found = 0  # a step asked before the hits came (+1 next, -1 previous)
        self.hits: list[SearchHit] = []
        self.current = -1
        self.setObjectName("findBar")
        self.setAccessibleName("Find in this conversation")

        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find in this conversation")
        self.edit.setAccessibleName("Find in this conversation")
        self.edit.setClearButtonEnabled(True)
        self.edit.installEventFilter(self)
        self.count_label = QLabel(self)
        self.count_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.count_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("000 of 000"))
        self.previous_button = self._button("↑", "Previous (Shift+F3)")
        self.next_button = self._button("↓", "Next (F3)")
        self.close_button = self._button("✕", "Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self.previous_button)
        layout.addWidget(self.next_button)
        layout.addWidget(self.close_button)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FIND_DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_search)
        self.edit.textChanged.connect(self._text_changed)
        self.previous_button.clicked.connect(self.previous)
        self.next_button.clicked.connect(self.next)
        self.close_button.clicked.connect(self.close_bar)
        for keys, step in (("F3", self.next), ("Shift+F3", self.previous)):
            shortcut = QShortcut(QKeySequence(keys), self)
            # Anywhere in the window while the bar is shown (the transcript has the
            # focus after going to a hit); a hidden bar's shortcuts do not fire.
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(step)
        self._update_count()
        self.hide()

    def _button(self, text: str, name: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setAccessibleName(name)
        button.setToolTip(name)
        button.setAutoRaise(True)
        return button

    # -- public ---------------------------------------------------------------------------

    def open_bar(self) -> None:
        """Show the bar with its words selected (Ctrl+F); search again, the conversation
        may have changed."""
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()
        if self.edit.text().strip():
            self.run_search()

    def close_bar(self) -> None:
        self._timer.stop()
        self.hide()
        self.closed.emit()

    def run_search(self) -> None:
        """Search the open conversation for the words now."""
        # Imported here, not to paint the window (issue 20).
        from app.core.search import SearchOrder, SearchQuery

        self._timer.stop()
        text = self.edit.text().strip()
        session_id = self._current_session()
        self.hits, self.current = [], -1
        if not text or session_id is None or self.source is None:
            self._query = None
            self._update_count()
            return
        self._query = SearchQuery(
            text, session_id=session_id, order=SearchOrder.IN_ORDER, limit=FIND_LIMIT
        )
        self.source.search(self._query, self._found)

    def next(self) -> None:
        self._step(1)

    def previous(self) -> None:
        self._step(-1)

    # -- inside -------------------------------------------------------------------------

    def _text_changed(self, _text: str) -> None:
        self._timer.start()

    def _found(self, page: SearchPage) -> None:
        if page.query != self._query:
            return
        self.hits = list(page.hits)
        self.current = -1
        self._update_count()
        # As the user types, the view goes to the first match (or where Enter asked).
        step, self._go_when_found = self._go_when_found, 0
        self._step(step or 1)

    def _step(self, step: int) -> None:
        if self._timer.isActive() or (self._query is None and self.edit.text().strip()):
            self._go_when_found = step
            self.run_search()
            return
        if not self.hits:
            return
        if self.current < 0:
            self.current = 0 if step > 0 else len(self.hits) - 1
        else:
            self.current = (self.current + step) % len(self.hits)
        self._update_count()
        self.place_requested.emit(Place.of_hit(self.hits[self.current]))

    def _update_count(self) -> None:
        if self._query is None:
            self.count_label.setText("")
        elif not self.hits:
            self.count_label.setText("Not found")
        elif self.current < 0:
            self.count_label.setText(f"{len(self.hits)} found")
        else:
            self.count_label.setText(f"{self.current + 1} of {len(self.hits)}")
        enabled = len(self.hits) > 0
        self.previous_button.setEnabled(enabled)
        self.next_button.setEnabled(enabled)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.edit
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.ShortcutOverride
            and event.key() in (Qt.Key.Key_Escape, Qt.Key.Key_F3)
        ):
            event.accept()  # these keys are the bar's, not the window's shortcuts
            return True
        if (
            watched is self.edit
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
        ):
            key = event.key()
            if key == Qt.Key.Key_F3:
                shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                self._step(-1 if shift else 1)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                self._step(-1 if shift else 1)
                return True
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)
