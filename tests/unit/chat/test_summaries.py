"""A conversation's summaries: what is not covered by the service's tests."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from app.chat.gauge import ConversationGauge
from app.chat.loop import QueueLoop
from app.chat.summaries import ConversationSummaries, _in_turns, _TriggerWrites
from app.core.context import ContextState
from app.core.policy import TriggerMemory, TriggerPolicy
from app.core.settings import AppSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import SummaryMode
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import SMALL, Chat


def test_the_newest_trigger_memory_stays_whatever_order_its_writes_run_in() -> None:
    writes = _TriggerWrites()
    older, newer = writes.next_number(), writes.next_number()
    written: list[str] = []
    newer_first = threading.Thread(
        target=lambda: writes.write(newer, lambda: written.append("new"))
    )
    newer_first.start()
    newer_first.join()
    writes.write(older, lambda: written.append("old"))
    assert written == ["new"], "an older memory never overwrites a newer one"


def test_steps_run_in_order_each_in_a_turn_of_the_loop_of_its_own() -> None:
    loop = QueueLoop()
    ran: list[str] = []
    _in_turns(loop, [lambda: ran.append("cards"), lambda: ran.append("gauge")])
    assert ran == [], "nothing runs inside the caller's turn"
    loop.run_pending()
    assert ran == ["cards", "gauge"]


def test_the_trigger_remembers_what_measuring_at_every_message_would_and_measures_less(
    fake_server: FakeAnthropicServer,
    start_chat: Callable[..., Chat],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message stored measures the next request only when the trigger could re-arm by
    it (issue 20); the trigger's memory after each message is what measuring every time
    (as before) gives, armed or not, through the summaries it makes."""
    fake_server.models = [SMALL]
    config = SummarizationConfig(
        mode=SummaryMode.RULE, min_messages=4, preserve_recent=2, cooldown_messages=2
    )
    chat = start_chat(settings=AppSettings(summarization=config))
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)
    # Each observation: the memory before, after, as measuring would have it, measured.
    observed: list[tuple[TriggerMemory, TriggerMemory, TriggerMemory, bool]] = []
    measured: list[bool] = []
    measure, observe = ConversationGauge.measure, ConversationSummaries.observe

    def counted(gauge: ConversationGauge, draft: str | None = None) -> ContextState | None:
        measured[-1:] = [True] * len(measured[-1:])
        return measure(gauge, draft)

    def checked(
        summaries: ConversationSummaries, new_messages: int, state: ContextState | None = None
    ) -> None:
        before = summaries.trigger
        figures = state if state is not None else measure(chat.service.current.gauge, "")
        measured.append(False)
        observe(summaries, new_messages, state)
        if figures is not None and chat.service.current.state.session is not None:
            policy = TriggerPolicy(config)
            expected = policy.observe(before, figures.required, new_messages=new_messages)
            observed.append((before, summaries.trigger, expected, measured[-1]))

    monkeypatch.setattr(ConversationGauge, "measure", counted)
    monkeypatch.setattr(ConversationSummaries, "observe", checked)
    for turn in range(10):
        fake_server.add_reply(" ".join(f"answer{turn}x{i}" for i in range(120)))
        if turn % 3 == 2:  # as after a trigger whose summary left usage high
            chat.service.current.condensing.trigger = TriggerMemory(armed=False)
        chat.send(" ".join(f"question{turn}x{i}" for i in range(120)))
    assert len(observed) >= 20, "each question and each reply was observed"
    assert all(kept == expected for _before, kept, expected, _measured in observed)
    policy = TriggerPolicy(config)
    # Measured only when re-arming reads how full it is: a message stored while armed, not.
    for before, _kept, _expected, measured_it in observed:
        assert not measured_it or policy.reads_usage(before, new_messages=1)
    assert any(measured_it for *_, measured_it in observed)
    assert any(before.armed and not measured_it for before, *_, measured_it in observed)
