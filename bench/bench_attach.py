"""Attachments: the GUI thread while a 20 MB PDF is attached, and opening a conversation
with 200 pictures.

Run: .venv/bin/python bench/bench_attach.py [--runs 3] [--pdf-mb 20] [--images 200]

Issue 11 targets: "attaching a 20 MB PDF does not block the GUI thread (longest stall
≤ 33 ms)" and "a conversation with 200 images opens in ≤ 300 ms (thumbnails cached)".

Set up as the app runs: the real window (`open_cairn`, offscreen) on a temporary
CAIRN_HOME, a key in an in-memory keyring, the real SDK talking to the fake Anthropic
server run in a child process (`python -m tests.fakes.anthropic_server`), so its own work
(decoding the 27 MB request to count the PDF) does not compete for this process's GIL,
as the real API's does not.

1. The PDF: 100 pages padded to `--pdf-mb` MB, attached with the composer's tray as a
   drop does (`add_file`). A 1 ms QTimer on the GUI thread notes every beat; a gap is a
   stall. Window: from the drop to the chip showing the file read (read, sha256, written
   to the archive, counted by count_tokens on the fake server). Figures: longest gap, p99,
   median, and how long until the chip was ready.
2. The pictures: a conversation of `--images` messages each with a 1200 × 800 PNG (and a
   reply each), in the archive. Opened from the sidebar's call (`open_session`) until the
   transcript's newest page is on screen with every message's files and their
   thumbnails: the first time (the thumbnails are made in the background; the chips show
   a badge until then: "until all thumbnails" is when the last one arrived) and again
   (thumbnails cached on disk: read, not decoded from the pictures). Figures, not
   pass/fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_stall import Heartbeat, nearest_rank  # noqa: E402

TEST_KEY = "sk-ant-api03-bench-key-0123456789abcdef"


class FakeServer:
    """The fake Anthropic API in a child process."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.anthropic_server", "--port", "0"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.base_url = line.rsplit(" ", 1)[-1].strip()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def run_until(app: Any, done: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.0005)


def open_window(app: Any, home: Path, base_url: str) -> Any:
    import keyring

    from app.core.paths import AppPaths
    from app.secrets.keystore import SERVICE_NAME, USERNAME
    from app.ui.app import open_cairn
    from tests.fakes.keyring_backend import MemoryKeyring

    os.environ["CAIRN_HOME"] = str(home)
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    backend = MemoryKeyring()
    backend.passwords[(SERVICE_NAME, USERNAME)] = TEST_KEY
    keyring.set_keyring(backend)
    session = open_cairn(AppPaths.from_environment())
    session.show()
    run_until(app, lambda: session.started)
    service = session.controller.service
    run_until(app, lambda: service.model_wait.settled and service.runner.running == 0)
    settle = time.perf_counter()
    run_until(app, lambda: time.perf_counter() - settle > 2.5 and service.runner.running == 0)
    return session


def close_window(session: Any) -> None:
    session.window.close()
    session.close()


def bench_pdf(app: Any, base_url: str, megabytes: int, runs: int) -> None:
    from tests.fakes.sample_files import pdf

    print(f"\n1. attaching a {megabytes} MB PDF (100 pages), {runs} runs")
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "big.pdf"
        body = pdf(100)
        source.write_bytes(pdf(100, padding=megabytes * 1024 * 1024 - len(body)))
        for run in range(runs):
            home = Path(folder) / f"home-{run}"
            session = open_window(app, home, base_url)
            tray = session.window.composer.attachments
            heartbeat = Heartbeat()
            heartbeat.start()
            run_until(app, lambda beats=heartbeat.beats: len(beats) > 50)
            start = time.perf_counter()
            tray.add_file(str(source))
            run_until(app, lambda tray=tray: not tray.busy and bool(tray.attachments()))
            end = time.perf_counter()
            heartbeat.stop()
            gaps = sorted(heartbeat.gaps(start, end))
            (attached,) = tray.attachments()
            how = "estimate" if attached.estimated else "count_tokens"
            what = f"{attached.pages} pages, {attached.tokens:,} tokens ({how})"
            print(
                f"  run {run + 1}: ready after {(end - start) * 1000:.0f} ms ({what}); GUI thread "
                f"longest stall {gaps[-1]:.1f} ms, p99 {nearest_rank(gaps, 99):.1f} ms, "
                f"median {statistics.median(gaps):.1f} ms over {len(gaps)} beats"
            )
            close_window(session)


def build_pictures(home: Path, images: int) -> str:
    """A conversation of `images` messages each with a picture, and a reply to each."""
    from app.core.attachments import describe, with_attachment_line
    from app.core.models import Role
    from app.core.paths import AppPaths
    from app.store.attachments import AttachmentFiles, AttachmentStore
    from app.store.database import open_database
    from app.store.sessions import SessionStore
    from tests.fakes.sample_files import png

    os.environ["CAIRN_HOME"] = str(home)
    paths = AppPaths.from_environment()
    paths.ensure()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    files = AttachmentFiles(paths.database)
    rows = AttachmentStore.open(paths.database)
    session = store.create_session("Holiday pictures", "claude-sonnet-4-5")
    for index in range(images):
        data = png(1200, 800, (index % 256, (index * 7) % 256, (index * 13) % 256))
        attachment = describe(f"IMG_{index:04d}.png", data, files.put(data), len)
        text = with_attachment_line(f"Picture {index}: what is in it?", [attachment])
        message = store.append_message(session.id, Role.USER, text, token_estimate=1_300)
        rows.add(message.id, [attachment])
        store.append_message(session.id, Role.ASSISTANT, f"A picture, number {index}.")
    rows.close()
    store.close()
    return session.id


def thumbs_folder() -> Path:
    from app.core.paths import AppPaths

    return AppPaths.from_environment().database.parent / "attachments" / "thumbs"


def bench_pictures(app: Any, base_url: str, images: int, runs: int) -> None:
    from app.chat.service import PAGE_SIZE
    from app.ui.window_attachments import AttachmentStrip

    expected = min(images, PAGE_SIZE // 2)
    print(f"\n2. opening a conversation with {images} pictures, {runs} runs")
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        session_id = build_pictures(home, images)
        for run in range(runs + 1):
            session = open_window(app, home, base_url)
            window, controller = session.window, session.controller

            transcript = window.transcript

            def strips(transcript: Any = transcript) -> list[Any]:
                found = [w.findChild(AttachmentStrip) for w in transcript.message_widgets()]
                return [strip for strip in found if strip is not None]

            def shown(transcript: Any = transcript) -> bool:
                # The newest page, whole (a page is built in slices after its first paint).
                widgets = transcript.message_widgets()
                users = [w for w in widgets if w.message.role.value == "user"]
                return len(users) >= expected and len(strips()) == len(users)

            def thumbnails() -> bool:
                return shown() and all(
                    chip.has_thumbnail for strip in strips() for chip in strip.chips
                )

            # Cairn reopens the last conversation at start: leave it for a new one first.
            controller.service.new_conversation()
            run_until(app, lambda: not strips())
            if run == 0:  # the first time: no thumbnail made yet
                shutil.rmtree(thumbs_folder(), ignore_errors=True)
                window.files.forget_thumbnails()
            start = time.perf_counter()
            controller.service.open_session(session_id)
            run_until(app, shown)
            on_screen = time.perf_counter()
            run_until(app, thumbnails)
            done = time.perf_counter()
            label = "first open" if run == 0 else f"cached, run {run}"
            print(
                f"  {label}: page with its files on screen in {(on_screen - start) * 1000:.0f} ms, "
                f"until all thumbnails {(done - start) * 1000:.0f} ms "
                f"({len(strips())} messages with files on the page)"
            )
            close_window(session)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pdf-mb", type=int, default=20)
    parser.add_argument("--images", type=int, default=200)
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication

    from app.ui.app import GIL_SWITCH_INTERVAL_SECONDS

    sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)  # as app.ui.app.run sets it
    app = QApplication([])
    server = FakeServer()
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}, {os.cpu_count()} CPUs")
    try:
        bench_pdf(app, server.base_url, args.pdf_mb, args.runs)
        bench_pictures(app, server.base_url, args.images, args.runs)
    finally:
        server.close()


if __name__ == "__main__":
    main()
