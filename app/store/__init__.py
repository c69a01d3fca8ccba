"""What Cairn keeps: conversations, messages and summaries in one SQLite file (DESIGN §2).

Imports `app.core` only; never Qt. Each thread uses its own connection.
"""

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
