"""What the real-window benches share: Cairn run as `cairn` runs it, driven from inside.

`run_cairn(script)` (in a child process the bench starts) calls `app.ui.app.run(["cairn"])`
itself, with `script` plugged in where `run` starts its smoke hook
(`app.ui.app.smoke_from_environment`): the script is a generator that yields "wait until"
conditions, resumed by a 10 ms timer on the GUI thread inside `app.exec()`. The fake
Anthropic server runs in a process of its own (`FakeServer`), so its work never
competes for the app's GIL, as the real API's does not.

`python bench/real_window.py --serve SETTINGS.json` is that server's process.
Only the standard library is imported at module level: LangChain's venv imports it too.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-ant-api03-bench-key-0123456789abcdef"
POLL_MS = 10
REPLY_CHUNKS = 8
CHUNK_DELAY = 0.005

Condition = Callable[[], bool]
Script = Callable[[Any, Any, Condition], Iterator[Condition]]


# --- figures -------------------------------------------------------------------------------


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def machine() -> str:
    """CPU model and count, memory, OS and Python: what the figures were measured on."""
    model = "unknown CPU"
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} CPUs{memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def reference_ms() -> float:
    """A fixed piece of pure-Python work, timed: how fast the (shared) machine is now."""
    started = time.perf_counter()
    sum(range(10_000_000))
    return (time.perf_counter() - started) * 1000


def proc_status(*names: str) -> dict[str, float]:
    """Fields of /proc/self/status in MiB (VmRSS, RssAnon, VmHWM…)."""
    fields: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in names:
            fields[name] = int(value.split()[0]) / 1024
    return fields


# --- the fake server's process -----------------------------------------------------------------


def split_answer(text: str, pieces: int) -> list[str]:
    """`text` in `pieces` deltas of about equal length, cut at spaces (joined: the text)."""
    words = text.split(" ")
    size = max(1, -(-len(words) // pieces))
    chunks = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [chunk + (" " if index < len(chunks) - 1 else "") for index, chunk in enumerate(chunks)]


def question_number(text: str) -> int | None:
    """The N of "Question N: …" (bench_turn.make_questions), or None."""
    head, _, rest = text.partition(":")
    if not rest or not head.startswith("Question "):
        return None
    number = head.removeprefix("Question ").strip()
    return int(number) if number.isdigit() else None


def serve(settings_file: str) -> None:
    """Serve the models and answer "Question N: …" with answer N (in REPLY_CHUNKS deltas),
    anything else by echoing it; print the base URL, stop when standard input closes."""
    sys.path.insert(0, str(REPO))
    from app.core.catalog import ModelInfo
    from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, echo_reply

    settings = json.loads(Path(settings_file).read_text())
    if settings.get("idle"):
        # A diagnosis: every thread of the fake (they inherit it) runs only on a CPU no
        # other task wants, so it never takes one from the app (SCHED_IDLE, Linux).
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    answers: list[str] = settings.get("answers", [])
    holder: list[FakeAnthropicServer] = []

    def generate(request: Any) -> Any:
        holder[0].clear_requests()  # it keeps every parsed body otherwise
        number = question_number(request.last_user_text)
        if number is None or not 1 <= number <= len(answers):
            return echo_reply(request)
        answer = answers[number - 1]
        return Reply.of_text(
            answer, chunks=split_answer(answer, REPLY_CHUNKS), chunk_delay=CHUNK_DELAY
        )

    models = settings.get("models")
    server = FakeAnthropicServer(
        models=None if models is None else [ModelInfo(**model) for model in models],
        reply_generator=generate,
    )
    holder.append(server)
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()


class FakeServer:
    """The fake Anthropic server in a child process; `base_url` once started."""

    def __init__(
        self,
        folder: Path,
        models: Sequence[Any] | None = None,
        answers: Sequence[str] = (),
        *,
        idle: bool = False,
    ) -> None:
        settings = folder / "fake-server.json"
        settings.write_text(
            json.dumps(
                {
                    "models": None if models is None else [m.model_dump() for m in models],
                    "answers": list(answers),
                    "idle": idle,
                }
            )
        )
        self._process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(settings)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url:
            self.close()
            raise RuntimeError("the fake server did not start")

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# --- a home for the app ----------------------------------------------------------------------


def prepare_home(home: Path, template: Path | None, models: Sequence[Any] | None = None) -> Any:
    """CAIRN_HOME's folders; a copy of `template` opened as after a normal quit (none:
    an empty folder, as on the first start); the model cache holding `models`."""
    sys.path.insert(0, str(REPO))
    from app.core.paths import AppPaths
    from app.store.model_cache import ModelCache

    if template is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_open import prepare_home as copy_database

        copy_database(template, home, cold=False)
    paths = AppPaths(home / "data", home / "config", home / "logs")
    paths.ensure()
    if models is not None:
        ModelCache.in_data_dir(paths).save(list(models))
    return paths


def child_environment(home: Path, base_url: str) -> dict[str, str]:
    """The app child's environment: its CAIRN_HOME, offscreen, the fake server's address."""
    env = dict(os.environ, CAIRN_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env["ANTHROPIC_BASE_URL"] = base_url
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CAIRN_SMOKE_MESSAGE"):
        env.pop(name, None)
    return env


# --- inside the app's process --------------------------------------------------------------------


def run_cairn(script: Script, key: str = KEY) -> None:
    """Run Cairn as `cairn` does (`app.ui.app.run`), the key in an in-memory keyring, with
    `script(controller, window, started)` driving it from the smoke hook's place. Exits
    with run's code; 4 when the script raised (its traceback on standard error)."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import keyring

    import app.ui.app as cairn_app
    from app.secrets.keystore import SERVICE_NAME, USERNAME
    from tests.fakes.keyring_backend import MemoryKeyring

    backend = MemoryKeyring()
    backend.passwords[(SERVICE_NAME, USERNAME)] = key
    keyring.set_keyring(backend)
    drivers: list[Any] = []

    def start_driver(controller: Any, window: Any, started: Condition) -> Any:
        driver = make_driver(window, script(controller, window, started))
        drivers.append(driver)
        return driver

    cairn_app.smoke_from_environment = start_driver  # type: ignore[assignment]
    sys.exit(cairn_app.run(["cairn"]))


def make_driver(parent: Any, steps: Iterator[Condition]) -> Any:
    """A QObject resuming `steps` (a generator of "wait until" conditions) from a 10 ms
    timer on the GUI thread; quits the app when it ends, with exit code 4 on an error."""
    import traceback

    from PySide6.QtCore import QCoreApplication, QObject, QTimer

    class Driver(QObject):
        def __init__(self) -> None:
            super().__init__(parent)
            self._waiting: Condition | None = None
            self._timer = QTimer(self)
            self._timer.setInterval(POLL_MS)
            self._timer.timeout.connect(self._step)
            self._timer.start()

        def _step(self) -> None:
            if self._waiting is not None and not self._waiting():
                return
            try:
                self._waiting = next(steps)
            except StopIteration:
                self._timer.stop()
                QCoreApplication.exit(0)
            except Exception:
                traceback.print_exc()
                print("FAILED", flush=True)
                self._timer.stop()
                QCoreApplication.exit(4)

    return Driver()


def wait(seconds: float) -> Condition:
    until = time.perf_counter() + seconds
    return lambda: time.perf_counter() >= until


def settled(controller: Any, shown: float, *, after: float = 6.0) -> Condition:
    """Start-up's work done: `after` s past the first paint (the background integrity
    check runs at 2 s, the start-up freeze at 5 s), the conversation loaded, the gauge
    known, no job running."""
    from app.chat.events import Activity

    service = controller.service

    def done() -> bool:
        current = service.current
        return (
            time.perf_counter() - shown > after
            and current.state.activity is Activity.IDLE
            and not current.has_jobs
            and service.runner.running == 0
            and (current.state.loaded or current.state.session is None)
        )

    return done


def longest_silence(beats: Sequence[float], start: float, end: float) -> float:
    """The longest stretch (ms) of [start, end] without a beat, the edges included."""
    points = [start, *(beat for beat in beats if start < beat < end), end]
    return max(after - before for before, after in itertools.pairwise(points)) * 1e3


class Heartbeat:
    """A 1 ms precise QTimer on the GUI thread noting each beat (bench_stall.py's), and
    with it how long the GUI thread had been on a CPU and waiting for one (/proc
    schedstat, ~2 µs a read): a silence is then the GUI thread at work, waiting for a
    CPU, or blocked (the GIL, or the event loop asleep past its timer).

    Each beat also notes the process's CPU clock (every thread) and, given `other_pid`,
    that process's (the fake server's: `clock_gettime` on its CPU clock, ~1 µs a read),
    so a silence says what the rest of the app and the fake did meanwhile.

    `start()` and `stop()` note a point too, so the work right after `start()` (a key
    press handled synchronously) is a silence like any other.
    """

    def __init__(self, other_pid: int | None = None) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.beats: list[float] = []
        self.on_cpu: list[float] = []  # the GUI thread's CPU seconds at each beat
        self.queued: list[float] = []  # its seconds waiting for a CPU (runnable, not running)
        self.process: list[float] = []  # the process's CPU seconds (every thread)
        self.other: list[float] = []  # `other_pid`'s CPU seconds (nan without it)
        path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self._fd = os.open(path, os.O_RDONLY) if os.path.exists(path) else None
        self._other_clock = None if other_pid is None else process_cpu_clock(other_pid)
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._beat)

    def _cpu(self) -> tuple[float, float]:
        if self._fd is None:
            return float("nan"), float("nan")
        on_cpu, waiting, _slices = os.pread(self._fd, 100, 0).split()
        return int(on_cpu) / 1e9, int(waiting) / 1e9

    def _other(self) -> float:
        if self._other_clock is None:
            return float("nan")
        try:
            return time.clock_gettime(self._other_clock)
        except OSError:  # it ended
            return float("nan")

    def _beat(self) -> None:
        self.beats.append(time.perf_counter())
        on_cpu, queued = self._cpu()
        self.on_cpu.append(on_cpu)
        self.queued.append(queued)
        self.process.append(time.process_time())
        self.other.append(self._other())

    def start(self) -> None:
        for points in (self.beats, self.on_cpu, self.queued, self.process, self.other):
            points.clear()
        self._beat()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._beat()

    @property
    def count(self) -> int:
        return max(0, len(self.beats) - 2)

    def longest(self, start: float, end: float) -> float:
        """The longest silence (ms) in [start, end]."""
        return longest_silence(self.beats, start, end)

    def longest_slice(self) -> tuple[float, float]:
        """Since `start()`: the longest silence (ms), and the GUI thread's CPU in it (ms)."""
        gap = self.longest_gap()
        if gap is None:
            return float("nan"), float("nan")
        return gap.ms, gap.cpu

    def longest_gap(self) -> Silence | None:
        """Since `start()`: the longest silence, and what every clock did in it."""
        return longest_gap(self.beats, self.on_cpu, self.queued, self.process, self.other)


def longest_gap(
    beats: Sequence[float],
    on_cpu: Sequence[float],
    queued: Sequence[float],
    process: Sequence[float],
    other: Sequence[float],
) -> Silence | None:
    """The longest stretch between two beats, with each clock's advance over it (ms):
    every sequence holds one reading a beat (seconds)."""
    if len(beats) < 2:
        return None
    i = max(range(len(beats) - 1), key=lambda i: beats[i + 1] - beats[i])
    return Silence(
        start=beats[i],
        end=beats[i + 1],
        cpu=(on_cpu[i + 1] - on_cpu[i]) * 1e3,
        queued=(queued[i + 1] - queued[i]) * 1e3,
        process=(process[i + 1] - process[i]) * 1e3,
        other=(other[i + 1] - other[i]) * 1e3,
    )


def process_cpu_clock(pid: int) -> int:
    """The clock id of another process's CPU time, every thread (Linux's
    MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)): `time.clock_gettime` reads it."""
    return ((~pid) << 3) | 2


@dataclass(frozen=True)
class Silence:
    """One silence of the heartbeat (perf_counter seconds) and, in it (ms): the GUI
    thread's CPU, its wait for a CPU, the process's CPU (every thread, the GUI's
    included), and the other process's (the fake server's)."""

    start: float
    end: float
    cpu: float
    queued: float
    process: float
    other: float

    @property
    def ms(self) -> float:
        return (self.end - self.start) * 1e3

    @property
    def blocked(self) -> float:
        """Neither running nor runnable: asleep (the GIL, a lock, the loop's wait)."""
        return max(0.0, self.ms - self.cpu - self.queued)

    @property
    def rest_of_app(self) -> float:
        """The app's other threads' CPU (the reply worker, the SDK's, SQLite's)."""
        return max(0.0, self.process - self.cpu)

    def as_dict(self) -> dict[str, float]:
        return {
            "ms": self.ms,
            "cpu": self.cpu,
            "queued": self.queued,
            "blocked": self.blocked,
            "app": self.rest_of_app,
            "fake": self.other,
        }


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        sys.exit("usage: real_window.py --serve SETTINGS.json (the benches start it)")
