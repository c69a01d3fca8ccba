"""First run: the key dialog checks a key against the API and stores it in the keyring."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from keyring.errors import NoKeyringError
from PySide6.QtCore import Qt, QTextBoundaryFinder
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from app.secrets.keystore import SERVICE_NAME, USERNAME
from app.ui.app import CairnSession
from app.ui.key_dialog import WHAT_A_KEY_IS, WHAT_CAIRN_IS, ApiKeyDialog
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.keyring_backend import MemoryKeyring
from tests.ui.conftest import on_modal

GOOD_KEY = "sk-ant-api03-good-key-abcdefghijklmnop"


def unbreakable(html: str, words: str) -> bool:
    """Whether `words` stands in `html`'s text with no place a line may break inside it
    (Unicode line breaking, as Qt lays the label out)."""
    document = QTextDocument()
    document.setHtml(html)
    text = document.toPlainText()
    start = text.find(words)
    finder = QTextBoundaryFinder(QTextBoundaryFinder.BoundaryType.Line, text)
    for position in range(start + 1, start + len(words)):
        finder.setPosition(position)
        if finder.isAtBoundary():
            return False
    return start >= 0


def test_the_key_prefix_is_never_cut_in_two(qtbot: QtBot) -> None:
    # "sk-ant-" with plain hyphens breaks after "sk-" (it did at 800×600 and 1920×1080).
    assert not unbreakable("it starts with <tt>sk-ant-</tt>.", "sk-ant-")
    assert unbreakable("it starts with <tt>sk\u2011ant\u2011</tt>.", "sk\u2011ant\u2011")


def test_first_run_asks_for_a_key_checks_it_and_stores_it(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    fake_server: FakeAnthropicServer,
    memory_keyring: MemoryKeyring,
) -> None:
    fake_server.valid_keys = {GOOD_KEY}
    seen: list[str] = []
    hidden: list[bool] = []  # the empty conversation's words while the dialog is open

    def fill_in(dialog: ApiKeyDialog) -> None:
        assert "Anthropic Console" in dialog.intro_label.text()
        # What Cairn is, then what a key is and who bills for it, in two sentences.
        assert dialog.intro_label.text().startswith(f"{WHAT_CAIRN_IS}<br><br>{WHAT_A_KEY_IS}")
        assert unbreakable(dialog.intro_label.text(), "sk\u2011ant\u2011"), "not cut in two"
        assert WHAT_A_KEY_IS.count(". ") == 1 and WHAT_A_KEY_IS.endswith(".")
        assert "separately from any Claude subscription" in WHAT_A_KEY_IS
        dialog.key_edit.setText("sk-ant-wrong")
        dialog.check_button.click()
        qtbot.waitUntil(lambda: "did not accept" in dialog.status_label.text(), timeout=10_000)
        seen.append(dialog.status_label.text())
        assert "Settings" not in dialog.status_label.text(), "the user is in this dialog"
        assert unbreakable(dialog.status_label.text(), "sk\u2011ant\u2011")
        intro = dialog.intro_label  # grown to fit the words: nothing above is cut
        assert intro.height() >= intro.heightForWidth(intro.width())
        assert memory_keyring.passwords == {}, "a rejected key is not stored"
        empty = dialog.parentWidget().transcript.empty_state  # type: ignore[attr-defined]
        hidden.extend(w.isHidden() for w in (empty.title, empty.hint, *empty.examples))
        dialog.key_edit.setText(GOOD_KEY)
        qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)

    on_modal(ApiKeyDialog, fill_in)
    cairn = open_window()
    qtbot.waitUntil(lambda: memory_keyring.passwords.get((SERVICE_NAME, USERNAME)) == GOOD_KEY)
    assert seen and seen[0].startswith("⚠")
    assert hidden and all(hidden), "nothing peeks out from behind the first-run dialog"
    empty = cairn.window.transcript.empty_state
    assert not any(w.isHidden() for w in (empty.title, empty.hint, *empty.examples))
    fake_server.add_reply("Welcome!")
    cairn.window.composer.editor.setPlainText("Hi")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    # The first message goes once the model list (asked for with the new key) came.
    qtbot.waitUntil(lambda: bool(fake_server.requests_to("/v1/messages")), timeout=15_000)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    assert fake_server.turns()[-1].api_key == GOOD_KEY


def test_without_a_password_store_the_key_is_kept_for_the_session_only(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    fake_server: FakeAnthropicServer,
    memory_keyring: MemoryKeyring,
) -> None:
    memory_keyring.fail_with = NoKeyringError("No recommended backend was available.")

    def fill_in(dialog: ApiKeyDialog) -> None:
        dialog.key_edit.setText(GOOD_KEY)
        dialog.check_button.click()
        qtbot.waitUntil(dialog.session_only_button.isVisible, timeout=10_000)
        assert "password store" in dialog.status_label.text()
        dialog.session_only_button.click()

    on_modal(ApiKeyDialog, fill_in)
    cairn = open_window()
    qtbot.waitUntil(lambda: cairn.controller.service.credentials.has_key())
    qtbot.waitUntil(cairn.window.banner.isVisible)
    assert "this session only" in cairn.window.banner.title_label.text()
    assert memory_keyring.passwords == {}
    fake_server.add_reply("ok")
    cairn.window.composer.editor.setPlainText("Hi")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    # The first message goes once the model list (asked for with the new key) came.
    qtbot.waitUntil(lambda: bool(fake_server.requests_to("/v1/messages")), timeout=15_000)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    assert fake_server.turns()[-1].api_key == GOOD_KEY


def test_not_now_leaves_the_draft_and_asks_again_on_send(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    fake_server: FakeAnthropicServer,
    memory_keyring: MemoryKeyring,
) -> None:
    asked: list[int] = []

    def decline(dialog: ApiKeyDialog) -> None:
        asked.append(1)
        dialog.reject()

    on_modal(ApiKeyDialog, decline)
    cairn = open_window()
    qtbot.waitUntil(lambda: asked == [1] and cairn.window.settings.key_dialog is None)
    on_modal(ApiKeyDialog, decline)
    cairn.window.composer.editor.setPlainText("A question")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: asked == [1, 1])
    qtbot.waitUntil(lambda: cairn.window.settings.key_dialog is None)
    assert cairn.window.composer.text() == "A question"
    assert fake_server.requests_to("/v1/messages") == []
    assert cairn.store.list_sessions() == []


def test_key_from_environment_skips_the_dialog(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    fake_server: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", GOOD_KEY)
    cairn = open_window()
    assert cairn.controller.service.credentials.has_key()
    fake_server.add_reply("ok")
    cairn.window.composer.editor.setPlainText("Hi")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    # The first message goes once the model list (asked for with the new key) came.
    qtbot.waitUntil(lambda: bool(fake_server.requests_to("/v1/messages")), timeout=15_000)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    assert fake_server.turns()[-1].api_key == GOOD_KEY
