"""What differs between systems (app/core/platform.py), each system played here."""

from __future__ import annotations

import io
import os
import sqlite3
import sys
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.platform import (
    FILE_NAME_LIMIT,
    REPLACE_RETRY_DELAYS,
    fsync_folder,
    nicer_thread,
    portable_file_name,
    replace_file,
    sqlite_durability_pragmas,
    sqlite_uri,
    utf8_stream,
)
from tests.fakes.windows_files import refuse_read_only_fsync, sharing_violation

# --- file names Windows accepts -------------------------------------------------------

# https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file ("Naming Conventions")
RESERVED_CHARACTERS = set('<>:"/\\|?*') | {chr(code) for code in range(32)}
DEVICES = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{n}" for p in ("COM", "LPT") for n in "123456789"}


def acceptable_on_windows(name: str) -> bool:
    stem = name.partition(".")[0].rstrip(" ").upper()
    return (
        bool(name)
        and not RESERVED_CHARACTERS & set(name)
        and not name.endswith((" ", "."))
        and stem not in DEVICES
    )


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("CON", "CON conversation"),
        ("com1", "com1 conversation"),
        ("NUL.txt", "NUL conversation.txt"),
        ("aux .notes", "aux conversation.notes"),
        ("LPT¹", "LPT¹ conversation"),
        ('Plans: Q3 / "Q4"?', "Plans Q3 Q4"),
        ("Trip to Porto. ", "Trip to Porto"),
        ("...", "Conversation"),
        ("CONSOLE ideas", "CONSOLE ideas"),
        ("Café ☕ in Kyoto", "Café ☕ in Kyoto"),
    ],
)
def test_export_names_avoid_what_windows_reserves(title: str, name: str) -> None:
    assert portable_file_name(title) == name
    assert acceptable_on_windows(portable_file_name(title) + ".json")


@given(st.text(max_size=200))
def test_every_title_gives_a_name_windows_accepts(title: str) -> None:
    name = portable_file_name(title)

    assert acceptable_on_windows(name)
    assert acceptable_on_windows(f"{name}.json") and acceptable_on_windows(f"{name}.md")
    assert len(name) <= FILE_NAME_LIMIT + len(" conversation")


# --- SQLite's file: URIs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "uri", "opened"),
    [
        (
            r"C:\Users\Ann Lee\AppData\Local\Cairn\cairn.db",
            "file:///C:/Users/Ann%20Lee/AppData/Local/Cairn/cairn.db?mode=ro",
            "/C:/Users/Ann Lee/AppData/Local/Cairn/cairn.db",
        ),
        (
            r"\\nas\family\Cairn\cairn.db",
            "file:////nas/family/Cairn/cairn.db?mode=ro",
            "//nas/family/Cairn/cairn.db",
        ),
        (
            r"\\?\UNC\nas\family\Cairn\cairn.db",
            "file:////nas/family/Cairn/cairn.db?mode=ro",
            "//nas/family/Cairn/cairn.db",
        ),
        (
            r"\\?\D:\Daten\Größe #1?\cairn.db",
            "file:///D:/Daten/Gr%C3%B6%C3%9Fe%20%231%3F/cairn.db?mode=ro",
            "/D:/Daten/Größe #1?/cairn.db",
        ),
    ],
)
def test_a_windows_uri_keeps_an_empty_authority_for_shares_and_drives(
    path: str, uri: str, opened: str
) -> None:
    built = sqlite_uri(PureWindowsPath(path), "ro")

    assert built == uri
    # SQLite accepts an empty authority or "localhost" only (https://www.sqlite.org/uri.html);
    # Path.as_uri() gives a share's server as the authority, which SQLite refuses.
    parts = urlsplit(built)
    assert parts.netloc == ""
    assert unquote(parts.path) == opened
    assert parts.query == "mode=ro"


def test_as_uri_alone_would_name_the_share_server_as_the_authority() -> None:
    # What "invalid uri authority: nas" came from on a network-share data folder.
    assert urlsplit(PureWindowsPath(r"\\nas\family\cairn.db").as_uri()).netloc == "nas"


def test_the_uri_of_this_system_opens_a_name_with_hashes_percents_and_spaces(
    tmp_path: Path,
) -> None:
    # On Windows this is the drive branch for real; '?' is left out, Windows refuses it.
    database = tmp_path / "Ann's data #1 %20" / "cairn.db"
    database.parent.mkdir()
    sqlite3.connect(database).close()

    connection = sqlite3.connect(sqlite_uri(database.resolve(), "ro"), uri=True)
    try:
        opened = connection.execute("PRAGMA database_list").fetchone()[2]
        assert Path(opened) == database.resolve()
    finally:
        connection.close()


def test_a_posix_uri_keeps_question_marks_in_the_name() -> None:
    uri = sqlite_uri(PurePosixPath("/srv/Ann?/#1/cairn.db"), "rw")
    assert uri == "file:///srv/Ann%3F/%231/cairn.db?mode=rw"


# --- durability ------------------------------------------------------------------------


def test_macos_asks_sqlite_for_fullfsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert sqlite_durability_pragmas() == ("PRAGMA fullfsync = ON",)
    for other in ("linux", "win32"):
        monkeypatch.setattr(sys, "platform", other)
        assert sqlite_durability_pragmas() == ()


def test_a_folder_is_synced_on_posix_and_left_alone_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = refuse_read_only_fsync(monkeypatch)
    monkeypatch.setattr(sys, "platform", "win32")
    fsync_folder(tmp_path)  # a read-only descriptor on Windows would be EBADF: never made
    assert synced == []


def test_replace_waits_out_a_program_holding_the_file_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "new", tmp_path / "settings.json"
    source.write_text("new", encoding="utf-8")
    target.write_text("old", encoding="utf-8")
    real_replace = os.replace
    busy = [sharing_violation(str(target))] * 3

    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        if busy:
            raise busy.pop()
        real_replace(a, b)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(sys, "platform", "win32")
    waits: list[float] = []

    replace_file(source, target, sleep=waits.append)

    assert target.read_text(encoding="utf-8") == "new"
    assert waits == list(REPLACE_RETRY_DELAYS[:3])


def test_replace_gives_up_after_about_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        raise sharing_violation(str(b))

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(sys, "platform", "win32")
    waits: list[float] = []

    with pytest.raises(PermissionError):
        replace_file(tmp_path / "a", tmp_path / "b", sleep=waits.append)
    assert waits == list(REPLACE_RETRY_DELAYS)
    assert 0.5 <= sum(waits) <= 1.5


@pytest.mark.parametrize(
    ("platform", "error"),
    [
        ("linux", PermissionError(13, "Permission denied")),  # no winerror: a real refusal
        ("win32", FileNotFoundError(2, "No such file or directory")),
    ],
)
def test_replace_does_not_retry_what_waiting_cannot_mend(
    platform: str, error: OSError, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[object] = []

    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        attempts.append(b)
        raise error

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(sys, "platform", platform)
    with pytest.raises(type(error)):
        replace_file(tmp_path / "a", tmp_path / "b", sleep=lambda _: None)
    assert len(attempts) == 1


# --- the console ---------------------------------------------------------------------


def test_a_cp1252_stream_is_set_to_utf8() -> None:
    raw = io.BytesIO()
    # What Python 3.11 gives a redirected stdout on a Western-European Windows.
    stream = io.TextIOWrapper(raw, encoding="cp1252")

    same = utf8_stream(stream)
    same.write("Сводка · 要約 · “quotes”\n")
    same.flush()

    assert same is stream
    assert raw.getvalue().decode("utf-8") == "Сводка · 要約 · “quotes”\n"


def test_a_stream_that_is_not_a_file_is_left_as_it_is() -> None:
    text = io.StringIO()
    assert utf8_stream(text) is text


@pytest.mark.parametrize("system", ["win32", "darwin"])
def test_a_thread_is_made_nicer_only_where_niceness_is_per_thread(
    monkeypatch: pytest.MonkeyPatch, system: str
) -> None:
    monkeypatch.setattr(sys, "platform", system)
    calls: list[tuple[int, ...]] = []
    monkeypatch.setattr(os, "setpriority", lambda *args: calls.append(args), raising=False)
    nicer_thread(10)
    assert calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness")
def test_a_thread_made_nicer_leaves_the_main_thread_as_it_was() -> None:
    main = os.getpriority(os.PRIO_PROCESS, os.getpid())
    seen: list[int] = []

    def run() -> None:
        nicer_thread(3)
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [min(19, main + 3)]
    assert os.getpriority(os.PRIO_PROCESS, os.getpid()) == main
