"""The summary process: summaries made in a child, reused, cancelled, and survived."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.chat.events import SummaryPreview
from app.chat.jobs import SummaryRequest
from app.chat.loop import QueueLoop
from app.chat.runner import JobRunner
from app.chat.summary_process import SUMMARY_NICENESS, WARM_SHARE, SummaryCall, SummaryProcess
from app.core.catalog import ModelInfo
from app.core.context import ContextBreakdown, ContextState
from app.core.errors import UserFacingError
from app.core.models import Role
from app.core.summarization_config import SummarizationConfig
from app.core.summary import (
    EventOutcome,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryTrigger,
)
from app.store import SessionStore, SummaryStore, open_database

MODEL = ModelInfo(id="m", display_name="M", max_input_tokens=200_000, max_tokens=8_192)


@pytest.fixture
def process() -> Iterator[SummaryProcess]:
    process = SummaryProcess()
    yield process
    process.close()
    assert not process.started


@pytest.fixture
def conversation(tmp_path: Path) -> tuple[Path, str]:
    database = tmp_path / "cairn.db"
    store = SessionStore(open_database(database).connection, database=database)
    session = store.create_session("Walks", MODEL.id)
    for index in range(20):
        role = Role.USER if index % 2 == 0 else Role.ASSISTANT
        store.append_message(session.id, role, f"Message {index} about walk_{index}.gpx.")
    store.close()
    return database, session.id


def call(database: Path, session_id: str) -> SummaryCall:
    return SummaryCall(
        request=SummaryRequest(
            session_id=session_id,
            model=MODEL,
            system_prompt="",
            draft="",
            trigger=SummaryTrigger.MANUAL,
            decision=None,
            instructions=None,
            config=SummarizationConfig(mode="rule"),
        ),
        database=database,
        api_key=None,
        base_url=None,
        calibrations={"schema_version": 1, "models": {}},
    )


def test_a_summary_is_made_in_the_child_which_stays_for_the_next(
    process: SummaryProcess, conversation: tuple[Path, str], caplog: pytest.LogCaptureFixture
) -> None:
    database, session_id = conversation
    outcome = process.run(call(database, session_id), cancelled=lambda: False)
    assert outcome.outcome is EventOutcome.OK and outcome.covered_messages > 0
    child = process._process
    assert child is not None and child.pid != os.getpid()
    repo = SummaryStore.open(database)
    try:
        assert repo.check_coverage(session_id) == []
        assert [s.id for s in repo.active_summaries(session_id)] == [
            s.id for s in outcome.active_after
        ]
    finally:
        repo.close()
    again = process.run(call(database, session_id), cancelled=lambda: False)
    assert process._process is child, "the same child makes the next one"
    assert again.outcome in (None, EventOutcome.OK)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no niceness here")
def test_the_child_yields_the_cpu_to_the_window(
    process: SummaryProcess, conversation: tuple[Path, str]
) -> None:
    """On a busy machine the window gets a CPU before the summary does (issue 20)."""
    database, session_id = conversation
    process.run(call(database, session_id), cancelled=lambda: False)
    child = process._process
    assert child is not None and child.pid is not None
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(mine + SUMMARY_NICENESS, 19)


def test_a_cancelled_summary_changes_nothing(
    process: SummaryProcess, conversation: tuple[Path, str]
) -> None:
    database, session_id = conversation
    outcome = process.run(call(database, session_id), cancelled=lambda: True)
    assert not outcome.changed
    repo = SummaryStore.open(database)
    try:
        assert repo.active_summaries(session_id) == []
    finally:
        repo.close()


def test_a_child_that_dies_is_said_plainly_and_replaced(
    process: SummaryProcess, conversation: tuple[Path, str], caplog: pytest.LogCaptureFixture
) -> None:
    database, session_id = conversation
    process.run(call(database, session_id), cancelled=lambda: False)
    child = process._process
    assert child is not None

    def killed_while_running() -> bool:
        if child.is_alive():
            child.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
            child.join(5)
        return False

    with pytest.raises(UserFacingError) as raised:
        process.run(call(database, session_id), cancelled=killed_while_running)
    assert "Nothing was changed" in raised.value.message
    # Between summaries too: the next one simply starts a new child.
    outcome = process.run(call(database, session_id), cancelled=lambda: False)
    assert process._process is not child and outcome.outcome in (None, EventOutcome.OK)
    caplog.clear()


def test_the_childs_log_reaches_the_app(
    process: SummaryProcess, conversation: tuple[Path, str], caplog: pytest.LogCaptureFixture
) -> None:
    database, session_id = conversation
    caplog.set_level(logging.INFO)
    request = call(database, session_id)
    hybrid = request.request.config.with_changes(mode="hybrid")
    no_key = SummaryCall(
        request=SummaryRequest(**{**request.request.__dict__, "config": hybrid}),
        database=database,
        api_key=None,
        base_url=None,
        calibrations=request.calibrations,
    )
    outcome = process.run(no_key, cancelled=lambda: False)
    assert outcome.outcome is EventOutcome.FALLBACK, "no key: a basic summary stands in"
    assert any("basic summary" in record.getMessage() for record in caplog.records)
    caplog.clear()


def reviewed(database: Path, session_id: str) -> SummaryCall:
    plain = call(database, session_id)
    return replace(plain, request=replace(plain.request, review=True))


def active(database: Path, session_id: str) -> list[Summary]:
    repo = SummaryStore.open(database)
    try:
        return repo.active_summaries(session_id)
    finally:
        repo.close()


def test_the_child_waits_for_the_preview_and_saves_the_edited_drafts(
    process: SummaryProcess, conversation: tuple[Path, str]
) -> None:
    database, session_id = conversation
    shown: list[SummaryPreview] = []

    def edit(preview: SummaryPreview) -> list[SummaryDraft]:
        assert active(database, session_id) == [], "nothing saved while the user looks"
        shown.append(preview)
        content = SummaryContent(narrative="Walks and their files.")
        return [d.model_copy(update={"content": content}) for d in preview.drafts]

    outcome = process.run(reviewed(database, session_id), cancelled=lambda: False, review=edit)
    (preview,) = shown
    assert (preview.condensed, preview.kept) == (14, 6)
    assert preview.tokens_before == outcome.state_before.used, "measured the same way"
    assert preview.tokens_after > 0
    assert outcome.covered_messages == 14
    assert [s.content.narrative for s in active(database, session_id)] == ["Walks and their files."]


def test_a_discarded_or_cancelled_preview_changes_nothing_and_the_child_serves_on(
    process: SummaryProcess, conversation: tuple[Path, str]
) -> None:
    database, session_id = conversation
    outcome = process.run(
        reviewed(database, session_id), cancelled=lambda: False, review=lambda _p: None
    )
    assert outcome.outcome is EventOutcome.ABORTED and not outcome.changed
    cancelled = False

    def cancel_while_looking(preview: SummaryPreview) -> tuple[SummaryDraft, ...]:
        nonlocal cancelled
        cancelled = True  # Cancel pressed while the preview was shown
        return preview.drafts

    outcome = process.run(
        reviewed(database, session_id),
        cancelled=lambda: cancelled,
        review=cancel_while_looking,
    )
    assert outcome.outcome is EventOutcome.ABORTED and active(database, session_id) == []
    repo = SummaryStore.open(database)
    try:
        assert [e.detail for e in repo.events(session_id)] == ["discarded", "cancelled"]
    finally:
        repo.close()
    outcome = process.run(call(database, session_id), cancelled=lambda: False)
    assert outcome.outcome is EventOutcome.OK, "the same child makes the next one"


def test_the_module_loads_nothing_a_summary_needs_before_the_child_lowers_its_priority() -> None:
    """Unpickling `serve` imports this module in the child, at the app's priority until
    `serve` runs: it must stay light (issue 20)."""
    probe = (
        "import sys, app.chat.summary_process; "
        "print(sorted(m for m in ('app.chat.jobs', 'app.core.engine', 'pydantic', 'anthropic', "
        "'tiktoken') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, encoding="utf-8", check=True
    ).stdout.strip()
    assert loaded == "[]"


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no niceness here")
def test_the_child_yields_the_cpu_from_its_first_instruction(process: SummaryProcess) -> None:
    """The app lowers the child's priority as soon as it exists, before its start-up."""
    assert process.warm(with_sdk=False)
    child = process._process
    assert child is not None and child.pid is not None
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(mine + SUMMARY_NICENESS, 19)


def loaded_in(pid: int, library: str, timeout: float = 120.0) -> bool:
    """Whether the process `pid` has mapped `library` (a shared object), within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if library in Path(f"/proc/{pid}/maps").read_text(encoding="utf-8"):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="no /proc here")
def test_a_warmed_child_loads_what_a_summary_needs_then_makes_it(
    process: SummaryProcess, conversation: tuple[Path, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assert process.warm(with_sdk=False) and process.warmed
    child = process._process
    assert child is not None and child.pid is not None
    assert loaded_in(child.pid, "_tiktoken"), "the tokenizer loads with no summary asked"
    assert process.warm(with_sdk=False), "warm already: nothing more"
    assert process._process is child
    database, session_id = conversation
    outcome = process.run(call(database, session_id), cancelled=lambda: False)
    assert outcome.outcome is EventOutcome.OK and process._process is child
    assert any("summary process is ready" in r.getMessage() for r in caplog.records)
    caplog.clear()


def test_a_warmed_child_killed_loses_nothing_the_summary_starts_another(
    process: SummaryProcess, conversation: tuple[Path, str]
) -> None:
    assert process.warm(with_sdk=False)
    child = process._process
    assert child is not None
    child.kill()
    child.join(5)
    assert not process.warmed
    database, session_id = conversation
    outcome = process.run(call(database, session_id), cancelled=lambda: False)
    assert outcome.outcome is EventOutcome.OK and process._process is not child
    assert [s.id for s in active(database, session_id)] == [s.id for s in outcome.active_after]


def state_at(ratio: float, trigger_ratio: float = 0.8) -> ContextState:
    """A gauge reading at `ratio` of the usable window."""
    return ContextState(
        breakdown=ContextBreakdown(history=round(ratio * 100_000)),
        context_window=100_000,
        trigger_ratio=trigger_ratio,
    )


def test_a_conversation_near_its_trigger_warms_the_child_once() -> None:
    process = SummaryProcess()
    loop = QueueLoop()
    runner = JobRunner(loop)
    try:
        assert state_at(0.39).ratio < WARM_SHARE * 0.8 <= state_at(0.41).ratio
        assert not process.near_trigger(state_at(0.39))
        assert process.near_trigger(state_at(0.41))
        process.warm_soon(runner, with_sdk=False)
        loop.run_until(lambda: runner.running == 0)
        assert process.warmed
        child = process._process
        assert not process.near_trigger(state_at(0.9)), "once a run of the app"
        process.warm_soon(runner, with_sdk=False)
        loop.run_until(lambda: runner.running == 0)
        assert process._process is child
    finally:
        runner.shutdown()
        process.close()
    assert not process.near_trigger(state_at(0.9)), "nor after closing"
