"""A database as an older Cairn left it: made by its migrations only, written with SQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.store.migrations import MIGRATIONS, migrate

WRITTEN_AT = "2025-03-05T09:30:00.000000+00:00"


def old_database(
    path: Path, conversations: Mapping[str, Sequence[str]], *, version: int = 4
) -> None:
    """Make `path` at schema `version` with `conversations` (title → texts, user and
    Claude taking turns), as a Cairn of that version would have left it."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        assert migrate(connection, MIGRATIONS[:version]) == version
        connection.execute("BEGIN")
        for number, (title, texts) in enumerate(conversations.items(), 1):
            session_id = f"old-{number}"
            connection.execute(
                "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
                "VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', ?)",
                (session_id, title, WRITTEN_AT, WRITTEN_AT, len(texts)),
            )
            connection.executemany(
                "INSERT INTO message (session_id, seq, role, content, created_at, "
                "token_estimate) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        session_id,
                        seq,
                        "user" if seq % 2 else "assistant",
                        text,
                        WRITTEN_AT,
                        max(1, len(text) // 4),
                    )
                    for seq, text in enumerate(texts, 1)
                ],
            )
        connection.execute("COMMIT")
    finally:
        connection.close()
