"""Opening a conversation of 100,000 live messages from the sidebar: first paint, gauge, RSS.

Run: .venv/bin/python bench/bench_open.py [--runs 5] [--messages 100000] [--scale 1000]

Issue target: "open a conversation of 100,000 live messages: ≤ 300 ms to first
paint, RSS growth ≤ 50 MiB".

A cairn.db is built once and cached in /tmp/cairn-bench/ (bulk SQL inserts into the
schema `open_database` creates): one conversation of 100,000 live messages, one of
1,000 (for scale) and a small newest one of 20 — realistic text (questions of a few
sentences, replies of 8-40 with code blocks, decisions, file names, dates, amounts),
`token_estimate` counted with the app's own cl100k counter, `usage` on replies.

Each run is a fresh process (caches matter) with a fresh copy of that file in its own
CAIRN_HOME: the real window (`open_cairn`, offscreen), an in-memory keyring holding a
key, and the fake Anthropic server in-process (the model list). The window opens on the
small conversation; once everything started has settled (tokenizer warm-up, model
list, the background integrity check two seconds after the first paint), the bench
selects the big conversation in the sidebar as a click would
(`window.sidebar.select_session`) and measures, from that call:
- `call`: the call itself (it runs the newest-page query and builds the page's widgets);
- `paint`: the first paint of anything in the transcript after it (the page is then
  on screen); `its CPU`: the GUI thread's CPU time over the same span (wall time well
  above it means the shared machine kept the thread waiting for a CPU);
- `gauge`: until the gauge has figures again (the live tail is read on a worker, then
  taken in on the GUI thread) and has painted them;
- `worker` / `take-in`: the worker's read of the live tail, and the GUI thread's
  `ConversationOpening._loaded` that takes it in (both timed by wrapping them in this process);
- `stall`: the longest gap of a 1 ms QTimer heartbeat on the GUI thread over the whole
  switch (until the gauge painted);
- RSS (VmRSS) before the click and after the gauge painted, each after `gc.collect()`
  and half a second of idle event loop; `peak` is VmHWM, reset just before the click.
QT_QPA_UPDATE_IDLE_TIME=0, as in bench_sidebar.py: the offscreen platform would
otherwise wait 5 ms before each repaint (a real screen waits for its next frame).

Warm: the file was just copied, so it is in the OS page cache. Cold: the bench evicts
that one file from the page cache (posix_fadvise DONTNEED) before the child starts;
the rest of the system (Python, Qt) stays cached, as on a second launch of the app.
Medians of the runs; each run's figures are printed too. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CACHE = Path(tempfile.gettempdir()) / "cairn-bench"
MODEL = "claude-sonnet-4-6"
SMALL_MESSAGES = 20
TEST_KEY = "sk-ant-api03-bench-key-0123456789abcdef"

# --- realistic text -------------------------------------------------------------------

_VOCABULARY_TEXT = (
    "the a to and of in that is for it you with on this be are as can we have not your "
    "will if or but what so do about at from more one all there which would should could "
    "function file table query server client request response token context summary model "
    "window message archive index error value number date budget plan trip meeting report "
    "draft invoice contract schedule recipe garden python sqlite release version test build "
    "deploy branch commit review issue Lisbon Porto March April Monday Tuesday"
)
_VOCABULARY = _VOCABULARY_TEXT.split()
_NAMES = ["Ana", "Bruno", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana"]
_THINGS = ["budget", "draft", "invoice", "schedule", "migration", "release notes", "menu"]
_FILES = [
    "report_2025.xlsx",
    "budget-q3.csv",
    "notes/trip.md",
    "src/app/main.py",
    "contract_v2.pdf",
    "config.toml",
    "data/export.json",
]
_FEATURES = (
    "Let's go with {name}'s plan for the {thing}.",
    "We decided to keep {file} as the single source of truth.",
    "I'll send the {thing} to {name} by Friday.",
    "TODO: update {file} before {date}.",
    "The total comes to €{amount} for {n} people.",
    "See https://example.org/{thing_slug}/{n} for the details.",
    "Should we move the meeting to {date} or keep it on {date2}?",
    "The route is {n} km and takes about {hours} hours by train.",
    "Call `load_{thing_slug}()` after reading {file}.",
    "Can you ask {name} whether the {thing} is ready?",
    "The server answered in {n} ms on average, {percent}% faster than last week.",
)


def _plain_sentence(rng: random.Random) -> str:
    words = rng.choices(_VOCABULARY, k=rng.randint(6, 22))
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def _feature_sentence(rng: random.Random) -> str:
    thing = rng.choice(_THINGS)
    day = datetime(2025, 1, 1) + timedelta(days=rng.randint(0, 500))
    return rng.choice(_FEATURES).format(
        name=rng.choice(_NAMES),
        thing=thing,
        thing_slug=thing.replace(" ", "_"),
        file=rng.choice(_FILES),
        date=day.date().isoformat(),
        date2=(day + timedelta(days=rng.randint(1, 30))).date().isoformat(),
        amount=f"{rng.randint(100, 9999):,}.{rng.randint(0, 99):02d}",
        n=rng.randint(2, 900),
        hours=rng.randint(1, 9),
        percent=rng.randint(2, 60),
    )


def sentence_pool(rng: random.Random, size: int = 5000) -> list[str]:
    """Sentences to draw messages from: mostly plain, about one in six with facts in it."""
    return [
        _feature_sentence(rng) if rng.random() < 0.16 else _plain_sentence(rng) for _ in range(size)
    ]


def message_text(rng: random.Random, pool: list[str], assistant: bool) -> str:
    """A question of a few sentences, or a reply of 8-40 (sometimes with code)."""
    if not assistant:
        return " ".join(rng.choices(pool, k=rng.randint(1, 6)))
    paragraphs = []
    left = rng.randint(8, 40)
    while left > 0:
        take = min(left, rng.randint(2, 6))
        paragraphs.append(" ".join(rng.choices(pool, k=take)))
        left -= take
    if rng.random() < 0.2:
        code = "\n".join(f"value_{n} = compute({n})  # {rng.choice(_THINGS)}" for n in range(6))
        paragraphs.insert(rng.randint(1, len(paragraphs)), f"```python\n{code}\n```")
    if rng.random() < 0.25:
        paragraphs.insert(1, "\n".join(f"- {rng.choice(pool)}" for _ in range(rng.randint(2, 5))))
    return "\n\n".join(paragraphs)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def count_all(texts: list[str]) -> list[int]:
    """cl100k counts with the app's counter (two threads: tiktoken lets go of the GIL)."""
    from app.core.tokens import TokenCounter

    counter = TokenCounter()
    counter.load()
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(counter.count, texts, chunksize=256))


def insert_conversation(
    connection: Any,
    session_id: str,
    title: str,
    count: int,
    *,
    rng: random.Random,
    pool: list[str],
    start: datetime,
    model: str = MODEL,
) -> datetime:
    """One conversation of `count` live messages, in one transaction; returns its last time."""
    moment = start
    contents, stamps = [], []
    for seq in range(1, count + 1):
        moment += timedelta(seconds=rng.randint(5, 600))
        contents.append(message_text(rng, pool, assistant=seq % 2 == 0))
        stamps.append(_stamp(moment))
    tokens = count_all(contents)
    connection.execute("BEGIN")
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, version, last_seq) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, title, stamps[0], stamps[-1], model, count, count),
    )

    def rows() -> Iterable[tuple[Any, ...]]:
        for index, (content, stamp, estimate) in enumerate(
            zip(contents, stamps, tokens, strict=True)
        ):
            assistant = index % 2 == 1
            usage = (
                json.dumps(
                    {"input_tokens": rng.randint(500, 90_000), "output_tokens": estimate + 3}
                )
                if assistant
                else None
            )
            yield (
                session_id,
                index + 1,
                "assistant" if assistant else "user",
                content,
                stamp,
                estimate,
                usage,
                model if assistant else None,
            )

    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate, "
        "usage, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows(),
    )
    connection.execute("COMMIT")
    return moment


def build_database(big: int, scale: int) -> Path:
    """The three conversations (big, scale, small newest), built once and cached."""
    from app.store import SCHEMA_VERSION, open_database
    from app.store.database import mark_clean_shutdown

    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"open-{big}-{scale}-schema{SCHEMA_VERSION}.db"
    done = target.with_name(target.name + ".done")
    if target.is_file() and done.is_file():
        return target
    for stale in CACHE.glob(target.name + "*"):
        stale.unlink()
    print(f"building {target} (once)…", flush=True)
    started = time.perf_counter()
    rng = random.Random(20260305)
    pool = sentence_pool(rng)
    opened = open_database(target)
    connection = opened.connection
    moment = datetime(2024, 1, 1, tzinfo=UTC)
    moment = insert_conversation(
        connection, "bench-big", f"{big:,} messages", big, rng=rng, pool=pool, start=moment
    )
    moment = insert_conversation(
        connection, "bench-scale", f"{scale:,} messages", scale, rng=rng, pool=pool, start=moment
    )
    insert_conversation(
        connection, "bench-small", "A short chat", SMALL_MESSAGES, rng=rng, pool=pool, start=moment
    )
    connection.close()
    mark_clean_shutdown(target)
    done.write_text(f"{big} + {scale} + {SMALL_MESSAGES} messages\n")
    print(
        f"  {target.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return target


def prepare_home(template: Path, home: Path, *, cold: bool) -> None:
    """A copy of the template that the app opens without its pre-open integrity check
    (as after a normal quit), in or (cold) out of the page cache."""
    from app.store import open_database
    from app.store.database import mark_clean_shutdown

    database = home / "data" / "cairn.db"
    database.parent.mkdir(parents=True)
    shutil.copyfile(template, database)
    # The copy is a new file to the app: record a check and a clean close, as a normal
    # quit leaves them (the check itself is skipped: the template is sound).
    opened = open_database(database, integrity_check=lambda _connection: ["ok"])
    opened.connection.close()
    mark_clean_shutdown(database)
    with open(database, "rb") as file:
        # Written back now, so that the child does not share the disk with the copy.
        os.fsync(file.fileno())
        if cold:
            os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


# --- the child: one process, one switch ----------------------------------------------------


def rss_mib() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def reset_peak_rss() -> None:
    """Make VmHWM start again from the current RSS (Linux: clear_refs 5)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def child(target: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_QPA_UPDATE_IDLE_TIME", "0")
    import keyring
    from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtWidgets import QApplication, QWidget

    import app.chat.opening as opening_module
    from app.core.paths import AppPaths
    from app.secrets.keystore import SERVICE_NAME, USERNAME
    from app.ui.app import open_cairn
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.keyring_backend import MemoryKeyring

    backend = MemoryKeyring()
    backend.passwords[(SERVICE_NAME, USERNAME)] = TEST_KEY
    keyring.set_keyring(backend)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        os.environ.pop(name, None)

    marks: dict[str, float] = {}
    worker_seconds: list[float] = []
    take_in_seconds: list[float] = []
    original_load = opening_module.load_conversation
    original_loaded = opening_module.ConversationOpening._loaded

    def timed_load(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original_load(*args, **kwargs)
        finally:
            worker_seconds.append(time.perf_counter() - started)

    def timed_loaded(self: Any, loaded: Any) -> None:
        started = time.perf_counter()
        original_loaded(self, loaded)
        take_in_seconds.append(time.perf_counter() - started)

    opening_module.load_conversation = timed_load  # type: ignore[assignment]
    opening_module.ConversationOpening._loaded = timed_loaded  # type: ignore[method-assign]

    app = QApplication([])
    beats: list[float] = []
    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(1)
    heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))

    def run_until(done: Callable[[], bool], timeout: float) -> None:
        """Run the event loop (blocked in it, as the app is) until `done()`."""
        loop = QEventLoop()
        deadline = time.perf_counter() + timeout
        poll = QTimer()
        poll.setInterval(1)

        def check() -> None:
            if done() or time.perf_counter() > deadline:
                loop.quit()

        poll.timeout.connect(check)
        poll.start()
        loop.exec()
        poll.stop()
        if not done():
            raise TimeoutError(f"still waiting after {timeout} s")

    with FakeAnthropicServer() as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = open_cairn(AppPaths.from_environment())
        window, controller = session.window, session.controller
        session.show()
        run_until(lambda: session.started, 30)
        shown_at = time.perf_counter()

        def settled() -> bool:
            return (
                time.perf_counter() - shown_at > 3.0  # the background check starts at 2 s
                and controller.service.runner.running == 0
                and controller.service.current.gauge.measure() is not None
                and controller.service.current.state.session is not None
                and controller.service.current.state.session.id == "bench-small"
            )

        run_until(settled, 120)
        transcript, gauge = window.transcript, window.header.gauge

        class Watch(QObject):
            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Paint and "clicked" in marks:
                    now = time.perf_counter()
                    if isinstance(watched, QWidget):
                        if "paint" not in marks and (
                            watched is transcript or transcript.isAncestorOf(watched)
                        ):
                            marks["paint"] = now
                            marks["paint_cpu"] = time.thread_time()
                        if "gauge_state" in marks and "gauge" not in marks and watched is gauge:
                            marks["gauge"] = now
                return False

        def context_changed(state: object) -> None:
            current = controller.service.current.state.session
            if (
                state is not None
                and "clicked" in marks
                and current is not None
                and current.id == target
            ):
                marks.setdefault("gauge_state", time.perf_counter())

        watch = Watch()
        app.installEventFilter(watch)
        controller.context_changed.connect(context_changed)
        idle_until = time.perf_counter() + 0.5
        run_until(lambda: time.perf_counter() > idle_until, 5)
        gc.collect()
        rss_before, _ = rss_mib()
        reset_peak_rss()

        heartbeat.start()
        marks["clicked_cpu"] = time.thread_time()
        marks["clicked"] = time.perf_counter()
        window.sidebar.select_session(target)
        marks["returned"] = time.perf_counter()
        run_until(lambda: "gauge" in marks and "paint" in marks, 120)
        heartbeat.stop()
        clicked = marks["clicked"]
        stall = max(
            ((b - a) for a, b in itertools.pairwise(beats) if b > clicked),
            default=marks["returned"] - clicked,
        )
        stall = max(stall, (beats[0] - clicked) if beats else 0.0)
        settle_until = time.perf_counter() + 0.5
        run_until(lambda: time.perf_counter() > settle_until, 5)
        gc.collect()
        rss_after, peak = rss_mib()
        state = controller.service.current.gauge.measure()
        result = {
            "call": (marks["returned"] - clicked) * 1000,
            "paint": (marks["paint"] - clicked) * 1000,
            "paint_cpu": (marks["paint_cpu"] - marks["clicked_cpu"]) * 1000,
            "gauge": (marks["gauge"] - clicked) * 1000,
            "worker": (worker_seconds[-1] if worker_seconds else float("nan")) * 1000,
            "take_in": (take_in_seconds[-1] if take_in_seconds else float("nan")) * 1000,
            "stall": stall * 1000,
            "rss_before": rss_before,
            "rss_after": rss_after,
            "peak": peak,
            "live": len(controller.service.current.state.tail),
            "tokens": state.used if state is not None else -1,
            "shown": transcript.message_count(),
        }
        app.removeEventFilter(watch)
        window.close()
        session.close()
    print("RESULT " + json.dumps(result), flush=True)


# --- the parent ----------------------------------------------------------------------------


def one_run(template: Path, target: str, *, cold: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        prepare_home(template, home, cold=cold)
        env = dict(os.environ, CAIRN_HOME=str(home), QT_QPA_PLATFORM="offscreen")
        completed = subprocess.run(
            [sys.executable, __file__, "--child", target],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, float] = json.loads(line.removeprefix("RESULT "))
            return result
    raise RuntimeError(f"the child reported nothing:\n{completed.stdout}\n{completed.stderr}")


COLUMNS = (
    ("call", "call", "ms"),
    ("paint", "paint", "ms"),
    ("paint_cpu", "its CPU", "ms"),
    ("gauge", "gauge", "ms"),
    ("worker", "worker", "ms"),
    ("take_in", "take-in", "ms"),
    ("stall", "stall", "ms"),
    ("growth", "RSS +", "MiB"),
    ("peak_growth", "peak +", "MiB"),
)


def row(result: dict[str, float]) -> str:
    return "  ".join(f"{result[key]:8.1f}" for key, _label, _unit in COLUMNS)


def report(label: str, results: list[dict[str, float]]) -> None:
    for result in results:
        result["growth"] = result["rss_after"] - result["rss_before"]
        result["peak_growth"] = result["peak"] - result["rss_before"]
    first = results[0]
    print(
        f"{label}: {first['live']:,} live messages, {first['shown']} shown, "
        f"gauge {first['tokens']:,} tokens; RSS before the click "
        f"{statistics.median(r['rss_before'] for r in results):.0f} MiB"
    )
    print("         " + "  ".join(f"{f'{name} {unit}':>8}" for _k, name, unit in COLUMNS))
    for index, result in enumerate(results, 1):
        print(f"  run {index}  {row(result)}")
    medians = {key: statistics.median(r[key] for r in results) for key, _l, _u in COLUMNS}
    print(f"  median {row(medians)}")


def reference_ms() -> float:
    """A fixed piece of pure-Python work, timed: how fast the (shared) machine is now."""
    started = time.perf_counter()
    sum(range(10_000_000))
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--scale", type=int, default=1_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    template = build_database(args.messages, args.scale)
    print(
        f"switching from a {SMALL_MESSAGES}-message conversation to a long one in the sidebar; "
        f"{args.runs} runs each, a fresh process each; "
        f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}, {os.cpu_count()} CPUs; "
        f"reference work {reference_ms():.0f} ms (sum(range(10**7)))"
    )
    one_run(template, "bench-scale", cold=False)  # warms imports and the page cache
    for target, label in (("bench-big", f"{args.messages:,}"), ("bench-scale", f"{args.scale:,}")):
        for cold in (False, True):
            results = [one_run(template, target, cold=cold) for _ in range(args.runs)]
            report(f"{label} messages, {'cold file' if cold else 'warm cache'}", results)
    print(
        f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
        f"reference work {reference_ms():.0f} ms"
    )


if __name__ == "__main__":
    main()
