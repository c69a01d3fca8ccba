"""Cold start: from launching `python -m app` to the window's first paint.

Run: .venv/bin/python bench/bench_startup.py [--runs N] [--db-size-mb N]

Each run is a fresh process under the offscreen platform, started as `cairn` starts
(app.__main__.main imports the window; the child's hooks are put in right after that
import, so the window's modules load as they do for a user). The child prints the
wall-clock time of the main window's first paint; the parent subtracts the time
it started the child. Beside each figure, in the same run (its runs alternated
with the app's), the first paint of a bare Qt window: a fresh interpreter that
imports QtWidgets, shows an empty QMainWindow and notes its first paint — the
floor no Qt app can go under on this machine. Under each first paint, the CPU
the app's process used to reach it (all its threads): the wall clock of a
shared machine swings with its load, that figure much less. Prints figures and
the load average; not a pass/fail test.

With --callgrind: the instructions from launch to the first paint under `valgrind
--tool=callgrind` (the child ends at the paint), empty folder and 200 messages, per tree
(--before too), and a bare Qt window's to its quit: a figure the machine's load does not
move. Slow (a run is ~1 min of CPU); --runs 1 is enough, the count varies by < 0.1 %.
With --db-size-mb N too: the empty folder's count beside the N MB database's, after a
clean shutdown and after a crash (whether anything before the paint grows with it).

With --upgrade-messages N (and --before TREE, an older source tree from `git archive`):
the first start after an upgrade from schema 4 (no search index, no checksums) with N
messages, each run on a fresh copy; prints first paint and when the walks over every
message were done, for both trees, their runs alternated.

Without --db-size-mb, two kinds of runs: an empty CAIRN_HOME (the first start,
nothing to read), and a fresh CAIRN_HOME with one conversation of 200 messages,
so the window has something to show.

With --db-size-mb N, the runs share a database of about N MB of realistic
conversations (built once and cached in /tmp/cairn-bench/), and are measured
after a clean shutdown (the integrity check is left for after the first paint),
after a crash (the child is killed, so `open_database` checks the file before the
window appears) with the file in the page cache, and after a crash with the file
evicted from it first (posix_fadvise DONTNEED, as after a reboot). It also times
`open_database` alone in this process, both ways, and `check_database`, the check
the app runs after its first paint.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(tempfile.gettempdir()) / "cairn-bench"
MODEL = "claude-sonnet-4-6"
NEWEST_MESSAGES = 200  # the conversation the window opens

# Runs the real entry point, with a hook that reports the first paint and quits.
# CAIRN_BENCH_CRASH=1: dies at once after the conversation is shown, leaving the
# database as a crash would (no clean close).
CHILD = r"""
import importlib.machinery, os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

crash = os.environ.get("CAIRN_BENCH_CRASH") == "1"
# CAIRN_BENCH_EXIT_AT_PAINT=1: the process ends at the first paint (run under callgrind,
# whose count then stops there).
exit_at_paint = os.environ.get("CAIRN_BENCH_EXIT_AT_PAINT") == "1"
state = {"filled": False, "upgrading": False}

def hooked(cairn_app):
    # Called once `cairn` (app.__main__.main) has imported the window as it does (the
    # collector off, dataclasses' methods from their cache where the tree has one).
    original_fill = cairn_app.CairnSession._after_first_paint
    def fill(self):
        original_fill(self)
        state["filled"] = True
        state["upgrading"] = getattr(self, "upgrading", False)
        self.window.update()
    cairn_app.CairnSession._after_first_paint = fill

    # The paint is watched on the window alone: a filter on the whole application sees
    # every event of every object, and each object's type reaching Python for the first
    # time builds its Qt enums (~120 classes, ~35 ms of CPU a start) — a cost of the
    # bench, which no Cairn pays.
    original_show = cairn_app.CairnSession.show
    def show(self):
        self.window.installEventFilter(hook)
        original_show(self)
    cairn_app.CairnSession.show = show

    # An upgrade's walks after the first paint (app.ui.upgrade, where this Cairn has it):
    # reported when done, and the app quits then instead of at the conversation's paint.
    upgrade_module = sys.modules.get("app.ui.upgrade")
    if upgrade_module is not None:
        original_done = upgrade_module.Upgrade._done
        def done(self, complete):
            original_done(self, complete)
            print(f"BACKFILLED {time.time():.6f}", flush=True)
            QTimer.singleShot(0, QApplication.instance().quit)
        upgrade_module.Upgrade._done = done

    # A Cairn that cannot start shows why in a modal box and waits for a click: offscreen
    # nobody clicks, and the run would wait for ever (an older --before tree meeting a
    # database this tree built, "too new" for it). Said on stdout, and the child ends.
    problem_box = getattr(cairn_app, "startup_problem_box", None)
    if problem_box is not None:
        def report_problem(error):
            print(f"PROBLEM {error.title}: {error.message}", flush=True)
            os._exit(4)
        cairn_app.startup_problem_box = report_problem

    original_open = cairn_app.open_database
    def timed_open(*args, **kwargs):
        started = time.perf_counter()
        result = original_open(*args, **kwargs)
        checked = int(getattr(result, "checked", True))
        print(f"OPEN {time.perf_counter() - started:.6f} {checked}", flush=True)
        return result
    cairn_app.open_database = timed_open

class HookTheWindow:
    # Patches app.ui.app right after `cairn` imports it, not before: importing it here
    # first would load the window's modules otherwise than `cairn` does.
    def find_spec(self, name, path, target=None):
        if name != "app.ui.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        execute = spec.loader.exec_module
        def exec_module(module):
            execute(module)
            hooked(module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, HookTheWindow())

class FirstPaint(QObject):
    # Reports the first paint, then the first paint with the conversation in it.
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            if "painted" not in state:
                state["painted"] = True
                print(f"PAINT {time.time():.6f}", flush=True)
                # CPU the process used to get there (all its threads): less swayed by
                # the machine's load than the wall clock.
                print(f"CPU {time.process_time():.6f}", flush=True)
                if exit_at_paint:
                    os._exit(0)
            elif state["filled"]:
                print(f"FILLED {time.time():.6f}", flush=True)
                if crash:
                    os._exit(3)
                if not state["upgrading"]:
                    QTimer.singleShot(0, QApplication.instance().quit)
                watched.removeEventFilter(self)
        return False

hook = FirstPaint()
sys.argv = ["cairn"]
from app.__main__ import main
sys.exit(main())
"""


# A bare Qt window: the same interpreter and platform, nothing of Cairn's.
BARE_CHILD = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(sys.argv)
window = QMainWindow()
window.resize(1000, 700)

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and watched is window:
            print(f"PAINT {time.time():.6f}", flush=True)
            window.removeEventFilter(self)
            QTimer.singleShot(0, app.quit)
        return False

hook = FirstPaint()
window.installEventFilter(hook)
window.show()
sys.exit(app.exec())
"""


def bare_paint() -> float:
    """Milliseconds from launching a bare Qt window's process to its first paint."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.time()
    result = subprocess.run(
        [sys.executable, "-c", BARE_CHILD],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for line in result.stdout.splitlines():
        if line.startswith("PAINT "):
            return (float(line.split()[1]) - started) * 1000
    raise RuntimeError(f"the bare window reported no paint:\n{result.stdout}\n{result.stderr}")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def evict(database: Path) -> None:
    """Drop the database (and its WAL) from the page cache, as after a reboot."""
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            with open(path, "rb") as file:
                os.fsync(file.fileno())
                os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


class Run:
    """What one child reported, in milliseconds from its launch."""

    def __init__(
        self,
        painted: float,
        filled: float,
        opened: float,
        checked: bool,
        *,
        cpu: float,
        backfilled: float | None = None,
    ) -> None:
        self.painted = painted
        self.cpu = cpu  # process CPU to the first paint
        self.filled = filled
        self.opened = opened
        self.checked = checked
        self.backfilled = backfilled  # an upgrade's walks done (after the first paint)


def prepare_home(home: Path) -> None:
    from app.core.models import Role
    from app.store import SessionStore, open_database

    store = SessionStore(open_database(home / "data" / "cairn.db").connection)
    session = store.create_session("A long conversation", MODEL)
    for index in range(NEWEST_MESSAGES):
        role = Role.USER if index % 2 == 0 else Role.ASSISTANT
        store.append_message(session.id, role, f"Message {index}: " + "some words " * 40)
    store.close()


def launch(home: Path, *, crash: bool = False, tree: Path = REPO) -> Run:
    env = dict(os.environ, CAIRN_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    # As on a user's machine, the app's bytecode is cached after its first start; a
    # sandbox that forbids writing it would make every start compile ~60 modules.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["ANTHROPIC_API_KEY"] = "sk-ant-bench"  # skip the first-run dialog
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: no network
    env["CAIRN_BENCH_CRASH"] = "1" if crash else "0"
    started = time.time()
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    marks = {
        words[0]: words[1:]
        for words in (line.split() for line in result.stdout.splitlines())
        if words and words[0] in ("PAINT", "FILLED", "OPEN", "CPU", "BACKFILLED")
    }
    problem = next(
        (line for line in result.stdout.splitlines() if line.startswith("PROBLEM ")), None
    )
    if problem is not None:
        raise SystemExit(f"the Cairn in {tree} could not start: {problem.removeprefix('PROBLEM ')}")
    if "PAINT" not in marks or "FILLED" not in marks:
        raise RuntimeError(f"no paint reported:\n{result.stdout}\n{result.stderr}")
    opened, checked = marks.get("OPEN", ["nan", "1"])
    return Run(
        (float(marks["PAINT"][0]) - started) * 1000,
        (float(marks["FILLED"][0]) - started) * 1000,
        float(opened) * 1000,
        checked == "1",
        cpu=float(marks["CPU"][0]) * 1000,
        backfilled=(float(marks["BACKFILLED"][0]) - started) * 1000
        if "BACKFILLED" in marks
        else None,
    )


def one_run(*, empty: bool = False, tree: Path = REPO) -> Run:
    with tempfile.TemporaryDirectory() as home:
        if not empty:
            prepare_home(Path(home))
        return launch(Path(home), tree=tree)


def describe(label: str, values: list[float]) -> str:
    return (
        f"{label}: median {statistics.median(values):7.1f} ms   "
        f"min {min(values):7.1f} ms   max {max(values):7.1f} ms"
    )


def trees_of(before: Sequence[Path]) -> list[tuple[str, Path]]:
    """Older trees (`--before`, in the order given), then this one, their runs alternated."""
    return [(f"before ({tree})", tree) for tree in before] + [("after (this tree)", REPO)]


def small_home(runs: int, before: Sequence[Path] = ()) -> None:
    trees = trees_of(before)
    for _label, tree in trees:
        one_run(tree=tree)  # warm the page cache, as a second launch of a desktop app would be
    bare_paint()
    print(f"cold start to first paint, {runs} runs each (offscreen); load {load_average()}")
    for empty in (True, False):
        results: dict[str, list[Run]] = {label: [] for label, _tree in trees}
        bare: list[float] = []
        for _ in range(runs):
            for label, tree in trees:  # alternated, so both see the same load
                results[label].append(one_run(empty=empty, tree=tree))
            bare.append(bare_paint())
        kind = "empty folder" if empty else f"{NEWEST_MESSAGES} messages"
        print(f"  {kind}")
        for label, _tree in trees:
            runs_of = results[label]
            print(f"    {label}")
            print("      " + describe("first paint", [run.painted for run in runs_of]))
            print("      " + describe("its CPU    ", [run.cpu for run in runs_of]))
            if not empty:
                print(
                    f"      conversation (newest 50 of {NEWEST_MESSAGES} messages) on screen: "
                    f"median {statistics.median(run.filled for run in runs_of):.1f} ms"
                )
        print("    " + describe("bare Qt    ", bare) + f"   (load {load_average()})")


# --- instructions to the first paint (callgrind) -------------------------------------------


def _instructions(command: list[str], env: dict[str, str], cwd: Path) -> int:
    """Instructions callgrind counted for `command` (all its threads), start to exit."""
    with tempfile.TemporaryDirectory(prefix="cairn-bench-callgrind-") as folder:
        out = Path(folder) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=True,
        )
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no total")


def callgrind(runs: int, before: Sequence[Path] = ()) -> None:
    """Instructions from launch to the first paint, empty folder and 200 messages: a
    figure the machine's load does not move (`valgrind --tool=callgrind`)."""
    trees = trees_of(before)
    bare_env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    bare_env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _label, tree in trees:
        one_run(tree=tree)  # compile the bytecode, as a second start finds it
    print(f"instructions to the first paint (callgrind, offscreen), {runs} runs each")
    for empty in (True, False):
        counts: dict[str, list[int]] = {label: [] for label, _tree in trees}
        for _ in range(runs):
            for label, tree in trees:
                with tempfile.TemporaryDirectory() as home:
                    if not empty:
                        prepare_home(Path(home))
                    env = dict(
                        os.environ,
                        CAIRN_HOME=home,
                        QT_QPA_PLATFORM="offscreen",
                        ANTHROPIC_API_KEY="sk-ant-bench",
                        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
                        CAIRN_BENCH_EXIT_AT_PAINT="1",
                    )
                    env.pop("PYTHONDONTWRITEBYTECODE", None)
                    counts[label].append(_instructions([sys.executable, "-c", CHILD], env, tree))
        print(f"  {'empty folder' if empty else f'{NEWEST_MESSAGES} messages'}")
        for label, _tree in trees:
            values = counts[label]
            print(
                f"    {label}: median {statistics.median(values) / 1e6:8.1f} M   "
                f"min {min(values) / 1e6:8.1f} M   max {max(values) / 1e6:8.1f} M"
            )
    bare = _instructions([sys.executable, "-c", BARE_CHILD], bare_env, REPO)
    print(f"  bare Qt window (to its quit): {bare / 1e6:.1f} M")


def callgrind_large(size_mb: int, runs: int, before: Sequence[Path] = ()) -> None:
    """Instructions from launch to the first paint with the `size_mb` database, after a
    clean shutdown and after a crash, beside an empty folder's in the same run: whether
    anything before the paint grows with the database, free of the machine's load."""
    from app.store.database import mark_clean_shutdown

    template = build_database(size_mb)
    trees = trees_of(before)
    kinds = ("empty folder", f"{size_mb} MB, clean", f"{size_mb} MB, after a crash")
    counts: dict[tuple[str, str], list[int]] = {
        (kind, label): [] for kind in kinds for label, _tree in trees
    }
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "large"
        database = home / "data" / "cairn.db"
        database.parent.mkdir(parents=True)
        shutil.copyfile(template, database)
        for _label, tree in trees:
            one_run(tree=tree)  # compile the bytecode, as a second start finds it
            launch(home, tree=tree)
        print(
            f"instructions to the first paint (callgrind, offscreen), {runs} runs each; "
            f"database of {database.stat().st_size / 1e6:.0f} MB"
        )
        for _ in range(runs):
            for label, tree in trees:
                for kind in kinds:
                    with tempfile.TemporaryDirectory() as empty:
                        target = Path(empty) if kind == kinds[0] else home
                        if kind == kinds[1]:
                            mark_clean_shutdown(database)
                        elif kind == kinds[2]:
                            launch(home, crash=True, tree=tree)  # left as a crash leaves it
                        env = dict(
                            os.environ,
                            CAIRN_HOME=str(target),
                            QT_QPA_PLATFORM="offscreen",
                            ANTHROPIC_API_KEY="sk-ant-bench",
                            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
                            CAIRN_BENCH_EXIT_AT_PAINT="1",
                        )
                        env.pop("PYTHONDONTWRITEBYTECODE", None)
                        counts[kind, label].append(
                            _instructions([sys.executable, "-c", CHILD], env, tree)
                        )
    for kind in kinds:
        print(f"  {kind}")
        for label, _tree in trees:
            values = counts[kind, label]
            print(
                f"    {label}: median {statistics.median(values) / 1e6:8.1f} M   "
                f"min {min(values) / 1e6:8.1f} M   max {max(values) / 1e6:8.1f} M"
            )


# --- a large database --------------------------------------------------------------------

_VOCABULARY = (
    "the a to and of in that is for it you with on this be are as can we have not "
    "your will if or but what so do about at from more one all there which would "
    "should could function file table query server client request response token "
    "context summary model window message archive index error value number date "
    "budget plan trip meeting report draft invoice contract schedule recipe garden "
    "python sqlite release version test build deploy branch commit review issue "
    "Lisbon Porto March April Monday Tuesday 2024 2025 42 17.5 kg km EUR USD"
)
_WORDS = _VOCABULARY.split(" ")


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(6, 22))
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def _message_text(rng: random.Random, pool: list[str], assistant: bool) -> str:
    """A user question (short) or a reply (longer, sometimes with a code block)."""
    sentences = rng.randint(8, 40) if assistant else rng.randint(1, 6)
    text = " ".join(rng.choices(pool, k=sentences))
    if assistant and rng.random() < 0.2:
        text += "\n\n```python\n" + "\n".join(rng.choices(pool, k=6)) + "\n```"
    return text


def build_database(size_mb: int) -> Path:
    """A database of about `size_mb` MB of conversations, built once and cached."""
    from app.store import SCHEMA_VERSION
    from app.store.database import open_database

    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"cairn-{size_mb}mb-schema{SCHEMA_VERSION}.db"
    done = target.with_name(target.name + ".done")
    if target.is_file() and done.is_file():
        return target
    for stale in CACHE.glob(target.name + "*"):
        stale.unlink()
    print(f"building a {size_mb} MB database in {target} (once)…", flush=True)
    started = time.perf_counter()
    rng = random.Random(20250305)
    pool = [_sentence(rng) for _ in range(5000)]
    result = open_database(target)
    connection = result.connection
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    moment = datetime.now(UTC) - timedelta(days=730)
    sessions = messages = 0

    def size() -> int:
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        return int(pages) * int(page_size)

    while True:
        connection.execute("BEGIN")
        for _ in range(50):
            last = size() >= size_mb * 1_000_000
            count = NEWEST_MESSAGES if last else int(rng.lognormvariate(4.5, 0.8)) + 2
            session_id = f"bench-{sessions:06d}"
            rows = []
            for seq in range(1, count + 1):
                assistant = seq % 2 == 0
                moment += timedelta(seconds=rng.randint(5, 600))
                content = _message_text(rng, pool, assistant)
                usage = (
                    f'{{"input_tokens": {rng.randint(500, 90000)}, '
                    f'"output_tokens": {len(content) // 4}}}'
                    if assistant
                    else None
                )
                rows.append(
                    (
                        session_id,
                        seq,
                        "assistant" if assistant else "user",
                        content,
                        _stamp(moment),
                        len(content) // 4 + 1,
                        usage,
                        MODEL if assistant else None,
                    )
                )
            connection.execute(
                "INSERT INTO session (id, title, created_at, updated_at, model, version, "
                "last_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    " ".join(rng.choices(_WORDS, k=rng.randint(2, 6))).capitalize(),
                    rows[0][4],
                    rows[-1][4],
                    MODEL,
                    count,
                    count,
                ),
            )
            connection.executemany(
                "INSERT INTO message (session_id, seq, role, content, created_at, "
                "token_estimate, usage, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            sessions += 1
            messages += count
            if last:
                break
        connection.execute("COMMIT")
        if last:
            break
    connection.close()
    done.write_text(f"{sessions} conversations, {messages} messages\n")
    print(
        f"  {sessions} conversations, {messages} messages, "
        f"{target.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return target


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def _timed_open(database: Path) -> tuple[float, bool]:
    """Milliseconds `open_database` took, and whether it checked; closes without marking."""
    from app.store.database import open_database

    started = time.perf_counter()
    result = open_database(database)
    milliseconds = (time.perf_counter() - started) * 1000
    result.connection.close()
    return milliseconds, result.checked


def _in_use(database: Path) -> bool:
    """Whether the state file says Cairn did not close normally."""
    import json

    state = database.with_name(database.name + ".state.json")
    try:
        return bool(json.loads(state.read_text())["in_use"])
    except (OSError, ValueError, KeyError):
        return True


def large_database(size_mb: int, runs: int, before: Sequence[Path] = ()) -> None:
    from app.store.database import check_database, mark_clean_shutdown, open_database

    template = build_database(size_mb)
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        database = home / "data" / "cairn.db"
        database.parent.mkdir(parents=True)
        shutil.copyfile(template, database)
        megabytes = database.stat().st_size / 1e6

        # open_database alone, in this process (page cache warm).
        first = open_database(database)  # no record yet: checks once
        first.connection.close()
        mark_clean_shutdown(database)
        clean_open, unclean_open = [], []
        for _ in range(runs):
            milliseconds, checked = _timed_open(database)
            assert not checked, "open_database checked after a clean shutdown"
            clean_open.append(milliseconds)
            # Not marked clean: the next open follows an "unclean shutdown".
            milliseconds, checked = _timed_open(database)
            assert checked, "open_database did not check after an unclean shutdown"
            unclean_open.append(milliseconds)
            mark_clean_shutdown(database)
        checks = [_timed(lambda: check_database(database)) for _ in range(runs)]

        # The whole app, each kind of run alternated with a bare Qt window's (and with
        # the --before tree's, when given).
        trees = trees_of(before)
        for _label, tree in trees:
            launch(home, tree=tree)  # warm up: imports and page cache
        bare_paint()
        marked_by_bench = 0
        kinds = ("clean", "crash", "cold")
        results: dict[tuple[str, str], list[Run]] = {
            (kind, label): [] for kind in kinds for label, _tree in trees
        }
        bare: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(runs):
            for label, tree in trees:
                if _in_use(database):
                    # The app did not record its clean close (not wired yet): do it for
                    # it, after it quit normally, as the wiring will.
                    mark_clean_shutdown(database)
                    marked_by_bench += 1
                results["clean", label].append(launch(home, tree=tree))
            bare["clean"].append(bare_paint())
        launch(home, crash=True)
        for _ in range(runs):
            for label, tree in trees:
                results["crash", label].append(launch(home, crash=True, tree=tree))
            bare["crash"].append(bare_paint())
        for _ in range(runs):
            for label, tree in trees:
                evict(database)
                results["cold", label].append(launch(home, crash=True, tree=tree))
            bare["cold"].append(bare_paint())

    print(
        f"database of {megabytes:.0f} MB ({template}), {runs} runs each, offscreen; "
        f"load {load_average()}"
    )
    print("open_database alone, in-process:")
    print("  " + describe("after a clean shutdown  ", clean_open))
    print("  " + describe("after an unclean one    ", unclean_open))
    print("  " + describe("check_database (worker) ", checks))
    print("whole app, launch to first paint:")
    for title, kind in (
        ("after a clean shutdown", "clean"),
        ("after a crash", "crash"),
        ("after a crash, evicted", "cold"),
    ):
        print(f"  {title}")
        for label, _tree in trees:
            runs_of = results[kind, label]
            checked_at_open = sum(run.checked for run in runs_of)
            print(f"    {label}")
            print("      " + describe("first paint  ", [run.painted for run in runs_of]))
            print("      " + describe("its CPU      ", [run.cpu for run in runs_of]))
            print("      " + describe("conversation ", [run.filled for run in runs_of]))
            print(
                "      "
                + describe("open_database", [run.opened for run in runs_of])
                + f"   (checked at open in {checked_at_open} of {len(runs_of)})"
            )
        print("    " + describe("bare Qt      ", bare[kind]))
    print(f"  load average at end: {load_average()}")
    if marked_by_bench:
        print(
            f"  note: the app did not mark its clean close in {marked_by_bench} runs; "
            "the bench called mark_clean_shutdown after it quit"
        )


# --- an upgrade ---------------------------------------------------------------------------

# The schema the upgrade starts from: before the full-text index (migration 5) and the
# checksums (13), so both walks over every message are left to do.
OLD_SCHEMA = 4


def build_old_database(messages: int, schema: int = OLD_SCHEMA) -> Path:
    """A database of about `messages` messages as Cairn at `schema` left it (built once)."""
    import sqlite3

    from app.store.migrations import MIGRATIONS, migrate

    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"cairn-{messages}msgs-schema{schema}.db"
    done = target.with_name(target.name + ".done")
    if target.is_file() and done.is_file():
        return target
    for stale in CACHE.glob(target.name + "*"):
        stale.unlink()
    print(f"building a schema-{schema} database of {messages} messages (once)…", flush=True)
    rng = random.Random(20250305)
    pool = [_sentence(rng) for _ in range(5000)]
    connection = sqlite3.connect(target, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    assert migrate(connection, MIGRATIONS[:schema]) == schema
    moment = datetime.now(UTC) - timedelta(days=730)
    written = sessions = 0
    while written < messages:
        connection.execute("BEGIN")
        for _ in range(50):
            left = messages - written
            count = min(left, int(rng.lognormvariate(4.5, 0.8)) + 2)
            if left - count < NEWEST_MESSAGES:
                count = left  # the newest conversation is the one the window opens
            session_id = f"bench-{sessions:06d}"
            rows = []
            for seq in range(1, count + 1):
                assistant = seq % 2 == 0
                moment += timedelta(seconds=rng.randint(5, 600))
                content = _message_text(rng, pool, assistant)
                rows.append(
                    (
                        session_id,
                        seq,
                        "assistant" if assistant else "user",
                        content,
                        _stamp(moment),
                        len(content) // 4 + 1,
                        MODEL if assistant else None,
                    )
                )
            connection.execute(
                "INSERT INTO session (id, title, created_at, updated_at, model, version, "
                "last_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    f"Conversation {sessions}",
                    rows[0][4],
                    rows[-1][4],
                    MODEL,
                    count,
                    count,
                ),
            )
            connection.executemany(
                "INSERT INTO message (session_id, seq, role, content, created_at, "
                "token_estimate, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            sessions += 1
            written += count
            if written >= messages:
                break
        connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    done.write_text(f"{sessions} conversations, {written} messages\n")
    print(f"  {sessions} conversations, {written} messages, {target.stat().st_size / 1e6:.0f} MB")
    return target


def upgrade(
    messages: int,
    runs: int,
    before: Path | None,
    schema: int = OLD_SCHEMA,
    *,
    closed_cleanly: bool = False,
) -> None:
    """The first start after an upgrade from schema 4: first paint, and when the walks
    over every message are done (inside `open_database` before the first paint in a
    Cairn without back-fills; after it in one with them)."""
    template = build_old_database(messages, schema)
    trees = [("after (this tree)", REPO)]
    if before is not None:
        trees.insert(0, (f"before ({before})", before))
    results: dict[str, list[Run]] = {label: [] for label, _tree in trees}
    bare: list[float] = []
    for _ in range(runs):
        for label, tree in trees:  # alternated, so both see the same load
            with tempfile.TemporaryDirectory() as folder:
                home = Path(folder)
                (home / "data").mkdir()
                shutil.copyfile(template, home / "data" / "cairn.db")
                if closed_cleanly:
                    # As the older Cairn left it after a normal close, checked lately:
                    # open_database has no reason to check the file before migrating.
                    from app.core.dates import utc_now
                    from app.store.database import _identity, _State, _update_state

                    copy = home / "data" / "cairn.db"
                    clean = _State(closed_as=_identity(copy), last_check=utc_now())
                    _update_state(copy, lambda _, clean=clean: clean)
                results[label].append(launch(home, tree=tree))
            bare.append(bare_paint())
            print(f"  ({label}: one run done; load {load_average()})", flush=True)
    record = "a clean close recorded" if closed_cleanly else "no record of the last close"
    print(
        f"upgrade from schema {schema} with {messages} messages ({record}), {runs} runs "
        f"each, offscreen; load {load_average()}"
    )
    for label, _tree in trees:
        runs_of = results[label]
        print(f"  {label}")
        print("    " + describe("first paint        ", [run.painted for run in runs_of]))
        print("    " + describe("open_database      ", [run.opened for run in runs_of]))
        print("    " + describe("conversation shown ", [run.filled for run in runs_of]))
        walked = [run.backfilled for run in runs_of if run.backfilled is not None]
        if walked:
            print("    " + describe("walks done (launch)", walked))
            print(
                "    "
                + describe(
                    "walks after paint  ",
                    [r.backfilled - r.painted for r in runs_of if r.backfilled is not None],
                )
            )
        else:
            print("    walks done: inside open_database, before the first paint")
    print("  " + describe("bare Qt first paint ", bare))
    print(f"  load average at end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--db-size-mb",
        type=int,
        default=0,
        help="start with a database of about this size (built once, cached in /tmp)",
    )
    parser.add_argument(
        "--upgrade-messages",
        type=int,
        default=0,
        help="start after an upgrade from schema 4 with this many messages (built once)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="an older source tree (git archive) to run beside this one, runs alternated; "
        "repeat it for several (not with --upgrade-messages)",
    )
    parser.add_argument(
        "--closed-cleanly",
        action="store_true",
        help="with --upgrade-messages: the copy carries a record of a clean close and a "
        "recent check, as an older Cairn leaves it (without: no record, so it is checked)",
    )
    parser.add_argument(
        "--from-schema",
        type=int,
        default=OLD_SCHEMA,
        help="with --upgrade-messages: the schema the upgrade starts from (4: before the "
        "index and checksums; 12: before the checksums)",
    )
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="count the instructions to the first paint under valgrind (empty folder and "
        f"{NEWEST_MESSAGES} messages; with --db-size-mb: empty folder, that database clean "
        "and after a crash) instead of timing",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    if args.callgrind and args.db_size_mb > 0:
        callgrind_large(args.db_size_mb, args.runs, args.before)
    elif args.callgrind:
        callgrind(args.runs, args.before)
    elif args.upgrade_messages > 0:
        if len(args.before) > 1:
            parser.error("--upgrade-messages takes one --before tree")
        upgrade(
            args.upgrade_messages,
            args.runs,
            args.before[0] if args.before else None,
            args.from_schema,
            closed_cleanly=args.closed_cleanly,
        )
    elif args.db_size_mb > 0:
        large_database(args.db_size_mb, args.runs, args.before)
    else:
        small_home(args.runs, args.before)


if __name__ == "__main__":
    main()
