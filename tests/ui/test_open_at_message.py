"""Opening a conversation at a message, from the History window and from Ctrl+F, in a
real window with a real condensed conversation, found by the real full-text search."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from app.core.search import Author, SearchHit
from app.ui.app import CairnSession
from app.ui.history_source import Place
from app.ui.landing_highlight import LandingHighlight
from app.ui.message_jump import MISSED_TEXT, MISSED_TITLE
from app.ui.search_panel import SearchPanel
from app.ui.transcript import TranscriptView
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.helpers.window import chat
from tests.ui.test_condensing import SMALL, words


def condensed_conversation(
    qtbot: QtBot, open_window: Callable[[], CairnSession], fake_server: FakeAnthropicServer
) -> tuple[CairnSession, str, int]:
    """A conversation whose older messages were condensed; returns the window, the
    conversation's id and how many turns it has."""
    fake_server.models = [SMALL]
    cairn = open_window()
    # Generous waits: the models and the token counter come from threads, slow on a busy machine.
    qtbot.waitUntil(
        lambda: cairn.controller.service.current.state.model_id == SMALL.id, timeout=40_000
    )
    qtbot.waitUntil(lambda: cairn.controller.service.counter.ready, timeout=40_000)
    turns = 0
    for turn in range(30):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 60))
        chat(qtbot, cairn, f"Question {turn} about report_{turn}.xlsx: " + words("detail", 60))
        turns = turn + 1
        if cairn.window.banner.isVisible():
            break
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=40_000)
    current = cairn.controller.service.current.state.session
    assert current is not None and cairn.controller.service.current.state.summaries
    return cairn, current.id, turns


def in_view(transcript: TranscriptView, widget: object) -> bool:
    from PySide6.QtWidgets import QWidget

    assert isinstance(widget, QWidget)
    viewport = transcript.scroll_area.viewport()
    top = widget.mapTo(viewport, QPoint(0, 0)).y()
    return -widget.height() < top < viewport.height()


def flashed(cairn: CairnSession) -> LandingHighlight | None:
    flash = cairn.window.history.jump.flash
    return flash


def first_message_hit(qtbot: QtBot, search: SearchPanel) -> SearchHit | None:
    """Down from the box past the conversations whose title has the words (listed first)
    to the first message found."""
    for _ in range(search.results.rowCount()):
        if search.selected_hit() is not None:
            break
        qtbot.keyClick(search.search_edit, Qt.Key.Key_Down)
    return search.selected_hit()


def test_enter_in_history_opens_at_an_archived_and_a_live_message(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn, session_id, turns = condensed_conversation(qtbot, open_window, fake_server)
    window = cairn.window
    (summary,) = cairn.controller.service.current.state.summaries
    window.controller.service.new_conversation()  # another one on screen: opening is needed
    qtbot.waitUntil(lambda: window.controller.service.current.state.session is None)

    history_window = window.history.open_history()
    qtbot.waitExposed(history_window)
    history_window.search.author_boxes[Author.SUMMARY].setChecked(False)
    history_window.search.search_edit.setText("report_0")
    qtbot.waitUntil(lambda: history_window.search.results.hits() != [], timeout=15_000)
    hit = first_message_hit(qtbot, history_window.search)
    assert hit is not None and hit.archived and hit.seq is not None
    assert hit.summary_id == summary.id
    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000):
        qtbot.keyClick(history_window.search.search_edit, Qt.Key.Key_Return)
    current = window.controller.service.current.state.session
    assert current is not None and current.id == session_id
    block = window.transcript.summary_block(summary.id)
    assert block is not None and block.expanded and block.originals_shown
    view = block.originals_view
    assert view is not None and hit.seq in view.seqs
    assert flashed(cairn) is not None and flashed(cairn).parent() is view

    # A live message: the newest question, shown in the transcript, in view.
    last = turns - 1
    history_window.search.search_edit.setText(f"report_{last}")
    qtbot.waitUntil(
        lambda: (
            history_window.search.results.hits() != []
            and not history_window.search.results.hits()[0].archived
        )
    )
    live = first_message_hit(qtbot, history_window.search)
    assert live is not None and live.summary_id is None
    # Scroll away first, so that going there has to move the view.
    window.transcript.scroll_area.verticalScrollBar().setValue(0)
    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000):
        qtbot.keyClick(history_window.search.search_edit, Qt.Key.Key_Return)
    widget = next(w for w in window.transcript.message_widgets() if w.message.seq == live.seq)
    assert flashed(cairn) is not None and flashed(cairn).parent() is widget
    assert in_view(window.transcript, widget)


def test_a_place_whose_summary_is_gone_goes_where_the_message_is_now_or_says_so(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    """A hit names the summary covering its message when it was found; undone or folded
    into another before the jump arrives, the jump goes to the message where it is now.
    A place nothing shows (a deleted message, a summary gone) is said so and not waited
    for (the jump waited for ever, saying nothing)."""
    cairn, session_id, turns = condensed_conversation(qtbot, open_window, fake_server)
    window = cairn.window
    jump = window.history.jump
    (summary,) = cairn.controller.service.current.state.summaries
    archived = summary.first_seq
    with qtbot.waitSignal(jump.arrived, timeout=30_000) as arrived:
        jump.go(Place(session_id, archived, "a-summary-undone-meanwhile"))
    assert arrived.args == [Place(session_id, archived, summary.id)]
    block = window.transcript.summary_block(summary.id)
    assert block is not None and block.originals_shown
    assert flashed(cairn) is not None and flashed(cairn).parent() is block.originals_view
    # A live message, named as archived (its summary undone meanwhile).
    live = 2 * turns
    with qtbot.waitSignal(jump.arrived, timeout=30_000) as arrived:
        jump.go(Place(session_id, live, "its-summary-undone-meanwhile"))
    assert arrived.args == [Place(session_id, live, None)]
    # Nothing shows these any more: said so, and nothing waits.
    for gone in (Place(session_id, None, "a-summary-undone"), Place(session_id, live + 50)):
        with qtbot.waitSignal(jump.missed, timeout=30_000) as missed:
            jump.go(gone)
        assert missed.args == [MISSED_TITLE, MISSED_TEXT]
        assert jump.pending is None
        assert window.banner.isVisible() and window.banner.title_label.text() == MISSED_TITLE


def test_ctrl_f_finds_in_the_open_conversation_archived_included(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn, session_id, turns = condensed_conversation(qtbot, open_window, fake_server)
    window = cairn.window
    bar = window.history.find_bar
    window.history.find_action.trigger()
    assert bar.isVisible() and bar.edit.hasFocus()
    # As the words are typed, the view goes to the first match.
    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000) as first:
        bar.edit.setText("question")
    found = len(bar.hits)
    assert found >= turns and bar.count_label.text() == f"1 of {found}"  # summaries too
    assert {hit.session_id for hit in bar.hits} == {session_id}
    seqs = [hit.seq for hit in bar.hits if hit.seq is not None]
    assert seqs == sorted(seqs), "in conversation order"
    assert bar.edit.hasFocus(), "typing goes on"
    place = first.args[0]
    assert place.summary_id is not None, "the first hit is archived (or its summary)"
    block = window.transcript.summary_block(place.summary_id)
    assert block is not None and block.expanded
    assert place.seq is None or block.originals_shown

    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000) as back:
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == f"{found} of {found}", "previous wraps to the last"
    assert back.args[0].summary_id is None, "the last question is live"

    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000):
        qtbot.keyClick(bar.edit, Qt.Key.Key_F3)
    assert bar.count_label.text() == f"1 of {found}"
    with qtbot.waitSignal(window.history.jump.arrived, timeout=30_000):
        qtbot.keyClick(bar.edit, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == f"{found} of {found}"

    assert bar.edit.hasFocus(), "the words keep the focus: Enter goes on"
    bar.edit.setText("no such words")
    qtbot.waitUntil(lambda: bar.count_label.text() == "Not found")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()
