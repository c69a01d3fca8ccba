"""`ConversationGauge`: Enter reads the checks before sending from the draft's last
measure, and answers as measuring afresh would (issue 20)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.chat.gauge import ConversationGauge
from app.core.context import ContextState, RequestInputs
from app.core.errors import UserFacingError
from app.core.live_tail import TailEntry
from app.core.models import Role
from app.core.settings import AppSettings, RecallSettings
from app.core.summarization_config import SummarizationConfig
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import SMALL, Chat

StartChat = Callable[..., Chat]
# What may change between the draft's measure and Enter.
CHANGES = (
    "none",
    "retyped",
    "tail",
    "quoted",
    "recall",
    "across",
    "today",
    "calibration",
    "instructions",
)


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{index}" for index in range(count))


def small_chat(fake_server: FakeAnthropicServer, start_chat: StartChat) -> Chat:
    """A stored conversation on a 4k-token model: drafts of a few thousand words overflow
    it, and recall's floor is squeezed well before that."""
    fake_server.models = [SMALL]
    chat = start_chat(settings=AppSettings(summarization=SummarizationConfig()))
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)
    fake_server.add_reply("Noted.")
    chat.send("Remember the gate code AX-7731.")
    return chat


def outcome(check: Callable[[], bool]) -> tuple[Any, ...]:
    """What a check answered: whether the tail gives way first, or the error it raised."""
    try:
        return ("sent", check())
    except UserFacingError as error:
        return ("refused", type(error), error.title, error.message)


def answer_changes(chat: Chat) -> list[int]:
    """The draft lengths (in words) at which the checks' answer changes, as things are."""
    current = chat.service.current

    def answer(count: int) -> tuple[Any, ...]:
        text = current.outgoing.text("Tell me " + words("word", count))
        fresh = ConversationGauge(current.state, current.outgoing)
        return outcome(lambda: fresh.check_send(text, fresh.tokens(text)))[:2]

    edges, low = [], 0
    while low < 3_000:
        first, high = answer(low), 3_000
        if answer(high) == first:
            break
        while high - low > 1:  # the first length answered otherwise
            middle = (low + high) // 2
            low, high = (middle, high) if answer(middle) == first else (low, middle)
        edges.append(high)
        low = high
    assert edges, "the draft's length never changes the answer: nothing is tested"
    return edges


def change(chat: Chat, what: str, size: int) -> None:
    """Change one thing the checks read, as the app would between a measure and Enter."""
    service = chat.service
    current = service.current
    state, gauge = current.state, current.gauge
    if what == "tail":
        last = state.tail.last_seq
        role = Role.ASSISTANT if state.tail.tally.last_role is Role.USER else Role.USER
        state.tail.append(TailEntry(-1 - last, last + 1, role, size, sendable=True))
    elif what == "quoted":
        gauge.quoted = size
    elif what in ("recall", "across"):
        recall: RecallSettings = service.settings.recall
        update = {"tool": not recall.tool} if what == "recall" else {}
        if what == "across":
            update = {"across_conversations": not recall.across_conversations}
        new = service.settings.model_copy(update={"recall": recall.model_copy(update=update)})
        service._settings = new  # in force at once, as `update_settings` puts it
    elif what == "today":
        state.shared.builder.today = lambda: 800_000 + size
    elif what == "calibration":
        service.calibrations.learn(state.model_id, 1_000, 1_000 + size % 300)
    elif what == "instructions":
        assert state.session is not None
        state.session = state.session.model_copy(update={"system_prompt": words("rule", size)})


@pytest.mark.parametrize("what", CHANGES)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), size=st.integers(0, 2_500), more=st.sampled_from(CHANGES))
def test_the_checks_at_enter_answer_as_measuring_afresh(
    start_chat: StartChat,
    fake_server: FakeAnthropicServer,
    what: str,
    data: st.DataObject,
    size: int,
    more: str,
) -> None:
    """Whatever changed since the draft was measured (`what`, then `more`, or the text
    itself), Enter's checks say what a gauge that never measured it says: the same
    error, or the same answer."""
    test = test_the_checks_at_enter_answer_as_measuring_afresh
    chats: list[tuple[Chat, list[int]]] = getattr(test, "chats", [])
    if not chats or chats[0][0].server is not fake_server:
        chat = small_chat(fake_server, start_chat)
        chats[:] = [(chat, answer_changes(chat))]
        test.chats = chats  # type: ignore[attr-defined]
    chat, edges = chats[0]
    # Mostly near where the answer changes (a few tokens decide it), else anywhere.
    near = st.sampled_from(edges).flatmap(lambda edge: st.integers(edge - 4, edge + 1))
    anywhere = st.integers(0, 3_000)
    draft_words = data.draw(st.one_of(near, near, near, anywhere), label="draft_words")
    current = chat.service.current
    state, gauge, outgoing = current.state, current.gauge, current.outgoing
    builder, tail = state.shared.builder, state.tail.tally
    today, session, kept = builder.today, state.session, chat.service._settings
    draft = "Tell me " + words("word", draft_words)
    gauge.measure(draft=draft)  # the window's debounced measure
    sent = draft
    for change_ in (what, more):
        if change_ == "retyped":
            sent = draft + " and more"
        else:
            change(chat, change_, size)
    text = outgoing.text(sent)
    try:
        fresh = ConversationGauge(state, outgoing)  # nothing measured: it measures now
        fresh.quoted = gauge.quoted
        expected = outcome(lambda: fresh.check_send(text, fresh.tokens(text)))
        assert outcome(lambda: gauge.check_send(text, gauge.tokens(text))) == expected
    finally:  # the next example starts where this one did
        builder.today, state.session, chat.service._settings = today, session, kept
        state.tail.remove([entry.id for entry in state.tail.entries if entry.id < 0])
        assert state.tail.tally == tail
        gauge.quoted = 0


def test_enter_after_the_measure_neither_counts_nor_measures_again(
    start_chat: StartChat, fake_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = small_chat(fake_server, start_chat)
    current = chat.service.current
    builder, counter = current.state.shared.builder, current.state.shared.counter
    draft = "And the code for the shed?"
    current.gauge.set_draft(draft)  # as the window tells it, 150 ms after the last key
    asked: list[str] = []

    def spy(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def spied(*args: Any, **kwargs: Any) -> Any:
            asked.append(name)
            return function(*args, **kwargs)

        return spied

    monkeypatch.setattr(builder, "estimate_state", spy("measured", builder.estimate_state))
    monkeypatch.setattr(builder, "check_fits", spy("checked", builder.check_fits))
    monkeypatch.setattr(counter, "count", spy("counted", counter.count))
    fake_server.add_reply("In the drawer.")
    assert chat.service.send(draft)
    assert asked == []
    chat.idle()
    assert chat.stored()[-2].content == draft
    assert chat.stored()[-2].token_estimate == counter.count(draft)


def test_a_measured_draft_too_long_is_still_refused_in_the_same_words(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_chat(fake_server, start_chat)
    current = chat.service.current
    big = "And this: " + words("more", 3_000)
    state = current.gauge.measure(draft=big)
    assert state is not None and not state.fits
    unmeasured = ConversationGauge(current.state, current.outgoing)
    with pytest.raises(UserFacingError) as expected:
        unmeasured.check_send(big, unmeasured.tokens(big))
    assert not chat.service.send(big)  # it stays in the composer
    (error,) = chat.events.named("error_raised")[-1]
    assert (type(error), error.title, error.message) == (
        type(expected.value),
        expected.value.title,
        expected.value.message,
    )
    assert chat.stored()[-1].content == "Noted."  # nothing stored


def test_the_measure_is_the_same_as_counting_the_draft_in_the_estimate(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    """The gauge counts the draft before measuring (Enter reads that count): the figures
    are those of the estimate counting it itself."""
    chat = small_chat(fake_server, start_chat)
    current = chat.service.current
    state, gauge = current.state, current.gauge
    for draft in ("", "   ", "Hi", "Tell me " + words("word", 400)):
        measured = gauge.measure(draft=draft)
        fresh = ConversationGauge(state, current.outgoing).with_recall(current.outgoing.text(draft))
        assert isinstance(measured, ContextState) and measured == fresh


def test_the_check_key_holds_its_own_copy_of_the_settings(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    """A change made to the settings in place is seen: the key kept a copy."""
    chat = small_chat(fake_server, start_chat)
    current = chat.service.current
    gauge = current.gauge
    gauge.measure(draft="A question")
    checked = gauge._checked
    assert checked is not None
    kept: RequestInputs = checked[0].inputs
    assert kept.summaries == tuple(current.state.summaries)
    recall = chat.service._settings.recall
    assert checked[0].recall == recall and checked[0].recall is not recall
    assert replace(checked[0], recall=recall) == gauge._check_key(kept)
