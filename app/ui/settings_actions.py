"""Settings (File → Settings…, Ctrl+, and the header's ⚙) and the API key dialog, as the
window opens them: one at a time, with `open()` (replies keep streaming meanwhile)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from app.ui.theme import apply_theme

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.paths import AppPaths
    from app.ui.controller import ChatController
    from app.ui.key_dialog import ApiKeyDialog
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.text_size import TextSize


class SettingsActions(QObject):
    """Opens Settings and the key dialog, and puts what they changed in force.

    Attributes:
        action: File → Settings… (Ctrl+,).
        key_dialog, settings_dialog: the dialog open now, if any.

    Signals:
        key_dialog_opened(): the key dialog opened (it stands in front of the window).
        key_dialog_closed(bool, bool): the key dialog closed: whether a key was saved,
            and whether it is kept beyond this session.
    """

    key_dialog_opened = Signal()
    key_dialog_closed = Signal(bool, bool)

    def __init__(
        self, controller: ChatController, window: QWidget, paths: AppPaths, text_size: TextSize
    ) -> None:
        super().__init__(window)
        self._controller = controller
        self._window = window
        self._paths = paths
        self._text_size = text_size
        self.key_dialog: ApiKeyDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.action = QAction("&Settings…", window)
        self.action.setShortcut(QKeySequence("Ctrl+,"))
        self.action.triggered.connect(self.open_settings)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    # -- the key -------------------------------------------------------------------

    def ask_for_key(self, first_run: bool = True) -> None:
        """Open the key dialog, unless it is open already."""
        if self.key_dialog is not None:
            return
        from app.ui.key_dialog import ApiKeyDialog  # the first time the key is asked for

        dialog = ApiKeyDialog(self._chat.credentials, self._window, first_run=first_run)
        dialog.finished.connect(lambda result: self._key_dialog_done(dialog, result))
        self.key_dialog = dialog
        self.key_dialog_opened.emit()
        dialog.open()

    def ask_for_key_if_missing(self) -> None:
        if not self._chat.credentials.has_key():
            self.ask_for_key(first_run=True)

    def _key_dialog_done(self, dialog: ApiKeyDialog, result: int) -> None:
        self.key_dialog = None
        self.key_dialog_closed.emit(result == QDialog.DialogCode.Accepted, dialog.persistent)

    # -- settings --------------------------------------------------------------------

    def open_settings(self) -> SettingsDialog:
        """Open Settings (or bring the open one forward); returns the dialog."""
        if self.settings_dialog is not None:
            self.settings_dialog.raise_()
            return self.settings_dialog
        # Imported when first opened: the window paints sooner without it.
        from app.ui.settings_dialog import SettingsDialog

        chat = self._chat
        self._text_size.save_now()  # a size just chosen shows in Settings
        dialog = SettingsDialog(
            chat.settings,
            models=list(chat.models),
            selected_model=chat.current.state.model_id,
            keys=chat.credentials,
            paths=self._paths,
            parent=self._window,
        )
        dialog.finished.connect(lambda result: self._settings_done(dialog, result))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_done(self, dialog: SettingsDialog, result: int) -> None:
        self.settings_dialog = None
        new = dialog.result_settings
        if result != QDialog.DialogCode.Accepted or new is None:
            if dialog.key_changed:
                self._chat.refresh_models()
            return
        old_theme = self._chat.settings.theme
        self._chat.update_settings(new)
        if new.theme != old_theme and isinstance(app := QApplication.instance(), QApplication):
            apply_theme(app, new.theme)
        self._text_size.set_size(new.font_size)  # Settings → Text size
        if dialog.key_changed:
            self._chat.refresh_models()
