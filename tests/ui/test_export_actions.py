"""File ▸ Export conversation…, Export all conversations…, Import…, Import as a copy…"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.banner import BannerKind
from app.ui.export_actions import MARKDOWN_FILTER, ExportActions
from tests.helpers.data_folder import data_folder

MODEL = "claude-sonnet-4-5"


def _fill(*titles: str) -> list[str]:
    ids = []
    with data_folder() as (_paths, store):
        for title in titles:
            session = store.create_session(title, MODEL)
            store.append_message(session.id, "user", f"What about {title}?")
            store.append_message(session.id, "assistant", f"{title} is lovely.")
            ids.append(session.id)
    return ids


def _actions(session: CairnSession) -> ExportActions:
    actions = session.window.exports
    actions.native_dialogs = False
    return actions


def _choose(qtbot: QtBot, dialog: QFileDialog | None, path: Path, name_filter: str = "") -> None:
    assert dialog is not None
    qtbot.waitExposed(dialog)
    if name_filter:
        dialog.selectNameFilter(name_filter)
    dialog.selectFile(str(path))
    dialog.accept()


def _file_menu_texts(session: CairnSession) -> list[str]:
    (file_menu,) = [
        action.menu() for action in session.window.menuBar().actions() if action.text() == "&File"
    ]
    return [action.text() for action in file_menu.actions()]  # type: ignore[union-attr]


def test_the_file_menu_offers_export_and_import(
    open_window: Callable[[], CairnSession], with_key: str
) -> None:
    session = open_window()  # no conversation yet: nothing to export on its own
    texts = _file_menu_texts(session)
    for text in ("&Export conversation…", "Export &all conversations…", "&Import…"):
        assert text in texts
    actions = _actions(session)
    actions.update_actions()
    assert not actions.export_action.isEnabled()
    assert actions.export_current() is None


def test_export_the_open_conversation_as_markdown(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str, tmp_path: Path
) -> None:
    _fill("Old one", "Roses")
    session = open_window()
    actions = _actions(session)
    actions.update_actions()
    assert actions.export_action.isEnabled()
    actions.export_action.trigger()
    dialog = actions.dialog
    assert dialog is not None and dialog.windowTitle() == "Export “Roses”"
    target = tmp_path / "roses.md"
    _choose(qtbot, dialog, target, MARKDOWN_FILTER)
    banner = session.window.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "Exported" in banner.text_label.text())
    assert banner.text_label.text() == f"Exported 1 conversation to {target}."
    text = target.read_text(encoding="utf-8")
    assert "## Roses" in text and "Old one" not in text
    assert actions.dialog is None and actions.folder == tmp_path


def test_export_all_then_import_as_a_copy(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str, tmp_path: Path
) -> None:
    _fill("Roses", "Tulips")
    session = open_window()
    actions = _actions(session)
    banner = session.window.banner
    target = tmp_path / "everything.json"
    _choose(qtbot, actions.export_all(), target)
    qtbot.waitUntil(lambda: target.exists() and "Exported 2" in banner.text_label.text())
    assert len(json.loads(target.read_text(encoding="utf-8"))["conversations"]) == 2

    # Already there: said plainly (not as an error), nothing added, the way on offered.
    _choose(qtbot, actions.import_file(), target)
    qtbot.waitUntil(lambda: banner.isVisible() and "already in Cairn" in banner.text_label.text())
    assert banner.kind is BannerKind.INFO
    assert len(session.window.sidebar.session_ids()) == 2
    assert banner.action_button.isVisible() and banner.action_button.text() == "Import as a copy"

    banner.action_button.click()  # the same file, as a copy: no second file dialog
    sidebar = session.window.sidebar
    qtbot.waitUntil(lambda: len(sidebar.session_ids()) == 4)
    assert banner.text_label.text() == "Imported 2 conversations: “Roses (copy)”, “Tulips (copy)”."

    actions.import_copy_action.trigger()
    assert actions.dialog is not None and actions.dialog.windowTitle() == "Import as a copy"
    _choose(qtbot, actions.dialog, target)
    qtbot.waitUntil(lambda: len(sidebar.session_ids()) == 6)


def test_an_existing_file_is_replaced_only_after_asking(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str, tmp_path: Path
) -> None:
    _fill("Roses")
    session = open_window()
    actions = _actions(session)
    target = tmp_path / "roses.json"
    target.write_text("keep me", encoding="utf-8")
    actions.export_all()
    _choose(qtbot, actions.dialog, target)
    box = actions.replace_box
    assert box is not None and box.text() == "“roses.json” already exists. Replace it?"
    box.reject()  # Cancel
    assert target.read_text(encoding="utf-8") == "keep me"

    actions.export_all()
    _choose(qtbot, actions.dialog, target)
    box = actions.replace_box
    assert box is not None
    (replace,) = [b for b in box.buttons() if b.text() == "Replace"]
    replace.click()
    banner = session.window.banner
    qtbot.waitUntil(lambda: banner.isVisible() and "Exported" in banner.text_label.text())
    assert json.loads(target.read_text(encoding="utf-8"))["format"] == "cairn-export"
