"""The name Export conversation… suggests is one Windows accepts (app/core/platform.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from tests.helpers.data_folder import data_folder


@pytest.mark.parametrize(
    ("title", "suggested"),
    [
        ("CON", "CON conversation"),
        # A title cut short names the file by its words, without the "…".
        ("Help me plan a trip to Lisbon for my…", "Help me plan a trip to Lisbon for my"),
    ],
)
def test_the_suggested_file_name_is_one_windows_accepts(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str, title: str, suggested: str
) -> None:
    with data_folder() as (_paths, store):
        store.create_session(title, "claude-sonnet-4-5")
    session = open_window()
    actions = session.window.exports
    actions.native_dialogs = False

    dialog = actions.export_current()

    assert dialog is not None
    qtbot.waitExposed(dialog)
    name = dialog.findChild(QLineEdit, "fileNameEdit")
    assert name is not None and name.text() == suggested
    dialog.reject()
