"""A checksum of every message's text and every summary's content (migration 13).

SQLite keeps no checksum of its pages: one bit flipped inside a message's text, on
the disk or in a backup, reads back as a different message without a word. Each
write of a text therefore stores a 64-bit BLAKE2b of it beside it (`checksum`), so
a later reading can tell the text it finds from the text that was saved:

- `find_altered` reads every text and compares (the background integrity check, and
  before each backup);
- `put_back` restores an altered text from the newest backup holding it intact, and
  marks (`damaged`) one no backup holds, so the window never shows it silently.

A row whose checksum is NULL (written by hand, or by a Cairn before this one) is not
counted as altered; `find_altered` gives it one.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.store.batches import Key, in_batches

log = logging.getLogger(__name__)

_SEPARATOR = "\x00"


def text_checksum(text: str) -> int:
    """A message's checksum: a signed 64-bit BLAKE2b of its UTF-8 text (fits SQLite)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def summary_checksum(narrative: str, key_points: str, facets: str) -> int:
    """A summary's checksum, over its text and its two JSON columns as stored."""
    return text_checksum(_SEPARATOR.join((narrative, key_points, facets)))


@dataclass(frozen=True)
class Altered:
    """The rows whose text no longer matches its checksum.

    Attributes:
        messages: ids of altered messages not yet marked damaged.
        summaries: ids of altered summaries not yet marked damaged.
        unchecked: rows that had no checksum and were given one.
    """

    messages: tuple[int, ...] = ()
    summaries: tuple[str, ...] = ()
    unchecked: int = 0

    @property
    def count(self) -> int:
        return len(self.messages) + len(self.summaries)


@dataclass(frozen=True)
class Repair:
    """What `put_back` did.

    Attributes:
        restored: texts put back from a backup.
        marked: texts no backup holds intact, marked damaged on screen.
        backups: the names of the backups the restored texts came from.
    """

    restored: int = 0
    marked: int = 0
    backups: tuple[str, ...] = field(default=())

    @property
    def found(self) -> int:
        return self.restored + self.marked

    def sentence(self) -> str | None:
        """Plain words for the user, or None when nothing was found."""
        if not self.found:
            return None
        one = self.found == 1
        parts = [
            f"Cairn found {self.found} saved {'text' if one else 'texts'} that had changed "
            f"on the disk since {'it was' if one else 'they were'} written."
        ]
        if self.restored:
            source = ", ".join(self.backups[:2]) + (" and others" if len(self.backups) > 2 else "")
            were = "was" if self.restored == 1 else "were"
            parts.append(f"{self.restored} {were} put back as written, from the backup {source}.")
        if self.marked:
            single = self.marked == 1
            parts.append(
                f"{self.marked} could not be put back: no backup holds "
                f"{'it' if single else 'them'} intact, so {'it is' if single else 'they are'} "
                f"marked “damaged” where {'it appears' if single else 'they appear'}."
            )
        return " ".join(parts)


def find_altered(connection: sqlite3.Connection) -> Altered:
    """Every message and summary whose text no longer matches its checksum (those
    already marked damaged aside); rows without a checksum get one. Reads in a single
    read transaction, then writes the missing checksums in one short one."""
    altered_messages: list[int] = []
    altered_summaries: list[str] = []
    missing_messages: list[tuple[int, int]] = []
    missing_summaries: list[tuple[int, str]] = []
    for message_id, content, checksum in connection.execute(
        "SELECT id, content, checksum FROM message WHERE damaged = 0"
    ):
        actual = text_checksum(str(content))
        if checksum is None:
            missing_messages.append((actual, message_id))
        elif actual != checksum:
            altered_messages.append(int(message_id))
    for summary_id, narrative, key_points, facets, checksum in connection.execute(
        "SELECT id, narrative, key_points, facets, checksum FROM summary WHERE damaged = 0"
    ):
        actual = summary_checksum(str(narrative), str(key_points), str(facets))
        if checksum is None:
            missing_summaries.append((actual, str(summary_id)))
        elif actual != checksum:
            altered_summaries.append(str(summary_id))
    if missing_messages or missing_summaries:
        _give_checksums(connection, missing_messages, missing_summaries)
    return Altered(
        tuple(altered_messages),
        tuple(altered_summaries),
        len(missing_messages) + len(missing_summaries),
    )


def put_back(connection: sqlite3.Connection, altered: Altered, backups: Sequence[Path]) -> Repair:
    """Restore each altered text from the newest of `backups` (newest first) holding
    it intact; mark the rest damaged. One short write transaction at the end."""
    if not altered.count:
        return Repair()
    messages = _stored_checksums(connection, "message", "id", altered.messages)
    summaries = _stored_checksums(connection, "summary", "id", altered.summaries)
    found_messages: dict[int, tuple[str, int]] = {}
    found_summaries: dict[str, tuple[str, str, str, int]] = {}
    sources: dict[int | str, str] = {}
    for backup in backups:
        wanted_messages = [key for key in messages if key not in found_messages]
        wanted_summaries = [key for key in summaries if key not in found_summaries]
        if not wanted_messages and not wanted_summaries:
            break
        try:
            source = sqlite3.connect(f"{backup.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as error:
            log.info("Cannot read the backup %s: %s", backup, error)
            continue
        try:
            for message_id, (content, checksum) in _intact_messages(
                source, wanted_messages
            ).items():
                if checksum == messages[message_id]:
                    found_messages[message_id] = (content, checksum)
                    sources[message_id] = backup.name
            for summary_id, row in _intact_summaries(source, wanted_summaries).items():
                if row[3] == summaries[summary_id]:
                    found_summaries[summary_id] = row
                    sources[summary_id] = backup.name
        except sqlite3.Error as error:
            log.info("Cannot read the backup %s: %s", backup, error)
        finally:
            source.close()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(
            "UPDATE message SET content = ?, checksum = ? WHERE id = ?",
            [(content, checksum, key) for key, (content, checksum) in found_messages.items()],
        )
        connection.executemany(
            "UPDATE summary SET narrative = ?, key_points = ?, facets = ?, checksum = ? "
            "WHERE id = ?",
            [(*row, key) for key, row in found_summaries.items()],
        )
        connection.executemany(
            "UPDATE message SET damaged = 1 WHERE id = ?",
            [(key,) for key in messages if key not in found_messages],
        )
        connection.executemany(
            "UPDATE summary SET damaged = 1 WHERE id = ?",
            [(key,) for key in summaries if key not in found_summaries],
        )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    restored = len(found_messages) + len(found_summaries)
    repair = Repair(
        restored=restored,
        marked=altered.count - restored,
        backups=tuple(dict.fromkeys(sources.values())),
    )
    log.warning(
        "Texts altered on the disk: %d found, %d put back from backups (%s), %d marked damaged.",
        repair.found,
        repair.restored,
        ", ".join(repair.backups) or "none",
        repair.marked,
    )
    return repair


def altered_in_copy(path: Path) -> int:
    """How many texts of the database file `path` (a backup just made) do not match their
    checksum, those already marked damaged aside; reads only."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        altered = 0
        for content, checksum in connection.execute(
            "SELECT content, checksum FROM message WHERE damaged = 0 AND checksum IS NOT NULL"
        ):
            altered += text_checksum(str(content)) != checksum
        for narrative, key_points, facets, checksum in connection.execute(
            "SELECT narrative, key_points, facets, checksum FROM summary "
            "WHERE damaged = 0 AND checksum IS NOT NULL"
        ):
            altered += summary_checksum(str(narrative), str(key_points), str(facets)) != checksum
        return altered
    finally:
        connection.close()


# --- inside ------------------------------------------------------------------------------


def _give_checksums(
    connection: sqlite3.Connection,
    messages: list[tuple[int, int]],
    summaries: list[tuple[int, str]],
) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(
            "UPDATE message SET checksum = ? WHERE id = ? AND checksum IS NULL", messages
        )
        connection.executemany(
            "UPDATE summary SET checksum = ? WHERE id = ? AND checksum IS NULL", summaries
        )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _stored_checksums(
    connection: sqlite3.Connection, table: str, key: str, keys: Collection[Key]
) -> dict[Key, int]:
    found: dict[Key, int] = {}
    for batch, marks in in_batches(keys):
        for row_key, checksum in connection.execute(
            f"SELECT {key}, checksum FROM {table} WHERE {key} IN ({marks})", batch
        ):
            found[row_key] = int(checksum)
    return found


def _intact_messages(
    source: sqlite3.Connection, keys: Collection[int]
) -> dict[int, tuple[str, int]]:
    found: dict[int, tuple[str, int]] = {}
    if not _has_checksums(source, "message"):
        return found
    for batch, marks in in_batches(keys):
        for key, content, checksum in source.execute(
            f"SELECT id, content, checksum FROM message WHERE id IN ({marks})", batch
        ):
            if checksum is not None and text_checksum(str(content)) == checksum:
                found[key] = (str(content), int(checksum))
    return found


def _intact_summaries(
    source: sqlite3.Connection, keys: Collection[str]
) -> dict[str, tuple[str, str, str, int]]:
    found: dict[str, tuple[str, str, str, int]] = {}
    if not _has_checksums(source, "summary"):
        return found
    for batch, marks in in_batches(keys):
        for key, narrative, key_points, facets, checksum in source.execute(
            f"SELECT id, narrative, key_points, facets, checksum FROM summary "
            f"WHERE id IN ({marks})",
            batch,
        ):
            texts = (str(narrative), str(key_points), str(facets))
            if checksum is not None and summary_checksum(*texts) == checksum:
                found[key] = (*texts, int(checksum))
    return found


def _has_checksums(source: sqlite3.Connection, table: str) -> bool:
    """Whether `table` of `source` (a backup, perhaps older than migration 13) has them."""
    return "checksum" in {str(row[1]) for row in source.execute(f"PRAGMA table_info({table})")}
