"""How fast the transcript opens, streams and shows a huge message.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_transcript.py

Prints, in milliseconds:
- opening the newest 50 messages of a 10,000-message conversation, from
  `set_messages` to a first full frame (pending layout run, whole view
  rendered with `grab()`): the first time, then the median of five other
  pages; and prepending an older page;
- one streaming update (`update_message_text`) of a reply growing to 5 KB and
  to 40 KB: the call alone, and the call plus layout and paint (median, p95);
- showing a 1 MB message (many lines, and one single line: both plain text),
  and a message just under the plain-text threshold, rendered as Markdown.
Figures, not pass/fail.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from app.core.models import Message, MessageStatus, Role
from app.ui.transcript import TranscriptView
from app.ui.transcript_message import HUGE_MESSAGE_CHARS

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)


def _keep_none_alive() -> None:
    """Work around PySide6 6.12 on Python 3.11: every call that returns nothing drops
    a reference to None (harmless from 3.12, where None is immortal), and after some
    thousands of calls Python aborts with "deallocating None". Give None a reference
    count no run can use up, as 3.12 does."""
    if sys.version_info < (3, 12):
        import ctypes

        ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40


def synthetic_conversation(count: int) -> list[Message]:
    """Alternating turns: questions, and replies with headings, lists, tables and code."""
    messages = []
    for index in range(1, count + 1):
        if index % 2:
            role, content = Role.USER, f"Question {index}: could you explain part {index}? " * 2
        else:
            role = Role.ASSISTANT
            parts = [
                f"## Part {index}",
                "Here is the **short** answer, with `inline code` and a "
                "[link](https://example.org).",
                "- first point\n- second point\n- third point",
            ]
            if index % 4 == 0:
                parts.append("| name | value |\n|---|---|\n| a | 1 |\n| b | 2 |")
            if index % 6 == 0:
                parts.append(
                    "```python\n" + "\n".join(f"value_{n} = {n} * 2" for n in range(12)) + "\n```"
                )
            parts.append("That is all " * 20)
            content = "\n\n".join(parts)
        messages.append(
            Message(
                id=index,
                session_id="bench",
                seq=index,
                role=role,
                content=content,
                created_at=NOW,
            )
        )
    return messages


class PaintProbe(QObject):
    """Notes when the transcript's content is painted."""

    def __init__(self) -> None:
        super().__init__()
        self.painted = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.painted = True
        return False


def until_painted(app: QApplication, probe: PaintProbe) -> None:
    """Run the event loop until the next paint (layout first, as Qt orders it)."""
    probe.painted = False
    deadline = time.perf_counter() + 2
    while not probe.painted and time.perf_counter() < deadline:
        app.processEvents()
    if not probe.painted:
        raise RuntimeError("no paint within 2 s")


def first_frame(app: QApplication, view: TranscriptView) -> None:
    """Lay out what is pending and render the whole transcript once, as a first frame."""
    app.processEvents()
    view.grab()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _keep_none_alive()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    host = QWidget()
    host.resize(1100, 850)
    view = TranscriptView(host, open_url=lambda url: True, clock=lambda: NOW)
    view.resize(1000, 800)
    host.show()
    app.processEvents()
    probe = PaintProbe()

    everything = synthetic_conversation(10_000)

    # --- opening ------------------------------------------------------------
    opens = []
    for page in range(6):
        end = len(everything) - page * 50
        start = time.perf_counter()
        view.set_messages(everything[end - 50 : end], has_earlier=True)
        first_frame(app, view)
        opens.append(time.perf_counter() - start)
        view.clear()
        app.processEvents()
    view.set_messages(everything[-50:], has_earlier=True)
    app.processEvents()
    start = time.perf_counter()
    view.prepend_messages(everything[-100:-50], has_earlier=True)
    first_frame(app, view)
    prepend = time.perf_counter() - start
    print("Open the newest 50 of 10,000 messages, set_messages -> first full frame")
    print(f"  cold (first ever)       {ms(opens[0])}")
    print(f"  warm (median of 5)      {ms(statistics.median(opens[1:]))}")
    print(f"  prepend 50 older        {ms(prepend)}")

    # --- streaming ----------------------------------------------------------
    sentence = "Streaming text with **bold**, `code` and a list:\n\n- one\n- two\n\n"
    code = "```python\n" + "".join(f"line_{n} = compute({n})\n" for n in range(60)) + "```\n\n"
    short_reply = ((sentence * 30)[:2500] + code + (sentence * 30))[:5000]
    paragraph = "A long essay paragraph with *some* emphasis and words, " * 6 + "\n\n"
    long_reply = (paragraph * 200)[:40_000]
    for label, full, step in (("5 KB", short_reply, 50), ("40 KB", long_reply, 400)):
        view.set_messages(everything[-50:], has_earlier=True)
        app.processEvents()
        reply_id = len(everything) + 1
        view.append_message(
            Message(
                id=reply_id,
                session_id="bench",
                seq=reply_id,
                role=Role.ASSISTANT,
                content="",
                created_at=NOW,
                status=MessageStatus.STREAMING,
            )
        )
        app.processEvents()
        reply_widget = view.message_widget(reply_id)
        assert reply_widget is not None
        reply_widget.installEventFilter(probe)
        calls = []
        painted = []
        for end in range(step, len(full) + 1, step):
            start = time.perf_counter()
            view.update_message_text(reply_id, full[:end])
            calls.append(time.perf_counter() - start)
            until_painted(app, probe)
            painted.append(time.perf_counter() - start)
        print(f"Streaming a reply to {label} in {len(calls)} updates")
        print(
            f"  update_message_text     {ms(statistics.median(calls))} median, "
            f"{ms(sorted(calls)[int(len(calls) * 0.95)])} p95"
        )
        print(
            f"  + layout and paint      {ms(statistics.median(painted))} median, "
            f"{ms(sorted(painted)[int(len(painted) * 0.95)])} p95"
        )

    # --- huge messages ------------------------------------------------------
    line = "A pasted log line with some words in it, number 0123456789.\n"
    cases = {
        "1 MB, many lines (plain)": line * (1_000_000 // len(line)),
        "1 MB, one line (plain)": "word " * 200_000,
        f"{HUGE_MESSAGE_CHARS // 1000 - 2} KB Markdown (rendered)": (
            "Some **markdown** text with `code` and words. " * 40 + "\n\n"
        )
        * (HUGE_MESSAGE_CHARS // 1900),
    }
    print("Show one very large message, set_messages -> first full frame")
    for label, text in cases.items():
        message = Message(
            id=1,
            session_id="bench",
            seq=1,
            role=Role.USER if "plain" in label else Role.ASSISTANT,
            content=text,
            created_at=NOW,
        )
        view.clear()
        app.processEvents()
        start = time.perf_counter()
        view.set_messages([message], has_earlier=False)
        first_frame(app, view)
        print(f"  {label:<26}{ms(time.perf_counter() - start)}  ({len(text):,} chars)")


if __name__ == "__main__":
    main()
