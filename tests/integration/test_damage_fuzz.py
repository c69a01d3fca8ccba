"""Hypothesis over damaged files (issue 21 item 10): a database left as a crash leaves
it (its write-ahead log and index beside it), then zeroed, cut or flipped at random
places in the main file, the log or the index.

Whatever the damage, Cairn opens (a fresh database when nothing else can be had), or
refuses a header that says "a newer Cairn" leaving the files untouched; and nothing is
dropped silently: when fewer messages come back than were saved, the user is told, and
a copy of the files as they were is set aside, unless the log and its index were both
hurt, which leaves no witness of what the log held. Bounded: a few dozen examples.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import DatabaseTooNewError
from app.core.models import Role
from app.store import SessionStore, open_database

SAVED = 30
SIDES = ("", "-wal", "-shm")


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the files of a database of `SAVED` messages, copied while its
    connection was open (a crash's leftovers)."""
    folder = tmp_path_factory.mktemp("crash")
    database = folder / "cairn.db"
    opened = open_database(database)
    opened.connection.execute("PRAGMA wal_autocheckpoint = 0")
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("Walk", "claude-sonnet-4-6")
    store.close()
    opened = open_database(database)  # checkpointed: the messages below live in the log
    opened.connection.execute("PRAGMA wal_autocheckpoint = 0")
    store = SessionStore(opened.connection, database=database)
    for number in range(SAVED):
        role = (Role.USER, Role.ASSISTANT)[number % 2]
        store.append_message(session.id, role, f"Message {number}: the heron count was {number}.")
    template = tmp_path_factory.mktemp("template")
    for side in SIDES:
        shutil.copyfile(f"{database}{side}", template / f"cairn.db{side}")
    store.close()
    return template


@st.composite
def damage(draw: st.DrawFn, sizes: dict[str, int]) -> list[tuple[str, str, int, int]]:
    """One to three (file, how, offset, size) damages."""
    hurt = []
    for _ in range(draw(st.integers(1, 3))):
        side = draw(st.sampled_from(SIDES))
        size = sizes[side]
        how = draw(st.sampled_from(["zero", "flip", "cut", "garbage"]))
        offset = draw(st.integers(0, max(0, size - 1)))
        length = draw(st.sampled_from([1, 8, 24, 100, 4096, 4120, 20_000]))
        hurt.append((side, how, offset, length))
    return hurt


def apply(path: Path, how: str, offset: int, length: int) -> None:
    data = bytearray(path.read_bytes())
    offset = min(offset, len(data))  # an earlier cut may have shortened it
    end = min(len(data), offset + length)
    if how == "zero":
        data[offset:end] = bytes(end - offset)
    elif how == "flip":
        data[offset:end] = bytes(byte ^ 0x5A for byte in data[offset:end])
    elif how == "garbage":
        data[offset:end] = os.urandom(end - offset)
    else:
        del data[offset:]
    path.write_bytes(bytes(data))


@settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_damage_is_noticed_counted_and_kept_never_silently_dropped(
    crashed: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("damaged")
    database = folder / "cairn.db"
    sizes = {}
    for side in SIDES:
        shutil.copyfile(crashed / f"cairn.db{side}", f"{database}{side}")
        sizes[side] = Path(f"{database}{side}").stat().st_size
    hurt = data.draw(damage(sizes))
    for side, how, offset, length in hurt:
        apply(Path(f"{database}{side}"), how, offset, length)

    before = {side: Path(f"{database}{side}").read_bytes() for side in SIDES}
    try:
        opened = open_database(database)
    except DatabaseTooNewError:
        # Four bytes of the header say "a newer Cairn": refused, the files untouched.
        assert {side: Path(f"{database}{side}").read_bytes() for side in SIDES} == before
        return
    try:
        found = opened.connection.execute(
            "SELECT count(*) FROM message WHERE content LIKE 'Message %'"
        ).fetchone()[0]
    finally:
        opened.connection.close()

    assert found <= SAVED
    kept = [path for path in folder.iterdir() if ".damaged-" in path.name]
    # The index (-shm) is the only witness of how long the log was: with its header hurt
    # too, a log cut short or blanked looks like a shorter log, to SQLite and to Cairn.
    # (The passive checkpoint after each reply keeps what only the log holds small.)
    witness_lost = any(
        side == "-shm" and (how == "cut" or offset < 136) for side, how, offset, _ in hurt
    )
    if witness_lost and any(side == "-wal" for side, *_ in hurt):
        return
    if found < SAVED:
        assert opened.notice is not None, f"{SAVED - found} messages dropped silently: {hurt}"
        assert kept, f"no copy set aside: {hurt}"
    if kept:
        assert opened.notice is not None, "a copy set aside is said"
    shutil.rmtree(folder, ignore_errors=True)
