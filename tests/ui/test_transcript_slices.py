"""A summary taking out a page of messages does it in short slices (issue 20 item 3):
the condensed messages leave the column at once, and their widgets are deleted a few per
turn of the event loop rather than all in one pause."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QCoreApplication, QEvent
from pytestqt.qtbot import QtBot

from app.core.models import Message, MessageStatus, Role
from app.ui import transcript as transcript_module
from app.ui.transcript import TranscriptView
from tests.fakes.summaries import make_summary

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def page(count: int) -> list[Message]:
    return [
        Message(
            id=n,
            session_id="s1",
            seq=n,
            role=Role.USER if n % 2 else Role.ASSISTANT,
            content=f"Message {n} about the budget.",
            created_at=T0 + timedelta(minutes=n),
            status=MessageStatus.COMPLETE,
        )
        for n in range(1, count + 1)
    ]


def test_condensed_messages_leave_at_once_and_are_deleted_a_few_per_turn(
    qtbot: QtBot,
) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    view.set_messages(page(40), has_earlier=False)
    qtbot.waitUntil(lambda: not view.building)
    alive = {widget.message.id for widget in view.message_widgets()}
    destroyed: list[int] = []
    for widget in view.message_widgets():
        widget.destroyed.connect(lambda _=None, n=widget.message.id: destroyed.append(n))

    view.set_summaries([make_summary("condensed", 1, 34, "The budget so far.")])

    # Gone from the transcript at once: only the six newest and the card are shown.
    assert [w.message.seq for w in view.message_widgets()] == list(range(35, 41))
    assert len(view.summary_blocks()) == 1
    assert destroyed == []
    # A turn of the event loop deletes one batch (the timer's work, run here by hand).
    deferred = QEvent.Type.DeferredDelete.value
    QCoreApplication.sendPostedEvents(None, deferred)
    assert destroyed == []
    view._delete_retired()
    QCoreApplication.sendPostedEvents(None, deferred)
    assert len(destroyed) == transcript_module._DELETED_A_TURN
    # And the rest follow.
    qtbot.waitUntil(lambda: len(destroyed) == 34)
    assert sorted(destroyed) == sorted(alive - set(range(35, 41)))
