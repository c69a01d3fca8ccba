"""The transcript widget: Markdown blocks, code copy, streaming, paging, sizing."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QGuiApplication,
    QImage,
    QPaintEvent,
    QPalette,
    QRegion,
    QTextCursor,
    QTextTable,
)
from PySide6.QtWidgets import QApplication, QLabel, QScrollBar, QWidget
from pytestqt.qtbot import QtBot

from app.core.dates import timestamp
from app.core.models import Message, MessageStatus, Role
from app.ui.message_header import SENDING, WRITING
from app.ui.message_text import HUGE_MESSAGE_CHARS
from app.ui.theme import (
    code_background,
    muted_text_colour,
    paint_focus_ring,
    user_bubble_colour,
)
from app.ui.transcript import TranscriptView
from app.ui.transcript_blocks import CodeBlock, HugeTextView, MarkdownView
from app.ui.transcript_frame import EMPTY_HINT
from app.ui.transcript_message import MessageWidget
from app.ui.transcript_text import display_text, utf16_to_index

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)

RICH_REPLY = """# Packing list

Bring **water** and *layers*, see [the forecast](https://example.org/weather).

1. Boots
2. Map

| Item | Weight |
|------|--------|
| Tent | 1.8 kg |

```python
total = sum(weights.values())
print(total)
```

Have fun.
"""


def make_message(
    message_id: int,
    content: str = "Hello",
    *,
    role: Role = Role.ASSISTANT,
    status: MessageStatus = MessageStatus.COMPLETE,
    created_at: datetime = NOW,
) -> Message:
    return Message(
        id=message_id,
        session_id="session",
        seq=message_id,
        role=role,
        content=content,
        created_at=created_at,
        status=status,
    )


def conversation(count: int) -> list[Message]:
    """A synthetic conversation alternating user and assistant, with some Markdown."""
    messages = []
    for index in range(1, count + 1):
        role = Role.USER if index % 2 else Role.ASSISTANT
        if role is Role.USER:
            content = f"Question {index}: how do I do thing number {index}?"
        elif index % 6 == 0:
            content = f"Step {index}:\n\n```bash\necho {index}\n```\n\nDone."
        else:
            content = f"## Answer {index}\n\n- first point\n- second point with `code`\n"
        messages.append(make_message(index, content, role=role))
    return messages


class OpenedUrls:
    """A fake for QDesktopServices.openUrl that records what would have opened."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, url: QUrl) -> bool:
        self.urls.append(url.toString())
        return True


@pytest.fixture
def opened() -> OpenedUrls:
    return OpenedUrls()


@pytest.fixture
def view(qtbot: QtBot, opened: OpenedUrls) -> Iterator[TranscriptView]:
    # Hosted in a window without a layout: a top-level whose layout changes
    # its minimum size makes the offscreen platform warn (propagateSizeHints).
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(1300, 700)
    widget = TranscriptView(host, open_url=opened, clock=lambda: NOW)
    widget.resize(800, 600)
    host.show()
    qtbot.waitExposed(host)
    yield widget


def scroll_bar(view: TranscriptView) -> QScrollBar:
    return view.scroll_area.verticalScrollBar()


def assistant(view: TranscriptView, message_id: int) -> MessageWidget:
    widget = view.message_widget(message_id)
    assert widget is not None
    return widget


def wait_for_layout(qtbot: QtBot, view: TranscriptView) -> None:
    """Let posted layout requests run (the view lays out asynchronously, like any Qt widget)."""
    viewport = view.scroll_area.viewport()
    qtbot.waitUntil(lambda: view.scroll_area.widget().width() == viewport.width())
    QApplication.processEvents()
    QApplication.processEvents()


def wait_until_built(qtbot: QtBot, view: TranscriptView) -> None:
    """Wait for the rest of a page just opened: the view builds the newest
    messages at once and the older ones after the first paint."""
    qtbot.waitUntil(lambda: not view.building)


def wait_until_on_screen(qtbot: QtBot, widget: QWidget) -> None:
    """Wait until `widget` is laid out and not clipped away, so a click lands on it."""
    qtbot.waitUntil(lambda: widget.isVisible() and not widget.visibleRegion().isEmpty())
    QApplication.processEvents()


# --- empty state ------------------------------------------------------------


def test_a_conversation_without_messages_shows_a_friendly_hint(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages([], has_earlier=False)
    assert view.empty_state.isVisible()
    assert "Ask Claude anything" in view.empty_state.title.text()
    assert view.empty_state.hint.text() == EMPTY_HINT
    assert "Shift+Enter" in EMPTY_HINT

    view.append_message(make_message(1, "Hi", role=Role.USER))
    qtbot.waitUntil(view.scroll_area.isVisible)
    assert not view.empty_state.isVisible()

    view.clear()
    assert view.message_count() == 0
    assert view.empty_state.isVisible()


# --- Markdown ---------------------------------------------------------------


def test_markdown_becomes_headings_lists_tables_links_and_a_code_block(
    view: TranscriptView,
) -> None:
    view.set_messages([make_message(1, RICH_REPLY)], has_earlier=False)
    blocks = assistant(view, 1).body.blocks()
    assert [type(block) for block in blocks] == [MarkdownView, CodeBlock, MarkdownView]

    prose = blocks[0]
    assert isinstance(prose, MarkdownView)
    document = prose.document()
    headings = []
    list_items = []
    anchors = []
    block = document.begin()
    while block.isValid():
        if block.blockFormat().headingLevel():
            headings.append((block.blockFormat().headingLevel(), block.text()))
        if block.textList() is not None:
            list_items.append(block.text())
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().isAnchor():
                anchors.append((fragment.text(), fragment.charFormat().anchorHref()))
            fragments += 1
        block = block.next()
    assert headings == [(1, "Packing list")]
    assert list_items == ["Boots", "Map"]
    assert anchors == [("the forecast", "https://example.org/weather")]
    tables = [
        frame for frame in document.rootFrame().childFrames() if isinstance(frame, QTextTable)
    ]
    assert len(tables) == 1
    assert (tables[0].rows(), tables[0].columns()) == (2, 2)
    assert tables[0].cellAt(1, 1).firstCursorPosition().block().text() == "1.8 kg"
    assert "**" not in document.toPlainText()

    code = blocks[1]
    assert isinstance(code, CodeBlock)
    assert code.code == "total = sum(weights.values())\nprint(total)"
    assert code.code_view.isReadOnly()
    fixed_family = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    assert code.code_view.document().defaultFont().family() == fixed_family
    assert isinstance(blocks[2], MarkdownView)
    assert blocks[2].document().toPlainText() == "Have fun."


def test_html_in_a_reply_is_shown_as_written(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "Use <b>bold</b> or a <br> tag.")], has_earlier=False)
    (prose,) = assistant(view, 1).body.blocks()
    assert isinstance(prose, MarkdownView)
    assert prose.document().toPlainText() == "Use <b>bold</b> or a <br> tag."


def test_user_messages_are_shown_exactly_as_typed(view: TranscriptView) -> None:
    typed = "# not a heading\n* not a list *\n```\nnot code"
    view.set_messages([make_message(1, typed, role=Role.USER)], has_earlier=False)
    (text,) = assistant(view, 1).body.blocks()
    assert isinstance(text, MarkdownView)
    assert text.document().toPlainText() == typed


def test_message_text_is_selectable_and_copyable(view: TranscriptView, qtbot: QtBot) -> None:
    view.set_messages([make_message(1, "Copy *me* please")], has_earlier=False)
    (prose,) = assistant(view, 1).body.blocks()
    assert isinstance(prose, MarkdownView)
    assert prose.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    prose.setFocus()
    prose.selectAll()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(prose, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "Copy me please"


# --- code blocks ------------------------------------------------------------


def test_the_copy_button_copies_the_exact_code_and_says_copied(
    view: TranscriptView, qtbot: QtBot
) -> None:
    code = "def f():\n\treturn 'é🙂'  \n\n# trailing spaces kept   "
    view.set_messages([make_message(1, f"Here:\n```python\n{code}\n```\n")], has_earlier=False)
    block = next(b for b in assistant(view, 1).body.blocks() if isinstance(b, CodeBlock))
    button = block.copy_button
    assert button.accessibleName() == "Copy code"
    wait_until_on_screen(qtbot, button)
    assert button.text() == "Copy"
    QGuiApplication.clipboard().clear()

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    assert QGuiApplication.clipboard().text() == code
    assert button.text() == "Copied"
    qtbot.waitUntil(lambda: button.text() == "Copy", timeout=5000)


def test_a_long_code_line_scrolls_sideways_instead_of_wrapping(
    view: TranscriptView, qtbot: QtBot
) -> None:
    long_line = "x = " + " + ".join(str(n) for n in range(200))
    view.set_messages(
        [make_message(1, f"```\n{long_line}\nshort\n```"), make_message(2, "```\nok\n```")],
        has_earlier=False,
    )
    wait_for_layout(qtbot, view)
    long_view = assistant(view, 1).body.blocks()[0]
    short_view = assistant(view, 2).body.blocks()[0]
    assert isinstance(long_view, CodeBlock)
    assert isinstance(short_view, CodeBlock)
    qtbot.waitUntil(lambda: long_view.code_view.horizontalScrollBar().maximum() > 0)
    assert long_view.code_view.horizontalScrollBar().isVisible()
    assert long_view.code_view.document().blockCount() == 2  # not wrapped
    assert not short_view.code_view.horizontalScrollBar().isVisible()
    for block in (long_view, short_view):
        # Every line is visible: no vertical scrolling inside a code block.
        assert block.code_view.verticalScrollBar().maximum() == 0


# --- statuses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "note"),
    [
        (MessageStatus.COMPLETE, ""),
        (MessageStatus.STOPPED, "Stopped"),
        (MessageStatus.ERROR, "Reply failed"),
    ],
)
def test_a_reply_that_did_not_complete_says_so_in_words(
    view: TranscriptView, status: MessageStatus, note: str
) -> None:
    view.set_messages([make_message(1, "Partial answer", status=status)], has_earlier=False)
    assert assistant(view, 1).note.text() == note


def test_a_streaming_reply_shows_typing_dots_until_text_arrives(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "Hi", role=Role.USER)], has_earlier=False)
    view.append_message(make_message(2, "", status=MessageStatus.STREAMING))
    reply = assistant(view, 2)
    assert reply.body.is_typing()

    view.update_message_text(2, "Hello")
    assert not reply.body.is_typing()

    view.update_message(make_message(2, "Hello there.", status=MessageStatus.STOPPED))
    assert reply.note.text() == "Stopped"
    assert reply.text == "Hello there."


def test_header_says_who_spoke_and_when(view: TranscriptView) -> None:
    yesterday = NOW - timedelta(days=1)
    view.set_messages(
        [
            make_message(1, "Hi", role=Role.USER, created_at=yesterday),
            make_message(2, "Hello", created_at=NOW),
        ],
        has_earlier=False,
    )
    user_labels = [label.text() for label in assistant(view, 1).findChildren(QLabel)]
    claude_labels = [label.text() for label in assistant(view, 2).findChildren(QLabel)]
    assert "You" in user_labels
    assert timestamp(yesterday, NOW) in user_labels
    assert "Claude" in claude_labels
    assert timestamp(NOW, NOW) in claude_labels


# --- streaming --------------------------------------------------------------


def test_streaming_updates_re_render_only_the_growing_message(
    view: TranscriptView, qtbot: QtBot
) -> None:
    history = conversation(20)
    streaming = make_message(21, "", status=MessageStatus.STREAMING)
    view.set_messages([*history, streaming], has_earlier=False)
    wait_until_built(qtbot, view)
    before = {message.id: assistant(view, message.id).body.render_count for message in history}

    reply = "Sure. " * 10 + "\n\n```python\n" + "\n".join(f"line_{n} = {n}" for n in range(40))
    for end in range(10, len(reply), 25):
        view.update_message_text(21, reply[:end])
    view.update_message_text(21, reply)

    after = {message.id: assistant(view, message.id).body.render_count for message in history}
    assert after == before
    growing = assistant(view, 21)
    assert growing.body.render_count > 1
    assert growing.text == reply


def test_streaming_into_a_code_block_keeps_the_prose_and_block_in_place(
    view: TranscriptView,
) -> None:
    view.set_messages([make_message(1, "", status=MessageStatus.STREAMING)], has_earlier=False)
    view.update_message_text(1, "Intro text.\n\n```py\nprint(1)")
    reply = assistant(view, 1)
    prose, code = reply.body.blocks()
    assert isinstance(prose, MarkdownView)
    assert isinstance(code, CodeBlock)
    assert code.code == "print(1)"  # unterminated fence: code so far

    view.update_message_text(1, "Intro text.\n\n```py\nprint(1)\nprint(2)\n```\nAfter.")
    prose_after, code_after, tail = reply.body.blocks()
    assert prose_after is prose
    assert code_after is code
    assert prose.render_count == 1
    assert code.code == "print(1)\nprint(2)"
    assert isinstance(tail, MarkdownView)
    assert tail.document().toPlainText() == "After."


def test_a_long_streaming_reply_re_renders_only_its_last_piece(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "", status=MessageStatus.STREAMING)], has_earlier=False)
    paragraph = "A paragraph of a long essay, with *emphasis* and words. " * 8 + "\n\n"
    text = ""
    for _ in range(60):
        text += paragraph
        view.update_message_text(1, text)
    finished = assistant(view, 1).body.blocks()[:-1]
    assert len(finished) >= 2
    renders = [piece.render_count for piece in finished]

    for _ in range(60):
        text += paragraph
        view.update_message_text(1, text)

    pieces = assistant(view, 1).body.blocks()
    assert tuple(pieces[: len(finished)]) == tuple(finished)
    assert [piece.render_count for piece in finished] == renders
    assert all(isinstance(piece, MarkdownView) for piece in pieces)
    assert "".join(piece.source_text for piece in pieces) == text


def test_unknown_message_ids_are_ignored(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "Hi")], has_earlier=False)
    view.update_message_text(99, "nope")
    view.update_message(make_message(98, "nope"))
    assert view.message_count() == 1


# --- scrolling and paging ---------------------------------------------------


def test_opening_a_long_conversation_builds_one_page_and_scrolls_to_the_bottom(
    view: TranscriptView, qtbot: QtBot
) -> None:
    everything = conversation(10_000)
    view.set_messages(everything[-50:], has_earlier=True)
    wait_until_built(qtbot, view)
    assert view.message_count() == 50
    assert view.earlier_button.isVisible()
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())


def test_the_earlier_button_asks_for_older_messages(view: TranscriptView, qtbot: QtBot) -> None:
    view.set_messages(conversation(100)[-4:], has_earlier=True)
    assert view.earlier_button.accessibleName() == "Show earlier messages"
    wait_until_on_screen(qtbot, view.earlier_button)
    with qtbot.waitSignal(view.earlier_requested, timeout=1000):
        qtbot.mouseClick(view.earlier_button, Qt.MouseButton.LeftButton)


def test_scrolling_to_the_very_top_asks_for_older_messages(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages(conversation(100)[-50:], has_earlier=True)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    with qtbot.waitSignal(view.earlier_requested, timeout=1000):
        bar.setValue(0)


def test_no_request_for_older_messages_when_there_are_none(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages(conversation(50), has_earlier=False)
    wait_until_built(qtbot, view)
    assert not view.earlier_button.isVisible()
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    with qtbot.assertNotEmitted(view.earlier_requested):
        bar.setValue(0)


def test_prepending_older_messages_keeps_the_view_still(view: TranscriptView, qtbot: QtBot) -> None:
    everything = conversation(200)
    view.set_messages(everything[-50:], has_earlier=True)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    bar.setValue(bar.maximum() // 3)  # the user scrolled up to read
    QApplication.processEvents()  # what the user sees: the view as painted
    reading = assistant(view, everything[-40].id)
    viewport = view.scroll_area.viewport()
    y_before = reading.mapTo(viewport, QPoint(0, 0)).y()

    view.prepend_messages(everything[-100:-50], has_earlier=True)

    # Right away, before any paint: the view never shows a jumped frame.
    assert view.message_count() == 100
    assert view.message_widgets()[0].message.id == everything[-100].id
    assert reading.mapTo(viewport, QPoint(0, 0)).y() == y_before
    QApplication.processEvents()
    assert reading.mapTo(viewport, QPoint(0, 0)).y() == y_before

    view.prepend_messages(everything[:-100], has_earlier=False)
    assert not view.earlier_button.isVisible()
    assert reading.mapTo(viewport, QPoint(0, 0)).y() == y_before
    QApplication.processEvents()
    assert reading.mapTo(viewport, QPoint(0, 0)).y() == y_before


def test_prepending_while_at_the_top_does_not_jump_to_the_new_top(
    view: TranscriptView, qtbot: QtBot
) -> None:
    everything = conversation(150)
    view.set_messages(everything[-50:], has_earlier=True)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    with qtbot.waitSignal(view.earlier_requested, timeout=1000):
        bar.setValue(0)
    QApplication.processEvents()  # what the user sees: the view as painted
    first = view.message_widgets()[0]
    viewport = view.scroll_area.viewport()
    y_before = first.mapTo(viewport, QPoint(0, 0)).y()

    view.prepend_messages(everything[-100:-50], has_earlier=True)

    assert bar.value() > 0
    assert first.mapTo(viewport, QPoint(0, 0)).y() == y_before
    QApplication.processEvents()
    assert first.mapTo(viewport, QPoint(0, 0)).y() == y_before


def test_new_text_is_followed_only_when_the_user_is_at_the_bottom(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    view.append_message(make_message(31, "", status=MessageStatus.STREAMING))
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())

    text = ""
    for _ in range(5):
        text += "A new paragraph of streamed text that keeps on coming.\n\n"
        view.update_message_text(31, text)
        qtbot.waitUntil(lambda: bar.value() == bar.maximum())

    bar.setValue(bar.maximum() // 2)  # the user scrolls up to re-read
    held = bar.value()
    old_maximum = bar.maximum()
    for _ in range(5):
        text += "More text arriving while the user reads above.\n\n"
        view.update_message_text(31, text)
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum)
    assert bar.value() == held

    # Only the user's own new message takes the view down (tests/ui/test_jump_latest.py).
    view.append_message(make_message(32, "A new reply", status=MessageStatus.COMPLETE))
    QApplication.processEvents()
    assert bar.value() == held


def test_append_follows_when_at_the_bottom(view: TranscriptView, qtbot: QtBot) -> None:
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    old_maximum = bar.maximum()
    view.append_message(make_message(31, "One more\n\nwith two paragraphs", role=Role.USER))
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum and bar.value() == bar.maximum())


def sending(seq: int, content: str) -> Message:
    """The user's message on its way to the disk: a stand-in id below zero, its place."""
    return make_message(-seq, content, role=Role.USER).model_copy(update={"seq": seq})


class CountedEvents(QObject):
    """Counts the events of `kinds` the widgets it watches receive."""

    def __init__(self, widgets: Sequence[QWidget], *kinds: QEvent.Type) -> None:
        super().__init__()
        self.count = 0
        self._kinds = kinds
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in self._kinds:
            self.count += 1
        return False


def test_a_message_added_at_the_bottom_moves_no_other_message(
    view: TranscriptView, qtbot: QtBot
) -> None:
    """Adding a row costs one row: the rows above keep their place and size (the column
    grows, it does not squeeze them into its old height and back), and the view follows."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    wait_for_layout(qtbot, view)
    above = list(view.message_widgets())
    moved = CountedEvents(above, QEvent.Type.Move, QEvent.Type.Resize)

    view.append_sending(sending(31, "A question\n\nin two paragraphs"))
    view.message_stored(-31, make_message(31, "A question\n\nin two paragraphs", role=Role.USER))
    view.append_message(make_message(32, "", status=MessageStatus.STREAMING))
    view.update_message_text(32, "The reply's first words, and then some more of them.")
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    QApplication.processEvents()

    assert moved.count == 0
    newest = view.message_widget(32)
    assert newest is not None and newest.isVisible()
    viewport = view.scroll_area.viewport()
    bottom = newest.mapTo(viewport, QPoint(0, newest.height())).y()
    assert bottom <= viewport.height()


def test_the_question_appears_already_marked_as_sending(view: TranscriptView, qtbot: QtBot) -> None:
    """Nothing is shown as sent that is not on disk: from its first frame, the question
    says "Sending…"; once stored, it no longer does."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    shown_sending: list[bool] = []

    def note_first_show(widget: MessageWidget) -> None:
        shown_sending.append(widget.sending)

    view.message_built.connect(note_first_show)
    view.append_sending(sending(31, "Is it on disk yet?"))
    widget = view.message_widget(-31)
    assert widget is not None and widget.sending
    assert shown_sending == [True]
    # Its row is made at once and placed before the next frame (with any other row).
    qtbot.waitUntil(widget.isVisible)
    assert widget.sending
    assert any(label.text() == SENDING for label in widget.findChildren(QLabel))

    view.message_stored(-31, make_message(31, "Is it on disk yet?", role=Role.USER))
    assert view.message_widget(31) is widget and not widget.sending


class _RingPaintedByTheRow(MessageWidget):
    """The focus ring as a row used to draw it: in its own paintEvent, beneath its parts."""

    def _show_focus_ring(self, shown: bool) -> None:
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.hasFocus():
            paint_focus_ring(self, 6, 1.5)


@pytest.mark.parametrize("role", [Role.USER, Role.ASSISTANT])
def test_a_focused_message_shows_the_same_ring_without_painting_it_itself(
    qtbot: QtBot, role: Role
) -> None:
    """The row's focus ring is a widget of its own beneath the row's parts, shown while
    the row has focus (so the row has no paintEvent of its own to call at each repaint,
    issue 20): pixel for pixel what the row painting it itself showed, and gone after."""
    message = make_message(1, "A reply with **bold** words,\n\nand a second paragraph.", role=role)
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(1100, 400)
    rows = []
    for index, kind in enumerate((MessageWidget, _RingPaintedByTheRow)):
        row = kind(message, NOW, host, width=500)
        row.setGeometry(20 + 540 * index, 20, 500, row.sizeHint().height())
        rows.append(row)
    host.show()
    qtbot.waitExposed(host)
    unfocused = [row.grab().toImage() for row in rows]
    assert unfocused[0] == unfocused[1]
    for row in rows:
        row.setFocus(Qt.FocusReason.TabFocusReason)
        qtbot.waitUntil(row.hasFocus)
        focused = row.grab().toImage()
        assert focused != unfocused[0], "the ring shows"
        if row is rows[0]:
            mine = focused
    assert mine == focused, "the same pixels as the row painting its ring"

    def focused_look(row: MessageWidget) -> QImage:
        row.setFocus(Qt.FocusReason.TabFocusReason)
        qtbot.waitUntil(row.hasFocus)
        return row.grab().toImage()

    for row in rows:
        row.resize(460, row.sizeHint().height() + 30)
    assert focused_look(rows[0]) == focused_look(rows[1]), "the ring follows the row's size"
    rows[1].clearFocus()
    qtbot.waitUntil(lambda: not rows[1].hasFocus())
    assert rows[0].grab().toImage() == rows[1].grab().toImage(), "and it goes with the focus"


def test_keyboard_reaches_and_scrolls_the_transcript(view: TranscriptView, qtbot: QtBot) -> None:
    view.set_messages(conversation(40), has_earlier=False)
    wait_until_built(qtbot, view)
    area = view.scroll_area
    assert area.focusPolicy() & Qt.FocusPolicy.TabFocus
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    area.setFocus(Qt.FocusReason.TabFocusReason)
    start = bar.value()
    qtbot.keyClick(area, Qt.Key.Key_PageUp)
    assert bar.value() < start
    qtbot.keyClick(area, Qt.Key.Key_Home)
    assert bar.value() == 0
    qtbot.keyClick(area, Qt.Key.Key_PageDown)
    assert bar.value() > 0


def test_page_keys_inside_a_message_scroll_the_transcript(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages(conversation(40), has_earlier=False)
    wait_until_built(qtbot, view)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    last = view.message_widgets()[-1].body.blocks()[0]
    last.setFocus()
    start = bar.value()
    qtbot.keyClick(last, Qt.Key.Key_PageUp)
    assert bar.value() < start


# --- links ------------------------------------------------------------------


def test_web_links_open_in_the_browser_and_others_are_ignored(
    view: TranscriptView, qtbot: QtBot, opened: OpenedUrls
) -> None:
    view.set_messages([make_message(1, "[a](https://example.org)")], has_earlier=False)
    (prose,) = assistant(view, 1).body.blocks()
    assert isinstance(prose, MarkdownView)
    with qtbot.waitSignal(view.link_activated) as activated:
        prose.anchorClicked.emit(QUrl("https://example.org"))
    assert activated.args == ["https://example.org"]
    prose.anchorClicked.emit(QUrl("mailto:someone@example.org"))
    with qtbot.assertNotEmitted(view.link_activated):
        prose.anchorClicked.emit(QUrl("file:///etc/passwd"))
        prose.anchorClicked.emit(QUrl("javascript:alert(1)"))
    assert opened.urls == ["https://example.org", "mailto:someone@example.org"]


# --- huge messages ----------------------------------------------------------


def test_a_huge_message_is_shown_as_plain_text_in_its_own_scroller(
    view: TranscriptView, qtbot: QtBot
) -> None:
    huge = "# not rendered\n" + ("word " * 20 + "\n") * 12_000
    assert len(huge) > HUGE_MESSAGE_CHARS
    view.set_messages([make_message(1, huge, role=Role.USER)], has_earlier=False)
    (block,) = assistant(view, 1).body.blocks()
    assert isinstance(block, HugeTextView)
    assert block.text_view.toPlainText().startswith("# not rendered\n")
    assert block.text_view.height() < 1000
    assert "very long" in block.findChild(QLabel).text()
    QGuiApplication.clipboard().clear()
    wait_until_on_screen(qtbot, block.copy_button)
    qtbot.mouseClick(block.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == huge


def test_a_huge_single_line_is_cut_for_display_but_copied_exactly(
    view: TranscriptView, qtbot: QtBot
) -> None:
    line = "".join(f"{n}é🙂 " for n in range(40_000)) + "\r\nend\r"
    view.set_messages([make_message(1, line)], has_earlier=False)
    (block,) = assistant(view, 1).body.blocks()
    assert isinstance(block, HugeTextView)
    editor = block.text_view
    assert editor.document().blockCount() > 10  # laid out in pieces, not one paragraph
    editor.setFocus()

    editor.selectAll()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == line

    # A selection across a display cut: from inside block 1 to inside block 3.
    shown = display_text(line)
    document = editor.document()
    cursor = QTextCursor(document.findBlockByNumber(1))
    cursor.movePosition(QTextCursor.MoveOperation.Right, n=7)
    anchor_source = shown.block_starts[1] + 7
    target = document.findBlockByNumber(3)
    cursor.setPosition(target.position() + 5, QTextCursor.MoveMode.KeepAnchor)
    target_source = shown.block_starts[3] + utf16_to_index(target.text(), 5)
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == line[anchor_source:target_source]


def test_a_streaming_reply_that_grows_huge_switches_to_plain_text(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "", status=MessageStatus.STREAMING)], has_earlier=False)
    text = "Start **bold**\n"
    view.update_message_text(1, text)
    assert isinstance(assistant(view, 1).body.blocks()[0], MarkdownView)
    text += "x" * HUGE_MESSAGE_CHARS
    view.update_message_text(1, text)
    (block,) = assistant(view, 1).body.blocks()
    assert isinstance(block, HugeTextView)
    for piece in ("tail", " more words", "\nnew line", "x" * 9000, "\r\nlast"):
        text += piece
        view.update_message_text(1, text)
        assert block.text_view.source_text == text
        assert block.text_view.toPlainText() == display_text(text).text
    block.text_view.selectAll()
    block.text_view.copy_selection()
    assert QGuiApplication.clipboard().text() == text


# --- sizing -----------------------------------------------------------------


def _check_heights(view: TranscriptView) -> None:
    for message in view.message_widgets():
        for block in message.body.blocks():
            if isinstance(block, MarkdownView):
                document_height = math.ceil(block.document().size().height())
                assert block.height() == document_height, block.source_text[:40]
                assert block.document().textWidth() == block.viewport().width()
            elif isinstance(block, CodeBlock):
                assert block.code_view.verticalScrollBar().maximum() == 0


@pytest.mark.parametrize("widths", [(800, 420, 1200), (1200, 600)])
def test_text_is_exactly_as_tall_as_its_content_at_every_width(
    view: TranscriptView, qtbot: QtBot, widths: tuple[int, ...]
) -> None:
    messages = [
        make_message(1, "A question that is long enough to wrap " * 6, role=Role.USER),
        make_message(2, RICH_REPLY),
        make_message(3, "Short", role=Role.USER),
        make_message(4, "Paragraph one. " * 40 + "\n\n" + "Paragraph two. " * 30),
    ]
    view.set_messages(messages, has_earlier=False)
    for width in widths:
        view.resize(width, 600)
        qtbot.waitUntil(lambda w=width: view.width() == w)
        wait_for_layout(qtbot, view)
        _check_heights(view)


def test_a_user_bubble_hugs_short_text_and_wraps_long_text(
    view: TranscriptView, qtbot: QtBot
) -> None:
    view.set_messages(
        [
            make_message(1, "ok", role=Role.USER),
            make_message(2, "long words " * 80, role=Role.USER),
        ],
        has_earlier=False,
    )
    wait_for_layout(qtbot, view)
    (short,) = assistant(view, 1).body.blocks()
    (long,) = assistant(view, 2).body.blocks()
    assert short.width() < 100
    assert long.width() > 300
    assert long.height() > 3 * short.height()
    _check_heights(view)


# --- theme ------------------------------------------------------------------


def _contrast(first: QColor, second: QColor) -> float:
    def luminance(colour: QColor) -> float:
        def channel(value: float) -> float:
            return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

        return (
            0.2126 * channel(colour.redF())
            + 0.7152 * channel(colour.greenF())
            + 0.0722 * channel(colour.blueF())
        )

    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _dark_palette() -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(30, 30, 30))
    palette.setColor(QPalette.ColorRole.Text, QColor(230, 230, 230))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(42, 130, 218))
    return palette


def _light_palette() -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(255, 255, 255))
    palette.setColor(QPalette.ColorRole.Text, QColor(0, 0, 0))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(48, 140, 198))
    return palette


@pytest.mark.parametrize("palette", [_light_palette(), _dark_palette()], ids=["light", "dark"])
def test_tints_keep_text_readable(palette: QPalette) -> None:
    text = palette.color(QPalette.ColorRole.Text)
    base = palette.color(QPalette.ColorRole.Base)
    assert _contrast(text, user_bubble_colour(palette)) >= 7.0
    assert _contrast(muted_text_colour(palette), base) >= 4.5


def test_a_palette_change_restyles_the_rendered_text(view: TranscriptView) -> None:
    view.set_messages([make_message(1, "Run `make` now.")], has_earlier=False)
    (prose,) = assistant(view, 1).body.blocks()
    assert isinstance(prose, MarkdownView)

    def inline_code_background() -> QColor:
        block = prose.document().begin()
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.text() == "make":
                return fragment.charFormat().background().color()
            fragments += 1
        raise AssertionError("no inline code")

    assert inline_code_background() == code_background(view.palette())
    view.setPalette(_dark_palette())
    assert inline_code_background() == code_background(_dark_palette())
    assert prose.document().toPlainText() == "Run make now."


def test_the_question_and_its_reply_take_rows_built_ahead(
    view: TranscriptView, qtbot: QtBot
) -> None:
    """The rows of the next question and its reply are built while nothing waits (after
    the page, after a reply ends), not between Enter and the request; a row built ahead
    shows its own message: its time, its name for a screen reader, its state."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    qtbot.waitUntil(lambda: view.rows_ready)
    rows = len(view.message_column.findChildren(MessageWidget))
    later = NOW + timedelta(minutes=7)

    question = sending(31, "Is it on disk yet?").model_copy(update={"created_at": later})
    view.append_sending(question)
    view.message_stored(-31, question.model_copy(update={"id": 31}))
    view.append_message(make_message(32, "", status=MessageStatus.STREAMING, created_at=later))

    assert len(view.message_column.findChildren(MessageWidget)) == rows  # none built now
    assert not view.rows_ready
    asked, reply = assistant(view, 31), assistant(view, 32)
    qtbot.waitUntil(lambda: asked.isVisible() and reply.isVisible())  # before the next frame
    assert not asked.sending and asked.text == "Is it on disk yet?"
    assert asked.header.time.text() == timestamp(later, NOW)
    assert asked.accessibleName() == f"You, {timestamp(later, NOW)}"
    assert reply.accessibleName() == f"Claude, {timestamp(later, NOW)}"
    assert reply.body.is_typing() and not reply.body.blocks()
    assert view.message_widgets()[-2:] == (asked, reply)

    view.update_message_text(32, "The reply's first words.")
    view.update_message(make_message(32, "The reply's first words.", created_at=later))
    qtbot.waitUntil(lambda: view.rows_ready)  # the next turn's, once this one ended
    assert len(view.message_column.findChildren(MessageWidget)) == rows + 2
    assert view.message_widgets()[-1] is reply and not reply.body.is_typing()


def test_a_replys_first_words_make_no_widget(view: TranscriptView, qtbot: QtBot) -> None:
    """A reply's row built ahead has its first words' piece and its "Writing…" made
    already: the first words only fill and show them (issue 20)."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    qtbot.waitUntil(lambda: view.rows_ready)
    view.append_message(make_message(31, "", status=MessageStatus.STREAMING))
    reply = assistant(view, 31)
    made = len(reply.findChildren(QWidget))

    view.update_message_text(31, "The first words.")

    assert len(reply.findChildren(QWidget)) == made
    writing = [label for label in reply.findChildren(QLabel) if label.text() == WRITING]
    assert len(writing) == 1 and writing[0].isVisibleTo(reply)
    assert reply.accessibleName() == f"Claude, {timestamp(NOW, NOW)}"


def typing_at_the_bottom(
    view: TranscriptView, qtbot: QtBot, *, built_ahead: bool = False
) -> tuple[MessageWidget, QScrollBar]:
    """A page of 30 messages, then Claude's reply (31) showing its typing dots at the
    bottom, laid out; `built_ahead`: the spare rows made first. The reply's row and the
    scroll bar."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    if built_ahead:
        qtbot.waitUntil(lambda: view.rows_ready)
    bar = scroll_bar(view)
    view.append_message(make_message(31, "", status=MessageStatus.STREAMING))
    reply = assistant(view, 31)
    qtbot.waitUntil(reply.isVisible)  # placed before the next frame
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    wait_for_layout(qtbot, view)
    qtbot.waitUntil(lambda: reply.body.is_typing())
    return reply, bar


def test_a_replys_first_words_repaint_only_its_row(view: TranscriptView, qtbot: QtBot) -> None:
    """The dots give way to the first words: the rows above are moved by Qt's copy of
    their pixels, not painted again."""
    reply, bar = typing_at_the_bottom(view, qtbot)
    above = [widget for widget in view.message_widgets() if widget is not reply]
    painted_above = CountedEvents(above, QEvent.Type.Paint)
    painted_reply = CountedEvents([reply], QEvent.Type.Paint)
    maximum = bar.maximum()

    view.update_message_text(31, "The first words.\n\nAnd a second paragraph, so the row grows.")
    qtbot.waitUntil(lambda: painted_reply.count > 0 and bar.maximum() > maximum)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    QApplication.processEvents()

    assert painted_above.count == 0


class PaintedRegion(QObject):
    """The union of what `widget` was asked to paint."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.region += event.region()
        return False


@pytest.mark.parametrize("built_ahead", [True, False])
def test_a_one_line_reply_repaints_only_its_row(
    view: TranscriptView, qtbot: QtBot, built_ahead: bool
) -> None:
    """First words one line tall (the row barely grows) in the row built ahead or a new
    one: the page above is moved by Qt's copy of its pixels, not painted again. The
    dots laid out beside the words made the row too tall for a moment, the column then
    shrank, and the strip it left was dirty in view when the view scrolled: Qt then
    repainted the whole page (issue 20)."""
    reply, bar = typing_at_the_bottom(view, qtbot, built_ahead=built_ahead)
    painted = PaintedRegion(view.message_column)
    maximum = bar.maximum()

    view.update_message_text(31, "The first words.")
    qtbot.waitUntil(lambda: bar.maximum() > maximum and bar.value() == bar.maximum())
    qtbot.waitUntil(lambda: not painted.region.isEmpty())
    QApplication.processEvents()

    row = QRegion(reply.geometry())
    below = QRegion(0, reply.geometry().bottom(), view.message_column.width(), 100)
    assert (painted.region - row - below).isEmpty()
    assert not reply.body.is_typing() and reply.text == "The first words."


class FramesPainting(QObject):
    """The frames (the window's update requests, numbered) in which `row` was painted,
    and whether anything in the column above `row` was painted in any of them."""

    def __init__(self, view: TranscriptView, row: QWidget | None = None) -> None:
        super().__init__()
        self._view = view
        self.row = row
        self.frame = 0
        self.frames: set[int] = set()
        self.column = QRegion()
        QApplication.instance().installEventFilter(self)  # type: ignore[union-attr]

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self)  # type: ignore[union-attr]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self.frame += 1
        elif isinstance(event, QPaintEvent):
            if watched is self.row:
                self.frames.add(self.frame)
            elif watched is self._view.message_column:
                self.column += event.region()
        return False


def test_a_streamed_line_is_painted_in_one_frame(view: TranscriptView, qtbot: QtBot) -> None:
    """A streamed update that makes the reply's row taller (after its first words): the
    row is laid out and scrolled to, then painted once — not its text, then the taller
    row, then the strip below (three frames). One that keeps its height repaints its
    text alone, as before. The reply's text is exactly what it was given."""
    reply, bar = typing_at_the_bottom(view, qtbot)
    view.update_message_text(31, "The first words.")
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and not reply.body.is_typing())
    qtbot.wait(60)
    grown = "The first words.\n\nA second paragraph, so the row grows."
    for text, taller in ((grown, True), (grown + " More.", False)):
        height = reply.height()
        painted = FramesPainting(view, reply)
        try:
            view.update_message_text(31, text)
            qtbot.waitUntil(lambda painted=painted: bool(painted.frames))
            qtbot.wait(60)
        finally:
            painted.stop()
        assert (reply.height() > height) is taller
        assert len(painted.frames) == 1
        above = QRegion(0, 0, view.message_column.width(), reply.y())
        assert (painted.column & above).isEmpty()
        assert bar.value() == bar.maximum()
        assert reply.text == text


@pytest.mark.parametrize("built_ahead", [True, False])
def test_a_row_added_at_the_bottom_is_painted_in_one_frame(
    view: TranscriptView, qtbot: QtBot, built_ahead: bool
) -> None:
    """The question's row and the reply's (its dots), added as the view follows the
    bottom: each painted once, in one frame, with the strip the scroll brings into view,
    and nothing above it painted. Showing a row posts it an update of its whole rect, which
    Qt delivered after that frame: the row was painted again, whole, in a frame of its
    own (issue 20)."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    if built_ahead:
        qtbot.waitUntil(lambda: view.rows_ready)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    wait_for_layout(qtbot, view)
    qtbot.wait(30)
    steps = (
        lambda: view.append_sending(sending(31, "A question")),
        lambda: view.message_stored(-31, make_message(31, "A question", role=Role.USER)),
        lambda: view.append_message(make_message(32, "", status=MessageStatus.STREAMING)),
    )
    for index, (step, row_id) in enumerate(zip(steps, (-31, 31, 32), strict=True)):
        painted = FramesPainting(view)
        try:
            step()
            row = view.message_widget(row_id)
            assert row is not None
            painted.row = row
            row_paints = CountedEvents([row], QEvent.Type.Paint)
            qtbot.waitUntil(lambda painted=painted: bool(painted.frames))
            qtbot.wait(60)
        finally:
            painted.stop()
        if index == 1:
            continue  # the same row, now sent: its "Sending…" goes (not a row added)
        assert len(painted.frames) == 1
        assert row_paints.count == 1  # not the strip's part, then the whole row again
        above = QRegion(0, 0, view.message_column.width(), row.y())
        assert (painted.column & above).isEmpty()
        assert bar.value() == bar.maximum()


def test_a_replys_last_words_are_painted_in_one_frame(view: TranscriptView, qtbot: QtBot) -> None:
    """The reply's end (`update_message`) with more text than last streamed, the view
    following the bottom: the taller row is laid out and scrolled to, then painted once
    — not its text, then the taller row, then the strip below (three frames) — and
    nothing above it. It shows exactly the final text, no longer "Writing…"."""
    reply, bar = typing_at_the_bottom(view, qtbot)
    view.update_message_text(31, "The first words.")
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and not reply.body.is_typing())
    qtbot.wait(60)
    final = "The first words.\n\n" + "And the rest of the reply, a paragraph. " * 12
    height = reply.height()
    painted = FramesPainting(view, reply)
    try:
        view.update_message(make_message(31, final))
        qtbot.waitUntil(lambda: bool(painted.frames))
        qtbot.wait(60)
    finally:
        painted.stop()
    assert reply.height() > height
    assert len(painted.frames) == 1
    above = QRegion(0, 0, view.message_column.width(), reply.y())
    assert (painted.column & above).isEmpty()
    assert bar.value() == bar.maximum()
    assert reply.text == final
    writing = [label for label in reply.findChildren(QLabel) if label.text() == WRITING]
    assert all(not label.isVisibleTo(reply) for label in writing)


def test_what_is_pending_is_painted_before_a_row_is_added_and_nothing_more(
    view: TranscriptView, qtbot: QtBot
) -> None:
    """The reply's row, added below the question just marked sent: what changed above is
    painted first (a scroll moves only painted pixels), then the row — and the scroll
    bar only once, as it moves. It was repainted as well, to paint what was pending,
    in a frame of its own (~0.3 ms, issue 20)."""
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    qtbot.waitUntil(lambda: view.rows_ready)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    wait_for_layout(qtbot, view)
    view.append_sending(sending(31, "A question"))
    qtbot.wait(60)
    view.message_stored(-31, make_message(31, "A question", role=Role.USER))
    question = view.message_widget(31)
    assert question is not None
    question_paints = CountedEvents([question], QEvent.Type.Paint)
    bar_paints = CountedEvents([bar], QEvent.Type.Paint)
    maximum = bar.maximum()
    view.append_message(make_message(32, "", status=MessageStatus.STREAMING))
    reply = view.message_widget(32)
    assert reply is not None
    qtbot.waitUntil(reply.isVisible)  # placed before the next frame
    assert question_paints.count == 1  # the question, sent, painted before the scroll
    qtbot.waitUntil(lambda: bar_paints.count > 0)
    qtbot.wait(60)
    assert bar.maximum() > maximum and bar.value() == bar.maximum()
    assert bar_paints.count == 1
    assert question_paints.count == 1


@pytest.mark.parametrize(
    ("built_ahead", "frame_between"), [(True, False), (False, False), (True, True)]
)
def test_a_turns_rows_added_back_to_back_are_placed_and_painted_together(
    view: TranscriptView, qtbot: QtBot, built_ahead: bool, frame_between: bool
) -> None:
    """The question's row, its "sent" and the reply's row (its dots), told in three turns
    of the event loop as a turn's request leaves: laid out and scrolled to once, and
    painted once each, in one frame, with nothing above them painted — also when a frame
    of something else in the window goes by in between (`frame_between`: the window's
    Stop button, shown with the question). Placed one by one, each had its layout and
    scroll, and the question its frame (issue 20)."""
    elsewhere = QLabel("Ready", view.window())
    elsewhere.move(view.width() + 20, 20)  # beside the transcript, as the window's buttons
    elsewhere.show()
    view.set_messages(conversation(30), has_earlier=False)
    wait_until_built(qtbot, view)
    if built_ahead:
        qtbot.waitUntil(lambda: view.rows_ready)
    bar = scroll_bar(view)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    wait_for_layout(qtbot, view)
    qtbot.wait(30)
    scrolls = CountedEvents([], QEvent.Type.None_)
    bar.valueChanged.connect(lambda _value: setattr(scrolls, "count", scrolls.count + 1))
    painted = FramesPainting(view)
    paints: dict[int, CountedEvents] = {}
    frames: dict[int, set[int]] = {}

    class FramesOf(QObject):
        """The frames (numbered by `painted`) in which a row was painted."""

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if isinstance(event, QPaintEvent) and isinstance(watched, MessageWidget):
                frames[watched.message.seq].add(painted.frame)
            return False

    frames_of = FramesOf()

    def watch(row: MessageWidget) -> None:
        # Rows exist at once (placed before the next frame): watched from then on.
        paints[row.message.seq] = CountedEvents([row], QEvent.Type.Paint)
        frames[row.message.seq] = set()
        row.installEventFilter(frames_of)

    view.message_built.connect(watch)
    steps = [
        lambda: view.append_sending(sending(31, "A question")),
        lambda: view.message_stored(-31, make_message(31, "A question", role=Role.USER)),
        lambda: view.append_message(make_message(32, "", status=MessageStatus.STREAMING)),
    ]
    frame_before = painted.frame

    def next_step() -> None:
        first = len(steps) == 3
        if first:
            elsewhere.setText("Stop")  # a frame is due
        steps.pop(0)()
        if first and frame_between:  # it comes now, as Qt sends it
            QApplication.sendEvent(view.window(), QEvent(QEvent.Type.UpdateRequest))
        if steps:
            QTimer.singleShot(0, next_step)

    try:
        QTimer.singleShot(0, next_step)
        qtbot.waitUntil(lambda: not steps and 32 in paints and paints[32].count > 0)
        qtbot.wait(60)
    finally:
        painted.stop()
        view.message_built.disconnect(watch)
    question, reply = assistant(view, 31), assistant(view, 32)
    assert (paints[31].count, paints[32].count) == (1, 1)
    assert len(frames[31]) == 1 and frames[31] == frames[32]
    if frame_between:
        assert min(frames[31]) > frame_before + 1  # a frame went by while the question waited
    assert scrolls.count == 1
    above = QRegion(0, 0, view.message_column.width(), question.y())
    assert (painted.column & above).isEmpty()
    assert bar.value() == bar.maximum()
    assert not question.sending and reply.body.is_typing()
    assert view.message_widgets()[-2:] == (question, reply)
