"""Settings → Recall: all five recall settings in plain words, greyed while their switch
is off, saved, and the same after a restart (issue 12)."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.core.settings import RecallSettings
from app.ui.app import CairnSession
from app.ui.recall_settings import RecallSettingsPage


def test_every_recall_setting_has_a_control_in_plain_words(qtbot: QtBot) -> None:
    page = RecallSettingsPage(RecallSettings())
    qtbot.addWidget(page)
    assert page.automatic.text() == "Look up earlier messages automatically"
    assert page.tool.text() == "Let Claude search earlier messages while it answers"
    assert "my other conversations" in page.across_conversations.text()
    assert page.automatic.isChecked() and page.tool.isChecked()
    assert not page.across_conversations.isChecked()
    assert page.budget.value() == 5 and page.max_lookups.value() == 3
    assert page.settings() == RecallSettings()


def test_a_short_page_scrolls_instead_of_squeezing_its_words(qtbot: QtBot) -> None:
    """At 800×600 with Advanced open the page is taller than the dialog: every hint keeps
    the height its words need, and the page scrolls to the last switch."""
    page = RecallSettingsPage(RecallSettings())
    qtbot.addWidget(page)
    page.setFixedSize(500, 300)  # a screen with no room for the dialog to grow
    page.show()
    qtbot.waitExposed(page)
    page.advanced_button.click()
    qtbot.waitUntil(lambda: page.scroller.verticalScrollBar().maximum() > 0)
    hints = [label for label in page.findChildren(QLabel) if label.wordWrap()]
    assert len(hints) == 4
    for label in hints:
        assert label.height() >= label.heightForWidth(label.width()), label.text()
    page.scroller.ensureWidgetVisible(page.across_conversations)
    assert page.across_conversations.visibleRegion().boundingRect().height() > 0


def test_a_setting_without_effect_is_greyed(qtbot: QtBot) -> None:
    page = RecallSettingsPage(RecallSettings())
    qtbot.addWidget(page)
    page.automatic.setChecked(False)
    assert not page.budget.isEnabled()
    page.tool.setChecked(False)
    assert not page.max_lookups.isEnabled()
    # Other conversations are for the quotes too, not only for Claude's searches.
    assert page.across_conversations.isEnabled()
    page.tool.setChecked(True)
    assert page.max_lookups.isEnabled()
    assert page.settings().automatic is False


def test_recall_settings_are_saved_and_survive_a_restart(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str
) -> None:
    cairn = open_window()
    dialog = cairn.window.settings.open_settings()
    page = dialog.recall_page
    dialog.tabs.setCurrentWidget(page)
    page.automatic.setChecked(False)
    page.budget.setValue(12)
    page.across_conversations.setChecked(True)
    page.max_lookups.setValue(6)
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    saved = json.loads(AppPaths.from_environment().settings_file.read_text(encoding="utf-8"))[
        "recall"
    ]
    assert saved == {
        "automatic": False,
        "budget_ratio": 0.12,
        "tool": True,
        "across_conversations": True,
        "max_lookups": 6,
    }
    cairn.window.close()
    cairn.close()

    again = open_window()
    assert again.controller.service.settings.recall == RecallSettings(
        automatic=False, budget_ratio=0.12, across_conversations=True, max_lookups=6
    )
    dialog = again.window.settings.open_settings()
    shown = dialog.recall_page
    assert not shown.automatic.isChecked() and shown.budget.value() == 12
    assert shown.across_conversations.isChecked() and shown.max_lookups.value() == 6
    dialog.reject()


def test_one_switch_on_top_and_the_dials_under_advanced(qtbot: QtBot) -> None:
    page = RecallSettingsPage(RecallSettings())
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    assert page.look_back.text() == "Let Claude look back in earlier messages"
    assert page.look_back.isChecked()
    assert not page.budget.isVisible() and not page.max_lookups.isVisible()

    page.look_back.setChecked(False)
    off = page.settings()
    assert not off.automatic and not off.tool
    page.look_back.setChecked(True)
    assert page.settings() == RecallSettings(), "both ways come back as they were"

    page.advanced_button.click()
    assert page.budget.isVisible() and page.max_lookups.isVisible()
    page.tool.setChecked(False)
    assert page.look_back.isChecked(), "quoting alone still looks back"
    page.automatic.setChecked(False)
    assert not page.look_back.isChecked()
    page.look_back.setChecked(True)
    assert page.settings().automatic and page.settings().tool, "none was on: both go on"
