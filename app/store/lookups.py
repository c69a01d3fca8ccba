"""Keeping the archive searches Claude ran while writing a reply (table `lookup`).

Each lookup is saved as soon as it ran, on the reply job's thread, so the
transcript shows it after a restart even if the reply was cut short; deleting the
reply (or its conversation) deletes its lookups (ON DELETE CASCADE).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from app.core.lookup import Lookup
from app.store.batches import in_batches
from app.store.owned import ConnectionStore
from app.store.sessions import _stamp
from app.store.transactions import translated_errors, write_transaction


class LookupStore(ConnectionStore):
    """Saves and reads lookups for one thread."""

    def add(self, lookup: Lookup) -> None:
        """Save one lookup of a reply (its message must exist)."""
        with write_transaction(self._connection, "save an archive search", self.database) as cur:
            cur.execute(
                "INSERT INTO lookup (message_id, ordinal, query, results_json, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    lookup.message_id,
                    lookup.ordinal,
                    lookup.query,
                    lookup.hits_json(),
                    _stamp(lookup.created_at),
                ),
            )

    def for_messages(self, message_ids: Collection[int]) -> dict[int, tuple[Lookup, ...]]:
        """The lookups of these replies, in the order they ran; replies without any left out."""
        found: dict[int, list[Lookup]] = {}
        with translated_errors("read the archive searches", self.database):
            for chunk, marks in in_batches(message_ids):
                rows = self._connection.execute(
                    "SELECT message_id, ordinal, query, results_json, created_at FROM lookup "
                    f"WHERE message_id IN ({marks}) ORDER BY message_id, ordinal",
                    chunk,
                ).fetchall()
                for message_id, ordinal, query, results, created_at in rows:
                    found.setdefault(int(message_id), []).append(
                        Lookup(
                            message_id=int(message_id),
                            ordinal=int(ordinal),
                            query=str(query),
                            hits=Lookup.hits_from_json(str(results)),
                            created_at=datetime.fromisoformat(str(created_at)),
                        )
                    )
        return {message_id: tuple(lookups) for message_id, lookups in found.items()}
