"""MessageJump on a transcript with a compressed summary: its part and the part's
originals unfold, and the message is outlined."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.core.models import Message, Session
from app.core.summary import Summary
from app.ui import theme
from app.ui.contrast import contrast_ratio
from app.ui.history_source import Place
from app.ui.landing_highlight import LandingHighlight, tint_over
from app.ui.message_jump import MessageJump
from app.ui.transcript import TranscriptView
from tests.ui.fakes_history import START, trip_history


class ArchivedCards:
    """What the cards read of the archive: each summary's originals and parts."""

    def __init__(
        self, originals: dict[str, list[Message]], children: dict[str, list[Summary]]
    ) -> None:
        self._originals = originals
        self._children = children

    def originals(self, summary_id: str) -> tuple[list[Message], datetime | None]:
        return self._originals.get(summary_id, []), None

    def children(self, summary_id: str) -> list[Summary]:
        return self._children.get(summary_id, [])

    def undo(self, summary_id: str) -> None:
        raise AssertionError("nothing is undone here")

    def retry_with_claude(self, summary_id: str) -> None:
        raise AssertionError("nothing is rewritten here")

    def delete_originals(self, summary_id: str) -> None:
        raise AssertionError("nothing is deleted here")


class FakeChat:
    """What MessageJump uses of the chat service: the conversation on screen, opening one."""

    def __init__(self) -> None:
        self.current = SimpleNamespace(state=SimpleNamespace(session=None))
        self.opened: list[str] = []

    def open_session(self, session_id: str) -> None:
        self.opened.append(session_id)


class FakeController(QObject):
    """What MessageJump uses of the controller: a signal, and the service."""

    summaries_changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.service = FakeChat()


def test_an_archived_message_under_a_compressed_summary_unfolds_and_is_outlined(
    qtbot: QtBot,
) -> None:
    history = trip_history()
    conversation = history._conversations["trip"]
    summaries = conversation.summaries
    compressed = next(s for s in summaries if s.tier.value == "compressed")
    parts = [s for s in summaries if s.parent_id == compressed.id]
    active = [s for s in summaries if s.parent_id is None]
    messages: list[Message] = conversation.messages

    cards = ArchivedCards(
        originals={s.id: [m for m in messages if m.summary_id == s.id] for s in summaries},
        children={s.id: [p for p in parts if p.parent_id == s.id] for s in summaries},
    )
    transcript = TranscriptView(cards=cards)
    qtbot.addWidget(transcript)
    transcript.resize(700, 500)
    transcript.show()
    qtbot.waitExposed(transcript)
    transcript.activateWindow()
    qtbot.waitUntil(transcript.isActiveWindow)
    controller = FakeController()
    loaded: list[int] = []
    jump = MessageJump(controller, transcript, lambda: loaded.append(1))  # type: ignore[arg-type]

    # Not on screen yet: the jump opens it, and goes there once the page is built.
    jump.go(Place("trip", 10, compressed.id))
    assert controller.service.opened == ["trip"] and jump.pending is not None
    controller.service.current.state.session = Session(
        id="trip", title="Trip to Lisbon", created_at=START, updated_at=START, model="m"
    )
    with qtbot.waitSignal(jump.arrived):
        transcript.set_messages(messages, has_earlier=False)
        transcript.set_summaries(active)
    assert jump.pending is None and loaded == []
    top = transcript.summary_block(compressed.id)
    assert top is not None and top.expanded
    part = transcript.summary_block(parts[1].id)
    assert part is not None and part.expanded and part.originals_shown
    assert part.originals_view is not None and 10 in part.originals_view.seqs
    assert isinstance(jump.flash, LandingHighlight) and jump.flash.parent() is part.originals_view

    # On screen already: a live message, at once (no opening).
    with qtbot.waitSignal(jump.arrived):
        jump.go(Place("trip", 14))
    assert controller.service.opened == ["trip"]
    widget = next(w for w in transcript.message_widgets() if w.message.seq == 14)
    assert jump.flash.parent() is widget
    assert widget.hasFocus(), "focused, so a screen reader says which message it is"
    # A find step marks the message and leaves the focus where it is (its box).
    transcript.scroll_area.setFocus()
    with qtbot.waitSignal(jump.arrived):
        jump.go(Place("trip", 13), focus=False)
    assert jump.flash.parent() is next(
        w for w in transcript.message_widgets() if w.message.seq == 13
    )
    assert transcript.scroll_area.hasFocus()
    # A message of another conversation opening: nothing happens here until it is current.
    jump.go(Place("other", 3))
    assert controller.service.opened == ["trip", "other"] and jump.pending == Place("other", 3)


def test_the_mark_fades_away_by_itself(qtbot: QtBot) -> None:
    target = QWidget()
    qtbot.addWidget(target)
    target.resize(300, 80)
    target.show()
    mark = LandingHighlight(target)
    assert mark.geometry() == target.rect() and mark.strength == 1.0
    faded: list[float] = []
    mark._fade.valueChanged.connect(lambda value: faded.append(float(value)))
    with qtbot.waitSignal(mark.destroyed, timeout=10_000):
        pass
    assert faded and faded[-1] == 0.0 and faded == sorted(faded, reverse=True)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_text_stays_readable_under_the_mark(dark: bool) -> None:
    colours = theme.DARK if dark else theme.LIGHT
    palette = QPalette()
    for role, value in colours.items():
        palette.setColor(role, QColor(value))
    text = palette.color(QPalette.ColorRole.Text)
    for surface in theme.transcript_surfaces(palette):
        assert contrast_ratio(text, tint_over(surface, palette)) >= 4.5
    # ... and the mark itself is seen: its tint differs from what it lies on.
    base = palette.color(QPalette.ColorRole.Base)
    assert contrast_ratio(palette.color(QPalette.ColorRole.Highlight), base) >= 3.0
