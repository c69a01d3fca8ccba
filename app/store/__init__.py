"""What Cairn keeps: conversations and messages in one SQLite file (DESIGN §2).

Imports `app.core` only; never Qt. Each thread uses its own connection.
"""

from app.store.database import OpenResult, connect, open_database
from app.store.errors import MessageNotFoundError, RecordNotFoundError, SessionNotFoundError
from app.store.instance_lock import InstanceLock
from app.store.migrations import SCHEMA_VERSION
from app.store.sessions import SessionStore

__all__ = [
    "SCHEMA_VERSION",
    "InstanceLock",
    "MessageNotFoundError",
    "OpenResult",
    "RecordNotFoundError",
    "SessionNotFoundError",
    "SessionStore",
    "connect",
    "open_database",
]
