"""Deleting originals from a summary card or the conversation menu, and Restore from
backup…, in the running window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.delete_originals_dialog import DeleteOriginalsDialog
from app.ui.restore_dialog import RestoreDialog, RestoreProgress, backup_text, human_size
from app.ui.summary_block import SummaryBlock
from app.ui.summary_history import BANNER_TITLE
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.helpers.window import chat
from tests.ui.conftest import running_tasks


def summarized(qtbot: QtBot, cairn: CairnSession) -> SummaryBlock:
    for turn in range(8):
        chat(qtbot, cairn, f"Question {turn}: the price is {turn * 10} EUR")
    assert cairn.controller.service.current.condensing.summarize()
    qtbot.waitUntil(lambda: bool(cairn.window.transcript.summary_blocks()), timeout=30_000)
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=30_000)
    # The summary's end is told last, a few turns of the event loop after its card.
    banner = cairn.window.banner
    qtbot.waitUntil(lambda: banner.title_label.text() == BANNER_TITLE)
    (block,) = cairn.window.transcript.summary_blocks()
    block.header.setFocus()
    qtbot.keyClick(block.header, Qt.Key.Key_Return)
    return block


def asked(qtbot: QtBot, cairn: CairnSession) -> QMessageBox:
    qtbot.waitUntil(lambda: cairn.window.deletion.dialog is not None)
    dialog = cairn.window.deletion.dialog
    assert dialog is not None
    return dialog


def test_deleting_a_summarys_originals_from_its_card(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    block = summarized(qtbot, cairn)
    summary = block.summary
    count = summary.last_seq - summary.first_seq + 1
    block.originals_button.click()
    assert block.originals_view is not None
    assert block.more_button.isVisibleTo(block)
    assert block.more_button.accessibleName() == "More actions"
    assert block.delete_action.text() == "Delete original messages…"
    assert block.more_button.menu().actions() == [block.delete_action]

    block.delete_action.trigger()
    dialog = asked(qtbot, cairn)
    assert isinstance(dialog, DeleteOriginalsDialog)
    assert dialog.text() == f"Delete the {count} original messages of this summary?"
    assert dialog.informativeText() == (
        "The summary stays, and Claude keeps what it says. This can't be undone."
    )
    assert dialog.defaultButton() is not dialog.delete_button
    dialog.delete_button.click()

    banner = cairn.window.banner
    qtbot.waitUntil(lambda: banner.title_label.text() == "Original messages deleted")
    assert f"Deleted {count} original messages" in banner.text_label.text()
    assert cairn.window.transcript.summary_block(summary.id) is not None
    # Show original messages now says when they went.
    assert block.originals_button.text() == "Show original messages"
    block.originals_button.click()
    labels = [label.text() for label in block.findChildren(QLabel)]
    assert any(
        text.startswith("The original messages of this summary were deleted on ") for text in labels
    ), labels
    # Undo is refused in plain words; the card stays.
    block.undo_button.click()
    qtbot.waitUntil(lambda: banner.title_label.text() == "Nothing to put back")
    assert "nothing to put back" in banner.text_label.text()
    assert [b.summary.id for b in cairn.window.transcript.summary_blocks()] == [summary.id]


def test_the_conversation_menu_asks_and_cancel_keeps_everything(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    block = summarized(qtbot, cairn)
    session = cairn.controller.service.current.state.session
    assert session is not None
    count = cairn.controller.service.backups.count_archived(session.id)
    assert count > 0

    cairn.window.deletion.conversation_action.trigger()
    dialog = asked(qtbot, cairn)
    assert dialog.text() == f"Delete the {count} original messages archived in this conversation?"
    assert "The summaries stay" in dialog.informativeText()
    assert "can't be undone" in dialog.informativeText()
    dialog.button(QMessageBox.StandardButton.Cancel).click()

    qtbot.waitUntil(lambda: cairn.window.deletion.dialog is None)
    assert cairn.controller.service.backups.count_archived(session.id) == count
    assert cairn.controller.service.backups.count_originals(block.summary.id) == count


def test_restore_from_backup_in_the_file_menu(qtbot: QtBot, cairn: CairnSession) -> None:
    backups = cairn.controller.service.backups
    qtbot.waitUntil(lambda: bool(backups.list()), timeout=10_000)  # taken after start-up
    qtbot.waitUntil(lambda: running_tasks(cairn) == 0, timeout=10_000)
    chat(qtbot, cairn, "Written after the backup")
    assert cairn.controller.service.current.state.session is not None
    file_menu = cairn.window.menuBar().actions()[0].menu()
    (action,) = [a for a in file_menu.actions() if a.text() == "Restore from backup…"]

    action.trigger()
    qtbot.waitUntil(lambda: cairn.window.findChild(RestoreDialog) is not None)
    dialog = cairn.window.findChild(RestoreDialog)
    assert dialog is not None
    (info,) = dialog.backups
    assert dialog.list.item(0).text() == backup_text(info)
    assert human_size(info.size) in dialog.list.item(0).text()
    assert dialog.restore_button.isEnabled()
    dialog.restore_button.click()
    qtbot.waitUntil(lambda: dialog.confirm_box is not None)
    box = dialog.confirm_box
    assert box is not None
    assert "backed up first" in box.informativeText()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    (restore,) = [b for b in box.buttons() if b.text() == "Restore"]
    restore.click()
    (progress,) = cairn.window.findChildren(RestoreProgress)  # shown at once
    labels = progress.shown

    banner = cairn.window.banner
    qtbot.waitUntil(lambda: banner.title_label.text() == "Backup restored", timeout=10_000)
    qtbot.waitUntil(lambda: not progress.isVisible())
    assert labels[0] == "Restoring… 0 %" and labels[-1] == "Restoring… 100 %"
    assert any(label.startswith("Restoring… ") and label.endswith(" %") for label in labels)
    # The backup was taken before anything was said: the conversation is gone ...
    assert cairn.controller.service.current.state.session is None
    assert cairn.window.sidebar.list.model().rowCount() == 0
    # ... and kept in the backup made just before the restore.
    assert any(b.before_restore for b in backups.list())
