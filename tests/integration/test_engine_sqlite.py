"""The summarization engine on the real store (SQLite on disk) with a hybrid summarizer
talking to the fake Anthropic server through the real SDK."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder
from app.core.engine import SummarizationEngine
from app.core.models import Role
from app.core.paths import AppPaths
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import EventKind, EventOutcome, SummaryMode, SummaryTrigger
from app.core.tokens import default_counter
from app.llm.anthropic_provider import AnthropicProvider
from app.store import SessionStore, open_database
from app.store.summaries import SummaryStore
from tests.fakes.anthropic_server import FakeAnthropicServer

KEY = "sk-ant-api03-engine-test-key"
MESSAGES_PATH = "/v1/messages"
MODEL = ModelInfo(id="medium", display_name="Medium", max_input_tokens=20_000, max_tokens=2_000)
FILE_NAME = "budget_2026_v3.xlsx"


@pytest.fixture
def database() -> Path:
    return AppPaths.from_environment().database


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, fake_server.base_url, max_retries=0)
    try:
        yield provider
    finally:
        provider.close()


def test_a_long_conversation_summarized_twice_on_disk(
    database: Path, fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    counter = default_counter()
    config = SummarizationConfig(mode="hybrid")
    sessions = SessionStore(open_database(database).connection, database=database)
    store = SummaryStore.open(database)
    summarizer = Summarizer(config, complete=provider.complete_structured, counter=counter)
    engine = SummarizationEngine(config, store, summarizer, ContextBuilder(counter))
    session = sessions.create_session("walks", MODEL.id)
    try:
        for round_number in range(2):
            for index in range(20):
                n = round_number * 20 + index
                content = f"Message {n}: the route passes cairn {n} near the river ford. " * 8
                if n == 2:
                    content += f"The figures are in {FILE_NAME}."
                role = Role.USER if index % 2 == 0 else Role.ASSISTANT
                sessions.append_message(session.id, role, content)
            calls_before = len(fake_server.requests_to(MESSAGES_PATH))
            outcome = engine.run(session.id, model=MODEL, trigger=SummaryTrigger.MANUAL)
            calls = len(fake_server.requests_to(MESSAGES_PATH)) - calls_before
            assert outcome.outcome is EventOutcome.OK, outcome.message
            assert len(outcome.summaries) == 1
            assert outcome.llm_calls == calls == 1
            assert outcome.summaries[0].mode is SummaryMode.HYBRID
            assert store.check_coverage(session.id) == []
        memory_text = "\n".join(s.text() for s in engine.repo.active_summaries(session.id))
        assert FILE_NAME in memory_text
    finally:
        store.close()
        sessions.close()

    reopened = SummaryStore.open(database)
    try:
        active = reopened.active_summaries(session.id)
        assert len(active) == 2
        assert reopened.check_coverage(session.id) == []
        assert len(reopened.live_messages(session.id)) == 6  # the newest preserve_recent
        kinds = [(e.kind, e.outcome) for e in reopened.events(session.id)]
        assert kinds == [(EventKind.SUMMARIZE, EventOutcome.OK)] * 2
        assert all(len(reopened.covered_messages(s.id)) > 0 for s in active)
    finally:
        reopened.close()
