"""What the user sees when a reply ends other than complete: the words under it, Continue
on a cut-off reply (which goes on in the same row, and is still offered after a restart),
a declined exchange marked, and a question whose reply failed before anything arrived
left with Retry and no empty row — also after a restart."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from app.core.models import MessageStatus, Role
from app.ui.app import CairnSession
from app.ui.transcript_message import MessageWidget
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.helpers.window import send


def wait_idle(qtbot: QtBot, cairn: CairnSession) -> None:
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def widgets(cairn: CairnSession) -> list[MessageWidget]:
    return list(cairn.window.transcript.message_widgets())


def action(widget: MessageWidget) -> QPushButton | None:
    """The action button the message offers, when one is shown."""
    shown = [b for b in widget.findChildren(QPushButton) if b.isVisibleTo(widget) and b.text()]
    return shown[0] if shown else None


def reopen(cairn: CairnSession, open_window: Callable[[], CairnSession]) -> CairnSession:
    cairn.window.close()
    cairn.close()
    return open_window()


def test_a_cut_off_reply_offers_continue_which_goes_on_in_the_same_row(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    open_window: Callable[[], CairnSession],
) -> None:
    fake_server.add_reply("Once upon a time", stop_reason="max_tokens")
    send(qtbot, cairn, "Tell me a story")
    wait_idle(qtbot, cairn)
    reply = widgets(cairn)[-1]
    assert reply.note.text() == "Claude's reply reached its length limit"
    button = action(reply)
    assert button is not None and button.text() == "Continue"
    assert action(widgets(cairn)[0]) is None

    again = reopen(cairn, open_window)
    # Offered once the conversation is open and idle.
    qtbot.waitUntil(lambda: len(widgets(again)) == 2 and action(widgets(again)[-1]) is not None)
    reply = widgets(again)[-1]
    assert reply.note.text() == "Claude's reply reached its length limit"
    button = action(reply)
    assert button is not None and button.text() == "Continue"

    fake_server.add_reply(", there was a cairn.")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: reply.message.status is MessageStatus.COMPLETE, timeout=15_000)
    wait_idle(qtbot, again)
    assert len(widgets(again)) == 2, "the same row went on"
    assert widgets(again)[-1].text == "Once upon a time, there was a cairn."
    assert widgets(again)[-1].note.text() == ""
    assert action(widgets(again)[-1]) is None


def test_a_declined_exchange_says_so(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_reply("I", stop_reason="refusal")
    send(qtbot, cairn, "Something Claude declines")
    wait_idle(qtbot, cairn)
    question, reply = widgets(cairn)
    qtbot.waitUntil(lambda: question.note.text() == "Left out of what Claude sees")
    # The explanation from stop_details, and the next listed model, said in words.
    assert reply.note.text() == (
        "Claude declined — no longer sent to Claude. This request was declined because it "
        "could enable cyber harm. Another model often answers: this asks Claude Opus 5.5 "
        "the same question."
    )
    button = action(reply)
    assert button is not None and button.text() == "Ask another model"
    assert action(question) is None


def test_a_declined_replys_explanation_is_still_there_after_a_restart(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    open_window: Callable[[], CairnSession],
) -> None:
    fake_server.add_reply("I", stop_reason="refusal")
    send(qtbot, cairn, "Something Claude declines")
    wait_idle(qtbot, cairn)
    again = reopen(cairn, open_window)
    qtbot.waitUntil(lambda: len(widgets(again)) == 2 and action(widgets(again)[-1]) is not None)
    reply = widgets(again)[-1]
    assert "This request was declined because it could enable cyber harm." in reply.note.text()
    button = action(reply)
    assert button is not None and button.text() == "Ask another model"


def test_a_failed_reply_that_received_nothing_leaves_retry_on_the_question(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    open_window: Callable[[], CairnSession],
) -> None:
    fake_server.add_error(401, path="/v1/messages")
    send(qtbot, cairn, "Are you there?")
    qtbot.waitUntil(lambda: cairn.window.banner.isVisible(), timeout=15_000)
    wait_idle(qtbot, cairn)
    qtbot.waitUntil(lambda: len(widgets(cairn)) == 1)
    (question,) = widgets(cairn)
    assert question.message.role is Role.USER
    assert question.note.text() == "No reply yet"
    assert action(question) is not None

    again = reopen(cairn, open_window)
    qtbot.waitUntil(lambda: len(widgets(again)) == 1 and action(widgets(again)[0]) is not None)
    (question,) = widgets(again)
    assert question.note.text() == "No reply yet"
    button = action(question)
    assert button is not None and button.text() == "Retry"
    fake_server.add_reply("Yes, here.")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(widgets(again)) == 2, timeout=15_000)
    wait_idle(qtbot, again)
    assert widgets(again)[-1].text == "Yes, here."
    assert question.note.text() == "" and action(question) is None
