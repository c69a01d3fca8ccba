"""Summaries made in a process of their own (DESIGN §7: the GUI thread never waits).

Making a summary is mostly pure-Python work — extracting facets from hundreds
of messages, building the transcript, merging, fitting — and Python threads
share one lock (the GIL). Run in the app's process, every call from Qt into
Python (a paint, a slot) waited for that lock while a summary ran: 94–107 ms
gaps with a 1 ms switch interval (bench/bench_stall.py). In a process of its
own the work has its own interpreter; the job's thread in the app only waits
on a pipe, which holds no lock.

One child process, started (spawned, not forked: Qt's threads must not be
copied) when the first summary is needed and kept for the next ones; it opens
its own database connection and its own API client, and exits when the app
closes it, or when its parent is gone. Cancelling is cooperative, as in the
app: the engine checks a flag between steps and records the attempt. The
child's log records are sent back and logged in the app, through its
redacting handlers.

The protocol, one job at a time:
    app → child:  ("run", SummaryCall)  then maybe ("cancel",)   — or ("stop",)
    child → app:  ("log", level, logger, text)* and ("progress", text)*
                  then  ("done", EngineOutcome)
                  or ("failed", title, message, detail)
A call whose request asks for a review (the preview) also has, before anything is saved:
    child → app:  ("preview", SummaryPreview)
    app → child:  ("accept", drafts)  or  ("discard",)
The child waits for the answer, or for a cancel, a stop, or its parent's end.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.events import SummaryPreview
from app.chat.jobs import Reviewer, SummaryRequest, summarize
from app.core.calibration import Calibrations
from app.core.context import ContextBuilder
from app.core.errors import UserFacingError

if TYPE_CHECKING:
    import multiprocessing.process
    from multiprocessing.connection import Connection

    from app.core.engine import EngineOutcome
    from app.core.summary import SummaryDraft

log = logging.getLogger(__name__)

# How often the waiting thread looks at the job's cancel flag.
_POLL_SECONDS = 0.05
# How long closing waits for the child before ending it.
_STOP_SECONDS = 5.0
# The child's niceness, added to the app's: on a busy machine the window (a reply
# streaming, a paint) gets a CPU before the summary does; on an idle one it changes
# nothing. At nice 0 the GUI thread waited for a CPU for most of its pauses over 16 ms
# while a summary ran beside a reply (bench/bench_stall.py --phases manual).
SUMMARY_NICENESS = 5

SUMMARY_FAILED = (
    "Cairn couldn't summarize earlier messages just now. Nothing was changed; "
    "it will try again later."
)


@dataclass(frozen=True)
class SummaryCall:
    """What the child needs for one summary (all of it picklable).

    Attributes:
        database: the cairn.db to read and write.
        api_key, base_url: for the summarizer's API client; no key means rule mode's
            fallback (the engine makes a basic summary).
        calibrations: the app's calibrations now (`Calibrations.to_dict()`), so the child
            measures requests the way the app does.
    """

    request: SummaryRequest
    database: Path
    api_key: str | None
    base_url: str | None
    calibrations: dict[str, Any]


class SummaryProcess:
    """The child process that makes summaries, and the calls into it.

    `run` is called from a job's thread (one at a time); `close` from the app's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._commands: Connection | None = None
        self._events: Connection | None = None
        self._closed = False

    def run(
        self,
        call: SummaryCall,
        cancelled: Callable[[], bool],
        progress: Callable[[str], None] = lambda _text: None,
        review: Reviewer | None = None,
    ) -> EngineOutcome:
        """Make the summary in the child and wait for it (off the GUI thread); `progress`
        is called (on this thread) with each stage the child reports.

        `review` (for a request asking for one) is called on this thread with the
        preview and blocks until the user answers: the drafts to save, or None to
        discard them (it must return when `cancelled` becomes true).

        Raises:
            UserFacingError: the child could not be started, or died meanwhile.
        """
        with self._lock:
            commands, events = self._connected()
            commands.send(("run", call))
            cancel_sent = False
            while True:
                if not cancel_sent and cancelled():
                    commands.send(("cancel",))
                    cancel_sent = True
                try:
                    if not events.poll(_POLL_SECONDS):
                        if self._process is not None and not self._process.is_alive():
                            raise EOFError
                        continue
                    message = events.recv()
                except (EOFError, OSError) as error:
                    self._forget()
                    raise UserFacingError(
                        SUMMARY_FAILED,
                        title="Summarizing stopped",
                        retryable=True,
                        detail=f"the summary process ended: {error!r}",
                    ) from error
                kind = message[0]
                if kind == "log":
                    _, level, name, text = message
                    logging.getLogger(name).log(level, "%s", text)
                elif kind == "progress":
                    progress(message[1])
                elif kind == "preview":
                    preview: SummaryPreview = message[1]
                    answer = review(preview) if review is not None else preview.drafts
                    if not cancel_sent and cancelled():
                        commands.send(("cancel",))
                        cancel_sent = True
                    if answer is None:
                        commands.send(("discard",))
                    else:
                        commands.send(("accept", tuple(answer)))
                elif kind == "done":
                    outcome: EngineOutcome = message[1]
                    return outcome
                elif kind == "failed":
                    _, title, text, detail = message
                    raise UserFacingError(text, title=title, retryable=True, detail=detail)

    def close(self) -> None:
        """Stop the child (waiting for a summary being saved, a few seconds at most)."""
        self._closed = True
        process, commands = self._process, self._commands
        if process is None or commands is None:
            return
        with contextlib.suppress(OSError):
            commands.send(("stop",))
        process.join(_STOP_SECONDS)
        if process.is_alive():
            log.warning("The summary process did not stop in time; ending it")
            process.terminate()
            process.join(_STOP_SECONDS)
        self._forget()

    @property
    def started(self) -> bool:
        return self._process is not None and self._process.is_alive()

    # --- inside

    def _connected(self) -> tuple[Connection, Connection]:
        if self._closed:
            raise UserFacingError(SUMMARY_FAILED, title="Summarizing stopped", detail="closed")
        if self._process is not None and self._process.is_alive():
            assert self._commands is not None and self._events is not None
            return self._commands, self._events
        self._forget()
        import multiprocessing  # at the first summary, not before the window paints (issue 20)

        context = multiprocessing.get_context("spawn")
        command_reader, command_writer = context.Pipe(duplex=False)
        event_reader, event_writer = context.Pipe(duplex=False)
        process = context.Process(
            target=serve,
            args=(command_reader, event_writer),
            name="cairn-summaries",
            daemon=True,
        )
        try:
            process.start()
        except OSError as error:
            raise UserFacingError(
                SUMMARY_FAILED, title="Summarizing stopped", detail=f"spawn failed: {error!r}"
            ) from error
        command_reader.close()
        event_writer.close()
        self._process, self._commands, self._events = process, command_writer, event_reader
        return command_writer, event_reader

    def _forget(self) -> None:
        for connection in (self._commands, self._events):
            if connection is not None:
                connection.close()
        self._process = self._commands = self._events = None


# --- in the child -------------------------------------------------------------------


class _PipeLogHandler(logging.Handler):
    """Sends the child's log records to the app, which logs them through its handlers."""

    def __init__(self, events: Connection, lock: threading.Lock) -> None:
        super().__init__(level=logging.INFO)
        self._events = events
        self._lock = lock

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            with self._lock:
                self._events.send(("log", record.levelno, record.name, text))
        except Exception:  # a log record must never break the summary
            self.handleError(record)


def serve(commands: Connection, events: Connection) -> None:
    """The child's main loop: one summary at a time, until told to stop or orphaned."""
    import multiprocessing  # loaded already: this runs in the summary process

    lower_priority()

    from app.core.tokens import default_counter

    send_lock = threading.Lock()
    root = logging.getLogger()
    root.handlers[:] = [_PipeLogHandler(events, send_lock)]
    root.setLevel(logging.INFO)
    counter = default_counter()
    cancel = threading.Event()
    finished = threading.Event()
    finished.set()
    answers: queue.Queue[Sequence[SummaryDraft] | None] = queue.Queue()

    def progressed(text: str) -> None:
        with send_lock:
            events.send(("progress", text))

    def reviewed(preview: SummaryPreview) -> Sequence[SummaryDraft] | None:
        """Ask the app; wait for its answer, or a cancel (a stop, the app gone)."""
        with send_lock:
            events.send(("preview", preview))
        # While the user reads: a full collection now, so that none falls due between
        # Accept and the summary being saved (one took 171 ms there, over a heap the
        # SDK's import and the drafting left behind).
        gc.collect()
        while not cancel.is_set():
            try:
                return answers.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
        return None

    def work(call: SummaryCall) -> None:
        try:
            counter.load()
            builder = ContextBuilder(counter, Calibrations.from_dict(call.calibrations))
            from app.llm.anthropic_provider import AnthropicProvider
            from app.store.summaries import SummaryStore

            provider = AnthropicProvider(call.api_key, call.base_url) if call.api_key else None
            try:
                outcome = summarize(
                    call.request,
                    builder=builder,
                    counter=counter,
                    provider=provider,
                    open_summaries=lambda: SummaryStore.open(call.database),
                    cancelled=cancel.is_set,
                    progress=progressed,
                    review=reviewed,
                )
            finally:
                if provider is not None:
                    provider.close()
            reply: tuple[Any, ...] = ("done", outcome)
        except UserFacingError as error:
            reply = ("failed", error.title, error.message, error.detail)
        except Exception as error:
            logging.getLogger(__name__).exception("The summary failed unexpectedly")
            reply = ("failed", "Summarizing stopped", SUMMARY_FAILED, repr(error))
        with send_lock:
            events.send(reply)
        finished.set()

    while True:
        try:
            if not commands.poll(1.0):
                if multiprocessing.parent_process() is not None and not _parent_alive():
                    cancel.set()  # the app is gone: nobody will read the result
                    return
                continue
            message = commands.recv()
        except (EOFError, OSError):
            cancel.set()
            return
        if message[0] == "run":
            finished.wait()
            cancel.clear()
            while not answers.empty():  # a late answer to an earlier preview
                answers.get_nowait()
            finished.clear()
            threading.Thread(target=work, args=(message[1],), name="summary").start()
        elif message[0] == "cancel":
            cancel.set()
        elif message[0] == "accept":
            answers.put(message[1])
        elif message[0] == "discard":
            answers.put(None)
        elif message[0] == "stop":
            cancel.set()
            finished.wait(_STOP_SECONDS)
            return


def lower_priority() -> None:
    """Make this process yield the CPU to the app's window (`SUMMARY_NICENESS`).

    Where a system has no niceness (Windows) or refuses, the summary runs as it is."""
    nice = getattr(os, "nice", None)
    if nice is None:
        return
    try:
        nice(SUMMARY_NICENESS)
    except OSError as error:
        log.info("The summary process keeps its priority: %s", error)


def _parent_alive() -> bool:
    import multiprocessing

    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()
