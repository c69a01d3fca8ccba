"""The strip above the transcript: the conversation's title, the model picker, the gauge,
and the buttons the window puts beside them (instructions, Summarize now, Settings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from app.ui.token_gauge import TokenGauge

if TYPE_CHECKING:
    from app.core.catalog import ModelInfo

TITLE_MIN_WIDTH = 90


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" instead of pushing its neighbours."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        # Asks for its whole text, gives way down to a few words: the whole title shows
        # whenever the header has room (issue 23).
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        width = self.fontMetrics().horizontalAdvance(self._full) + 2 * self.margin() + 2
        return QSize(width, hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.minimumWidth(), super().minimumSizeHint().height())

    def setText(self, text: str) -> None:
        if text == self._full:
            # Asked again at every message sent and reply done: elided at the last
            # resize, and the header refits when a neighbour's size changes (issue 20).
            return
        self._full = text
        self.setToolTip(text)
        self._elide()
        self.updateGeometry()
        header = self.parentWidget()
        if isinstance(header, WindowHeader):
            header.fit_title()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, self.width())
        super().setText(shown)


class WindowHeader(QWidget):
    """Title, model picker, gauge and Settings, in one row (buttons join with
    `add_after_title` and `add_before_settings`).

    Signals:
        model_picked(str): the user chose a model in the picker (its id).
    """

    model_picked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("header")
        self.title_label = ElidedLabel(self)
        title_font = self.title_label.font()
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        title_font.setBold(True)
        self.title_label.setFont(title_font)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.title_label.setMinimumWidth(TITLE_MIN_WIDTH)
        self.model_combo = QComboBox(self)
        self.model_combo.setAccessibleName("Model")
        self.model_combo.setToolTip("Which Claude model answers")
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_combo.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.model_combo.activated.connect(
            lambda index: self.model_picked.emit(str(self.model_combo.itemData(index)))
        )
        self.gauge = TokenGauge(self)
        # In a narrow header the gauge gives way first (its bar shorter, then the bar
        # alone: `fit_title`), so the title keeps the room.
        # Hidden before the first message; its room goes to the title meanwhile (the
        # title changes too when the conversation starts).
        self.gauge.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.settings_button = QToolButton(self)
        self.settings_button.setText("⚙")
        self.settings_button.setAccessibleName("Settings")
        self.settings_button.setToolTip("Settings (Ctrl+,)")
        self.settings_button.setAutoRaise(True)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(16, 10, 10, 8)
        self._row.setSpacing(10)
        self._row.addWidget(self.title_label, 1)
        self._row.addWidget(self.model_combo)
        self._row.addWidget(self.gauge)
        self._row.addWidget(self.settings_button)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.fit_title()
        super().resizeEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            # A neighbour's size changed (the gauge's reserved width, a button shown or
            # hidden): the title keeps its room without waiting for a new title.
            self.fit_title()
        return super().event(event)

    def fit_title(self) -> None:
        """The gauge gives way before the title does: its bar shortens, then its words
        go (into its tooltip and name), so the title shows whole whenever it can."""
        margins = self._row.contentsMargins()
        others = margins.left() + margins.right()
        shown = 0
        for index in range(self._row.count()):
            item = self._row.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is None or widget.isHidden():
                continue
            shown += 1
            if widget not in (self.title_label, self.gauge):
                others += widget.sizeHint().width()
        others += self._row.spacing() * max(0, shown - 1)
        room = self.width() - others - self.title_label.sizeHint().width()
        gauge = self.gauge
        # Too narrow for the bar and its words: the bar alone (its words in its name and
        # tooltip), so at 800 px the title is not cut to "Are you t…" (issue 23).
        gauge.set_compact(room < gauge.full_minimum_width())
        if gauge.compact:
            gauge.setMaximumWidth(gauge.compact_width())
        else:
            gauge.setMaximumWidth(min(gauge.sizeHint().width(), room))

    def add_after_title(self, widget: QWidget) -> None:
        self._row.insertWidget(self._row.indexOf(self.title_label) + 1, widget)

    def add_before_settings(self, widget: QWidget) -> None:
        self._row.insertWidget(self._row.indexOf(self.settings_button), widget)

    def show_models(self, models: Sequence[ModelInfo], selected: str) -> None:
        """Offer `models` in the picker, `selected` chosen (listed even when not offered)."""
        combo = self.model_combo
        combo.blockSignals(True)
        combo.clear()
        for model in models:
            combo.addItem(model.display_name, model.id)
            combo.setItemData(combo.count() - 1, model.id, Qt.ItemDataRole.ToolTipRole)
        index = combo.findData(selected)
        if index < 0:
            combo.addItem(selected, selected)
            index = combo.count() - 1
        combo.setCurrentIndex(index)
        combo.blockSignals(False)
