"""A summary taking out a page of messages does it in short slices (issue 20 item 3):
the condensed messages leave the column at once, and their widgets are deleted a few per
turn of the event loop rather than all in one pause; a summary accepted while a reply
streams (`take_summaries`) takes out the rows out of view first, a batch a turn, then the
rest and its card together."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QCoreApplication, QEvent, QPoint
from pytestqt.qtbot import QtBot

from app.core.models import Message, MessageStatus, Role
from app.ui import transcript as transcript_module
from app.ui.transcript import TranscriptView
from app.ui.transcript_frame import settle_layout
from app.ui.transcript_message import MessageWidget
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


def shown_page(qtbot: QtBot, count: int) -> TranscriptView:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    view.set_messages(page(count), has_earlier=False)
    qtbot.waitUntil(lambda: not view.building)
    # Settled, at its end as a page opens: a layout still pending (a loaded machine runs
    # it late) would otherwise move the rows while a test watches them stay put.
    settle_layout(view)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    return view


def in_view(view: TranscriptView, widget: MessageWidget) -> bool:
    viewport = view.scroll_area.viewport()
    top = widget.mapTo(viewport, QPoint(0, 0)).y()
    return top + widget.height() > 0 and top < viewport.height()


def test_a_summary_taken_hides_the_rows_out_of_view_first_then_the_rest_with_its_card(
    qtbot: QtBot,
) -> None:
    view = shown_page(qtbot, 60)
    covered = set(range(1, 55))
    on_screen = {w.message.seq for w in view.message_widgets() if in_view(view, w)}
    assert on_screen & covered, "some covered rows are on screen: they wait for the card"
    where = {
        w.message.seq: w.mapTo(view.scroll_area.viewport(), QPoint(0, 0)).y()
        for w in view.message_widgets()
        if w.message.seq in on_screen
    }

    view.take_summaries([make_summary("condensed", 1, 54, "The budget so far.")])

    turns = 0
    while view.building:
        # Until the card is up, every row on screen stays, where it was; the rows out of
        # view leave a batch at a time.
        assert view.summary_blocks() == []
        shown = {w.message.seq: w for w in view.message_widgets()}
        assert on_screen <= shown.keys()
        for seq in on_screen:
            assert shown[seq].mapTo(view.scroll_area.viewport(), QPoint(0, 0)).y() == where[seq]
        assert len(shown) < 60 - turns * transcript_module._HIDDEN_A_TURN + 1
        turns += 1
        view._summaries_timer.stop()
        view._take_summaries_step()  # the timer's turn, run here by hand
    assert turns >= 2, "the rows out of view left in more than one turn"
    # Then the card and the rest in one turn: never both, never neither.
    assert [w.message.seq for w in view.message_widgets()] == list(range(55, 61))
    assert len(view.summary_blocks()) == 1


def test_taking_summaries_ends_with_page_built_and_stops_for_another_conversation(
    qtbot: QtBot,
) -> None:
    view = shown_page(qtbot, 60)
    with qtbot.waitSignal(view.page_built):
        view.take_summaries([make_summary("condensed", 1, 54, "The budget so far.")])
    assert not view.building and len(view.summary_blocks()) == 1

    view.set_messages(page(60), has_earlier=False)
    qtbot.waitUntil(lambda: not view.building)
    view.take_summaries([make_summary("condensed", 1, 30, "The start.")])
    assert view.building
    view.set_messages(page(60), has_earlier=False)  # another conversation opened meanwhile
    qtbot.waitUntil(lambda: not view.building)
    assert view.summary_blocks() == []
    assert len(view.message_widgets()) == 60


def test_a_transcript_not_on_screen_takes_summaries_at_once(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.set_messages(page(40), has_earlier=False)
    view.take_summaries([make_summary("condensed", 1, 34, "The budget so far.")])
    assert not view.building
    assert [w.message.seq for w in view.message_widgets()] == list(range(35, 41))
    assert len(view.summary_blocks()) == 1
