"""One way to ask "are you sure?" before something that cannot be taken back."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget


def ask_to_confirm(
    parent: QWidget,
    *,
    title: str,
    text: str,
    detail: str,
    action: str,
    on_confirm: Callable[[], None],
    closed: Callable[[], None] = lambda: None,
    icon: QMessageBox.Icon = QMessageBox.Icon.Question,
    role: QMessageBox.ButtonRole = QMessageBox.ButtonRole.AcceptRole,
) -> QMessageBox:
    """Open (window-modal, never exec) a box with `action` and Cancel, Cancel the default.

    `closed` runs whenever the box closes; `on_confirm` after it, when `action` was
    chosen. Returns the box, already open.
    """
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setText(text)
    box.setInformativeText(detail)
    confirm = box.addButton(action, role)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)

    def answered(_result: int) -> None:
        closed()
        if box.clickedButton() is confirm:
            on_confirm()

    box.finished.connect(answered)
    box.open()
    return box
