"""The main window driven like a user, against the fake server through the real SDK."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from app.core.catalog import FALLBACK_MODELS
from app.core.models import MessageStatus, Role
from app.llm.anthropic_errors import BILLING_URL
from app.ui.app import CairnSession
from tests.fakes.anthropic_server import FakeAnthropicServer, text_of_content
from tests.fakes.dates import undated
from tests.helpers.window import send


def wait_idle(qtbot: QtBot, cairn: CairnSession) -> None:
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def shown_texts(cairn: CairnSession) -> list[tuple[Role, str]]:
    return [(w.message.role, w.text) for w in cairn.window.transcript.message_widgets()]


def stored(cairn: CairnSession) -> list[tuple[Role, str, MessageStatus]]:
    current = cairn.controller.service.current.state.session
    assert current is not None
    return [(m.role, m.content, m.status) for m in cairn.store.messages(current.id)]


def test_window_opens_ready_to_type(qtbot: QtBot, cairn: CairnSession) -> None:
    window = cairn.window
    assert window.windowTitle() == "New conversation — Cairn"
    qtbot.waitUntil(lambda: window.composer.editor.hasFocus())
    assert not window.composer.button.isEnabled(), "Send is disabled for an empty message"
    window.composer.editor.setPlainText("   \n  ")
    assert not window.composer.button.isEnabled(), "whitespace is not a message"
    window.composer.editor.setPlainText("hi")
    assert window.composer.button.isEnabled()


def test_send_streams_reply_and_keeps_it(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_reply(
        "Hello **there**.\n\n- one\n- two", chunks=["Hello ", "**there**.", "\n\n- one\n- two"]
    )
    send(qtbot, cairn, "Say hello")
    assert cairn.window.composer.text() == "", "the composer empties once the message is stored"
    wait_idle(qtbot, cairn)
    assert shown_texts(cairn) == [
        (Role.USER, "Say hello"),
        (Role.ASSISTANT, "Hello **there**.\n\n- one\n- two"),
    ]
    assert stored(cairn) == [
        (Role.USER, "Say hello", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "Hello **there**.\n\n- one\n- two", MessageStatus.COMPLETE),
    ]
    assert cairn.window.windowTitle() == "Say hello — Cairn"
    request = fake_server.turns()[-1]
    assert request.body["stream"] is True
    (turn,) = request.body["messages"]  # its date line is in the request only
    assert (turn["role"], undated(turn["content"])) == ("user", "Say hello")


def test_shift_enter_adds_a_line_instead_of_sending(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    editor = cairn.window.composer.editor
    qtbot.keyClicks(editor, "first")
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor, "second")
    assert editor.toPlainText() == "first\nsecond"
    assert fake_server.requests_to("/v1/messages") == []


def test_escape_stops_and_keeps_partial_reply(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    words = [f"word{i} " for i in range(200)]
    fake_server.add_reply("".join(words), chunks=words, chunk_delay=0.05)
    send(qtbot, cairn, "Tell me a long story")
    qtbot.waitUntil(lambda: cairn.window.composer.button.text() == "Stop")
    qtbot.waitUntil(lambda: "word3" in shown_texts(cairn)[-1][1], timeout=10_000)
    qtbot.keyClick(cairn.window, Qt.Key.Key_Escape)
    wait_idle(qtbot, cairn)
    role, text, status = stored(cairn)[-1]
    assert role is Role.ASSISTANT and status is MessageStatus.STOPPED
    assert text.startswith("word0 word1 word2 word3")
    assert len(text) < len("".join(words)), "the stream really stopped early"
    widget = cairn.window.transcript.message_widgets()[-1]
    assert widget.text == text
    assert widget.note.text() == "Stopped"
    assert cairn.window.composer.button.text() == "Send"


def retry_buttons(cairn: CairnSession) -> list[QWidget]:
    """The widgets offering a visible Retry: the banner, or a message in the transcript."""
    window = cairn.window
    offered = [
        widget
        for widget in window.transcript.message_widgets()
        if window.reply_actions.offered == "Retry" and widget is window.reply_actions._offered
    ]
    return [window.banner] * window.banner.retry_button.isVisible() + offered


@pytest.mark.parametrize(
    ("status", "title", "words", "retry"),
    [
        (401, "API key not accepted", "Your API key was not accepted", False),
        (403, "Not allowed", "", False),
        (429, "Too many requests", "", True),
        (500, "Claude had a problem", "", True),
        (529, "Claude is busy", "", True),
    ],
)
def test_error_banner_in_plain_words(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    status: int,
    title: str,
    words: str,
    retry: bool,
) -> None:
    # Enough failures to outlast the SDK's own retries, each asking for a tiny wait.
    fake_server.add_error(status, retry_after_ms=5, times=3, path="/v1/messages")
    send(qtbot, cairn, "Hello?")
    wait_idle(qtbot, cairn)
    banner = cairn.window.banner
    qtbot.waitUntil(banner.isVisible)
    assert banner.title_label.text() == title
    assert words in banner.text_label.text()
    # One Retry per failure: the question left without a reply offers it in the
    # transcript, so the banner does not offer a second one.
    assert retry_buttons(cairn) == [cairn.window.transcript.message_widgets()[-1]]
    assert not banner.retry_button.isVisible()
    assert "Traceback" not in banner.text_label.text()
    assert stored(cairn)[0] == (Role.USER, "Hello?", MessageStatus.COMPLETE), "the question is kept"


def test_out_of_credit_links_to_billing_and_offers_no_retry(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    # The body the API sends (a plain 400), see tests/integration/test_anthropic_provider.py.
    fake_server.add_error(
        400,
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
        "Billing to upgrade or purchase credits.",
        path="/v1/messages",
    )
    send(qtbot, cairn, "Hello?")
    wait_idle(qtbot, cairn)
    banner = cairn.window.banner
    qtbot.waitUntil(banner.isVisible)
    assert banner.title_label.text() == "No credit left"
    assert banner.text_label.text().startswith("Your Anthropic account is out of credit.")
    assert banner.link_label.isVisible()
    assert f'href="{BILLING_URL}"' in banner.link_label.text()
    assert "Open the billing page" in banner.link_label.text()
    assert not banner.retry_button.isVisible()
    assert len(fake_server.requests_to("/v1/messages")) == 1


def test_retry_after_overload_gets_the_answer(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_error(529, retry_after_ms=5, times=3, path="/v1/messages")
    send(qtbot, cairn, "Are you there?")
    wait_idle(qtbot, cairn)
    qtbot.waitUntil(lambda: len(retry_buttons(cairn)) == 1)
    assert cairn.window.banner.isVisible() and not cairn.window.banner.retry_button.isVisible()
    fake_server.add_reply("Yes, I'm here.")
    cairn.window.transcript.message_widgets()[-1].action_requested.emit()
    wait_idle(qtbot, cairn)
    assert not cairn.window.banner.isVisible(), "the error is over: its banner went"
    assert stored(cairn)[-1] == (Role.ASSISTANT, "Yes, I'm here.", MessageStatus.COMPLETE)
    # The failed attempt stays on screen but is not sent again to Claude.
    last_request = fake_server.turns()[-1]
    (turn,) = last_request.body["messages"]
    assert (turn["role"], undated(turn["content"])) == ("user", "Are you there?")


def test_sdk_retries_are_shown_then_succeed(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    statuses: list[str] = []
    cairn.controller.status_changed.connect(statuses.append)
    fake_server.add_error(529, retry_after_ms=5, path="/v1/messages")
    fake_server.add_reply("Made it.")
    send(qtbot, cairn, "Hi")
    wait_idle(qtbot, cairn)
    assert any(text.startswith("Claude is busy — retrying") for text in statuses)
    assert stored(cairn)[-1] == (Role.ASSISTANT, "Made it.", MessageStatus.COMPLETE)
    assert not cairn.window.banner.isVisible()


def test_error_in_the_middle_keeps_what_arrived(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_stream_error("The first half ", error_type="api_error", message="boom")
    send(qtbot, cairn, "Go")
    wait_idle(qtbot, cairn)
    role, text, status = stored(cairn)[-1]
    assert (role, text, status) == (Role.ASSISTANT, "The first half ", MessageStatus.ERROR)
    assert cairn.window.transcript.message_widgets()[-1].note.text() == "Reply failed"
    assert cairn.window.banner.isVisible()


def test_server_unreachable(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.close()
    send(qtbot, cairn, "Anyone?")
    wait_idle(qtbot, cairn)
    banner = cairn.window.banner
    assert banner.title_label.text() == "Can't reach Claude"
    # The title is not said twice, and an offline computer is never "busy".
    assert banner.text_label.text() == "Check your internet connection and try again."
    assert "busy" not in banner.title_label.text() + banner.text_label.text()
    assert len(retry_buttons(cairn)) == 1, "one Retry, not two"


def test_unsendable_text_is_refused_and_kept(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    # Qt itself drops lone surrogates from what is typed; text reaching the controller
    # from elsewhere (a paste of broken UTF-16) is refused in plain words, and kept.
    broken = "half an emoji \ud83d here"
    cairn.window.composer.set_text("draft stays")
    assert cairn.controller.service.send(broken) is False
    assert cairn.window.banner.isVisible()
    assert "damaged character" in cairn.window.banner.text_label.text()
    assert cairn.window.composer.text() == "draft stays"
    assert cairn.store.list_sessions() == []
    assert fake_server.requests_to("/v1/messages") == []


def test_unusual_text_round_trips(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    text = "NUL\x00inside · emoji 🪨🙂 · عربى مرحبا · עברית"
    fake_server.add_reply("ok")
    cairn.window.composer.set_text(text)
    cairn.window.composer.editor.submitted.emit()
    wait_idle(qtbot, cairn)
    assert stored(cairn)[0][1] == text
    sent = fake_server.turns()[-1].body["messages"][0]["content"]
    # A long newest turn is sent as a block with a cache breakpoint (app/core/caching.py).
    assert undated(text_of_content(sent)) == text


def test_a_windows_paste_is_stored_and_sent_with_its_line_breaks(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    pasted = "From the spreadsheet:\r\nrow 1\r\nrow 2\r\n"
    fake_server.add_reply("ok")
    editor = cairn.window.composer.editor
    editor.insertPlainText("Look at this. ")
    clipboard = QMimeData()
    clipboard.setText(pasted)
    editor.insertFromMimeData(clipboard)
    editor.insertPlainText("Thanks!")
    editor.submitted.emit()
    wait_idle(qtbot, cairn)
    qtbot.waitUntil(lambda: len(stored(cairn)) == 2)

    text = "Look at this. " + pasted + "Thanks!"
    assert stored(cairn)[0][1] == text
    sent = fake_server.turns()[-1].body["messages"][0]["content"]
    assert undated(sent) == text
    assert cairn.window.composer.text() == ""


def test_only_control_characters_cannot_be_sent(cairn: CairnSession) -> None:
    cairn.window.composer.set_text("\x00\x00 \x1b")
    assert not cairn.window.composer.button.isEnabled()
    cairn.window.composer.editor.submitted.emit()
    assert cairn.store.list_sessions() == []


def test_huge_paste_is_stored_and_sent(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    from app.core.catalog import ModelInfo

    # A model with a window large enough for a megabyte of text.
    fake_server.models = [
        ModelInfo(
            id="claude-test-1m",
            display_name="Claude Test 1M",
            max_input_tokens=1_000_000,
            max_tokens=8_192,
        )
    ]
    cairn = open_window()
    qtbot.waitUntil(
        lambda: cairn.controller.service.current.state.model_id == "claude-test-1m", timeout=10_000
    )
    text = ("A line of a very long paste, with words. " * 25 + "\n") * 1000  # about 1 MB
    fake_server.add_reply("Got it.")
    cairn.window.composer.set_text(text)
    cairn.window.composer.editor.submitted.emit()
    wait_idle(qtbot, cairn)
    assert stored(cairn)[0][1] == text
    sent = fake_server.turns()[-1].body["messages"][0]["content"]
    # A long newest turn is sent as a block with a cache breakpoint (app/core/caching.py).
    assert undated(text_of_content(sent)) == text


def test_message_larger_than_the_window_is_refused_with_numbers(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    # A 200k window (Claude Haiku 4.5's), so the message need not be a million words.
    fake_server.models = [model for model in FALLBACK_MODELS if model.id == "claude-haiku-4-5"]
    cairn = open_window()
    qtbot.waitUntil(lambda: cairn.controller.service.counter.ready, timeout=10_000)
    text = "word " * 260_000  # far beyond a 200k-token window
    cairn.window.composer.set_text(text)
    cairn.window.composer.editor.submitted.emit()
    banner = cairn.window.banner
    assert banner.isVisible()
    assert "at most 192k" in banner.text_label.text()
    assert "Shorten it or split it" in banner.text_label.text()
    assert cairn.window.composer.text() == text, "the text stays in the composer"
    assert fake_server.requests_to("/v1/messages") == []
    assert cairn.store.list_sessions() == []


def test_conversations_create_switch_rename_delete(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window, sidebar = cairn.window, cairn.window.sidebar
    send(qtbot, cairn, "First topic")
    wait_idle(qtbot, cairn)
    first_id = (
        cairn.controller.service.current.state.session.id
        if cairn.controller.service.current.state.session
        else ""
    )
    qtbot.mouseClick(sidebar.new_button, Qt.MouseButton.LeftButton)
    assert window.transcript.message_count() == 0
    send(qtbot, cairn, "Second topic")
    wait_idle(qtbot, cairn)
    assert sidebar.titles() == ["Second topic", "First topic"]

    sidebar.select_session(first_id)
    assert (
        cairn.controller.service.current.state.session is not None
        and cairn.controller.service.current.state.session.id == first_id
    )
    assert shown_texts(cairn)[0] == (Role.USER, "First topic")
    assert window.windowTitle() == "First topic — Cairn"

    model = sidebar.list.model()
    assert model.setData(model.index(1, 0), "Renamed topic")
    assert cairn.store.get_session(first_id).title == "Renamed topic"  # type: ignore[union-attr]
    assert window.windowTitle() == "Renamed topic — Cairn"

    sidebar.delete_action.trigger()
    box = window.confirm_box
    assert box is not None and box.isVisible()
    next(b for b in box.buttons() if b.text() == "Delete").click()
    assert cairn.store.get_session(first_id) is None
    assert sidebar.titles() == ["Second topic"]
    assert cairn.controller.service.current.state.session is not None
    assert cairn.controller.service.current.state.session.title == "Second topic"


def test_delete_can_be_cancelled(qtbot: QtBot, cairn: CairnSession) -> None:
    send(qtbot, cairn, "Keep me")
    wait_idle(qtbot, cairn)

    cairn.window.sidebar.delete_action.trigger()
    box = cairn.window.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert cairn.window.confirm_box is None
    assert len(cairn.store.list_sessions()) == 1


def test_model_picker_uses_server_list(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    from app.core.catalog import ModelInfo

    fake_server.models = [
        ModelInfo(id="claude-opus-9", display_name="Claude Opus 9", line="opus"),
        ModelInfo(id="claude-sonnet-9", display_name="Claude Sonnet 9", line="sonnet"),
    ]
    cairn = open_window()
    combo = cairn.window.header.model_combo
    qtbot.waitUntil(lambda: combo.count() == 2)
    assert combo.currentData() == "claude-sonnet-9", "the best listed model is the default"
    fake_server.add_reply("hi")
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    send(qtbot, cairn, "Which model?")
    wait_idle(qtbot, cairn)
    assert fake_server.turns()[-1].body["model"] == "claude-opus-9"
    assert cairn.controller.service.settings.model == "claude-opus-9"


def test_a_withdrawn_model_switches_the_picker_and_says_so(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    sonnet, opus = FALLBACK_MODELS[:2]
    combo = cairn.window.header.model_combo
    assert combo.currentData() == sonnet.id
    # Withdrawn after Cairn listed it: the API answers 404 not_found_error.
    fake_server.models = [model for model in FALLBACK_MODELS if model is not sonnet]
    fake_server.add_reply("Opus here.")
    send(qtbot, cairn, "Hello?")
    wait_idle(qtbot, cairn)
    assert combo.currentData() == opus.id
    banner = cairn.window.banner
    qtbot.waitUntil(banner.isVisible)
    assert banner.title_label.text() == "Switched model"
    assert banner.text_label.text() == (
        "Claude Sonnet 5.5 isn't available to your API key, so Cairn switched this "
        "conversation to Claude Opus 5.5."
    )
    assert shown_texts(cairn) == [(Role.USER, "Hello?"), (Role.ASSISTANT, "Opus here.")]


def test_a_long_title_is_shortened_not_the_model_picker(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """The user's own long title (an automatic one is short, and may replace the first
    message's at any moment after the reply: the test waits for it, then renames)."""
    cairn.window.resize(900, 600)
    send(qtbot, cairn, "A very long first message that becomes a very long title")
    wait_idle(qtbot, cairn)
    window = cairn.window
    conversation = window.chat.current
    qtbot.waitUntil(lambda: not conversation.titles.running)
    session_id = conversation.state.session_id
    assert session_id is not None
    long_title = "A very long title the user gave this conversation by hand " * 3
    window.chat.rename_session(session_id, long_title.strip())
    qtbot.waitUntil(lambda: window.header.title_label.text().endswith("…"))
    assert window.header.title_label.toolTip().startswith("A very long title the user")
    assert window.header.model_combo.width() >= window.header.model_combo.sizeHint().width()


def test_an_empty_conversation_offers_examples_that_go_in_the_message_box(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    empty = cairn.window.transcript.empty_state
    assert empty.isVisible()
    assert 3 <= len(empty.examples) <= 4
    assert all(button.isVisible() and button.accessibleName() for button in empty.examples)
    assert cairn.window.header.gauge.isHidden(), "no figures before there is a conversation"
    example = empty.examples[0]
    qtbot.mouseClick(example, Qt.MouseButton.LeftButton)
    assert cairn.window.composer.text() == example.text()
    assert cairn.window.composer.editor.hasFocus()
    assert fake_server.requests_to("/v1/messages") == [], "put in the box, not sent"


def test_the_header_shows_the_whole_title_when_there_is_room(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """At 1280 px "Help me plan a trip to Lisbon in March" was cut to "Help me …" with
    room to spare: the gauge's bar gives way before the title does."""
    window = cairn.window
    window.resize(1280, 800)
    window.header.title_label.setText("Help me plan a trip to Lisbon in March")
    QApplication.processEvents()
    window.header.layout().activate()  # type: ignore[union-attr]
    assert window.header.title_label.text() == "Help me plan a trip to Lisbon in March"
    window.resize(760, 600)
    QApplication.processEvents()
    window.header.layout().activate()  # type: ignore[union-attr]
    assert window.header.title_label.text().endswith("…"), "narrow: shortened, never pushing"


def test_at_800_px_the_gauge_gives_its_words_room_to_the_title(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """At 800 px the title was cut to "Are you t…" while the gauge kept ~190 px: there
    the gauge is its bar alone (its words in its name), and the title shows whole."""
    window = cairn.window
    window.resize(800, 600)
    send(qtbot, cairn, "Are you there?")
    wait_idle(qtbot, cairn)
    header = window.header
    qtbot.waitUntil(lambda: header.gauge.isVisible())
    header.title_label.setText("Are you there today?")
    QApplication.processEvents()
    header.layout().activate()  # type: ignore[union-attr]
    assert header.gauge.compact
    assert header.gauge.width() <= header.gauge.compact_width()
    assert header.gauge.accessibleName().endswith(header.gauge.text())
    assert header.title_label.text() == "Are you there today?"
    window.resize(1280, 800)
    QApplication.processEvents()
    header.layout().activate()  # type: ignore[union-attr]
    assert not header.gauge.compact, "with room, the words are back beside the bar"
    assert header.title_label.text() == "Are you there today?"


def test_the_history_window_follows_conversations_added_renamed_and_deleted(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    history = window.history.open_history()
    qtbot.waitExposed(history)

    def titles() -> list[str]:
        model = history.proxy
        return [model.index(row, 0).data() for row in range(model.rowCount())]

    assert titles() == []
    send(qtbot, cairn, "Plan the garden")
    wait_idle(qtbot, cairn)
    qtbot.waitUntil(lambda: len(titles()) == 1)
    session_id = window.chat.current.state.session_id
    assert session_id is not None
    window.chat.rename_session(session_id, "Vegetable garden")
    qtbot.waitUntil(lambda: titles() == ["Vegetable garden"])
    window.chat.delete_session(session_id)
    qtbot.waitUntil(lambda: titles() == [])
    history.close()


def test_a_closed_history_window_is_read_when_opened_not_at_every_turn(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """While the History window is closed a turn starts no timer to read it again (one at
    every message sent and reply ended, issue 20): opened, it shows what came meanwhile."""
    window = cairn.window
    history = window.history.open_history()
    qtbot.waitExposed(history)
    history.close()
    send(qtbot, cairn, "Plan the garden")
    wait_idle(qtbot, cairn)
    assert not window.history._follow.isActive()
    history = window.history.open_history()
    qtbot.waitExposed(history)
    assert history.proxy.rowCount() == 1
    history.close()


def test_the_windows_routine_events_call_no_python(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """An update request (one a repaint), a layout request or a move of the window, the
    conversation's pane or the composer reaches no Python: closing, drops and activation
    are the window's own overrides, not event filters, each a call into Python waiting
    for the GIL for every event (issue 20)."""
    import sys
    from types import FrameType

    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMoveEvent

    window = cairn.window
    fake_server.add_reply("A short reply.")
    send(qtbot, cairn, "A question")
    wait_idle(qtbot, cairn)
    QApplication.processEvents()
    called: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            called.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    pane = window.composer.parentWidget()
    assert pane is not None
    events = [(window, QEvent(QEvent.Type.UpdateRequest))]
    for widget in (window, pane, window.composer):
        events.append((widget, QEvent(QEvent.Type.LayoutRequest)))
        events.append((widget, QMoveEvent(widget.pos(), widget.pos())))
    send_event = QApplication.sendEvent
    sys.setprofile(profile)
    try:
        for receiver, sent in events:
            send_event(receiver, sent)
    finally:
        sys.setprofile(None)
    assert called == []


def test_the_notifier_hears_when_the_window_is_in_front_again(
    qtbot: QtBot, cairn: CairnSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's own `changeEvent` tells the notifier, which hides its tray icon (no
    event filter on the window; the tray itself is not available offscreen)."""
    window = cairn.window
    told: list[bool] = []
    monkeypatch.setattr(window.notifier, "window_activated", lambda: told.append(True))
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    assert told == []
    window.activateWindow()
    qtbot.waitUntil(lambda: bool(told))
    assert told == [True]


def test_a_turn_leaves_the_header_list_and_gauge_saying_what_the_conversation_is(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """What the window skips when a turn changes nothing it shows (the title, the row's
    words, the breakdown until read, the draft's debounce after Enter: issue 20) leaves it
    saying what measuring and wording everything afresh says."""
    from app.core.dates import friendly_date
    from app.ui.gauge_text import accessible_description, gauge_text, tooltip_html
    from app.ui.sidebar import SESSION_ID_ROLE

    window = cairn.window
    for question in ("The first question", "The second question"):
        fake_server.add_reply(f"An answer to {question.lower()}.")
        send(qtbot, cairn, question)
        assert not window._draft_timer.isActive(), "the box was emptied by the send"
        wait_idle(qtbot, cairn)
        QApplication.processEvents()
        state = cairn.controller.service.current.state
        session = state.session
        assert session is not None
        assert window.header.title_label.text() == session.title
        assert window.windowTitle() == f"{session.title} — Cairn"
        assert window.header.gauge.isVisible()
        gauge = window.header.gauge
        figures = cairn.controller.service.current.gauge.measure()
        assert gauge.state == figures
        assert gauge.text() == gauge_text(figures)
        assert gauge.accessibleDescription() == accessible_description(figures)
        assert gauge.toolTip() == tooltip_html(figures, gauge._cache_use, first_time=True)
        row = window.sidebar.model.index(0)
        assert row.data(SESSION_ID_ROLE) == session.id
        assert row.data(Qt.ItemDataRole.DisplayRole) == session.title
        assert row.data(Qt.ItemDataRole.AccessibleDescriptionRole) == (
            f"Last active: {friendly_date(session.updated_at)}"
        )
        assert window.sidebar.model.session(session.id) == session
