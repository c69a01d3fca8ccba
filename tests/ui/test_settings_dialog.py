"""Settings: the key is shown masked, can be tested and removed; theme and address are saved."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.paths import AppPaths
from app.core.settings import AppSettings
from app.secrets.keystore import SERVICE_NAME, USERNAME
from app.ui.app import CairnSession
from app.ui.settings_dialog import DEFAULT_BASE_URL_HINT, SettingsDialog, base_url_hint, mask_key
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.keyring_backend import MemoryKeyring
from tests.ui.conftest import TEST_KEY


def test_mask_key_never_shows_enough_to_use_it() -> None:
    assert mask_key("sk-ant-api03-abcdefghijklmnopWXYZ") == "sk-ant-…WXYZ"
    assert mask_key("short") == "••••••••"


def test_key_is_masked_tested_and_removed(
    qtbot: QtBot, cairn: CairnSession, memory_keyring: MemoryKeyring
) -> None:
    dialog = cairn.window.settings.open_settings()
    label = dialog.key_label.text()
    assert mask_key(TEST_KEY) in label
    assert TEST_KEY not in label
    dialog.test_key_button.click()
    qtbot.waitUntil(lambda: "works" in dialog.key_status.text(), timeout=10_000)
    dialog.remove_key_button.click()
    box = dialog.confirm_box
    assert box is not None and box.isVisible()
    box.button(QMessageBox.StandardButton.Yes).click()
    assert (SERVICE_NAME, USERNAME) not in memory_keyring.passwords
    assert "No key yet" in dialog.key_label.text()
    dialog.reject()
    assert not cairn.controller.service.credentials.has_key()
    assert cairn.window.settings.settings_dialog is None


def test_theme_and_address_are_saved(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    dialog = cairn.window.settings.open_settings()
    dialog.base_url_edit.setText("ftp://nowhere")
    dialog.buttons.accepted.emit()
    assert "http" in dialog.base_url_error.text()
    assert dialog.isVisible(), "an invalid address keeps the dialog open"
    dialog.base_url_edit.setText(fake_server.base_url + "/")
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    saved = json.loads(AppPaths.from_environment().settings_file.read_text(encoding="utf-8"))
    assert saved["theme"] == "dark"
    assert saved["api_base_url"] == fake_server.base_url
    assert "sk-ant" not in json.dumps(saved)
    window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    assert window_colour.lightness() < 80, "the dark palette is applied at once"


def test_text_size_is_set_in_settings_and_shown_at_once(qtbot: QtBot, cairn: CairnSession) -> None:
    window = cairn.window
    text_size = window.reading.text_size
    text_size.set_size(13)
    dialog = window.settings.open_settings()
    assert dialog.text_size_spin.value() == 13, "Settings shows the size in force"
    dialog.text_size_spin.setValue(16)
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    assert text_size.size == 16
    assert window.composer.editor.font().pointSize() == 16
    saved = json.loads(AppPaths.from_environment().settings_file.read_text(encoding="utf-8"))
    assert saved["font_size"] == 16


def test_think_longer_is_offered_only_where_the_model_has_a_setting_for_it(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    sonnet = FALLBACK_MODELS[0]  # Sonnet 5.5: adaptive thinking, with an effort
    plain = ModelInfo(id="acme-chat-1", display_name="Acme Chat")  # no thinking, no effort
    settings = AppSettings().model_copy(update={"think_longer": True})
    dialog = SettingsDialog(
        settings,
        models=[sonnet, plain],
        selected_model=sonnet.id,
        keys=cairn.controller.service.credentials,
        paths=AppPaths.from_environment(),
    )
    qtbot.addWidget(dialog)
    page = dialog.replies_page
    assert page.think_longer.isEnabled() and page.think_longer_note.isHidden()

    dialog.model_combo.setCurrentIndex(dialog.model_combo.findData(plain.id))
    assert not page.think_longer.isEnabled(), "disabled, not hidden"
    assert not page.think_longer.isHidden()
    note = page.think_longer_note.text()
    assert note.startswith("Acme Chat has no setting for how long it thinks")
    assert not page.think_longer_note.isHidden()
    assert page.think_longer.accessibleDescription() == note  # a screen reader hears why
    # What was chosen is kept: it applies again with a model that has the setting.
    assert page.applied(settings).think_longer is True

    dialog.model_combo.setCurrentIndex(dialog.model_combo.findData(sonnet.id))
    assert page.think_longer.isEnabled() and page.think_longer_note.isHidden()


def test_the_address_hint_names_the_address_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert base_url_hint() == DEFAULT_BASE_URL_HINT
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://claude.example.org")
    assert base_url_hint() == "https://claude.example.org (from ANTHROPIC_BASE_URL)"
