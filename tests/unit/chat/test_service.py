"""The chat service without Qt: conversations, replies, condensing, undo, pins, settings,
against the fake server through the real SDK and a real SQLite file."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from app.chat.events import Activity, SummaryPreview
from app.chat.model_wait import WAITING_STATUS
from app.chat.summary_process import SummaryCall
from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.conversation import date_line, local_day
from app.core.engine import EngineOutcome
from app.core.errors import ApiError, ContextOverflowError, MessageTooLargeError
from app.core.models import MessageStatus, Role
from app.core.paths import AppPaths
from app.core.settings import AppSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import Summary, SummaryMode, SummaryTrigger
from app.store import connect
from app.store.search_upkeep import index_shape
from app.store.sessions import SessionStore
from tests.fakes.anthropic_server import MODELS_PATH, FakeAnthropicServer, forces_a_tool
from tests.unit.chat.conftest import SMALL, Chat
from tests.unit.store.test_search_upkeep import written

StartChat = Callable[..., Chat]


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{index}" for index in range(count))


def dated(text: str) -> str:
    """`text` as the first message of the request sends it: after today's date line."""
    return f"{date_line(local_day(datetime.now(UTC)))}\n\n{text}"


# Condensing at the trigger ratio, as these tests of the background summaries expect
# (by default nothing is condensed while the whole conversation fits: tested apart).
EARLY = SummarizationConfig(condense_while_it_fits=True)


def small_model(fake_server: FakeAnthropicServer, start_chat: StartChat, **kwargs: object) -> Chat:
    fake_server.models = [SMALL]
    kwargs.setdefault("settings", AppSettings(summarization=EARLY))
    chat = start_chat(**kwargs)
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)
    return chat


# --- a turn ----------------------------------------------------------------------------


def test_a_reply_streams_into_the_store_and_the_events(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Hello there, friend.", chunks=["Hello ", "there, ", "friend."])
    chat.events.clear()
    chat.send("Say hello")

    stored = chat.stored()
    assert [(m.role, m.content, m.status) for m in stored] == [
        (Role.USER, "Say hello", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "Hello there, friend.", MessageStatus.COMPLETE),
    ]
    added = [args[0] for args in chat.events.named("message_added")]
    assert [m.role for m in added] == [Role.USER, Role.ASSISTANT]
    assert added[1].status is MessageStatus.STREAMING, "the reply's row exists from the start"
    (finished,) = [args[0] for args in chat.events.named("message_updated")]
    assert finished == stored[1]
    activities = [args[0] for args in chat.events.named("activity_changed")]
    assert activities == [Activity.REPLYING, Activity.IDLE]
    (session,) = chat.events.named("session_changed")[:1]
    assert session[0].title == "Say hello"
    request = fake_server.turns()[-1]
    # The request (only) says when it was written; the stored message is as typed.
    assert request.body["messages"] == [{"role": "user", "content": dated("Say hello")}]


def test_a_turn_never_rereads_the_conversation(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    chat.send("First")
    reads = chat.store.tail_reads
    for turn in range(5):
        chat.send(f"Turn {turn}")
        chat.service.current.gauge.set_draft(f"typing {turn}")
    assert chat.store.tail_reads == reads, "the loop thread never re-read the live tail"
    # The tail it keeps is exactly what is stored.
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    assert list(chat.service.current.state.tail.entries) == chat.store.live_entries(session_id)


def test_the_gauge_follows_the_draft(start_chat: StartChat) -> None:
    chat = start_chat()
    empty = chat.service.current.gauge.measure()
    assert empty is not None and empty.breakdown.draft == 0
    chat.events.clear()
    chat.service.current.gauge.set_draft("How tall is Mount Everest? " * 20)
    (state,) = chat.events.named("context_changed")[-1]
    assert state.breakdown.draft > 100


def test_the_composer_emptied_by_a_send_measures_nothing_again(start_chat: StartChat) -> None:
    # The figures shown are the request's, now on its way; the reply's end tells the next.
    chat = start_chat()
    chat.send("How tall is Mount Everest?")
    gauge = chat.service.current.gauge
    gauge.set_draft("And K2?")
    assert chat.service.send("And K2?")
    chat.events.clear()
    gauge.set_draft("")  # the composer's debounced text after it emptied
    assert not chat.events.named("context_changed")
    chat.idle()
    (state,) = chat.events.named("context_changed")[-1]
    assert state is not None and state.breakdown.draft == 0


def test_stop_keeps_what_arrived(start_chat: StartChat, fake_server: FakeAnthropicServer) -> None:
    chat = start_chat()
    whole = chat.start_streaming("Tell me a long story", parts=200, word="word", until="word3")
    chat.service.current.turns.stop()
    chat.idle()
    reply = chat.stored()[-1]
    assert reply.status is MessageStatus.STOPPED
    assert reply.content.startswith("word0 word1 word2 word3")
    assert len(reply.content) < len(whole)


def test_text_reaches_the_front_end_at_most_about_30_times_a_second(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    pieces = [f"w{i} " for i in range(300)]
    fake_server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.002)
    chat.events.clear()
    chat.send("Fast, please")
    updates = chat.events.named("message_text_changed")
    assert 1 <= len(updates) <= 30, len(updates)
    assert chat.stored()[-1].content == "".join(pieces)


def test_a_failed_reply_says_so_keeps_the_question_and_retry_answers(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_error(529, retry_after_ms=5, times=3, path="/v1/messages")
    chat.send("Are you there?")
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, ApiError) and error.retryable
    assert chat.stored()[0].content == "Are you there?"
    assert chat.events.named("status_changed"), "the SDK's retries were shown"
    fake_server.add_reply("Yes, I'm here.")
    chat.service.current.turns.retry()
    chat.idle()
    assert chat.stored()[-1].content == "Yes, I'm here."
    last = fake_server.turns()[-1]
    assert last.body["messages"] == [{"role": "user", "content": dated("Are you there?")}]


def test_without_a_key_the_key_is_asked_for_and_nothing_is_stored(start_chat: StartChat) -> None:
    chat = start_chat(with_key=False)
    assert not chat.service.send("Hello?")
    assert chat.events.named("key_needed")
    assert chat.store.list_sessions() == []


def test_a_message_larger_than_the_window_is_refused_with_numbers(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    # A 200k window (Claude Haiku 4.5's), so the message need not be a million words.
    fake_server.models = [model for model in FALLBACK_MODELS if model.id == "claude-haiku-4-5"]
    chat = start_chat()
    assert not chat.service.send("word " * 260_000)
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, MessageTooLargeError)
    assert "at most 192k" in error.message
    assert chat.store.list_sessions() == []


# --- conversations ----------------------------------------------------------------------


def test_create_switch_rename_delete(start_chat: StartChat) -> None:
    chat = start_chat()
    chat.send("First topic")
    first = chat.service.current.state.session_id
    chat.service.new_conversation()
    chat.send("Second topic")
    assert first is not None
    chat.service.open_session(first)
    chat.run_until(lambda: chat.service.current.state.loaded)
    (opened,) = chat.events.named("conversation_opened")[-1:]
    assert opened[1][0].content == "First topic"
    chat.service.rename_session(first, "  Renamed   topic ")
    assert chat.events.named("session_changed")[-1][0].title == "Renamed topic"
    chat.service.delete_session(first)
    assert chat.events.named("session_removed")[-1] == (first,)
    assert chat.service.current.state.session is not None
    assert chat.service.current.state.session.title == "Second topic"


def test_a_reply_keeps_streaming_into_a_conversation_the_user_left(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    reply = chat.start_streaming("A long answer, please", parts=40)
    away_from = chat.service.current.state.session_id
    chat.service.new_conversation()
    chat.events.clear()
    chat.run_until(lambda: chat.service.runner.running == 0)
    assert chat.events.named("message_text_changed") == [], "nothing is told about it off screen"
    assert away_from is not None
    chat.service.open_session(away_from)
    (opened,) = chat.events.named("conversation_opened")
    assert opened[1][-1].content == reply
    assert opened[1][-1].status is MessageStatus.COMPLETE


def test_deleting_a_conversation_while_it_replies_forgets_it(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    chat.start_streaming("Go on", parts=100)
    doomed = chat.service.current.state.session_id
    assert doomed is not None
    chat.service.delete_session(doomed)
    chat.events.clear()
    chat.run_until(lambda: chat.service.runner.running == 0)
    assert all(args[0].id != doomed for args in chat.events.named("session_changed"))
    assert chat.store.get_session(doomed) is None


def test_a_message_sent_while_a_long_conversation_opens_goes_once_it_is_open(
    start_chat: StartChat,
) -> None:
    chat = start_chat()
    chat.send("Remember me")
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    chat.service.new_conversation()
    chat.service.open_session(session_id)
    assert chat.service.current.state.activity is Activity.LOADING
    assert not chat.service.send("And now?"), "it waits, kept in the composer"
    chat.run_until(lambda: bool(chat.events.named("pending_sent")))
    chat.idle()
    assert [m.content for m in chat.stored() if m.role is Role.USER] == ["Remember me", "And now?"]


# --- condensing --------------------------------------------------------------------------


def test_a_long_chat_is_condensed_in_the_background_incrementally(
    start_chat: StartChat, fake_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = small_model(fake_server, start_chat)
    written_on: list[threading.Thread] = []
    write_trigger_state = SessionStore.set_trigger_state

    def recording(store: SessionStore, session_id: str, state: Mapping[str, Any]) -> None:
        written_on.append(threading.current_thread())
        write_trigger_state(store, session_id, state)

    monkeypatch.setattr(SessionStore, "set_trigger_state", recording)
    for turn in range(30):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 60))
        chat.send(f"Question {turn} about report_{turn}.xlsx: " + words("detail", 60))
        if chat.events.named("summary_made"):
            break
    chat.idle()
    (report,) = chat.events.named("summary_made")[-1]
    assert report.condensed > 0 and report.trigger is SummaryTrigger.AUTO
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    repo = chat.summaries()
    try:
        assert repo.check_coverage(session_id) == []
        active = repo.active_summaries(session_id)
        assert active and chat.service.current.state.summaries == active
    finally:
        repo.close()
    assert list(chat.service.current.state.tail.entries) == chat.store.live_entries(session_id)
    assert chat.events.named("summaries_changed")[-1][0] == tuple(active)
    # The trigger's memory is kept with the conversation, written off the loop's thread.
    assert chat.store.trigger_state(session_id) is not None
    assert written_on and threading.main_thread() not in written_on


def test_a_message_that_would_not_fit_is_sent_after_condensing(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    # Turns small enough that no summary runs before the big one: an emergency now
    # condenses down to the target, so after larger turns the big one would fit.
    for turn in range(5):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 120))
        chat.send(f"Question {turn}: " + words("detail", 120))
    big = "Now the big one: " + words("large", 900)
    state = chat.service.current.gauge.measure(draft=big)
    assert state is not None and not state.fits
    fake_server.add_reply("Answered after condensing.")
    chat.events.clear()
    assert not chat.service.send(big), "it waits while earlier messages are condensed"
    assert chat.service.current.state.activity is Activity.CONDENSING
    assert ("Summarizing earlier messages…",) in chat.events.named("status_changed")
    chat.run_until(lambda: bool(chat.events.named("pending_sent")))
    chat.idle()
    stored = chat.stored()
    assert stored[-2].content == big and stored[-1].content == "Answered after condensing."


def test_stop_while_condensing_keeps_the_message_unsent(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    for turn in range(5):  # small turns: see the test above
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 120))
        chat.send(f"Question {turn}: " + words("detail", 120))
    fake_server.add_tool_fault("slow", delay=2.0) if hasattr(
        fake_server, "add_tool_fault"
    ) else None
    big = "Now the big one: " + words("large", 900)
    waited = len(chat.events.named("pending_sent"))
    assert not chat.service.send(big)
    chat.service.current.turns.stop()
    chat.idle()
    assert len(chat.events.named("pending_sent")) == waited
    assert all(m.content != big for m in chat.stored())


def test_summarize_now_with_instructions_reaches_the_summarizer(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}: the price is {turn * 10} EUR")
    assert chat.service.current.condensing.summarize("keep every price")
    chat.idle()
    calls = [r for r in fake_server.requests_to("/v1/messages") if forces_a_tool(r)]
    assert calls and "keep every price" in calls[-1].body["messages"][-1]["content"]
    assert chat.service.current.state.summaries


def test_nothing_to_condense_is_said_plainly(start_chat: StartChat) -> None:
    chat = start_chat()
    chat.send("Just one question")
    assert not chat.service.current.condensing.summarize()
    title, text = chat.events.named("notice_raised")[-1]
    assert title == "Nothing to summarize yet"
    assert text == "Nothing to summarize yet — summaries start after 6 messages."
    assert chat.events.named("summary_progress") == [(None,)], "only the opening said: none"


def test_a_summary_tells_its_stages_and_when_it_ended(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    chat.events.clear()
    assert chat.service.current.condensing.summarize()
    assert chat.service.current.condensing.progress == "Reading 16 messages"
    assert not chat.service.current.condensing.summarize(), "one summary at a time"
    chat.idle()
    stages = [text for (text,) in chat.events.named("summary_progress")]
    assert stages[0] == "Reading 16 messages"
    assert "Asking Claude for a summary" in stages and "Saving" in stages
    assert stages.index("Asking Claude for a summary") < stages.index("Saving")
    assert stages[-1] is None and chat.service.current.condensing.progress is None
    assert chat.service.current.state.summaries


def test_cancelling_a_summary_while_claude_writes_it_changes_nothing(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    live_before = chat.store.live_entries(session_id)
    fake_server.add_tool_fault("timeout", delay=1.5)  # Claude takes its time to answer
    chat.events.clear()
    assert chat.service.current.condensing.summarize()
    asking = ("Asking Claude for a summary",)
    chat.run_until(lambda: asking in chat.events.named("summary_progress"))
    chat.service.current.condensing.cancel()
    chat.idle()
    stages = [text for (text,) in chat.events.named("summary_progress")]
    assert stages[stages.index("Cancelling…") :] == ["Cancelling…", None], "no stage after"
    assert ("Summary cancelled — nothing changed", "Every message stays as it was.") in (
        chat.events.named("notice_raised")
    )
    assert not chat.events.named("summaries_changed")
    assert chat.service.current.state.summaries == []
    assert chat.store.live_entries(session_id) == live_before
    assert list(chat.service.current.state.tail.entries) == live_before
    repo = chat.summaries()
    try:
        assert repo.active_summaries(session_id) == []
    finally:
        repo.close()


def test_a_summary_runs_on_while_the_user_looks_at_another_conversation(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    first = chat.service.current
    assert first.state.session_id is not None
    fake_server.add_tool_fault("timeout", delay=1.5)
    assert chat.service.current.condensing.summarize()
    asking = ("Asking Claude for a summary",)
    chat.run_until(lambda: asking in chat.events.named("summary_progress"))
    chat.service.new_conversation()
    assert chat.events.named("summary_progress")[-1] == (None,), "the new one has none"
    chat.service.open_session(first.state.session_id)
    assert chat.events.named("summary_progress")[-1] == asking, "shown again on return"
    chat.run_until(lambda: not chat.service.current.condensing.running)
    assert chat.events.named("summary_progress")[-1] == (None,)
    assert chat.service.current.state.summaries


def test_summarize_now_can_keep_more_of_the_newest_messages(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    assert not chat.service.current.condensing.summarize(keep_recent=16)
    assert chat.events.named("notice_raised")[-1] == (
        "Nothing to summarize yet",
        "Nothing to summarize yet — summaries start after 16 messages.",
    )
    assert chat.service.current.condensing.summarize(keep_recent=10)
    chat.idle()
    assert chat.service.current.state.summaries
    assert len(chat.service.current.state.tail) >= 10


def test_undo_gives_the_originals_back(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    before = list(chat.service.current.state.tail.entries)
    assert chat.service.current.condensing.summarize()
    chat.idle()
    (summary,) = chat.service.current.state.summaries
    assert len(chat.service.current.state.tail) < len(before)
    chat.service.current.condensing.undo(summary.id)
    chat.run_until(lambda: not chat.service.current.state.summaries)
    assert list(chat.service.current.state.tail.entries) == before
    assert chat.events.named("summaries_changed")[-1] == ((),)


def test_a_summary_reports_its_numbers_and_its_originals_and_history_can_be_read(
    start_chat: StartChat,
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}: " + words("detail", 80))
    live_before = len(chat.service.current.state.tail)
    tokens_before = chat.service.current.gauge.measure(draft="").used  # type: ignore[union-attr]
    assert chat.service.current.condensing.summarize()
    chat.idle()
    (summary,) = chat.service.current.state.summaries
    # The report follows the new memory block, with the numbers the banner says.
    names = [name for name, _ in chat.events.seen]
    assert names.index("summary_made") > len(names) - 1 - names[::-1].index("summaries_changed")
    (report,) = chat.events.named("summary_made")[-1]
    assert report.summary_ids == (summary.id,) and report.undo_id == summary.id
    assert report.trigger is SummaryTrigger.MANUAL
    assert report.condensed == summary.last_seq - summary.first_seq + 1
    assert report.messages_before == live_before
    assert (
        report.messages_after
        == len(chat.service.current.state.tail)
        == live_before - report.condensed
    )
    assert report.tokens_before == tokens_before
    after = chat.service.current.gauge.measure(draft="")
    # The report counts what the conversation takes: the tool and recall give way first.
    # Without recall's floor (the room kept for quotes is not what the summary left).
    assert after is not None and report.tokens_after == after.required.used - after.recall_floor
    assert report.tokens_saved == tokens_before - report.tokens_after > 0
    # The originals are read back, oldest first, and are exactly what was condensed.
    originals = chat.service.archive.originals(summary.id)
    assert [m.seq for m in originals] == list(range(summary.first_seq, summary.last_seq + 1))
    assert all(m.summary_id == summary.id for m in originals)
    assert chat.service.summary_children(summary.id) == []
    chat.service.current.condensing.undo(summary.id)
    chat.run_until(lambda: not chat.service.current.state.summaries)
    history = chat.service.summary_history()
    kinds = [(h.event.kind.value, h.event.outcome.value) for h in history]
    assert kinds[-1] == ("undo", "ok") and ("summarize", "ok") in kinds
    made = next(h for h in history if h.event.kind.value == "summarize")
    assert made.model == summary.model
    chat.service.new_conversation()
    assert chat.service.summary_history() == []


def test_pinned_messages_are_never_condensed(start_chat: StartChat) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    pinned = chat.stored()[2]
    chat.service.current.pins.pin(pinned.id)
    assert chat.events.named("message_updated")[-1][0].pinned
    assert chat.service.current.condensing.summarize()
    chat.idle()
    assert chat.store.messages_by_id({pinned.id})[0].summary_id is None
    assert chat.service.current.state.tail.find(pinned.id) is not None


# --- settings --------------------------------------------------------------------------


def test_summary_settings_govern_the_next_decision_and_survive_a_restart(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    def tool_calls() -> int:
        requests = fake_server.requests_to("/v1/messages")
        return sum(1 for r in requests if forces_a_tool(r))

    chat = start_chat()
    counted = SummarizationConfig().with_changes(message_trigger=12, auto_summarize=False)
    settings = chat.service.settings
    settings.summarization = counted
    chat.service.update_settings(settings)
    for turn in range(8):
        chat.send(f"Question {turn}")
    assert tool_calls() == 0, "automatic summaries are off: 16 messages stay live"
    chat.service.shutdown()

    again = start_chat(settings=None)
    assert again.service.settings.summarization == counted, "the setting survived the restart"
    settings = again.service.settings
    settings.summarization = counted.with_changes(auto_summarize=True)
    again.service.update_settings(settings)
    again.service.open_session(again.store.list_sessions()[0].id)
    again.send("One more")
    assert tool_calls() == 1, "switched on, the next reply condenses at once"


def test_the_model_picked_is_used_and_kept(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.models = [
        ModelInfo(id="claude-opus-9", display_name="Claude Opus 9", line="opus"),
        ModelInfo(id="claude-sonnet-9", display_name="Claude Sonnet 9", line="sonnet"),
    ]
    chat = start_chat()
    chat.run_until(lambda: chat.service.current.state.model_id == "claude-sonnet-9")
    chat.service.current.model.select("claude-opus-9")
    chat.send("Which model?")
    assert fake_server.turns()[-1].body["model"] == "claude-opus-9"
    assert chat.service.settings.model == "claude-opus-9"


def test_an_overflow_with_too_little_to_condense_is_refused(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    # A reply stays within SMALL's 400 output tokens (longer ones are cut off there).
    fake_server.add_reply("Noted. " + words("answer", 100))
    chat.send("Remember this: " + words("detail", 700))
    more = "And this: " + words("more", 950)
    state = chat.service.current.gauge.measure(draft=more)
    assert state is not None and not state.fits and state.breakdown.draft < state.usable
    assert not chat.service.send(more)
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, ContextOverflowError)
    assert not isinstance(error, MessageTooLargeError)
    assert chat.service.current.state.activity is Activity.IDLE


def test_shutdown_stops_every_reply_and_waits(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    pieces = [f"part{i} " for i in range(500)]
    fake_server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.05)
    assert chat.service.send("A very long one")
    # The thinking comes first (today's models think by default): wait for the text.
    chat.run_until(lambda: any(text for _id, text in chat.events.named("message_text_changed")))
    chat.service.shutdown()
    assert chat.service.runner.running == 0
    reply = chat.store.messages(chat.service.current.state.session_id or "")[-1]
    assert reply.status is MessageStatus.STOPPED and reply.content.startswith("part0")


def test_settings_object_is_a_copy(start_chat: StartChat) -> None:
    chat = start_chat()
    copy: AppSettings = chat.service.settings
    copy.theme = "dark"
    assert chat.service.settings.theme == "system"


def test_a_summary_that_fails_says_so_and_changes_nothing(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}: the price is {turn * 10} EUR")
    before = [e.id for e in chat.service.current.state.tail.entries]
    process = chat.service.summary_process
    real_run = process.run

    def dies(call: SummaryCall, cancelled: Callable[[], bool], **rest: Any) -> EngineOutcome:
        # The child is killed mid-summary: what a crash of the summary process looks like.
        def kill() -> bool:
            child = process._process
            if child is not None and child.is_alive():
                child.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
                child.join(5)
            return False

        return real_run(call, kill, **rest)

    process.run = dies  # type: ignore[method-assign]
    assert chat.service.current.condensing.summarize()
    chat.idle()
    title, text = chat.events.named("notice_raised")[-1]
    assert title == "Earlier messages could not be summarized"
    assert text.endswith("Nothing changed: every message is still here.")
    assert [e.id for e in chat.service.current.state.tail.entries] == before
    assert not chat.service.current.state.summaries
    assert chat.events.named("summary_progress")[-1] == (None,)


# --- the preview: a summary waits for the user before it is saved ------------------------


def previewed(chat: Chat) -> SummaryPreview:
    """Start Summarize now (answered by the test) and wait for its preview."""
    chat.events.accept_previews = False
    for turn in range(8):
        chat.send(f"Question {turn}: " + words("detail", 80))
    chat.events.clear()
    assert chat.service.current.condensing.summarize()
    chat.run_until(lambda: bool(chat.events.named("summary_previewed")))
    ((preview,),) = chat.events.named("summary_previewed")
    assert isinstance(preview, SummaryPreview)
    return preview


def active(chat: Chat) -> list[Summary]:
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    repo = chat.summaries()
    try:
        return repo.active_summaries(session_id)
    finally:
        repo.close()


def test_summarize_now_shows_a_preview_and_saves_it_once_accepted(start_chat: StartChat) -> None:
    chat = start_chat()
    preview = previewed(chat)
    assert preview.trigger is SummaryTrigger.MANUAL
    assert preview.condensed == 16 - 6 and preview.kept == 6
    assert 0 < preview.tokens_after < preview.tokens_before
    assert chat.service.current.condensing.progress == "Waiting for you to check the summary"
    assert active(chat) == [] and not chat.events.named("summaries_changed")
    chat.service.current.condensing.accept()
    chat.idle()
    (summary,) = active(chat)
    assert summary.content == preview.drafts[0].content
    names = [name for name, _ in chat.events.seen]
    assert names.index("summaries_changed") < names.index("summary_made")
    (report,) = chat.events.named("summary_made")[-1]
    assert report.condensed == preview.condensed
    assert (report.tokens_before, report.tokens_after) == (
        preview.tokens_before,
        preview.tokens_after,
    ), "the preview's figures are the ones the summary brings"


def test_an_edited_preview_saves_what_the_user_wrote(start_chat: StartChat) -> None:
    chat = start_chat()
    preview = previewed(chat)
    (draft,) = preview.drafts
    content = draft.content.model_copy(update={"narrative": "We talked about prices."})
    chat.service.current.condensing.accept([draft.model_copy(update={"content": content})])
    chat.idle()
    (summary,) = active(chat)
    assert summary.content.narrative == "We talked about prices."
    assert chat.service.current.state.summaries == [summary]


def test_a_discarded_preview_changes_nothing_and_says_so(start_chat: StartChat) -> None:
    chat = start_chat()
    previewed(chat)
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    live_before = chat.store.live_entries(session_id)
    chat.service.current.condensing.discard()
    chat.idle()
    assert ("Summary discarded — nothing changed", "Every message stays as it was.") in (
        chat.events.named("notice_raised")
    )
    assert active(chat) == [] and not chat.events.named("summary_made")
    assert chat.store.live_entries(session_id) == live_before
    repo = chat.summaries()
    try:
        (event,) = repo.events(session_id)
    finally:
        repo.close()
    assert event.detail == "discarded"


def test_cancelling_while_the_preview_waits_changes_nothing(start_chat: StartChat) -> None:
    chat = start_chat()
    previewed(chat)
    chat.service.current.condensing.cancel()
    chat.idle()
    assert ("Summary cancelled — nothing changed", "Every message stays as it was.") in (
        chat.events.named("notice_raised")
    )
    assert active(chat) == []
    chat.service.current.condensing.accept()  # too late: nothing waits any more
    assert chat.service.current.condensing.preview is None


def test_closing_while_the_preview_waits_does_not_hang(
    start_chat: StartChat, caplog: pytest.LogCaptureFixture
) -> None:
    chat = start_chat()
    previewed(chat)
    chat.service.shutdown()
    # The summary process stopped when asked: it was not left to run out its time.
    assert "did not stop in time" not in caplog.text
    assert chat.service.runner.running == 0
    assert active(chat) == []


def test_automatic_summaries_preview_only_when_the_setting_says_so(
    fake_server: FakeAnthropicServer, start_chat: StartChat
) -> None:
    settings = AppSettings(summarization=EARLY.with_changes(preview_automatic=True))
    chat = small_model(fake_server, start_chat, settings=settings)
    chat.events.accept_previews = False
    for turn in range(40):
        chat.service.send(f"Question {turn}: " + words("w", 60))
        chat.run_until(
            lambda: (
                chat.service.current.state.activity is Activity.IDLE
                and (
                    not chat.service.current.has_jobs
                    or chat.service.current.condensing.preview is not None
                )
            )
        )
        if chat.events.named("summary_previewed"):
            break
    ((preview,),) = chat.events.named("summary_previewed")
    assert preview.trigger is SummaryTrigger.AUTO and active(chat) == []
    chat.service.current.condensing.accept()
    chat.idle()
    assert active(chat)


# --- "Try again with Claude" on a basic summary ------------------------------------------


def a_basic_summary(chat: Chat, fake_server: FakeAnthropicServer) -> Summary:
    """Summarize now while Claude is overloaded: a rule-made ("basic") summary stands in."""
    for turn in range(8):
        chat.send(f"Question {turn}: the price is {turn * 10} EUR")
    fake_server.add_error(529, retry_after_ms=5, times=2, path="/v1/messages")
    assert chat.service.current.condensing.summarize()
    chat.idle()
    assert fake_server.pending_script == 0
    (basic,) = chat.service.current.state.summaries
    assert basic.mode is SummaryMode.RULE
    return basic


def test_try_again_with_claude_rewrites_a_basic_summary(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    basic = a_basic_summary(chat, fake_server)
    tail = list(chat.service.current.state.tail.entries)
    chat.events.clear()

    assert chat.service.current.condensing.retry_with_claude(basic.id)
    chat.idle()

    (rewritten,) = chat.service.current.state.summaries
    assert rewritten.id != basic.id and rewritten.mode is SummaryMode.LLM
    assert (rewritten.first_seq, rewritten.last_seq) == (basic.first_seq, basic.last_seq)
    assert active(chat) == [rewritten]
    assert list(chat.service.current.state.tail.entries) == tail
    assert chat.events.named("summaries_changed")[-1] == ((rewritten,),)
    assert chat.events.named("notice_raised")[-1][0] == "Summary rewritten by Claude"
    assert not chat.events.named("summary_made"), "nothing new was condensed"
    assert chat.events.named("summary_progress")[-1] == (None,)


def test_try_again_while_claude_is_still_away_keeps_the_basic_summary(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    basic = a_basic_summary(chat, fake_server)
    tail = list(chat.service.current.state.tail.entries)
    chat.events.clear()
    fake_server.add_error(529, retry_after_ms=5, times=2, path="/v1/messages")

    assert chat.service.current.condensing.retry_with_claude(basic.id)
    chat.idle()

    assert chat.service.current.state.summaries == [basic]
    assert active(chat) == [basic]
    assert list(chat.service.current.state.tail.entries) == tail
    assert not chat.events.named("summaries_changed")
    assert chat.events.named("notice_raised")[-1] == (
        "Summary not rewritten",
        "Claude still can't write it; the simpler summary stays.",
    )


def test_try_again_is_refused_in_words_while_a_summary_is_being_made(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    basic = a_basic_summary(chat, fake_server)
    chat.events.accept_previews = False
    for turn in range(8):
        chat.send(f"More {turn}: " + words("detail", 40))
    chat.events.clear()
    assert chat.service.current.condensing.summarize()
    chat.run_until(lambda: bool(chat.events.named("summary_previewed")))

    assert not chat.service.current.condensing.retry_with_claude(basic.id)
    assert chat.events.named("notice_raised")[-1] == (
        "A summary is already being made",
        "Try again with Claude once it is done.",
    )
    chat.service.current.condensing.discard()
    chat.idle()


def test_the_first_message_waits_for_the_model_list_and_uses_a_listed_model(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    # An Anthropic-compatible server that offers one model, none of the bundled ones.
    fake_server.models = [ModelInfo(id="compatible-model", display_name="Compatible")]
    gate = threading.Event()
    fake_server.before_model_list = lambda: gate.wait(10)  # the list is slow to come
    fake_server.add_reply("Hello from the listed model.")
    chat = start_chat(wait_for_models=False)

    assert not chat.service.send("Hi there")  # kept in the composer while it waits
    assert chat.events.named("status_changed")[-1] == (WAITING_STATUS,)
    assert fake_server.requests_to("/v1/messages") == []
    gate.set()
    chat.run_until(lambda: bool(chat.events.named("pending_sent")))
    chat.idle()

    assert fake_server.turns()[-1].body["model"] == "compatible-model"
    assert chat.stored()[-1].content == "Hello from the listed model."
    assert chat.events.named("status_changed")[-1] == ("",)


def test_a_model_list_that_fails_lets_the_waiting_message_go(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_error(500, path=MODELS_PATH, times=3, retry_after_ms=1)
    gate = threading.Event()
    fake_server.before_model_list = lambda: gate.wait(10)
    fake_server.add_reply("Still here.")
    chat = start_chat(wait_for_models=False)

    assert not chat.service.send("Anyone?")
    gate.set()
    chat.run_until(lambda: bool(chat.events.named("pending_sent")))
    chat.idle()

    assert chat.stored()[-1].content == "Still here."


def test_windows_line_breaks_are_stored_and_sent_exactly_as_pasted(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    text = "Two lines:\r\nfirst\r\nsecond\r\n\r\nand an old Mac one\rend"
    fake_server.add_reply("Got them.")
    chat = start_chat()

    chat.send(text)

    assert chat.stored()[0].content == text
    sent = fake_server.turns()[-1].body["messages"][0]["content"]
    assert sent == dated(text)


@pytest.mark.parametrize("text", ["\x00", "\x00\x00 \x1b\x7f", "\u200b", "\t\r\n"])
def test_a_message_of_only_control_characters_is_refused_like_an_empty_one(
    start_chat: StartChat, fake_server: FakeAnthropicServer, text: str
) -> None:
    chat = start_chat()

    assert not chat.service.send(text)

    (error,) = chat.events.named("error_raised")[-1]
    assert error.message == "Type a message first."
    assert chat.store.list_sessions() == []
    assert fake_server.requests_to("/v1/messages") == []


def test_an_untidy_search_index_is_tidied_in_the_background_after_start(
    start_chat: StartChat,
) -> None:
    paths = AppPaths.from_environment()
    paths.ensure()
    written(paths.database, 200).close()  # a message a transaction: many segments
    chat = start_chat()
    reader = connect(paths.database)
    try:
        # A few moments after start (the warm-up's delay), on a worker.
        chat.run_until(lambda: getattr(index_shape(reader), "segments", 0) == 1)
        chat.run_until(lambda: chat.service.runner.running == 0)
        shape = index_shape(reader)
        assert shape is not None and not shape.merging
    finally:
        reader.close()
