"""Settings → Summaries: every setting in plain words, the validators' sentences next to
their field, Restore defaults, and a change that is saved, survives a restart and
governs the next summary."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox, QWidget
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
    assert trigger.accessibleName() == "Summarize older messages when the conversation is … % full"
    assert page.when.currentText() == "Automatically"
    assert page.when.accessibleName() == "Summarize older messages"
    mode = control(page, "mode", QComboBox)
    assert isinstance(mode, QComboBox)
    labels = [mode.itemText(index) for index in range(mode.count())]
    assert "With Claude" in labels and "Offline rules (free, less detailed)" in labels
    models = control(page, "summarizer_models", QLineEdit)
    assert isinstance(models, QLineEdit)
    assert models.text() == ", ".join(DEFAULT_SUMMARIZER_MODELS)
    assert page.config() == SummarizationConfig(), "shown as it is, it reads back the same"
    assert not page.config().preview_automatic, "off by default"  # type: ignore[union-attr]


def test_one_choice_and_one_slider_the_percentages_under_advanced(qtbot: QtBot) -> None:
    page = SummarySettingsPage(SummarizationConfig())
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    assert page.when.isVisible() and page.sooner.isVisible()
    assert not spin(page, "trigger_ratio").isVisible(), "percentages wait under Advanced"
    page.when.setCurrentText("Ask me first (show a preview)")
    config = page.config()
    assert config is not None and config.auto_summarize and config.preview_automatic
    page.when.setCurrentText("Never — only when I press Summarize now")
    config = page.config()
    assert config is not None and not config.auto_summarize

    # "Summarize sooner" lowers the levels together, and they stay valid.
    page.sooner.setValue(page.sooner.maximum())
    config = page.config()
    assert config is not None
    assert (config.trigger_ratio, config.reset_ratio, config.target_ratio) == (0.6, 0.5, 0.4)
    page.sooner.setValue(page.sooner.minimum())  # keep more word for word
    config = page.config()
    assert config is not None and config.trigger_ratio == 0.95

    page.advanced_button.click()
    assert spin(page, "trigger_ratio").isVisible()
    spin(page, "trigger_ratio").setValue(82)
    assert page.sooner.value() == 3, "typed under Advanced: the slider follows (80 %)"
    page.restore_defaults()
    assert page.sooner.value() == 3 and page.when.currentText() == "Automatically"


def test_a_wrong_advanced_value_opens_advanced_to_show_it(qtbot: QtBot) -> None:
    page = SummarySettingsPage(SummarizationConfig())
    qtbot.addWidget(page)
    spin(page, "reset_ratio").setValue(85)
    assert page.config() is None
    assert page.advanced_button.isChecked()


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
    page.when.setCurrentIndex(1)  # ask me first…
    page.when.setCurrentIndex(2)  # …then never: the preview choice is kept for later
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
    assert dialog.summaries_page.when.currentText() == "Never — only when I press Summarize now"
    assert config.preview_automatic
    dialog.reject()
    fill(qtbot, again)
    assert active_summaries(again) == 0, "automatic summaries are off"
    again.window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: summary_done(again), timeout=15_000)
    assert active_summaries(again) == 1
    tool_calls = [r for r in fake_server.requests_to("/v1/messages") if forces_a_tool(r)]
    assert tool_calls == [], "offline rules: Claude was not asked"
