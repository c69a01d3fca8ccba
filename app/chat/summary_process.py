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
And, at any time:  app → child:  ("warm", with_sdk)  — load now what a summary needs.

What the child costs to start, and when it is paid (issue 20): the interpreter, the
modules a summary needs, the tokenizer and the SDK take ~1.7 s of CPU and ~110 MiB
(a warm child's RSS; ~60 MiB without the SDK). Started at the first summary, all of it
ran beside the reply streaming when the user pressed Summarize now. So the child runs
below the window's priority from its first instruction (the app lowers it as soon as it
exists, before the child imports anything), this module imports nothing heavy at its
top (unpickling `serve` imports it in the child), and a conversation that nears its
trigger warms the child ahead (`warm`, app.chat.summaries), while nothing streams.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.runner import Job
from app.core.errors import UserFacingError
from app.core.platform import niceness as niceness_of
from app.core.platform import raise_niceness

# Nothing heavy at the top: the child imports this module before it can lower its
# priority or be asked for anything (jobs, the engine, the store: ~0.3 s of CPU).
if TYPE_CHECKING:
    import multiprocessing.process
    from multiprocessing.connection import Connection

    from app.chat.events import SummaryPreview
    from app.chat.jobs import Reviewer, SummaryRequest
    from app.chat.runner import JobRunner
    from app.core.context import ContextState
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

# A conversation this share of the way to its trigger (`ContextState.trigger_ratio`: at
# 0.80, from 40 % of the usable window on) warms the summary process ahead of the
# summary that is coming, automatic or asked for.
WARM_SHARE = 0.5

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
        self._warmed = False  # the child now running was asked to warm up
        self._warm_asked = False  # `warm_soon` ran (once a run of the app)

    @property
    def warmed(self) -> bool:
        """A child runs, and was asked to load what a summary needs (or made one)."""
        return self._warmed and self.started

    def near_trigger(self, state: ContextState) -> bool:
        """The conversation measured `state` is near enough to its trigger to warm the
        child ahead, and it was not warmed yet (cheap: asked at each figure told)."""
        return (
            not self._warm_asked
            and not self._closed
            and state.ratio >= WARM_SHARE * state.trigger_ratio
        )

    def warm_soon(self, runner: JobRunner, *, with_sdk: bool) -> None:
        """`warm`, once, as a job of `runner` (the spawn stays off the loop's thread)."""
        if self._warm_asked or self._closed:
            return
        self._warm_asked = True
        runner.start(Job("warm summaries", lambda _job: self.warm(with_sdk=with_sdk), done=_ignore))

    def warm(self, *, with_sdk: bool) -> bool:
        """Start the child, if need be, and have it load what a summary needs (the
        modules, the tokenizer; the SDK too `with_sdk`), in the child's own time, at its
        priority: the summary that follows pays none of it. Returns at once (after the
        spawn, a few ms: call it from a job's thread); False when a summary runs or the
        child could not be started (the summary will start it, and say so if it fails).
        """
        if not self._lock.acquire(blocking=False):
            return False  # a summary runs: the child is warm, or warming by itself
        try:
            if self.warmed:
                return True
            try:
                commands, _events = self._connected()
                commands.send(("warm", with_sdk))
            except (UserFacingError, OSError) as error:
                log.info("The summary process could not be warmed: %r", error)
                return False
            self._warmed = True
            return True
        finally:
            self._lock.release()

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
            self._warmed = True  # what the summary loads stays loaded for the next
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
        niceness = _child_niceness()
        process = context.Process(
            target=serve,
            args=(command_reader, event_writer, niceness),
            name="cairn-summaries",
            daemon=True,
        )
        try:
            process.start()
        except OSError as error:
            raise UserFacingError(
                SUMMARY_FAILED, title="Summarizing stopped", detail=f"spawn failed: {error!r}"
            ) from error
        # At once, from here: the child's start-up (the interpreter, then the modules
        # `serve` needs) runs below the window's priority too, not only what follows
        # `serve`'s own `lower_priority` (~0.3 s of CPU at the window's priority before).
        if niceness is not None and process.pid is not None:
            lower_priority(niceness, process.pid)
        command_reader.close()
        event_writer.close()
        self._process, self._commands, self._events = process, command_writer, event_reader
        return command_writer, event_reader

    def _forget(self) -> None:
        for connection in (self._commands, self._events):
            if connection is not None:
                connection.close()
        self._process = self._commands = self._events = None
        self._warmed = False


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


def serve(commands: Connection, events: Connection, niceness: int | None = None) -> None:
    """The child's main loop: one summary at a time, until told to stop or orphaned.

    `niceness`: the one the app gave this process (`_child_niceness`); set again here, first,
    should the app have been too late or unable to."""
    import multiprocessing  # loaded already: this runs in the summary process

    if niceness is not None:
        lower_priority(niceness)

    from app.chat.jobs import summarize
    from app.core.calibration import Calibrations
    from app.core.context import ContextBuilder
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

    def warm(with_sdk: bool) -> None:
        """Load what a summary needs, before one is asked for (`SummaryProcess.warm`)."""
        try:
            counter.load()
            from app.core import engine, summarizer  # noqa: F401  (imported by `summarize`)
            from app.llm.anthropic_provider import load_sdk
            from app.store.summaries import SummaryStore  # noqa: F401

            if with_sdk:
                load_sdk()
            gc.collect()  # what the imports left, now rather than during a summary
            logging.getLogger(__name__).info(
                "The summary process is ready (%.1f s of CPU)", time.process_time()
            )
        except Exception:  # the summary will load it again, and say what fails
            logging.getLogger(__name__).exception("The summary process could not warm up")

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
        elif message[0] == "warm":
            # A daemon: a stop does not wait for the SDK's import to end.
            threading.Thread(
                target=warm, args=(message[1],), name="summary-warm-up", daemon=True
            ).start()
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


def _child_niceness() -> int | None:
    """The summary process's niceness: the app's plus `SUMMARY_NICENESS` (None where the
    system has none: Windows)."""
    mine = niceness_of()
    return None if mine is None else min(mine + SUMMARY_NICENESS, 19)


def lower_priority(target: int, pid: int = 0) -> None:
    """Make a process (this one: pid 0) yield the CPU to the app's window: set its
    niceness to `target`, never raise its priority. Where the system refuses, the
    summary runs as it is."""
    try:
        raise_niceness(pid, target)
    except OSError as error:  # gone already, or not allowed
        log.info("The summary process keeps its priority: %s", error)


def _ignore(_warmed: bool) -> None:
    """A warm-up's result: nothing to do (a child that could not start is said by the
    summary that needs it)."""


def _parent_alive() -> bool:
    import multiprocessing

    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()
