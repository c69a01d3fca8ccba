"""Settings → Summaries: every setting in plain words, the validators' sentences next to
their field, Restore defaults, and a change that is saved, survives a restart and
governs the next summary."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.core.summarization_config import DEFAULT_SUMMARIZER_MODELS, SummarizationConfig
from app.core.summary import SummaryMode
from app.ui.app import CairnSession
from app.ui.summary_settings import SummarySettingsPage
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.ui.test_summarize_now import active_summaries, fill, summary_done


def control(page: SummarySettingsPage, name: str, kind: type[QWidget]) -> QWidget:
    widget = page.controls[name]
    assert isinstance(widget, kind), (name, type(widget))
    return widget


def spin(page: SummarySettingsPage, name: str) -> QSpinBox:
    widget = control(page, name, QSpinBox)
    assert isinstance(widget, QSpinBox)
    return widget


def test_every_setting_has_a_control_in_plain_words(qtbot: QtBot) -> None:
    page = SummarySettingsPage(SummarizationConfig())
    qtbot.addWidget(page)
    assert set(page.controls) == set(SummarizationConfig.model_fields) - {"schema_version"}
    trigger = spin(page, "trigger_ratio")
    assert trigger.text() == "80 % full"
    assert trigger.accessibleName() == "Condense older messages when the conversation is … % full"
    auto = control(page, "auto_summarize", QCheckBox)
    assert isinstance(auto, QCheckBox) and auto.isChecked()
    assert auto.text() == "Condense older messages automatically"
    mode = control(page, "mode", QComboBox)
    assert isinstance(mode, QComboBox)
    labels = [mode.itemText(index) for index in range(mode.count())]
    assert "With Claude" in labels and "Offline rules (free, less detailed)" in labels
    models = control(page, "summarizer_models", QLineEdit)
    assert isinstance(models, QLineEdit)
    assert models.text() == ", ".join(DEFAULT_SUMMARIZER_MODELS)
    assert page.config() == SummarizationConfig(), "shown as it is, it reads back the same"
    preview = control(page, "preview_automatic", QCheckBox)
    assert isinstance(preview, QCheckBox) and not preview.isChecked(), "off by default"
    assert preview.text() == "Show me a preview before automatic summaries too"


def test_the_validators_sentences_show_next_to_their_field(qtbot: QtBot) -> None:
    page = SummarySettingsPage(SummarizationConfig())
    qtbot.addWidget(page)
    models = control(page, "summarizer_models", QLineEdit)
    assert isinstance(models, QLineEdit)
    models.setText(" , ")
    assert page.config() is None
    assert page.error_text("summarizer_models").startswith("A summarizer model name is blank")
    models.setText("claude-haiku-4-5")
    # Checks across fields run once every field is valid on its own.
    spin(page, "reset_ratio").setValue(85)
    assert page.config() is None
    assert page.error_text("summarizer_models") == ""
    assert page.error_text("reset_ratio") == (
        "The reset level (85%) must be below the trigger level (80%), or summaries would "
        "start again at once."
    )
    assert page.error_text("trigger_ratio") == ""
    page.restore_defaults()
    assert page.error_text("reset_ratio") == ""
    assert spin(page, "reset_ratio").text() == "70 % full"
    assert page.config() == SummarizationConfig()
    spin(page, "preserve_recent").setValue(12)
    assert page.config() is None
    assert page.error_text("min_messages").startswith("The minimum number of messages (12)")


def test_a_changed_setting_is_saved_survives_a_restart_and_governs_the_next_summary(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn = open_window()
    dialog = cairn.window.settings.open_settings()
    page = dialog.summaries_page
    dialog.tabs.setCurrentWidget(page)
    spin(page, "reset_ratio").setValue(85)
    dialog.buttons.accepted.emit()
    assert dialog.isVisible(), "an invalid setting keeps the dialog open"
    assert dialog.tabs.currentWidget() is page
    spin(page, "reset_ratio").setValue(60)
    spin(page, "trigger_ratio").setValue(75)
    auto = control(page, "auto_summarize", QCheckBox)
    assert isinstance(auto, QCheckBox)
    auto.setChecked(False)
    preview = control(page, "preview_automatic", QCheckBox)
    assert isinstance(preview, QCheckBox)
    preview.setChecked(True)
    mode = control(page, "mode", QComboBox)
    assert isinstance(mode, QComboBox)
    mode.setCurrentIndex(mode.findData(SummaryMode.RULE.value))
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    saved = json.loads(AppPaths.from_environment().settings_file.read_text(encoding="utf-8"))[
        "summarization"
    ]
    assert saved["auto_summarize"] is False and saved["mode"] == "rule"
    assert saved["preview_automatic"] is True
    assert saved["trigger_ratio"] == 0.75 and saved["reset_ratio"] == 0.6
    cairn.window.close()
    cairn.close()

    again = open_window()
    config = again.controller.service.settings.summarization
    assert (config.auto_summarize, config.mode, config.trigger_ratio) == (
        False,
        SummaryMode.RULE,
        0.75,
    )
    dialog = again.window.settings.open_settings()
    assert spin(dialog.summaries_page, "trigger_ratio").text() == "75 % full"
    shown = control(dialog.summaries_page, "preview_automatic", QCheckBox)
    assert isinstance(shown, QCheckBox) and shown.isChecked()
    dialog.reject()
    fill(qtbot, again)
    assert active_summaries(again) == 0, "automatic summaries are off"
    again.window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: summary_done(again), timeout=15_000)
    assert active_summaries(again) == 1
    tool_calls = [r for r in fake_server.requests_to("/v1/messages") if forces_a_tool(r)]
    assert tool_calls == [], "offline rules: Claude was not asked"
