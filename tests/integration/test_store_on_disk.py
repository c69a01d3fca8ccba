"""The store on a real disk: reopening, damaged and foreign files, newer databases,
folders Cairn may not write to, two threads at once, and when a start checks the file."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.core.errors import DatabaseTooNewError, StorageError
from app.core.models import MessageStatus, Role, Usage
from app.core.paths import AppPaths
from app.store import SCHEMA_VERSION, InstanceLock, SessionStore, open_database

MODEL = "claude-sonnet-4-5"
DAMAGED_NAME = re.compile(r"^cairn\.db\.damaged-\d{8}-\d{6}(-\d+)?$")


@pytest.fixture
def database() -> Path:
    """The database where Cairn really keeps it: under CAIRN_HOME (see conftest)."""
    return AppPaths.from_environment().database


def open_store(database: Path) -> SessionStore:
    result = open_database(database)
    assert result.notice is None
    return SessionStore(result.connection, database=result.path)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def quick_check(database: Path) -> list[str]:
    connection = sqlite3.connect(database)
    try:
        return [row[0] for row in connection.execute("PRAGMA quick_check")]
    finally:
        connection.close()


def fill(database: Path, messages: int = 200) -> str:
    store = open_store(database)
    try:
        session = store.create_session("filled", MODEL)
        for n in range(messages):
            store.append_message(session.id, Role.USER, f"message {n} " + "x" * 900)
        return session.id
    finally:
        store.close()


def test_everything_is_there_after_reopening(database: Path) -> None:
    store = open_store(database)
    session = store.create_session("Trip", MODEL, system_prompt="Be kind.")
    question = store.append_message(
        session.id, Role.USER, "Where to? 🧭 \x00 שלום", token_estimate=7
    )
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.update_message_content(reply.id, "Lis")
    answer = store.finish_message(
        reply.id, "Lisbon.", MessageStatus.COMPLETE, usage=Usage(input_tokens=9), model=MODEL
    )
    renamed = store.rename_session(session.id, "Trip to Lisbon")
    store.close()

    again = open_store(database)
    try:
        assert again.list_sessions() == [renamed]
        assert again.messages(session.id) == [question, answer]
        assert again.recover_interrupted() == 0
    finally:
        again.close()
    assert quick_check(database) == ["ok"]


def test_a_streaming_reply_survives_reopening_as_stopped(database: Path) -> None:
    store = open_store(database)
    session = store.create_session("t", MODEL)
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.update_message_content(reply.id, "the first half")
    store.close()  # as good as a crash here: nothing finished the reply

    again = open_store(database)
    try:
        assert again.recover_interrupted() == 1
        [kept] = again.messages(session.id)
        assert (kept.content, kept.status) == ("the first half", MessageStatus.STOPPED)
    finally:
        again.close()


def test_an_empty_file_becomes_a_fresh_database(database: Path) -> None:
    database.parent.mkdir(parents=True)
    database.write_bytes(b"")
    store = open_store(database)
    try:
        assert store.list_sessions() == []
    finally:
        store.close()


# --- damaged files -------------------------------------------------------------------


def assert_set_aside(database: Path, original: bytes, caplog: pytest.LogCaptureFixture) -> Path:
    result = open_database(database)
    store = SessionStore(result.connection, database=result.path)
    try:
        assert result.set_aside is not None
        assert DAMAGED_NAME.match(result.set_aside.name), result.set_aside.name
        assert result.set_aside.parent == database.parent
        assert result.set_aside.read_bytes() == original
        assert result.notice is not None
        assert result.notice.startswith("Cairn found a damaged database and set it aside as ")
        assert result.set_aside.name in result.notice
        assert "a fresh one was started. Nothing was deleted." in result.notice
        # The fresh database holds what could be salvaged from the copy, and works.
        assert "Recovered " in result.notice or "No conversation could be read" in result.notice
        store.create_session("a new start", MODEL)
    finally:
        store.close()
    assert quick_check(database) == ["ok"]
    assert any(r.levelno == logging.WARNING and "damaged" in r.getMessage() for r in caplog.records)
    return result.set_aside


def test_a_garbage_file_is_set_aside(database: Path, caplog: pytest.LogCaptureFixture) -> None:
    database.parent.mkdir(parents=True)
    garbage = os.urandom(8192)
    database.write_bytes(garbage)
    assert_set_aside(database, garbage, caplog)


def test_a_short_non_database_file_is_set_aside(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database.parent.mkdir(parents=True)
    database.write_bytes(b"hello")
    assert_set_aside(database, b"hello", caplog)


def test_a_corrupted_database_is_set_aside(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fill(database)
    data = bytearray(database.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    assert len(data) > 20 * page_size
    # Scribble over a few b-tree pages; the header stays valid, so only
    # SQLite's own check can tell.
    for page in (3, 7, 11):
        data[page * page_size : (page + 1) * page_size] = b"\xa5" * page_size
    database.write_bytes(bytes(data))
    assert quick_check_fails(database)
    assert_set_aside(database, bytes(data), caplog)


def test_a_database_failing_its_quick_check_is_set_aside(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fill(database, messages=20)
    data = bytearray(database.read_bytes())
    # The header claims five free pages that do not exist: every page reads
    # fine, and only quick_check's report says so.
    data[36:40] = (5).to_bytes(4, "big")
    database.write_bytes(bytes(data))
    report = quick_check(database)
    assert report != ["ok"]
    assert_set_aside(database, bytes(data), caplog)
    assert any("freelist" in r.getMessage() for r in caplog.records)


def quick_check_fails(database: Path) -> bool:
    try:
        return quick_check(database) != ["ok"]
    except sqlite3.DatabaseError:
        return True


def test_the_wal_and_shm_files_are_set_aside_too(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database.parent.mkdir(parents=True)
    database.write_bytes(b"garbage" * 1000)
    wal = database.with_name("cairn.db-wal")
    shm = database.with_name("cairn.db-shm")
    wal.write_bytes(b"some wal")
    shm.write_bytes(b"some shm")
    copy = assert_set_aside(database, b"garbage" * 1000, caplog)
    assert copy.with_name(copy.name + "-wal").read_bytes() == b"some wal"
    assert copy.with_name(copy.name + "-shm").read_bytes() == b"some shm"


def test_a_damage_in_the_same_second_as_an_earlier_one_never_overwrites_it(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database.parent.mkdir(parents=True)
    # Earlier damaged copies holding every name this second (and the next few) could take.
    now = datetime.now()
    occupied = [
        database.with_name(
            f"cairn.db.damaged-{(now + timedelta(seconds=s)).strftime('%Y%m%d-%H%M%S')}"
        )
        for s in range(-1, 10)
    ]
    for path in occupied:
        path.write_bytes(b"an earlier damaged copy")
    database.write_bytes(b"new damage" * 100)
    copy = assert_set_aside(database, b"new damage" * 100, caplog)
    assert copy.name.endswith("-2")
    assert all(path.read_bytes() == b"an earlier damaged copy" for path in occupied)


# --- the check at start: only after a run that did not end normally ----------------------

# A Cairn in another process: opens, writes one message, then quits normally or dies.
_ONE_RUN = """
import os, sys
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.database import mark_clean_shutdown

database, ending = sys.argv[1], sys.argv[2]
result = open_database(database)
store = SessionStore(result.connection, database=result.path)
session = store.list_sessions()[0]
store.append_message(session.id, Role.USER, "one more")
if ending == "crash":
    os._exit(3)  # no close, no clean-shutdown record: as a crash or a kill leaves it
store.close()
mark_clean_shutdown(database)
"""


def run_cairn(database: Path, ending: str) -> None:
    subprocess.run(
        [sys.executable, "-c", _ONE_RUN, str(database), ending],
        cwd=Path(__file__).resolve().parents[2],
        check=ending == "quit",
        timeout=60,
    )


def test_a_start_after_a_normal_quit_skips_the_check_and_after_a_crash_runs_it(
    database: Path,
) -> None:
    fill(database, messages=20)
    run_cairn(database, "quit")

    after_quit = open_database(database)
    after_quit.connection.close()
    assert (after_quit.checked, after_quit.check_reason) == (False, None)

    run_cairn(database, "crash")
    assert database.with_name("cairn.db-wal").exists()  # what a crash leaves behind

    after_crash = open_database(database)
    store = SessionStore(after_crash.connection, database=database)
    try:
        assert after_crash.checked
        assert after_crash.check_reason == "Cairn did not close normally last time"
        [session] = store.list_sessions()
        assert store.count_messages(session.id) == 22  # both runs' messages kept
    finally:
        store.close()


# --- a newer Cairn's database ----------------------------------------------------------


def folder_snapshot(folder: Path) -> dict[str, str]:
    return {path.name: digest(path) for path in sorted(folder.iterdir())}


def test_a_newer_database_is_refused_and_untouched(database: Path) -> None:
    fill(database, messages=20)
    connection = sqlite3.connect(database)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    before = folder_snapshot(database.parent)
    # The state file says how Cairn last closed: it is left as it is, too.
    assert set(before) == {"cairn.db", "cairn.db.state.json"}

    with pytest.raises(DatabaseTooNewError) as caught:
        open_database(database)

    assert "newer version of Cairn" in caught.value.message
    assert "update" in caught.value.message
    assert folder_snapshot(database.parent) == before


def test_a_newer_database_still_in_its_wal_is_refused_and_untouched(
    database: Path, tmp_path: Path
) -> None:
    """A newer Cairn that crashed leaves its last writes in the WAL, not in the file."""
    fill(database, messages=20)
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    # Copying while the writer is open and idle is what a crash leaves behind.
    for name in ("cairn.db", "cairn.db-wal"):
        shutil.copyfile(database.with_name(name), crashed / name)
    connection.close()
    copy = crashed / "cairn.db"
    assert int.from_bytes(copy.read_bytes()[60:64], "big") <= SCHEMA_VERSION
    database_digest = digest(copy)
    wal_digest = digest(crashed / "cairn.db-wal")

    with pytest.raises(DatabaseTooNewError):
        open_database(copy)

    assert digest(copy) == database_digest
    assert digest(crashed / "cairn.db-wal") == wal_digest


# --- places Cairn may not write -------------------------------------------------------------


@pytest.fixture
def unwritable_folder(tmp_path: Path) -> Iterator[Path]:
    """A data folder that really refuses writes.

    A read-only folder where permissions count; as root (which writes through
    any chmod), a folder that cannot exist because its parent is a regular file.
    """
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except PermissionError:
        yield folder
        folder.chmod(0o755)
        return
    (folder / "probe").unlink()
    folder.chmod(0o755)
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("in the way", encoding="utf-8")
    yield blocker / "data"


def test_an_unwritable_data_folder_is_a_storage_error(unwritable_folder: Path) -> None:
    database = unwritable_folder / "cairn.db"
    with pytest.raises(StorageError) as caught:
        open_database(database)
    assert str(unwritable_folder) in caught.value.message
    assert "Traceback" not in caught.value.message
    assert not database.exists()


def test_the_lock_of_an_unwritable_folder_is_a_storage_error(unwritable_folder: Path) -> None:
    with pytest.raises(StorageError):
        InstanceLock(unwritable_folder).acquire()


def test_a_folder_where_the_database_should_be_is_a_storage_error(database: Path) -> None:
    database.mkdir(parents=True)
    with pytest.raises(StorageError) as caught:
        open_database(database)
    assert str(database) in caught.value.message
    assert database.is_dir()


# --- two threads -------------------------------------------------------------------------------


def test_two_threads_with_their_own_connections(database: Path) -> None:
    main = open_store(database)
    session = main.create_session("shared", MODEL)
    start = threading.Barrier(2)
    seqs: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        store = SessionStore.open(database)
        try:
            start.wait(timeout=30)
            seqs[name] = [
                store.append_message(session.id, Role.USER, f"{name} {n}").seq for n in range(100)
            ]
            store.count_messages(session.id)
        except BaseException as error:
            errors.append(error)
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        assert errors == []
        assert sorted(seqs["a"] + seqs["b"]) == list(range(1, 201))
        assert seqs["a"] == sorted(seqs["a"])
        loaded = main.messages(session.id)
        assert [m.seq for m in loaded] == list(range(1, 201))
        assert {m.content for m in loaded} == {
            f"{name} {n}" for name in ("a", "b") for n in range(100)
        }
        updated = main.get_session(session.id)
        assert updated is not None and updated.version == 200
    finally:
        main.close()


_TAKE_EXCLUSIVE = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
try:
    mode = connection.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
except sqlite3.OperationalError as error:
    mode = str(error)
print(mode)
"""


def test_the_background_check_keeps_the_apps_locks_for_another_process(tmp_path: Path) -> None:
    """A descriptor of cairn.db opened and closed outside SQLite drops every POSIX lock the
    process holds on it: another process (the summary process) could then take the file
    for itself — closing its connection as if it were the last one, it checkpoints and
    resets the WAL under the app (SQLITE_IOERR_SHORT_READ on the app's next read). The
    background check runs while the app has the file open: it must keep those locks."""
    import subprocess
    import sys

    from app.store.database import check_database

    database = tmp_path / "cairn.db"
    store = SessionStore(open_database(database).connection, database=database)
    store.create_session("Locks", "m")

    def another_process_takes_the_file() -> bool:
        answer = subprocess.run(
            [sys.executable, "-c", _TAKE_EXCLUSIVE, str(database)],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
            encoding="utf-8",
        ).stdout.strip()
        return answer == "delete"

    try:
        assert not another_process_takes_the_file(), "the app's connection holds its lock"
        assert check_database(database).outcome.name == "OK"
        assert not another_process_takes_the_file(), "and still does after the check"
    finally:
        store.close()
