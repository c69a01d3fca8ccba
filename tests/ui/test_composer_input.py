"""The composer sends what was typed or pasted, or says why not (issue 21 item 7): a
half-character is refused with a note, a byte-order mark is left out visibly, a text
too long for the box is refused before it is laid out."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QMimeData
from pytestqt.qtbot import QtBot

from app.core.text import MAX_COMPOSER_CHARACTERS, MAX_COMPOSER_LINE
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
