"""Conversations written straight into this test's data folder (CAIRN_HOME), before a
window opens on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.core.paths import AppPaths
from app.store.database import mark_clean_shutdown, open_database
from app.store.sessions import SessionStore


@contextmanager
def data_folder(*, clean: bool = True) -> Iterator[tuple[AppPaths, SessionStore]]:
    """This test's data folder, and a store on its database (opened as Cairn opens it);
    closed afterwards, cleanly as after a normal quit when `clean`, else left "in use"
    as after a crash (the next start checks the database)."""
    paths = AppPaths.from_environment()
    paths.ensure()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    try:
        yield paths, store
    finally:
        store.close()
        if clean:
            mark_clean_shutdown(opened.path)
