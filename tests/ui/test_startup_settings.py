"""Start-up paints with the settings read without their model, then checks them whole.

The window's first paint takes the theme, the text size and a new conversation's
instructions from app.core.paint_settings; the chat service, built after the
paint, validates the whole file with the model (issue 20). What the user sees
and what is kept of a damaged file are as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.ui.app import CairnSession, open_cairn
from app.ui.instructions_actions import BUTTON_NONE, BUTTON_SET
from app.ui.theme import DARK, LIGHT, apply_theme
from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def opened(
    qtbot: QtBot, with_key: str, fake_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[CairnSession]]:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.base_url)
    sessions: list[CairnSession] = []
    yield sessions
    for session in sessions:
        session.window.close()
        session.close()
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    apply_theme(application, "system")  # as the other tests expect it


def _settings_file(content: str) -> Path:
    paths = AppPaths.from_environment()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text(content, encoding="utf-8")
    return paths.settings_file


def _open(qtbot: QtBot, sessions: list[CairnSession]) -> CairnSession:
    session = open_cairn(AppPaths.from_environment())
    sessions.append(session)
    qtbot.addWidget(session.window)
    return session


def _window_colour() -> str:
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    return application.palette().color(QPalette.ColorRole.Window).name()


def _start(qtbot: QtBot, session: CairnSession) -> None:
    session.show()
    qtbot.waitExposed(session.window)
    qtbot.waitUntil(lambda: session.started)


@pytest.mark.parametrize("font_size", [14, "14"], ids=["as Cairn writes it", "for the model"])
def test_the_first_paint_has_the_users_theme_size_and_instructions(
    qtbot: QtBot, opened: list[CairnSession], font_size: object
) -> None:
    # "14" (a string) is one only the model can judge: loaded before the paint, as before.
    _settings_file(
        json.dumps({"theme": "dark", "font_size": font_size, "default_instructions": "Be brief."})
    )
    session = _open(qtbot, opened)

    assert not session.controller.built, "the service is built after the paint"
    assert _window_colour() == DARK[QPalette.ColorRole.Window]
    assert session.window.reading.text_size.size == 14
    assert session.window.transcript.font().pointSize() == 14
    assert session.window.instructions.button.text() == BUTTON_SET
    _start(qtbot, session)
    settings = session.controller.settings
    assert (settings.theme, settings.font_size) == ("dark", 14)
    assert settings.default_instructions == "Be brief."
    assert session.window.instructions.button.text() == BUTTON_SET


def test_a_damaged_file_paints_the_defaults_then_is_kept_aside_and_said(
    qtbot: QtBot, opened: list[CairnSession]
) -> None:
    path = _settings_file('{"theme": "dark", "font_size": 14')  # cut short
    session = _open(qtbot, opened)

    assert _window_colour() == LIGHT[QPalette.ColorRole.Window]
    assert session.window.reading.text_size.size == 11
    assert session.window.instructions.button.text() == BUTTON_NONE
    assert path.exists(), "the model moves it aside, after the paint"
    _start(qtbot, session)

    banner = session.window.banner
    assert banner.isVisible()
    assert "Your settings file was damaged, so Cairn started with defaults." in (
        banner.text_label.text()
    )
    (aside,) = path.parent.glob("settings.json.damaged-*")
    assert aside.name in banner.text_label.text()
    assert aside.read_text(encoding="utf-8") == '{"theme": "dark", "font_size": 14'
    assert not path.exists()
    assert (session.controller.settings.theme, session.controller.settings.font_size) == (
        "system",
        11,
    )


def test_damaged_summary_settings_keep_the_rest_and_are_said(
    qtbot: QtBot, opened: list[CairnSession]
) -> None:
    path = _settings_file(
        json.dumps({"theme": "dark", "summarization": {"trigger_ratio": 0.5, "reset_ratio": 0.9}})
    )
    session = _open(qtbot, opened)

    assert _window_colour() == DARK[QPalette.ColorRole.Window]
    _start(qtbot, session)
    assert "Your summary settings could not be read" in session.window.banner.text_label.text()
    assert session.controller.settings.theme == "dark"
    assert path.exists() and len(list(path.parent.glob("settings.json.damaged-*"))) == 1
