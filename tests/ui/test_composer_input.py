"""The composer sends what was typed or pasted, or says why not (issue 21 item 7): a
half-character is refused with a note, a byte-order mark is left out visibly, a text
too long for the box is refused before it is laid out."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QByteArray, QMimeData
from pytestqt.qtbot import QtBot

from app.core.text import MAX_COMPOSER_CHARACTERS, MAX_COMPOSER_LINE, has_visible_text
from app.ui.composer import Composer


def paste(composer: Composer, raw: bytes) -> None:
    mime = QMimeData()
    mime.setData("text/plain;charset=utf-8", QByteArray(raw))
    composer.editor.insertFromMimeData(mime)


def composer(qtbot: QtBot) -> Composer:
    widget = Composer()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_a_half_character_is_refused_with_a_note(qtbot: QtBot) -> None:
    box = composer(qtbot)
    paste(box, b"half an emoji: " + b"\xed\xa0\xbd" + b" here")
    assert box.text() == ""
    assert box.note.isVisible()
    assert "damaged character" in box.note.text() and "Nothing was pasted" in box.note.text()


def test_a_byte_order_mark_is_left_out_visibly(qtbot: QtBot) -> None:
    box = composer(qtbot)
    paste(box, b"\xef\xbb\xbfGate code 4471")
    assert box.text() == "Gate code 4471"
    assert box.note.isVisible() and "byte-order mark" in box.note.text()
    box.editor.insertPlainText(".")
    assert not box.note.isVisible(), "the note goes once the user types on"


def test_pasted_text_is_kept_exactly(qtbot: QtBot) -> None:
    box = composer(qtbot)
    text = "Ünïcödé ☕ 𝄞 עברית\ttab\r\nand a Windows line"
    paste(box, text.encode())
    assert box.text() == text
    assert not box.note.isVisible()


def test_a_text_too_long_for_the_box_is_refused_before_it_is_laid_out(qtbot: QtBot) -> None:
    box = composer(qtbot)
    huge = ("a line of a log file, 0123456789\n" * (10 * 1024**2 // 33)).encode()
    paste(box, huge)
    assert box.editor.document().characterCount() == 1, "nothing reached the box"
    assert "too long to paste" in box.note.text()
    assert f"{MAX_COMPOSER_CHARACTERS:,}" in box.note.text()

    paste(box, b"x" * (MAX_COMPOSER_LINE + 1))
    assert box.editor.document().characterCount() == 1
    assert "a line of" in box.note.text()


def test_a_long_paste_within_the_limits_is_taken_whole(qtbot: QtBot) -> None:
    box = composer(qtbot)
    text = "line of text\n" * 50_000
    paste(box, text.encode())
    assert box.text() == text


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("type"), st.sampled_from(["Hello", " ", "\n", "\u200b"])),
            st.tuples(st.just("clear"), st.booleans()),
            st.tuples(st.just("streaming"), st.booleans()),
            st.tuples(st.just("editing"), st.sampled_from([None, 7])),
            st.tuples(st.just("waiting"), st.sampled_from([None, "Updating your conversations…"])),
        ),
        max_size=20,
    )
)
def test_the_button_says_what_wording_it_afresh_says(
    qtbot: QtBot, steps: list[tuple[str, object]]
) -> None:
    """The button is set only when what it says changes (asked at every keystroke, at the
    box's clearing and at every busy or idle step of a turn, issue 20): after any steps it
    says what working it out from the box's state says."""
    box = composer(qtbot)
    for step, value in steps:
        if step == "type":
            box.editor.insertPlainText(str(value))
        elif step == "clear":
            box.clear(keep_height=bool(value))
        elif step == "streaming":
            box.set_streaming(bool(value))
        elif step == "editing":
            box.editing = value if value is None else int(str(value))
            box.editor.textChanged.emit()  # as message_actions tells it
        else:
            box.set_waiting(None if value is None else str(value))
        if box.streaming:
            expected = ("Stop", "Stop reply", True)
        else:
            typed = has_visible_text(box.editor.toPlainText())
            expected = (
                "Send" if box.editing is None else "Resend",
                "Send message",
                typed and box.waiting is None,
            )
        button = box.button
        assert (button.text(), button.accessibleName(), button.isEnabled()) == expected
        assert button.toolTip() == (
            "Stop Claude's reply (Esc). What arrived so far is kept."
            if box.streaming
            else box.waiting or "Send (Enter)"
        )
