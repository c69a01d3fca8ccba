"""Settings: the API key (masked, test, change, remove), model, theme, advanced; and
on a tab of their own, the summaries (`SummarySettingsPage`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.catalog import ModelInfo
from app.core.errors import UserFacingError
from app.core.paths import AppPaths
from app.core.settings import AppSettings, Theme
from app.ui.forms import dialog_layout, page_layout
from app.ui.key_dialog import ApiKeyDialog, KeyManager
from app.ui.recall_settings import RecallSettingsPage
from app.ui.reply_settings import ReplySettingsPage
from app.ui.summary_settings import SummarySettingsPage
from app.ui.text_size import LARGEST, SMALLEST

THEMES: tuple[tuple[Theme, str], ...] = (
    ("system", "Follow the system"),
    ("light", "Light"),
    ("dark", "Dark"),
)
DEFAULT_BASE_URL_HINT = "https://api.anthropic.com (default)"


def base_url_hint() -> str:
    """What an empty API address means now: ANTHROPIC_BASE_URL when it is set (the
    provider uses it then), else Anthropic's own address."""
    from_environment = os.environ.get("ANTHROPIC_BASE_URL")
    if from_environment:
        return f"{from_environment} (from ANTHROPIC_BASE_URL)"
    return DEFAULT_BASE_URL_HINT


def mask_key(key: str) -> str:
    """'sk-ant-…wxyz': enough to recognise a key, never enough to use it."""
    tail = key[-4:] if len(key) >= 12 else ""
    head = "sk-ant-" if key.startswith("sk-ant-") else ""
    return f"{head}…{tail}" if tail else "•" * 8


class SettingsDialog(QDialog):
    """Edits a copy of the settings; `result_settings` holds them once accepted."""

    def __init__(
        self,
        settings: AppSettings,
        *,
        models: Sequence[ModelInfo],
        selected_model: str,
        keys: KeyManager,
        paths: AppPaths,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self._settings = settings
        self._keys = keys
        self._paths = paths
        self._testing = False
        self.key_dialog: ApiKeyDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.result_settings: AppSettings | None = None
        self.key_changed = False

        # -- API key
        key_box = QGroupBox("Anthropic API key", self)
        self.key_label = QLabel(key_box)
        self.key_label.setWordWrap(True)
        self.key_status = QLabel(key_box)
        self.key_status.setWordWrap(True)
        self.key_status.hide()
        self.change_key_button = QPushButton("Change…", key_box)
        self.test_key_button = QPushButton("Test", key_box)
        self.test_key_button.setToolTip("Ask Anthropic whether this key works")
        self.remove_key_button = QPushButton("Remove", key_box)
        self.remove_key_button.setToolTip("Forget the key saved in your password store")
        key_buttons = QHBoxLayout()
        key_buttons.addWidget(self.change_key_button)
        key_buttons.addWidget(self.test_key_button)
        key_buttons.addWidget(self.remove_key_button)
        key_buttons.addStretch(1)
        key_layout = QVBoxLayout(key_box)
        key_layout.addWidget(self.key_label)
        key_layout.addLayout(key_buttons)
        key_layout.addWidget(self.key_status)

        # -- chat
        chat_box = QGroupBox("Conversation", self)
        self.model_combo = QComboBox(chat_box)
        self.model_combo.setAccessibleName("Model")
        for model in models:
            self.model_combo.addItem(model.display_name, model.id)
        index = self.model_combo.findData(selected_model)
        self.model_combo.setCurrentIndex(max(0, index))
        self.theme_combo = QComboBox(chat_box)
        self.theme_combo.setAccessibleName("Theme")
        for value, label in THEMES:
            self.theme_combo.addItem(label, value)
        self.theme_combo.setCurrentIndex(max(0, self.theme_combo.findData(settings.theme)))
        self.text_size_spin = QSpinBox(chat_box)
        self.text_size_spin.setAccessibleName("Text size")
        self.text_size_spin.setRange(SMALLEST, LARGEST)
        self.text_size_spin.setSuffix(" pt")
        self.text_size_spin.setValue(settings.font_size)
        self.text_size_spin.setToolTip("Also View → Larger text (Ctrl++) and Smaller text (Ctrl+−)")
        chat_form = QFormLayout(chat_box)
        chat_form.addRow("Model for new messages:", self.model_combo)
        chat_form.addRow("Theme:", self.theme_combo)
        chat_form.addRow("Text size:", self.text_size_spin)

        # -- advanced
        advanced_box = QGroupBox("Advanced", self)
        self.base_url_edit = QLineEdit(settings.api_base_url or "", advanced_box)
        self.base_url_edit.setPlaceholderText(base_url_hint())
        self.base_url_edit.setAccessibleName("API address")
        self.base_url_edit.setToolTip(
            "Only change this to use an Anthropic-compatible server. Leave empty for the default."
        )
        self.base_url_error = QLabel(advanced_box)
        self.base_url_error.setWordWrap(True)
        self.base_url_error.hide()
        data_row = QHBoxLayout()
        data_label = QLabel(str(paths.data_dir), advanced_box)
        data_label.setWordWrap(True)
        data_label.setToolTip("Your conversations are stored here (cairn.db)")
        open_data = QPushButton("Open", advanced_box)
        open_data.setAccessibleName("Open data folder")
        open_data.clicked.connect(lambda: self._open_folder(paths.data_dir))
        data_row.addWidget(data_label, 1)
        data_row.addWidget(open_data)
        open_logs = QPushButton("Open log folder", advanced_box)
        open_logs.clicked.connect(lambda: self._open_folder(paths.log_dir))
        advanced_form = QFormLayout(advanced_box)
        advanced_form.addRow("API address:", self.base_url_edit)
        advanced_form.addRow("", self.base_url_error)
        advanced_form.addRow("Data folder:", data_row)
        advanced_form.addRow("Logs:", open_logs)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons

        general = QWidget(self)
        general_layout = page_layout(general)
        general_layout.addWidget(key_box)
        general_layout.addWidget(chat_box)
        general_layout.addWidget(advanced_box)
        general_layout.addStretch(1)
        self.summaries_page = SummarySettingsPage(settings.summarization, self)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Settings sections")
        self.tabs.addTab(general, "General")
        self.tabs.addTab(self.summaries_page, "Summaries")
        self.recall_page = RecallSettingsPage(settings.recall, self)
        self.tabs.addTab(self.recall_page, "Memory")
        self.replies_page = ReplySettingsPage(settings, self)  # default instructions, notices
        self.tabs.addTab(self.replies_page, "Replies")
        # "Think longer" follows the model chosen for new messages, as it is changed.
        self._models = {model.id: model for model in models}
        self.model_combo.currentIndexChanged.connect(self._model_chosen)
        self._model_chosen()

        layout = dialog_layout(self, spacing=12)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

        self.change_key_button.clicked.connect(self._change_key)
        self.test_key_button.clicked.connect(self._test_key)
        self.remove_key_button.clicked.connect(self._remove_key)
        self._refresh_key()

    def _model_chosen(self) -> None:
        self.replies_page.set_model(self._models.get(str(self.model_combo.currentData())))

    # -- key -------------------------------------------------------------------

    def _current_key(self) -> str | None:
        return self._keys.api_key()

    def _refresh_key(self) -> None:
        stored = self._keys.stored_key()
        if stored and self._keys.persistent:
            text = f"<b>{mask_key(stored)}</b> — saved in your system's password store."
        elif stored:
            text = (
                f"<b>{mask_key(stored)}</b> — for this session only (no password store "
                "is available, so it will be forgotten when Cairn closes)."
            )
        elif self._keys.env_key_present:
            text = "Using the key from the ANTHROPIC_API_KEY environment variable."
        else:
            text = "No key yet. Cairn needs one to talk to Claude."
        self.key_label.setText(text)
        self.remove_key_button.setEnabled(bool(stored))
        self.test_key_button.setEnabled(self._current_key() is not None)
        self.change_key_button.setText("Change…" if stored else "Add…")

    def _change_key(self) -> None:
        dialog = ApiKeyDialog(self._keys, self, first_run=False)
        dialog.finished.connect(lambda result: self._key_dialog_done(result))
        self.key_dialog = dialog
        dialog.open()

    def _key_dialog_done(self, result: int) -> None:
        self.key_dialog = None
        if result == QDialog.DialogCode.Accepted:
            self.key_changed = True
            self.key_status.hide()
        self._refresh_key()

    def _test_key(self) -> None:
        key = self._current_key()
        if key is None or self._testing:
            return
        self.key_status.setText("Checking your key with Anthropic…")
        self.key_status.show()
        self.test_key_button.setEnabled(False)
        self._testing = True
        self._keys.check(key, self._tested)

    def _tested(self, error: UserFacingError | None) -> None:
        self._testing = False
        self.key_status.setText("✓ Your key works." if error is None else f"⚠ {error.message}")
        self.test_key_button.setEnabled(self._current_key() is not None)

    def _remove_key(self) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove API key?",
            "Cairn will forget your API key and ask for one the next time you send a "
            "message. Your conversations are not affected.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda result: self._remove_answered(result))
        self.confirm_box = box
        box.open()

    def _remove_answered(self, answer: int) -> None:
        self.confirm_box = None
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self._keys.remove()
        except UserFacingError as error:
            self.key_status.setText(f"⚠ {error.message}")
            self.key_status.show()
        self.key_changed = True
        self._refresh_key()

    # -- folders and saving ----------------------------------------------------

    def _open_folder(self, folder: Path) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def _save(self) -> None:
        summarization = self.summaries_page.config()
        if summarization is None:
            self.tabs.setCurrentWidget(self.summaries_page)
            return
        try:
            updated = self._settings.model_copy(deep=True)
            updated.api_base_url = self.base_url_edit.text().strip() or None
            updated.theme = self.theme_combo.currentData()
            updated.font_size = self.text_size_spin.value()
            updated.model = self.model_combo.currentData()
            updated.summarization = summarization
            updated.recall = self.recall_page.settings()
            updated = self.replies_page.applied(updated)
        except ValidationError as error:
            message = error.errors()[0].get("msg", "This value is not valid.")
            self.base_url_error.setText("⚠ " + message.removeprefix("Value error, "))
            self.base_url_error.show()
            self.tabs.setCurrentIndex(0)
            self.base_url_edit.setFocus()
            return
        self.result_settings = updated
        self.accept()
