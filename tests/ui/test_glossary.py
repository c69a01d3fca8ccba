"""The glossary test (issue 23): nothing a person reads outside a Details area says
"token", "context", "condense" or a raw model id — over the main window with a
conversation, a summary's card and its banner, the gauge's words, and every page of
Settings as it opens (its Advanced parts are Details)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.gauge_text import DETAILS_HEADING
from app.ui.token_gauge import TokenGauge
from app.ui.transcript_blocks import MarkdownView
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ui.test_summarize_now import fill, summary_done

JARGON = re.compile(r"\btokens?\b|\bcontext\b|condens|\bclaude-[a-z0-9.-]+", re.IGNORECASE)


def readable_texts(top: QWidget, details: Iterable[QWidget] = ()) -> list[str]:
    """What a person reads in `top` now: visible labels, buttons, titles, choices,
    placeholders, tabs, tooltips before their Details, names a screen reader says.
    Message bodies (the people's own words) and `details` are left out."""
    skipped = [*details]
    texts: list[str] = []
    for widget in [top, *top.findChildren(QWidget)]:
        if not widget.isVisibleTo(top) and widget is not top:
            continue
        if any(widget is area or area.isAncestorOf(widget) for area in skipped):
            continue
        if isinstance(widget, MarkdownView | QTextEdit | QPlainTextEdit) and not isinstance(
            widget, QLineEdit
        ):
            texts.append(widget.placeholderText())
            continue
        if isinstance(widget, QLabel) and widget.text().startswith("Details:"):
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        if isinstance(widget, TokenGauge):  # painted, not a label
            texts.append(widget.text())
        if isinstance(widget, QGroupBox):
            texts.append(widget.title())
        if isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        if isinstance(widget, QLineEdit):
            texts.append(widget.placeholderText())
        if isinstance(widget, QTabWidget):
            texts += [widget.tabText(i) for i in range(widget.count())]
        texts.append(widget.toolTip().split(f"<b>{DETAILS_HEADING}</b>")[0])
        texts += [widget.accessibleName(), widget.accessibleDescription(), widget.windowTitle()]
    return [text for text in texts if text]


def jargon(texts: Iterable[str]) -> list[str]:
    return [text for text in texts if JARGON.search(text)]


def test_the_window_speaks_plain_words(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
) -> None:
    window = cairn.window
    assert jargon(readable_texts(window)) == [], "the first screen"
    fill(qtbot, cairn)
    window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    # The card is placed once the rows it stands for are out, a few turns later.
    qtbot.waitUntil(lambda: not window.transcript.building)
    (card,) = window.transcript.summary_blocks()
    card.set_expanded(True)
    QApplication.processEvents()
    # The conversation's own words are the people's: the messages are left out.
    messages = window.transcript.message_widgets()
    shown = readable_texts(window, details=messages)
    assert window.header.gauge.text() in shown
    assert any(text.startswith("Summary of ") for text in shown)
    assert jargon(shown) == []


def test_settings_speak_plain_words_outside_advanced(qtbot: QtBot, cairn: CairnSession) -> None:
    dialog = cairn.window.settings.open_settings()
    qtbot.waitExposed(dialog)
    advanced = [dialog.summaries_page.advanced, *dialog.recall_page._dials]
    for index in range(dialog.tabs.count()):
        dialog.tabs.setCurrentIndex(index)
        QApplication.processEvents()
        found = jargon(readable_texts(dialog, details=advanced))
        assert found == [], dialog.tabs.tabText(index)
    dialog.reject()
