"""The parts of Cairn's dialogs and settings pages that look the same everywhere: a
dialog's margins, a settings page's, a muted hint under a control, a box of settings
with its switch, and a row whose field keeps its own size. Change one here and every
dialog follows.
"""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget


def dialog_layout(dialog: QWidget, spacing: int = 10) -> QVBoxLayout:
    """The column a dialog's parts stand in, with a dialog's margins."""
    layout = QVBoxLayout(dialog)
    layout.setContentsMargins(18, 16, 18, 14)
    layout.setSpacing(spacing)
    return layout


def page_layout(page: QWidget) -> QVBoxLayout:
    """The column a settings page's boxes stand in (inside the dialog's tabs)."""
    layout = QVBoxLayout(page)
    layout.setContentsMargins(6, 8, 6, 4)
    layout.setSpacing(12)
    return layout


def hint(text: str, parent: QWidget) -> QLabel:
    """A muted, wrapped line that says what a control does (as every page's hints)."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def switch_box(
    title: str, switch: str, checked: bool, parent: QWidget
) -> tuple[QGroupBox, QCheckBox, QVBoxLayout]:
    """A box of settings titled `title` that opens with a switch (`switch`, `checked`);
    the caller adds what follows it to the column."""
    box = QGroupBox(title, parent)
    check = QCheckBox(switch, box)
    check.setChecked(checked)
    column = QVBoxLayout(box)
    column.addWidget(check)
    return box, check, column


def sized_row(label: str, field: QWidget) -> QFormLayout:
    """One labelled row whose field keeps its own size (a spin box, not a wide bar)."""
    form = QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
    form.addRow(label, field)
    return form
