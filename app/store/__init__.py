"""What Cairn keeps: conversations, messages and summaries in one SQLite file (DESIGN §2).

Imports `app.core` only; never Qt. Each thread uses its own connection.

Each name is imported from its module when first asked for (PEP 562): importing one
module of the package (the window imports a few to paint) then loads only that one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.store.database import OpenResult, connect, open_database
    from app.store.errors import (
        MessageArchivedError,
        MessageNotFoundError,
        RecordNotFoundError,
        SessionNotFoundError,
        SummaryNotActiveError,
        SummaryNotFoundError,
    )
    from app.store.instance_lock import InstanceLock
    from app.store.migrations import SCHEMA_VERSION
    from app.store.originals import OriginalsDeletedError, OriginalsStore
    from app.store.search import ArchiveSearch
    from app.store.sessions import SessionStore
    from app.store.summaries import SummaryStore

_WHERE = {
    "OpenResult": "app.store.database",
    "connect": "app.store.database",
    "open_database": "app.store.database",
    "MessageArchivedError": "app.store.errors",
    "MessageNotFoundError": "app.store.errors",
    "RecordNotFoundError": "app.store.errors",
    "SessionNotFoundError": "app.store.errors",
    "SummaryNotActiveError": "app.store.errors",
    "SummaryNotFoundError": "app.store.errors",
    "InstanceLock": "app.store.instance_lock",
    "SCHEMA_VERSION": "app.store.migrations",
    "OriginalsDeletedError": "app.store.originals",
    "OriginalsStore": "app.store.originals",
    "ArchiveSearch": "app.store.search",
    "SessionStore": "app.store.sessions",
    "SummaryStore": "app.store.summaries",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "SCHEMA_VERSION",
    "ArchiveSearch",
    "InstanceLock",
    "MessageArchivedError",
    "MessageNotFoundError",
    "OpenResult",
    "OriginalsDeletedError",
    "OriginalsStore",
    "RecordNotFoundError",
    "SessionNotFoundError",
    "SessionStore",
    "SummaryNotActiveError",
    "SummaryNotFoundError",
    "SummaryStore",
    "connect",
    "open_database",
]
