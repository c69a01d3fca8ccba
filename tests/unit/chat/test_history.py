"""History: searches as jobs on the service's runner (only the latest answered), failures
as a notice, and the History window's synchronous reads (DESIGN §8)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from app.chat.history import SEARCH_FAILED, History
from app.chat.loop import QueueLoop
from app.chat.runner import JobRunner
from app.core.models import Role
from app.core.search import Author, SearchPage, SearchQuery
from app.store import ArchiveSearch, SessionStore, open_database
from tests.unit.chat.conftest import Chat, RecordingEvents

MODEL = "claude-sonnet-4-5"


def test_the_service_searches_what_was_said(start_chat: Callable[..., Chat]) -> None:
    chat = start_chat()
    chat.send("Where is the best pastel de nata in Lisbon?")
    pages: list[SearchPage] = []
    you = frozenset({Author.YOU})  # the fake server's reply may repeat the words
    chat.service.history.search(SearchQuery(text="nata lisbon", authors=you), pages.append)
    chat.run_until(lambda: bool(pages))
    [page] = pages
    assert page.total == 1 and page.hits[0].session_id == chat.service.current.state.session_id
    sessions: list[list[str]] = []
    chat.service.history.matching_sessions("pastel", sessions.append)
    chat.run_until(lambda: bool(sessions))
    assert sessions == [[chat.service.current.state.session_id]]
    [overview] = chat.service.history.conversations()
    assert overview.messages == 2
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    [live] = chat.service.history.timeline(session_id)
    assert (live.summary, live.first_seq, live.last_seq) == (None, 1, 2)


class GatedSearch(ArchiveSearch):
    """A search that waits at `gate` before answering, to hold a job in flight."""

    def __init__(self, database: Path, gate: threading.Event) -> None:
        opened = ArchiveSearch.open(database)
        super().__init__(opened._connection, database=database)
        self._gate = gate

    def search(self, query: SearchQuery) -> SearchPage:
        assert self._gate.wait(10)
        return super().search(query)


def history_on(
    database: Path, make: Callable[[], ArchiveSearch]
) -> tuple[History, QueueLoop, JobRunner, RecordingEvents]:
    loop = QueueLoop()
    runner = JobRunner(loop)
    events = RecordingEvents()
    return History(runner, events, make), loop, runner, events


def filled(database: Path) -> None:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "Lisbon and Porto")
    store.close()


def test_a_newer_search_supersedes_an_older_one(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    filled(database)
    first_gate, second_gate = threading.Event(), threading.Event()
    gates = iter((first_gate, second_gate))
    history, loop, runner, events = history_on(database, lambda: GatedSearch(database, next(gates)))
    delivered: list[str] = []
    history.search(SearchQuery(text="lisbon"), lambda page: delivered.append(page.query.text))
    history.search(SearchQuery(text="porto"), lambda page: delivered.append(page.query.text))
    first_gate.set()  # the older one finishes first: its page is dropped
    second_gate.set()
    loop.run_until(lambda: runner.running == 0 and bool(delivered))
    loop.run_pending()
    assert delivered == ["porto"]
    assert events.named("notice_raised") == []
    history.close()
    runner.shutdown()


def test_a_failed_search_says_so_and_delivers_nothing(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    filled(database)
    database.unlink()  # the file is gone: opening the search's connection fails
    history, loop, runner, events = history_on(database, lambda: ArchiveSearch.open(database))
    delivered: list[SearchPage] = []
    history.search(SearchQuery(text="lisbon"), delivered.append)
    loop.run_until(lambda: bool(events.named("notice_raised")))
    [(title, text)] = events.named("notice_raised")
    assert title == SEARCH_FAILED and "database" in text
    assert delivered == []
    runner.shutdown()


def test_closing_drops_a_search_in_flight(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    filled(database)
    gate = threading.Event()
    history, loop, runner, events = history_on(database, lambda: GatedSearch(database, gate))
    delivered: list[SearchPage] = []
    history.search(SearchQuery(text="lisbon"), delivered.append)
    history.close()
    gate.set()
    loop.run_until(lambda: runner.running == 0)
    loop.run_pending()
    assert delivered == [] and events.named("notice_raised") == []
    runner.shutdown()
