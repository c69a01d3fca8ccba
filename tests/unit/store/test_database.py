"""Opening the database: pragmas, migrations, the thread connection, error words,
and when the integrity check runs (at open after an unclean shutdown, else after
the first paint)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.core.errors import BugError, DatabaseTooNewError, InvalidInputError, StorageError
from app.core.models import Role
from app.store import SCHEMA_VERSION, SessionStore, connect, open_database
from app.store.database import (
    DAMAGE_FOUND_MESSAGE,
    CheckCancel,
    CheckOutcome,
    OpenResult,
    check_database,
    mark_clean_shutdown,
    record_damage,
    run_quick_check,
)
from app.store.errors import translate
from app.store.migrations import MIGRATIONS, Migration, migrate, user_version


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "data" / "cairn.db"


@pytest.fixture
def opened(database: Path) -> Iterator[sqlite3.Connection]:
    result = open_database(database)
    yield result.connection
    result.connection.close()


def pragma(connection: sqlite3.Connection, name: str) -> object:
    return connection.execute(f"PRAGMA {name}").fetchone()[0]


def test_new_database_is_created_with_the_folder(database: Path) -> None:
    result = open_database(database)
    try:
        assert database.is_file()
        assert result.notice is None
        assert result.set_aside is None
        assert result.path == database
        assert user_version(result.connection) == SCHEMA_VERSION
    finally:
        result.connection.close()


def test_pragmas_are_set(opened: sqlite3.Connection) -> None:
    assert pragma(opened, "journal_mode") == "wal"
    assert pragma(opened, "foreign_keys") == 1
    assert pragma(opened, "synchronous") == 2  # FULL
    assert pragma(opened, "busy_timeout") == 5000
    assert opened.isolation_level is None


def test_schema_has_sessions_and_messages(opened: sqlite3.Connection) -> None:
    names = {
        row[0]
        for row in opened.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')")
    }
    assert {"session", "message", "message_by_session_seq"} <= names


def test_check_constraints_refuse_unknown_role_and_status(opened: sqlite3.Connection) -> None:
    opened.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model) "
        "VALUES ('s', 't', 'x', 'x', 'm')"
    )
    insert = (
        "INSERT INTO message (session_id, seq, role, content, created_at, status) "
        "VALUES ('s', ?, ?, 'hi', 'x', ?)"
    )
    with pytest.raises(sqlite3.IntegrityError):
        opened.execute(insert, (1, "system", "complete"))
    with pytest.raises(sqlite3.IntegrityError):
        opened.execute(insert, (2, "user", "lost"))
    opened.execute(insert, (3, "user", "complete"))


def test_reopening_does_not_migrate_again(database: Path) -> None:
    open_database(database).connection.close()
    result = open_database(database)
    try:
        assert user_version(result.connection) == SCHEMA_VERSION
        assert result.notice is None
    finally:
        result.connection.close()


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert len(MIGRATIONS) == SCHEMA_VERSION


def test_a_new_migration_upgrades_an_existing_database(opened: sqlite3.Connection) -> None:
    later = Migration(
        version=SCHEMA_VERSION + 1,
        description="a table a later issue adds",
        statements=("CREATE TABLE later_table (id INTEGER PRIMARY KEY, kind TEXT NOT NULL)",),
    )
    assert migrate(opened, (*MIGRATIONS, later)) == SCHEMA_VERSION + 1
    opened.execute("INSERT INTO later_table (kind) VALUES ('undo')")


def test_a_failing_migration_leaves_the_previous_version(opened: sqlite3.Connection) -> None:
    broken = Migration(
        version=SCHEMA_VERSION + 1,
        description="fails half way",
        statements=("CREATE TABLE half (id INTEGER)", "THIS IS NOT SQL"),
    )
    with pytest.raises(sqlite3.OperationalError):
        migrate(opened, (*MIGRATIONS, broken))
    assert user_version(opened) == SCHEMA_VERSION
    assert opened.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'half'").fetchone() == (
        0,
    )
    assert not opened.in_transaction


def test_a_new_database_is_made_whole_or_not_at_all(tmp_path: Path) -> None:
    # A new database is made in one transaction (one fsync on the first start, issue 20):
    # a step failing leaves nothing behind, not the steps before it.
    broken = Migration(
        version=SCHEMA_VERSION + 1,
        description="fails half way",
        statements=("CREATE TABLE half (id INTEGER)", "THIS IS NOT SQL"),
    )
    connection = sqlite3.connect(tmp_path / "new.db", isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError):
            migrate(connection, (*MIGRATIONS, broken))
        assert user_version(connection) == 0
        assert connection.execute("SELECT count(*) FROM sqlite_schema").fetchone() == (0,)
        assert not connection.in_transaction
        assert migrate(connection) == SCHEMA_VERSION  # and it can be made again
    finally:
        connection.close()


def test_a_new_database_gets_the_schema_the_steps_one_by_one_give(tmp_path: Path) -> None:
    def schema(connection: sqlite3.Connection) -> list[tuple[str, str, str]]:
        rows = connection.execute(
            "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' "
            "ORDER BY type, name"
        ).fetchall()
        return [(str(kind), str(name), str(sql)) for kind, name, sql in rows]

    at_once = sqlite3.connect(tmp_path / "at_once.db", isolation_level=None)
    by_steps = sqlite3.connect(tmp_path / "by_steps.db", isolation_level=None)
    try:
        assert migrate(at_once) == SCHEMA_VERSION
        assert migrate(by_steps, MIGRATIONS[:1]) == 1  # then the rest, a step each
        assert migrate(by_steps) == SCHEMA_VERSION
        assert schema(at_once) == schema(by_steps)
    finally:
        at_once.close()
        by_steps.close()


def test_migrations_with_a_gap_are_rejected(opened: sqlite3.Connection) -> None:
    gap = Migration(version=SCHEMA_VERSION + 2, description="gap", statements=())
    with pytest.raises(ValueError, match="without gaps"):
        migrate(opened, (*MIGRATIONS, gap))


def test_connect_gives_a_configured_connection(opened: sqlite3.Connection, database: Path) -> None:
    connection = connect(database)
    try:
        assert pragma(connection, "foreign_keys") == 1
        assert pragma(connection, "synchronous") == 2
        assert pragma(connection, "busy_timeout") == 5000
        assert pragma(connection, "journal_mode") == "wal"
    finally:
        connection.close()


def test_connect_to_a_missing_file_does_not_create_one(database: Path) -> None:
    with pytest.raises(StorageError, match="missing"):
        connect(database)
    assert not database.exists()


def test_a_data_folder_that_cannot_be_made_is_said_in_plain_words(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text(
        "", encoding="utf-8"
    )  # a file where the folder should be: refused even to root
    database = blocker / "data" / "cairn.db"

    with pytest.raises(StorageError) as caught:
        open_database(database)

    assert caught.value.title == "Cairn can't create its folder"
    assert caught.value.message.startswith(
        f"Cairn can't create the folder where it keeps your conversations ({database.parent}): "
        f"there is a file where the folder should be ({blocker})."
    )
    assert not blocker.read_text(encoding="utf-8"), "the file in the way is left alone"


def test_connect_before_open_database_is_a_bug(tmp_path: Path) -> None:
    unmigrated = tmp_path / "cairn.db"
    unmigrated.write_bytes(b"")  # an empty file is an empty database at version 0
    with pytest.raises(BugError, match="open_database"):
        connect(unmigrated)


def test_connect_refuses_a_newer_database(opened: sqlite3.Connection, database: Path) -> None:
    opened.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(DatabaseTooNewError):
        connect(database)


def test_open_refuses_a_database_made_newer_behind_the_header(
    opened: sqlite3.Connection, database: Path
) -> None:
    # The version bump sits in the WAL while `opened` stays open, so only
    # SQLite (not the file header) sees it.
    opened.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    header_version = int.from_bytes(database.read_bytes()[60:64], "big")
    assert header_version <= SCHEMA_VERSION
    with pytest.raises(DatabaseTooNewError, match="newer version of Cairn"):
        open_database(database)


# --- translation of sqlite3 errors ---------------------------------------------


def real_error(code_sql: str, connection: sqlite3.Connection) -> sqlite3.Error:
    try:
        connection.execute(code_sql)
    except sqlite3.Error as error:
        return error
    raise AssertionError(f"{code_sql!r} did not fail")


def test_disk_full_is_translated_in_plain_words(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "full.db")
    connection.execute("CREATE TABLE t (x TEXT)")
    connection.execute("PRAGMA max_page_count = 2")
    error = real_error("INSERT INTO t VALUES (zeroblob(100000))", connection)
    translated = translate(error, action="save your message", database=tmp_path / "full.db")
    assert isinstance(translated, StorageError)
    assert translated.retryable
    assert "disk is full" in translated.message
    assert str(tmp_path) in translated.message
    assert translated.detail is not None and "SQLITE_FULL" in translated.detail
    connection.close()


def test_read_only_is_translated_in_plain_words(opened: sqlite3.Connection, database: Path) -> None:
    reader = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    error = real_error("INSERT INTO session (id) VALUES ('x')", reader)
    translated = translate(error, action="save your message", database=database)
    assert isinstance(translated, StorageError)
    assert "isn't allowed to write" in translated.message
    assert str(database.parent) in translated.message
    reader.close()


def test_not_a_database_is_translated(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not sqlite at all " * 100)
    connection = sqlite3.connect(garbage)
    error = real_error("SELECT * FROM sqlite_schema", connection)
    translated = translate(error, action="load the conversation", database=garbage)
    assert isinstance(translated, StorageError)
    assert "damaged" in translated.message
    connection.close()


def test_misuse_is_a_bug_not_the_users_fault(opened: sqlite3.Connection) -> None:
    error = real_error("INSERT INTO message (session_id) VALUES ('nobody')", opened)
    assert isinstance(error, sqlite3.IntegrityError)
    assert isinstance(translate(error, action="x", database=None), BugError)


def test_a_damaged_character_is_invalid_input() -> None:
    with pytest.raises(UnicodeEncodeError) as caught:
        "\ud800".encode()
    translated = translate(caught.value, action="save your message", database=None)
    assert isinstance(translated, InvalidInputError)


# --- the integrity check: at open only when the last run did not end cleanly ----------

T0 = datetime(2025, 3, 5, 9, 30, tzinfo=UTC)
MODEL = "claude-sonnet-4-5"


class CountingCheck:
    """The real quick_check, counted: shows whether (and how often) it ran."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, connection: sqlite3.Connection) -> list[str]:
        self.calls += 1
        return run_quick_check(connection)


def state_file(database: Path) -> Path:
    return database.with_name("cairn.db.state.json")


def open_counted(database: Path, now: datetime = T0) -> tuple[OpenResult, CountingCheck]:
    check = CountingCheck()
    return open_database(database, integrity_check=check, now=now), check


def close_cleanly(result: OpenResult) -> None:
    """What Cairn does when it quits normally."""
    result.connection.close()
    mark_clean_shutdown(result.path)


def filled(database: Path, messages: int = 200, now: datetime = T0) -> None:
    """A database with one conversation, closed cleanly."""
    result = open_database(database, now=now)
    store = SessionStore(result.connection, database=database)
    session = store.create_session("filled", MODEL)
    for n in range(messages):
        store.append_message(session.id, Role.USER, f"message {n} " + "x" * 900)
    close_cleanly(result)


def corrupt_pages(database: Path, pages: tuple[int, ...] = (3, 7, 11)) -> None:
    """Scribble over b-tree pages; the header stays valid, so only a check can tell."""
    data = bytearray(database.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    assert len(data) > (max(pages) + 1) * page_size
    for page in pages:
        data[page * page_size : (page + 1) * page_size] = b"\xa5" * page_size
    with database.open("r+b") as file:  # in place, as a failing disk would
        file.write(bytes(data))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_database_is_not_checked_and_is_marked_in_use(database: Path) -> None:
    result, check = open_counted(database)
    result.connection.close()

    assert (check.calls, result.checked, result.check_reason) == (0, False, None)
    assert json.loads(state_file(database).read_text(encoding="utf-8"))["in_use"] is True


def test_after_a_clean_shutdown_the_check_does_not_run_at_open(database: Path) -> None:
    filled(database)

    result, check = open_counted(database, now=T0 + timedelta(days=1))
    try:
        assert check.calls == 0
        assert (result.checked, result.check_reason) == (False, None)
        assert result.notice is None
        [session] = SessionStore(result.connection).list_sessions()
        assert result.connection.execute("SELECT count(*) FROM message").fetchone() == (200,)
        assert session.title == "filled"
    finally:
        result.connection.close()


def test_after_an_unclean_shutdown_the_check_runs_at_open(database: Path) -> None:
    filled(database)
    crashed = open_database(database)
    crashed.connection.close()  # closed, but Cairn never reached its clean close

    result, check = open_counted(database)
    result.connection.close()

    assert check.calls == 1
    assert result.checked
    assert result.check_reason == "Cairn did not close normally last time"


def test_a_record_that_does_not_change_is_not_written_again(database: Path) -> None:
    # After a crash the record says "in use" already: opening again leaves the file as
    # it is (no write, no fsync before the window paints; issue 20).
    filled(database)
    crashed = open_database(database, check_after_crash_later=True)
    crashed.connection.close()
    written = state_file(database).stat()

    again = open_database(database, check_after_crash_later=True)
    again.connection.close()

    after = state_file(database).stat()
    assert again.check_first == "Cairn did not close normally last time"
    assert (after.st_ino, after.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert json.loads(state_file(database).read_text(encoding="utf-8"))["in_use"] is True


def test_a_database_without_a_record_is_checked(database: Path) -> None:
    filled(database)
    state_file(database).unlink()  # as a Cairn from before the record left it

    result, check = open_counted(database)
    result.connection.close()

    assert check.calls == 1
    assert result.check_reason == "Cairn has no record of how it last closed"


def test_an_unreadable_record_means_a_check(database: Path) -> None:
    filled(database)
    state_file(database).write_text("{ half a record", encoding="utf-8")

    result, check = open_counted(database)
    result.connection.close()

    assert check.calls == 1


def test_a_file_changed_while_cairn_was_closed_is_checked(database: Path) -> None:
    filled(database)
    other_program = sqlite3.connect(database)
    other_program.execute("UPDATE session SET title = 'changed behind our back'")
    other_program.commit()
    other_program.close()

    result, check = open_counted(database)
    result.connection.close()

    assert check.calls == 1
    assert result.check_reason == "the file changed since Cairn last closed"


def test_closing_cleanly_with_a_connection_still_open_still_means_a_check(
    database: Path,
) -> None:
    filled(database)
    result = open_database(database)
    SessionStore(result.connection).create_session("late write", MODEL)
    mark_clean_shutdown(database)  # too early: the last close writes the file again
    result.connection.close()

    again, check = open_counted(database)
    again.connection.close()

    assert check.calls == 1


def test_the_check_runs_at_open_again_when_the_last_one_is_over_a_week_old(
    database: Path,
) -> None:
    filled(database, now=T0)  # a new database counts as checked at T0

    six_days, check = open_counted(database, now=T0 + timedelta(days=6))
    close_cleanly(six_days)
    assert check.calls == 0

    eight_days, check = open_counted(database, now=T0 + timedelta(days=8))
    close_cleanly(eight_days)
    assert check.calls == 1
    assert eight_days.check_reason == "the last check was 8 days ago"

    next_day, check = open_counted(database, now=T0 + timedelta(days=9))
    next_day.connection.close()
    assert check.calls == 0  # the check at day 8 counts


def test_the_apps_start_leaves_the_weekly_check_to_after_the_first_paint(
    database: Path,
) -> None:
    # Closed cleanly and unchanged: only the weekly check is due. The app's start
    # (check_after_crash_later) does not keep the window waiting for it; the check it runs
    # after the first paint at every start (`checked` False) does it, and counts.
    filled(database, now=T0)
    check = CountingCheck()
    eight_days = open_database(
        database, integrity_check=check, now=T0 + timedelta(days=8), check_after_crash_later=True
    )
    assert check.calls == 0
    assert (eight_days.checked, eight_days.check_first) == (False, None)
    assert check_database(database, now=T0 + timedelta(days=8)).outcome is CheckOutcome.OK
    close_cleanly(eight_days)

    next_day, check = open_counted(database, now=T0 + timedelta(days=9))
    next_day.connection.close()
    assert check.calls == 0


@pytest.mark.parametrize("changed", ["crash", "file changed", "no record"])
def test_the_apps_start_still_checks_first_what_is_more_than_overdue(
    database: Path, changed: str
) -> None:
    filled(database, now=T0)
    if changed == "crash":
        open_database(database, now=T0).connection.close()  # never closed cleanly
    elif changed == "file changed":
        with sqlite3.connect(database) as other:  # another program wrote to it
            other.execute("CREATE TABLE other_program (x)")
        other.close()
    else:
        state_file(database).unlink()
    check = CountingCheck()
    result = open_database(
        database, integrity_check=check, now=T0 + timedelta(days=8), check_after_crash_later=True
    )
    result.connection.close()
    # A crash: shown at once, read-only, checked first thing (check_first); the others,
    # before the window, as always.
    assert (check.calls, result.check_first is not None) == (
        (0, True) if changed == "crash" else (1, False)
    )


def test_a_check_in_the_background_counts_as_the_last_check(database: Path) -> None:
    filled(database, now=T0)
    result, _ = open_counted(database, now=T0 + timedelta(days=5))

    checked = check_database(database, now=T0 + timedelta(days=5))
    close_cleanly(result)

    assert checked.outcome is CheckOutcome.OK
    assert (checked.damaged, checked.message) == (False, None)
    later, check = open_counted(database, now=T0 + timedelta(days=11))
    later.connection.close()
    assert check.calls == 0


def test_damage_found_while_cairn_runs_is_reported_then_set_aside_at_the_next_start(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    filled(database)
    running, check = open_counted(database)
    assert check.calls == 0  # clean shutdown: the window did not wait for a check
    corrupt_pages(database)
    before = digest(database)

    found = check_database(database)

    assert found.outcome is CheckOutcome.DAMAGED
    assert found.damaged
    assert found.message == (
        "Cairn found damage in its database. Quit and start Cairn again: it will set the "
        "damaged file aside and keep a copy."
    )
    assert found.message == DAMAGE_FOUND_MESSAGE
    assert found.detail
    # Not swapped under the running app: the file is where it was, as it was.
    assert digest(database) == before
    assert sorted(path.name for path in database.parent.glob("cairn.db.damaged-*")) == []

    close_cleanly(running)  # the user quits normally
    kept = database.read_bytes()
    again, check = open_counted(database)
    try:
        assert check.calls == 0  # the record suffices: no second check
        assert again.set_aside is not None
        assert again.set_aside.read_bytes() == kept
        assert again.notice is not None and again.set_aside.name in again.notice
        # A fresh database, holding what could be salvaged from the copy (salvage.py).
        assert "Recovered " in again.notice
    finally:
        again.connection.close()
    assert any("damaged" in r.getMessage() for r in caplog.records)

    # The fresh database's record no longer mentions the damage.
    mark_clean_shutdown(database)
    third, check = open_counted(database)
    third.connection.close()
    assert (third.set_aside, check.calls) == (None, 0)


def test_damage_recorded_for_a_file_since_replaced_is_checked_not_set_aside(
    database: Path, tmp_path: Path
) -> None:
    filled(database)
    record_damage(database, "found by a test")
    replacement = tmp_path / "restored.db"
    filled(replacement)
    replacement.replace(database)  # a backup put back while Cairn was closed

    result, check = open_counted(database)
    result.connection.close()

    assert result.set_aside is None
    assert check.calls == 1


def test_a_check_cancelled_before_it_starts_records_nothing(database: Path) -> None:
    filled(database)
    before = state_file(database).read_text(encoding="utf-8")
    cancel = CheckCancel()
    cancel.cancel()
    check = CountingCheck()

    result = check_database(database, cancel=cancel, integrity_check=check)

    assert (result.outcome, result.message, check.calls) == (CheckOutcome.INCOMPLETE, None, 0)
    assert state_file(database).read_text(encoding="utf-8") == before


def test_a_cancel_from_another_thread_interrupts_a_running_check(database: Path) -> None:
    filled(database)
    before = state_file(database).read_text(encoding="utf-8")
    cancel = CheckCancel()
    started = threading.Event()

    def slow_check(connection: sqlite3.Connection) -> list[str]:
        started.set()
        # A query that would run for minutes: only an interrupt ends it soon.
        connection.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 1000000000) "
            "SELECT count(*) FROM n"
        ).fetchall()
        raise AssertionError("not interrupted")

    def cancel_once_started() -> None:
        started.wait(10)
        cancel.cancel()  # as the GUI thread does when Cairn quits

    canceller = threading.Thread(target=cancel_once_started)
    canceller.start()
    result = check_database(database, cancel=cancel, integrity_check=slow_check)
    canceller.join(10)

    assert result.outcome is CheckOutcome.INCOMPLETE  # slow_check raises when not interrupted
    assert state_file(database).read_text(encoding="utf-8") == before


def test_checking_a_garbage_file_reports_damage(database: Path) -> None:
    database.parent.mkdir(parents=True)
    database.write_bytes(b"not a database at all" * 100)

    result = check_database(database)

    assert result.damaged
    assert result.detail == "file is not a database"


def test_a_newer_database_is_refused_untouched_even_after_a_clean_shutdown(
    database: Path,
) -> None:
    filled(database)
    newer_cairn = sqlite3.connect(database)
    newer_cairn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer_cairn.close()
    before = {path.name: digest(path) for path in database.parent.iterdir()}

    with pytest.raises(DatabaseTooNewError):
        open_database(database)

    assert {path.name: digest(path) for path in database.parent.iterdir()} == before
    # The background check only ever runs on a file open_database accepted; run on this
    # one anyway, it reads through SQLite alone (which may add its empty side files)
    # and leaves the database itself as it was.
    check_database(database)
    assert digest(database) == before[database.name]


def test_damage_a_store_runs_into_is_recorded_so_the_next_start_sets_it_aside(
    database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    filled(database)
    running, _check = open_counted(database)
    corrupt_pages(database)
    store = SessionStore(running.connection, database=database)
    with pytest.raises(StorageError) as raised:
        for session in store.list_sessions():
            store.messages(session.id)
    assert "set the damaged file aside" in raised.value.message
    close_cleanly(running)
    again, check = open_counted(database)
    try:
        assert check.calls == 0, "the damage was recorded when it was met"
        assert again.set_aside is not None
    finally:
        again.connection.close()
    caplog.clear()
