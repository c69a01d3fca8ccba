"""A person at a desktop: a real X screen (Xvfb), its keyboard, mouse and clipboard
(xdotool, xclip), screenshots, and the installed `cairn` program running on it.

Nothing here reaches into the app: it is driven with keys and clicks, and watched
the way its user or a support engineer could watch it — window titles, which window
has the focus, its log file and its files on disk. Every wait is for such a thing to
be so, polled, with a deadline that only turns a hang into a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# Where each journey leaves its screenshots (README, "Journey tests"); CI keeps them.
SHOTS_ROOT = REPO / "build" / "journeys"
SCREEN_SIZE = (1280, 800)
TOOLS = ("Xvfb", "xdotool", "xclip")
# The longest any one step may take before the journey fails (a hang guard, not a timing).
STEP_SECONDS = 30.0
_POLL_SECONDS = 0.05


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def wait_until(done: Callable[[], Any], what: str, timeout: float = STEP_SECONDS) -> Any:
    """Poll `done()` until it returns something true, and return that.

    Raises:
        AssertionError: naming `what`, once `timeout` seconds passed without it.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = done()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(_POLL_SECONDS)


class XServer:
    """An Xvfb screen of its own, on the first free display number from 50 (as
    `xvfb-run -a` picks one)."""

    def __init__(self, size: tuple[int, int] = SCREEN_SIZE) -> None:
        for number in range(50, 200):
            if not Path(f"/tmp/.X{number}-lock").exists():
                process = self._start(number, size)
                if process is not None:
                    self._process = process
                    self.display = f":{number}"
                    return
        raise RuntimeError("Xvfb found no free display number")

    @staticmethod
    def _start(number: int, size: tuple[int, int]) -> subprocess.Popen[bytes] | None:
        """Xvfb on `number`, once its socket is there; None when it ended (taken)."""
        process = subprocess.Popen(
            ["Xvfb", f":{number}", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        socket = Path(f"/tmp/.X11-unix/X{number}")
        wait_until(lambda: socket.exists() or process.poll() is not None, "Xvfb to start")
        return process if process.poll() is None else None

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@dataclass(frozen=True)
class Window:
    id: str
    name: str
    x: int
    y: int
    width: int
    height: int


class Desktop:
    """The screen, keyboard, mouse and clipboard, as xdotool and xclip give them."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.env = {k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}
        self.env["DISPLAY"] = display
        self._grabber = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("screen_grabber.py"))],
            env={**self.env, "QT_QPA_PLATFORM": "xcb"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def close(self) -> None:
        if self._grabber.stdin is not None:
            self._grabber.stdin.close()
        try:
            self._grabber.wait(10)
        except subprocess.TimeoutExpired:
            self._grabber.kill()
            self._grabber.wait()

    def _run(self, *command: str, input: bytes | None = None) -> str:
        result = subprocess.run(
            command, env=self.env, input=input, capture_output=True, timeout=STEP_SECONDS
        )
        return result.stdout.decode(errors="replace") if result.returncode == 0 else ""

    # --- what is on the screen

    def windows(self) -> list[Window]:
        """The mapped top-level windows, with their titles and places."""
        found: list[Window] = []
        for window_id in self._run("xdotool", "search", "--onlyvisible", "--name", ".").split():
            name = self._run("xdotool", "getwindowname", window_id).strip()
            shape = self._run("xdotool", "getwindowgeometry", "--shell", window_id)
            values = dict(re.findall(r"(\w+)=(\d+)", shape))
            if not name or not values:
                continue  # gone meanwhile
            found.append(
                Window(
                    window_id,
                    name,
                    int(values["X"]),
                    int(values["Y"]),
                    int(values["WIDTH"]),
                    int(values["HEIGHT"]),
                )
            )
        return found

    def window(self, title: str | re.Pattern[str]) -> Window | None:
        """The visible window whose title is `title` (or matches the pattern)."""
        for window in self.windows():
            if (
                window.name == title
                if isinstance(title, str)
                else title.fullmatch(window.name) is not None
            ):
                return window
        return None

    def wait_for_window(self, title: str | re.Pattern[str]) -> Window:
        shown: Window = wait_until(lambda: self.window(title), f"a window titled {title!r}")
        return shown

    def wait_until_closed(self, title: str | re.Pattern[str]) -> None:
        wait_until(lambda: self.window(title) is None, f"the window {title!r} to close")

    def focused_window_id(self) -> str:
        return self._run("xdotool", "getwindowfocus").strip()

    def focused_window_name(self) -> str:
        return self._run("xdotool", "getwindowfocus", "getwindowname").strip()

    def wait_for_focus(self, title: str | re.Pattern[str]) -> None:
        """Until the window titled `title` has the keyboard (keys sent before would go
        to the window that had it)."""

        def focused() -> bool:
            name = self.focused_window_name()
            return name == title if isinstance(title, str) else bool(title.fullmatch(name))

        wait_until(focused, f"the keyboard in {title!r}")

    def screenshot(self, path: Path) -> None:
        """The whole screen, as a PNG at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        assert self._grabber.stdin is not None and self._grabber.stdout is not None
        self._grabber.stdin.write(f"{path}\n")
        self._grabber.stdin.flush()
        answer = self._grabber.stdout.readline().strip()
        assert answer == "ok", f"no screenshot ({answer or 'the grabber ended'})"

    # --- the person's hands

    def click(self, x: int, y: int) -> None:
        self._run("xdotool", "mousemove", str(x), str(y), "click", "1")

    def key(self, *keys: str) -> None:
        """Press each key (xdotool names: "Return", "ctrl+shift+s", "alt+f") in turn."""
        self._run("xdotool", "key", "--clearmodifiers", "--delay", "30", *keys)

    def type(self, text: str) -> None:
        self._run("xdotool", "type", "--clearmodifiers", "--delay", "8", text)

    def copy(self, data: str | bytes, mime: str = "UTF8_STRING") -> None:
        """Put `data` on the clipboard, as copying it in another program would."""
        payload = data.encode() if isinstance(data, str) else data
        # xclip stays in the background to serve the clipboard until someone else owns it.
        subprocess.Popen(
            ["xclip", "-selection", "clipboard", "-t", mime, "-i"],
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ).communicate(payload, timeout=STEP_SECONDS)

    def clipboard_text(self) -> str:
        return self._run("xclip", "-selection", "clipboard", "-o")


class Cairn:
    """The installed `cairn` command on the desktop, with its own CAIRN_HOME.

    Its key store is an in-memory one (tests/fakes/keyring_backend.py, chosen with
    keyring's PYTHON_KEYRING_BACKEND), so no journey sees another's key.
    """

    def __init__(
        self,
        desktop: Desktop,
        home: Path,
        base_url: str,
        *,
        api_key: str | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.desktop = desktop
        self.home = home
        env = dict(desktop.env)
        env.pop("ANTHROPIC_API_KEY", None)
        env.update(
            QT_QPA_PLATFORM="xcb",
            CAIRN_HOME=str(home),
            ANTHROPIC_BASE_URL=base_url,
            PYTHON_KEYRING_BACKEND="tests.fakes.keyring_backend.MemoryKeyring",
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        )
        if api_key is not None:
            env["ANTHROPIC_API_KEY"] = api_key
        env.update(extra_env or {})
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def command() -> str:
        """The `cairn` the project installs (pyproject.toml [project.scripts])."""
        return str(Path(sys.executable).with_name("cairn"))

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        output = (self.home / "cairn.out").open("ab")
        self._process = subprocess.Popen(
            [self.command()], env=self._env, stdout=output, stderr=subprocess.STDOUT
        )
        output.close()

    def main_window(self) -> Window:
        """Cairn's main window: its largest visible one."""

        def largest() -> Window | None:
            self.assert_running()
            ours = [w for w in self.desktop.windows() if w.name.endswith("— Cairn")]
            return max(ours, key=lambda w: w.width * w.height, default=None)

        window: Window = wait_until(largest, "Cairn's main window")
        return window

    def focus(self) -> Window:
        """Bring the main window to the keyboard, as a click on its empty menu bar does."""
        window = self.main_window()
        self.desktop.click(window.x + window.width - 30, window.y + 8)
        wait_until(lambda: self.desktop.focused_window_id() == window.id, "the window's focus")
        return window

    def wait_for_title(self, conversation: str) -> Window:
        return self.desktop.wait_for_window(f"{conversation} — Cairn")

    def assert_running(self) -> None:
        assert self._process is not None, "Cairn was not started"
        code = self._process.poll()
        assert code is None, f"Cairn ended (exit {code}):\n{self.output()}"

    def quit(self) -> None:
        """Ctrl+Q, and Cairn ends by itself, cleanly."""
        self.focus()
        self.desktop.key("ctrl+q")
        assert self._process is not None
        try:
            code = self._process.wait(STEP_SECONDS)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"Cairn did not quit:\n{self.output()}") from None
        assert code == 0, f"Cairn quit with {code}:\n{self.output()}"

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    # --- what a support engineer could look at

    def log(self) -> str:
        path = self.home / "logs" / "cairn.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def output(self) -> str:
        path = self.home / "cairn.out"
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        return text[-4000:] + "\n--- log ---\n" + self.log()[-4000:]

    def wait_for_log(self, pattern: str) -> re.Match[str]:
        found: re.Match[str] = wait_until(
            lambda: re.search(pattern, self.log()), f"the log to say {pattern!r}"
        )
        return found

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Read the database on disk (read-only, beside the running app)."""
        database = self.home / "data" / "cairn.db"
        if not database.exists():
            return []
        uri = f"file:{database}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=STEP_SECONDS)) as connection:
            return connection.execute(sql, parameters).fetchall()

    def messages(self) -> list[tuple[str, str, str]]:
        """(role, content, status) of every message, oldest first."""
        return [
            (str(role), str(content), str(status))
            for role, content, status in self.query(
                "SELECT role, content, status FROM message ORDER BY session_id, seq"
            )
        ]


class Journey:
    """One journey's screenshots, numbered in the order taken, in SHOTS_ROOT/<name>/."""

    def __init__(self, desktop: Desktop, name: str) -> None:
        self.desktop = desktop
        self.folder = SHOTS_ROOT / name
        shutil.rmtree(self.folder, ignore_errors=True)
        self._taken = 0

    def shot(self, what: str) -> Path:
        self._taken += 1
        path = self.folder / f"{self._taken:02d}-{what}.png"
        self.desktop.screenshot(path)
        return path


def files_under(folder: Path) -> Iterator[Path]:
    return (path for path in folder.rglob("*") if path.is_file())
