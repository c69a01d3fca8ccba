"""Attaching files in the window: the paperclip's dialog, drop and paste, the chips, the
refusals in words, the gauge, the request, and the files shown in the transcript."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.window_attachments import AttachmentStrip
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer
from tests.fakes.sample_files import pdf, pdf_in_object_streams, png


def ready(qtbot: QtBot, cairn: CairnSession, count: int) -> None:
    tray = cairn.window.composer.attachments
    qtbot.waitUntil(lambda: len(tray.attachments()) == count and not tray.busy, timeout=10_000)


def send(qtbot: QtBot, cairn: CairnSession, text: str) -> None:
    composer = cairn.window.composer
    composer.editor.setPlainText(text)
    qtbot.mouseClick(composer.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not composer.attachments.isVisible(), timeout=15_000)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def last_content(fake_server: FakeAnthropicServer) -> list[dict[str, object]]:
    content = fake_server.turns()[-1].body["messages"][-1]["content"]
    assert isinstance(content, list)
    return content


def test_the_paperclip_attaches_chosen_files_as_chips_and_sends_them(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    composer = cairn.window.composer
    assert composer.paperclip.accessibleName() == "Attach files"
    picture, report = tmp_path / "chart.png", tmp_path / "report.pdf"
    picture.write_bytes(png(300, 200))
    report.write_bytes(pdf(2))
    composer.attachments.native_dialog = False
    qtbot.mouseClick(composer.paperclip, Qt.MouseButton.LeftButton)
    dialog = composer.attachments.dialog
    assert dialog is not None and dialog.isVisible()
    dialog.filesSelected.emit([str(picture), str(report)])
    dialog.reject()
    ready(qtbot, cairn, 2)
    chips = composer.attachments.chips()
    assert [chip.name for chip in chips] == ["chart.png", "report.pdf"]
    assert chips[0].detail.text().startswith("Picture · ")
    assert "token" not in chips[0].detail.text()
    assert chips[0].detail.toolTip() == "Details: 300 × 200 pixels · 80 tokens for Claude to read"
    # Online, a PDF is counted by count_tokens: the fake's 2,000 tokens a page.
    assert chips[1].detail.text() == "2 pages"
    assert chips[1].detail.toolTip() == "Details: 4,000 tokens for Claude to read"
    assert composer.button.isEnabled()

    fake_server.add_reply("A chart and a report.")
    send(qtbot, cairn, "What do these say?")
    content = last_content(fake_server)
    assert [block["type"] for block in content] == ["image", "document", "text"]
    assert composer.attachments.attachments() == []


def test_a_file_is_attached_by_dropping_it_on_the_window(
    qtbot: QtBot, cairn: CairnSession, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Meeting at 10:30 in room 4417", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(notes))])
    # As a drag from the file manager comes: it enters (Qt then knows where it goes), then drops.
    enter = QDragEnterEvent(
        QPoint(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(cairn.window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(cairn.window, drop)
    assert drop.isAccepted()
    ready(qtbot, cairn, 1)
    assert cairn.window.composer.attachments.chips()[0].name == "notes.txt"


def test_a_pasted_picture_is_attached_not_typed(qtbot: QtBot, cairn: CairnSession) -> None:
    image = QImage(640, 480, QImage.Format.Format_RGB32)
    image.fill(QColor("#3366aa"))
    QGuiApplication.clipboard().setImage(image)
    editor = cairn.window.composer.editor
    editor.setFocus()
    editor.paste()
    ready(qtbot, cairn, 1)
    attachment = cairn.window.composer.attachments.attachments()[0]
    assert attachment.name == "Pasted image.png"
    assert (attachment.width, attachment.height) == (640, 480)
    assert editor.toPlainText() == ""


def test_a_file_claude_cannot_read_is_refused_in_words(
    qtbot: QtBot, cairn: CairnSession, tmp_path: Path
) -> None:
    letter = tmp_path / "Letter.docx"
    letter.write_bytes(b"PK\x03\x04 a word file")
    tray = cairn.window.composer.attachments
    tray.add_file(str(letter))
    qtbot.waitUntil(lambda: tray.refusal.isVisible(), timeout=10_000)
    assert tray.refusal.text() == (
        "Not attached — Letter.docx: Claude can't read .docx files — save it as PDF first."
    )
    assert tray.chips() == []
    assert not cairn.window.composer.button.isEnabled(), "nothing to send"


def test_a_mixed_pick_adds_what_it_can_and_names_what_it_refused(
    qtbot: QtBot, cairn: CairnSession, tmp_path: Path
) -> None:
    report, letter, notes = tmp_path / "report.pdf", tmp_path / "Letter.docx", tmp_path / "a.xlsx"
    report.write_bytes(pdf(2))
    letter.write_bytes(b"PK\x03\x04 a word file")
    notes.write_bytes(b"PK\x03\x04 a spreadsheet")
    composer = cairn.window.composer
    composer.attachments.native_dialog = False
    dialog = composer.attachments.open_dialog()
    assert dialog.nameFilters()[0].startswith("Pictures, PDFs and text files (")
    assert dialog.testOption(dialog.Option.HideNameFilterDetails), "words, not 40 patterns"
    dialog.filesSelected.emit([str(report), str(letter), str(notes)])
    dialog.reject()
    tray = composer.attachments
    qtbot.waitUntil(lambda: len(tray.attachments()) == 1 and "a.xlsx" in tray.refusal.text())
    assert [chip.name for chip in tray.chips()] == ["report.pdf"]
    refusal = tray.refusal.text()
    assert refusal.startswith("Not attached:\n• ")
    assert "Letter.docx: Claude can't read .docx files" in refusal
    assert tray.refusal.isVisible()


def test_a_chip_can_be_removed_and_the_gauge_counts_what_is_attached(
    qtbot: QtBot, cairn: CairnSession, tmp_path: Path
) -> None:
    cairn.window.composer.editor.setPlainText("Look")
    before = cairn.controller.service.current.gauge.measure()
    picture = tmp_path / "big.png"
    picture.write_bytes(png(1000, 1000))
    tray = cairn.window.composer.attachments
    tray.add_file(str(picture))
    ready(qtbot, cairn, 1)
    after = cairn.controller.service.current.gauge.measure()
    assert before is not None and after is not None
    assert after.breakdown.draft - before.breakdown.draft >= 1_334
    chip = tray.chips()[0]
    assert chip.remove is not None
    qtbot.mouseClick(chip.remove, Qt.MouseButton.LeftButton)
    assert tray.chips() == []
    emptied = cairn.controller.service.current.gauge.measure()
    assert emptied is not None
    assert emptied.breakdown.draft == before.breakdown.draft


def test_sent_files_show_in_the_transcript_after_a_restart(
    qtbot: QtBot,
    open_window: object,
    with_key: str,
    fake_server: FakeAnthropicServer,
    tmp_path: Path,
) -> None:
    assert callable(open_window)
    cairn = open_window()
    picture = tmp_path / "cat.png"
    picture.write_bytes(png(120, 90))
    cairn.window.composer.attachments.add_file(str(picture))
    ready(qtbot, cairn, 1)
    fake_server.add_reply("A cat.")
    send(qtbot, cairn, "Who is this?")
    widget = cairn.window.transcript.message_widgets()[0]
    strip = widget.findChild(AttachmentStrip)
    assert strip is not None
    assert [chip.name for chip in strip.chips] == ["cat.png"]
    assert widget.text == "Who is this?", "the chips name the file; the text does not repeat it"
    session_id = (
        cairn.controller.service.current.state.session.id
        if cairn.controller.service.current.state.session
        else None
    )
    cairn.window.close()
    cairn.close()
    picture.unlink()  # moved away: the archive keeps its copy

    again = open_window()
    assert session_id is not None
    again.controller.service.open_session(session_id)
    qtbot.waitUntil(lambda: bool(again.window.transcript.message_widgets()), timeout=10_000)
    first = again.window.transcript.message_widgets()[0]
    qtbot.waitUntil(lambda: first.findChild(AttachmentStrip) is not None, timeout=10_000)
    strip = first.findChild(AttachmentStrip)
    assert strip is not None
    qtbot.waitUntil(lambda: strip.chips[0].picture.pixmap().width() > 40, timeout=10_000)
    fake_server.add_reply("Still a cat.")
    send(qtbot, again, "And now?")
    first_turn = fake_server.turns()[-1].body["messages"][0]["content"]
    # Uploaded once, before the restart, and referred to by its id after it.
    (uploaded,) = fake_server.files.uploads
    assert first_turn[0]["source"] == {"type": "file", "file_id": uploaded.id}
    assert uploaded.data == png(120, 90)


def _strip_of_message(cairn: CairnSession, index: int) -> AttachmentStrip:
    widgets = [w for w in cairn.window.transcript.message_widgets() if w.findChild(AttachmentStrip)]
    strip = widgets[index].findChild(AttachmentStrip)
    assert strip is not None
    return strip


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_an_earlier_file_not_re_sent_is_said_on_its_message_and_in_the_gauge(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    # pdf-support: 100 pages for the whole request. The second 60-page PDF leaves the first
    # out: its chip and a row under it say so, and so does the gauge's breakdown.
    tray = cairn.window.composer.attachments
    tray.add_file(write(tmp_path / "report.pdf", pdf_in_object_streams(60)))
    ready(qtbot, cairn, 1)
    fake_server.add_reply("The report.")
    send(qtbot, cairn, "Summarize the report.")
    first = _strip_of_message(cairn, 0)
    assert not first.note.isVisible() and not first.chips[0].not_resent

    tray.add_file(write(tmp_path / "annex.pdf", pdf_in_object_streams(60)))
    ready(qtbot, cairn, 1)
    fake_server.add_reply("The annex.")
    send(qtbot, cairn, "And the annex?")
    texts = [
        block.get("text", "") for block in fake_server.turns()[-1].body["messages"][0]["content"]
    ]
    assert "[earlier file: report.pdf — not re-sent]" in texts
    qtbot.waitUntil(lambda: first.note.isVisible(), timeout=5_000)
    assert first.chips[0].not_resent
    assert first.chips[0].detail.text() == "60 pages · not re-sent"
    assert "report.pdf" in first.note.text() and "Not re-sent" in first.note.text()
    assert first.chips[0].accessibleName() == "Attached file report.pdf, not re-sent to Claude"
    assert not _strip_of_message(cairn, 1).note.isVisible()
    gauge = cairn.window.header.gauge
    assert "Not re-sent: this earlier file (report.pdf)" in gauge.toolTip()
    assert "report.pdf" in gauge.accessibleDescription()


def test_a_message_whose_files_break_a_limit_is_refused_in_words_and_kept(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    tray = cairn.window.composer.attachments
    tray.add_file(write(tmp_path / "part1.pdf", pdf_in_object_streams(60)))
    ready(qtbot, cairn, 1)
    tray.add_file(write(tmp_path / "part2.pdf", pdf_in_object_streams(60)))
    ready(qtbot, cairn, 2)
    composer = cairn.window.composer
    composer.editor.setPlainText("Compare both parts.")
    qtbot.mouseClick(composer.button, Qt.MouseButton.LeftButton)
    banner = cairn.window.banner
    qtbot.waitUntil(lambda: banner.isVisible(), timeout=5_000)
    assert "“part2.pdf”" in banner.text_label.text()
    assert "at most 100 pages in one message" in banner.text_label.text()
    assert fake_server.requests_to(MESSAGES_PATH) == []
    assert len(tray.attachments()) == 2
    assert composer.editor.toPlainText() == "Compare both parts."
