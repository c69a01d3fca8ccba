"""Salvage figures: how many of 200 messages come back from a damaged cairn.db.

Run: .venv/bin/python bench/bench_salvage.py

Each case builds a real database of 4 conversations × 50 messages (~600 characters
each) with `open_database` and `SessionStore`, closes it cleanly, damages the file
the way a failing disk or a bad copy does, then opens it as Cairn does at start:
the damage is found, the file set aside and salvaged into a fresh database
(app/store/salvage.py). Prints the messages recovered, the notice's figure, and
how long the open took. Not a pass/fail test.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.models import Role  # noqa: E402
from app.store import SessionStore, open_database  # noqa: E402
from app.store.database import mark_clean_shutdown  # noqa: E402

PAGE = 4096
SESSIONS, EACH = 4, 50


def build(database: Path) -> None:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    for number in range(SESSIONS):
        session = store.create_session(f"Walk {number}", "claude-sonnet-4-6")
        for index in range(EACH):
            role = (Role.USER, Role.ASSISTANT)[index % 2]
            store.append_message(session.id, role, f"Message {index} of walk {number}. " * 20)
    store.close()
    mark_clean_shutdown(database)


def zero_pages(first_from_end: int, count: int) -> Callable[[Path], None]:
    def damage(database: Path) -> None:
        pages = database.stat().st_size // PAGE
        with database.open("r+b") as file:
            file.seek((pages - first_from_end) * PAGE)
            file.write(b"\x00" * PAGE * count)

    return damage


def zero_middle(count: int) -> Callable[[Path], None]:
    def damage(database: Path) -> None:
        pages = database.stat().st_size // PAGE
        with database.open("r+b") as file:
            file.seek((pages // 2) * PAGE)
            file.write(b"\x00" * PAGE * count)

    return damage


def truncate(pages: int) -> Callable[[Path], None]:
    def damage(database: Path) -> None:
        with database.open("r+b") as file:
            file.truncate(database.stat().st_size - pages * PAGE)

    return damage


def garbage_header(database: Path) -> None:
    with database.open("r+b") as file:
        file.write(b"\xff" * 100)


CASES: list[tuple[str, Callable[[Path], None]]] = [
    ("1 page zeroed near the end", zero_pages(3, 1)),
    ("1 page zeroed in the middle", zero_middle(1)),
    ("8 pages zeroed in the middle", zero_middle(8)),
    ("last 4 pages cut off", truncate(4)),
    ("half the file cut off", lambda db: truncate(db.stat().st_size // PAGE // 2)(db)),
    ("header overwritten", garbage_header),
]


def main() -> int:
    print(f"{'damage':<30} {'recovered':>9} {'of':>5}  {'open ms':>8}  notice")
    for name, damage in CASES:
        with tempfile.TemporaryDirectory(prefix="cairn-bench-salvage-") as folder:
            database = Path(folder) / "cairn.db"
            build(database)
            pages = database.stat().st_size // PAGE
            damage(database)
            started = time.perf_counter()
            opened = open_database(database)
            took = (time.perf_counter() - started) * 1000
            recovered = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
            opened.connection.close()
            said = (opened.notice or "").split("Recovered ")[-1] if opened.notice else "—"
            print(
                f"{name:<30} {recovered:>9} {SESSIONS * EACH:>5}  {took:>8.1f}  "
                f"{'Recovered ' + said if 'Recovered' in (opened.notice or '') else said}"
                f"  ({pages} pages)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
