"""Idle memory of the real window: an empty folder, and a 100,000-message conversation open.

Run: .venv/bin/python bench/bench_memory.py [--runs 3] [--scenarios empty,100k-live,155k:100k]
     [--tracemalloc]

Issue 20's targets: idle RSS ≤ 150 MiB; with a 100k-message conversation open ≤ 170 MiB.

Each run is a fresh process running `app.ui.app.run(["cairn"])` as the `cairn` command
does (offscreen; bench/real_window.py), the key in an in-memory keyring, the fake
Anthropic server in a process of its own. Once start-up's work is done (6 s after the
first paint: the model list, the tokenizer's warm-up, the background integrity check at
2 s, the start-up freeze at 5 s) and 3 s more of idle event loop, the child reads
/proc/self/status — nothing is collected or trimmed first: what a task manager shows.
Scenarios:
- empty: an empty CAIRN_HOME, as on the first start (a key already stored);
- 100k-live: bench_open.py's database (cached in /tmp/cairn-bench/): Cairn opens the
  newest conversation (20 messages); the bench then picks the one of 100,000 live
  messages in the sidebar (`sidebar.select_session`, as a click does) and lets it settle
  for 6 s more; figures before and after that;
- 155k:100k: bench_turn.py's database of 1,172 live messages after 100,000 archived
  under one summary, opened at start.
Per run: VmRSS, RssAnon (the heap: Python's and Qt's), RssFile (mapped libraries and
files), VmHWM (the peak), and what might hold memory: objects the garbage collector
tracks (and those start-up froze), modules loaded, widgets alive. `--tracemalloc` starts
Python's allocation tracing at interpreter start (PYTHONTRACEMALLOC=1; RSS then grows by
the tracing itself) and prints the 15 files whose allocations hold the most at idle.
Medians of the runs. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_window import (
    REPO,
    FakeServer,
    child_environment,
    load_average,
    machine,
    median,
    prepare_home,
    proc_status,
    run_cairn,
    settled,
    wait,
)

SCENARIOS = ("empty", "100k-live", "155k:100k")
BIG_CONVERSATION = "bench-big"
IDLE_SECONDS = 3.0
STATUS_FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM")


def snapshot() -> dict[str, Any]:
    """Memory and what may hold it, now, in this (the app's) process."""
    import gc

    from PySide6.QtWidgets import QApplication

    figures: dict[str, Any] = dict(proc_status(*STATUS_FIELDS))
    figures["tracked"] = len(gc.get_objects())
    figures["frozen"] = gc.get_freeze_count()
    figures["modules"] = len(sys.modules)
    figures["widgets"] = len(QApplication.allWidgets())
    figures["blocks"] = sys.getallocatedblocks()
    return figures


def top_allocations(count: int = 15) -> list[str]:
    import tracemalloc

    if not tracemalloc.is_tracing():
        return []
    stats = tracemalloc.take_snapshot().statistics("filename")
    total = sum(stat.size for stat in stats)
    lines = [f"traced: {total / 2**20:.1f} MiB in {len(stats)} files"]
    for stat in stats[:count]:
        name = str(stat.traceback[0].filename)
        for marker in ("/site-packages/", str(REPO) + "/", "/lib/python3"):
            if marker in name:
                name = name.split(marker, 1)[1]
                break
        lines.append(f"{stat.size / 2**20:7.2f} MiB {stat.count:8,} blocks  {name}")
    return lines


def app_child(scenario: str) -> None:
    def script(controller: Any, window: Any, started: Callable[[], bool]) -> Iterator[Any]:
        yield started
        yield settled(controller, time.perf_counter())
        yield wait(IDLE_SECONDS)
        result = {"idle": snapshot()}
        if scenario == "100k-live":
            window.sidebar.select_session(BIG_CONVERSATION)
            yield (
                lambda: (
                    controller.service.current.state.session is not None
                    and controller.service.current.state.session.id == BIG_CONVERSATION
                    and controller.service.current.state.loaded
                )
            )
            yield settled(controller, time.perf_counter())
            yield wait(IDLE_SECONDS)
            result["open"] = snapshot()
            result["live"] = len(controller.service.current.state.tail)
        result["allocations"] = top_allocations()
        print("MEM " + json.dumps(result), flush=True)

    run_cairn(script)


def template_for(scenario: str) -> Path | None:
    if scenario == "empty":
        return None
    if scenario == "100k-live":
        from bench_open import build_database

        return build_database(100_000, 1_000)
    from bench_turn import cached_database, make_pool, parse_cells

    from app.core.tokens import default_counter

    counter = default_counter()
    counter.load()
    return cached_database(parse_cells(scenario)[0], make_pool(counter), counter)[0]


def one_run(scenario: str, template: Path | None, trace: bool) -> dict[str, Any]:
    from app.core.catalog import FALLBACK_MODELS

    models: list[Any] = list(FALLBACK_MODELS)
    if scenario not in ("empty", "100k-live"):
        from bench_turn import MODEL

        models = [MODEL, *FALLBACK_MODELS]
    with tempfile.TemporaryDirectory(prefix="cairn-bench-memory-") as folder:
        work = Path(folder)
        home = work / "home"
        prepare_home(home, template, None if template is None else models)
        with FakeServer(work, models) as server:
            env = child_environment(home, server.base_url)
            if trace:
                env["PYTHONTRACEMALLOC"] = "1"
            completed = subprocess.run(
                [sys.executable, __file__, "--child", scenario],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
    for line in completed.stdout.splitlines():
        if line.startswith("MEM "):
            result: dict[str, Any] = json.loads(line.removeprefix("MEM "))
            return result
    raise RuntimeError(f"the child reported nothing:\n{completed.stdout}\n{completed.stderr}")


COLUMNS = (
    ("VmRSS", "RSS MiB", "{:8.1f}"),
    ("RssAnon", "anon", "{:6.1f}"),
    ("RssFile", "file", "{:6.1f}"),
    ("RssShmem", "shmem", "{:5.1f}"),
    ("VmHWM", "peak", "{:6.1f}"),
    ("tracked", "gc objs", "{:8,.0f}"),
    ("frozen", "frozen", "{:8,.0f}"),
    ("modules", "modules", "{:7,.0f}"),
    ("widgets", "widgets", "{:7,.0f}"),
)


def row(label: str, figures: dict[str, float]) -> str:
    return f"  {label:<22}" + "  ".join(form.format(figures[key]) for key, _n, form in COLUMNS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--tracemalloc", action="store_true", help="where Python's memory is")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        app_child(args.child)
        return
    sys.path.insert(0, str(REPO))
    scenarios = args.scenarios.split(",")
    print(f"machine: {machine()}")
    print(f"load average at start: {load_average()}; {args.runs} runs a scenario, idle figures")
    print(
        " " * 24
        + "  ".join(
            f"{name:>{int(form.split(':')[1].split('.')[0].strip(',f'))}}"
            for _k, name, form in COLUMNS
        )
    )
    for scenario in scenarios:
        template = template_for(scenario)
        results = [one_run(scenario, template, args.tracemalloc) for _ in range(args.runs)]
        stages = ["idle", "open"] if "open" in results[0] else ["idle"]
        for stage in stages:
            label = (
                f"{scenario}, {'at start' if stage == 'idle' else 'big one open'}"
                if len(stages) > 1
                else scenario
            )
            for index, result in enumerate(results, 1):
                print(row(f"{label} #{index}", result[stage]))
            medians = {key: median([r[stage][key] for r in results]) for key, _n, _f in COLUMNS}
            print(row(f"{label} median", medians) + f"   (load {load_average()})")
        if "live" in results[0]:
            print(f"  ({results[0]['live']:,} live messages in the conversation open)")
        if results[0]["allocations"]:
            print(f"  tracemalloc, {scenario}, run 1, at the end:")
            for line in results[0]["allocations"]:
                print("    " + line)
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
