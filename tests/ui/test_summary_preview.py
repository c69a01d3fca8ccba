"""The preview of a summary in the running window: its numbers, Accept (Enter), Edit
with validation, Discard, and closing it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.core.summary import Summary
from app.store.summaries import SummaryStore
from app.ui.app import CairnSession
from app.ui.summary_block import SummaryBlock
from app.ui.summary_preview import EMPTY_NARRATIVE, SummaryPreviewDialog
from tests.helpers.window import chat
from tests.ui.conftest import Previews


def stored(cairn: CairnSession) -> list[Summary]:
    current = cairn.controller.service.current.state.session
    assert current is not None
    repo = SummaryStore.open(AppPaths.from_environment().database)
    try:
        return repo.active_summaries(current.id)
    finally:
        repo.close()


def preview(qtbot: QtBot, cairn: CairnSession, previews: Previews) -> SummaryPreviewDialog:
    """Eight turns, then Summarize now; its preview."""
    previews.accept = False
    for turn in range(8):
        chat(qtbot, cairn, f"Question {turn}: the price is {turn * 10} EUR " + "and more " * 40)
    cairn.window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: cairn.window.summaries.preview_dialog is not None, timeout=15_000)
    dialog = cairn.window.summaries.preview_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def done(cairn: CairnSession) -> bool:
    return (
        not cairn.window.summaries.running
        and not cairn.controller.service.current.condensing.running
    )


def blocks(cairn: CairnSession) -> list[SummaryBlock]:
    return cairn.window.transcript.findChildren(SummaryBlock)


def test_summarize_now_opens_the_preview_and_enter_accepts_it(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    dialog = preview(qtbot, cairn, previews)
    figures = dialog.figures.text()
    assert figures.startswith("Summarizes 10 messages · the newest 6 stay · about ")
    share = figures.removeprefix("Summarizes 10 messages · the newest 6 stay · about 1/")
    assert int(share.removesuffix(" of their length")) >= 1
    assert "token" not in figures
    assert dialog.accept_button.isDefault()
    assert cairn.window.summaries.progress.label.text().startswith(
        "Waiting for you to check the summary"
    )
    assert stored(cairn) == [], "nothing is saved before Accept"
    assert dialog.sections == [], "the edit fields are built on Edit"
    shown = dialog.view.toPlainText()
    assert dialog.preview.drafts[0].content.narrative in shown
    for point in dialog.preview.drafts[0].content.key_points:
        assert point.text in shown
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert cairn.window.summaries.preview_dialog is None and not dialog.isVisible()
    (summary,) = stored(cairn)
    assert summary.content == dialog.preview.drafts[0].content
    qtbot.waitUntil(lambda: len(blocks(cairn)) == 1, timeout=5_000)


def test_an_edited_summary_is_saved_as_written(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    dialog = preview(qtbot, cairn, previews)
    dialog.edit_button.click()
    (section,) = dialog.sections
    assert section.narrative_edit.isVisible() and section.points_edit.isVisible()
    section.narrative_edit.setPlainText("We compared prices, from 0 to 70 EUR.")
    section.points_edit.setPlainText("The cheapest is 0 EUR\n\nThe dearest is 70 EUR\n")
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    (summary,) = stored(cairn)
    assert summary.content.narrative == "We compared prices, from 0 to 70 EUR."
    assert [p.text for p in summary.content.key_points] == [
        "The cheapest is 0 EUR",
        "The dearest is 70 EUR",
    ]


def test_an_empty_narrative_is_refused_in_words(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    dialog = preview(qtbot, cairn, previews)
    dialog.edit_button.click()
    (section,) = dialog.sections
    section.narrative_edit.setPlainText("   \n ")
    dialog.accept_button.click()
    assert dialog.isVisible(), "an empty summary is not accepted"
    assert section.narrative_error.isVisible()
    assert section.narrative_error.text() == EMPTY_NARRATIVE
    assert stored(cairn) == []
    section.narrative_edit.setPlainText("Prices, mostly.")
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert [s.content.narrative for s in stored(cairn)] == ["Prices, mostly."]


def test_discard_or_closing_changes_nothing(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    notices: list[tuple[str, str]] = []
    cairn.controller.notice_raised.connect(lambda title, text: notices.append((title, text)))
    dialog = preview(qtbot, cairn, previews)
    dialog.discard_button.click()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert stored(cairn) == [] and blocks(cairn) == []
    assert ("Summary discarded — nothing changed", "Every message stays as it was.") in notices

    cairn.window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: cairn.window.summaries.preview_dialog is not None, timeout=15_000)
    again = cairn.window.summaries.preview_dialog
    assert again is not None
    again.close()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert stored(cairn) == []


def test_cancel_in_the_progress_strip_closes_the_preview(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    preview(qtbot, cairn, previews)
    cairn.window.summaries.progress.cancel_button.click()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert cairn.window.summaries.preview_dialog is None
    qtbot.waitUntil(lambda: not cairn.window.findChildren(SummaryPreviewDialog), timeout=5_000)
    assert stored(cairn) == []


def test_the_preview_waits_in_its_conversation_while_another_is_on_screen(
    qtbot: QtBot, cairn: CairnSession, previews: Previews
) -> None:
    preview(qtbot, cairn, previews)
    current = cairn.controller.service.current.state.session
    assert current is not None
    cairn.controller.service.new_conversation()
    qtbot.waitUntil(lambda: cairn.window.summaries.preview_dialog is None, timeout=5_000)
    assert cairn.controller.service.current.condensing.preview is None
    cairn.controller.service.open_session(current.id)
    qtbot.waitUntil(lambda: cairn.window.summaries.preview_dialog is not None, timeout=5_000)
    dialog = cairn.window.summaries.preview_dialog
    assert dialog is not None
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: done(cairn), timeout=15_000)
    assert len(stored(cairn)) == 1
