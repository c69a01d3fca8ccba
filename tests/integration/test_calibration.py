"""Calibration for real: the gauge against what the fake server reports through the real SDK.

The fake counts with its own rule (cl100k × 1.07 + 5 a message + 10 a request),
not the client's, so the gauge only comes close by learning from each reply's usage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.calibration import Calibration, Calibrations
from app.core.catalog import FALLBACK_MODELS, ModelInfo, model_limits
from app.core.context import BuiltRequest, ContextBuilder, RequestInputs
from app.core.errors import MessageTooLargeError
from app.core.models import Role
from app.core.paths import AppPaths
from app.core.summary import Summary
from app.core.tokens import TokenCounter
from app.llm.anthropic_provider import AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, StreamCallbacks
from app.store import SessionStore, open_database
from app.store.calibration_file import CalibrationFile
from app.store.model_cache import ModelCache
from tests.fakes.anthropic_server import MODELS_PATH, FakeAnthropicServer
from tests.fakes.summaries import make_summary

KEY = "sk-ant-calibration-test-key"
TOLERANCE = 0.05

SYSTEM = (
    "You are a patient guide for walkers in the hills. Answer in plain words, keep "
    "numbers and place names exact, and say so when you are not sure of something."
)

PROSE = [
    (
        "We are planning a two-day walk in the Cairngorms in late May. What should we "
        "expect from the weather, and is it still possible to meet snow on the plateau?",
        "Late May in the Cairngorms is changeable. In the glens you can have 18 °C and sun, "
        "while the plateau above 1,000 m can be near freezing with a strong wind. Old snow "
        "patches often linger in north-facing corries into June, and fresh snow showers are "
        "possible, though they rarely settle for long. Plan for all four seasons in one day: "
        "a windproof shell, a warm layer, gloves and a hat, even when the car park is warm. "
        "Check the Mountain Weather Information Service forecast the evening before and again "
        "in the morning, and have a lower-level alternative in mind if the summit wind is "
        "forecast above 40 mph.",
    ),
    (
        "Good. Our route goes from Glenmore Lodge over Bynack More and down to the Fords of "
        "Avon refuge. How long is that, and where can we get water?",
        "From Glenmore Lodge to the Fords of Avon refuge over Bynack More is about 17 km with "
        "roughly 900 m of ascent; most walkers take six to eight hours with stops. Water is "
        "easy to find early on: the Allt na Ciche and the River Nethy both run all year. On "
        "the ridge of Bynack More there is none, so fill up before you climb. Beyond the "
        "summit, streams draining towards the Avon are plentiful after rain. Treat or filter "
        "anything you take near the refuge, which is used by many parties.",
    ),
    (
        "Is the refuge worth relying on for the night, or should we carry a tent?",
        "Carry a tent. The Fords of Avon refuge is a small, basic shelter with room for about "
        "four people lying down; it is meant for emergencies, and on a fine weekend in May it "
        "may well be full. A light tent gives you the choice of pitching on the flat ground by "
        "the river, and it keeps you independent if the weather turns and you need to stop "
        "early. Leave no trace: no fires, carry out all rubbish, and pitch well away from the "
        "refuge door so that others can reach it.",
    ),
    (
        "Last question: what should we do if the river at the fords is too high to cross?",
        "Do not cross. The Avon rises quickly after rain or snow melt and is powerful even when "
        "it looks shallow. Wait: many spate rivers drop within hours once the rain stops. If it "
        "stays high, retreat the way you came or follow the bank to a safer crossing only if "
        "you know the ground. Tell someone your plan and your latest return time before you go.",
    ),
    (
        "Thanks! Could you sum up the kit list in a few lines?",
        "Shell jacket and trousers, warm layer, hat and gloves; map, compass and a charged "
        "phone; tent, sleeping bag and mat; stove, fuel and food for two days plus a spare "
        "meal; water filter; first-aid kit and a head torch.",
    ),
]

STARTS_WITH_HI = [
    ("Hi!", "Hello! How can I help with your walk?"),
    *PROSE[:4],
]

CODE_AND_UNICODE = [
    (
        "Here is my route file parser; why does it fail on the Gaelic names?\n\n"
        "```python\ndef read(path):\n    with open(path) as f:\n        return [line.split(',') "
        "for line in f]\n```\n\nThe file has lines like `Càrn Bàn Mòr,1052,57.0617,-3.8447`.",
        "`open(path)` uses the platform's default encoding, which on Windows is often cp1252, "
        "so 'à' and 'ò' in Càrn Bàn Mòr are misread. Open it as UTF-8 and parse with the csv "
        "module, which handles quoting:\n\n```python\nimport csv\n\ndef read(path: str) -> "
        "list[list[str]]:\n    with open(path, encoding='utf-8', newline='') as f:\n        "
        "return list(csv.reader(f))\n```\n\nIf the file came from Excel, use 'utf-8-sig' to "
        "drop the byte-order mark. 日本語 or emoji such as 🏔️ will then round-trip as well.",
    ),
    (
        "Can it also turn the heights into integers and skip a header line?",
        "Yes:\n\n```python\ndef read(path: str) -> list[tuple[str, int, float, float]]:\n    "
        "with open(path, encoding='utf-8-sig', newline='') as f:\n        rows = csv.reader(f)"
        "\n        next(rows, None)  # the header\n        return [(name, int(height), "
        "float(lat), float(lon)) for name, height, lat, lon in rows]\n```\n\nA row with a "
        "missing field raises ValueError, which tells you the line to fix.",
    ),
    (
        "And sort by height, highest first?",
        "Add `sorted(..., key=lambda row: row[1], reverse=True)` around the list "
        "comprehension, or sort the result afterwards with the same key.",
    ),
    (
        "Perfect. One more: how do I print them as a table?",
        "Use f-strings with widths: `print(f'{name:<24}{height:>6} m')` for each row. For "
        "anything fancier, the `tabulate` package formats lists of tuples as tables.",
    ),
]

MEMORY = [
    make_summary(
        "condensed",
        1,
        24,
        "The user is writing a Python tool to plan hill walks in Scotland; they read "
        "route files exported from a GPS app and want heights in metres.",
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    ),
]


@dataclass
class Measured:
    """The gauge's figure before each send, and what the server then reported."""

    gauge: list[int]
    server: list[int]

    @property
    def errors(self) -> list[float]:
        """Relative error of the gauge for request n, made after n replies (n = 0 first)."""
        return [(g - s) / s for g, s in zip(self.gauge, self.server, strict=True)]


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, fake_server.base_url)
    yield provider
    provider.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    database = tmp_path / "cairn.db"
    result = open_database(database)
    store = SessionStore(result.connection, database=database)
    yield store
    store.close()


def converse(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    store: SessionStore,
    turns: Sequence[tuple[str, str]],
    *,
    summaries: Sequence[Summary] = (),
    calibrations: Calibrations | None = None,
) -> Measured:
    """Talk as the app does: gauge while typing, store, build, send, learn from the usage."""
    models = ModelCache(AppPaths.from_environment().data_dir / "models.json").refresh(
        provider.list_models
    )
    model, known = model_limits(FALLBACK_MODELS[0].id, models)
    assert known
    calibrations = calibrations if calibrations is not None else Calibrations()
    builder = ContextBuilder(calibrations=calibrations)
    session = store.create_session("Cairngorms", model.id, SYSTEM)
    measured = Measured(gauge=[], server=[])
    for question, answer in turns:
        gauge = builder.estimate_state(
            RequestInputs(
                model=model,
                system_prompt=SYSTEM,
                summaries=summaries,
                tail=store.live_messages(session.id),
                draft=question,
            )
        )
        store.append_message(session.id, Role.USER, question)
        built = builder.build_request(
            RequestInputs(
                model=model,
                system_prompt=SYSTEM,
                summaries=summaries,
                tail=store.live_messages(session.id),
            )
        )
        # The gauge showed what is sent (each part is rounded up on its own: ±1 each).
        assert abs(built.state.used - gauge.used) <= 2
        request = ChatRequest(
            model=built.model,
            messages=built.messages,
            max_tokens=built.max_tokens,
            system=built.system,
        )
        counted = provider.count_tokens(request)
        fake_server.add_reply(answer)
        result = provider.stream_reply(request, StreamCallbacks(), CancelToken())
        assert result.usage is not None
        assert result.usage.total_input_tokens == counted
        measured.gauge.append(gauge.used)
        measured.server.append(counted)
        calibrations.learn_usage(model.id, built.raw_input_tokens, result.usage)
        store.append_message(
            session.id, Role.ASSISTANT, result.text, usage=result.usage, model=result.model
        )
    return measured


@pytest.mark.parametrize(
    ("turns", "summaries"),
    [(PROSE, ()), (CODE_AND_UNICODE, MEMORY)],
    ids=["prose", "code-unicode-memory"],
)
def test_the_gauge_is_within_five_percent_after_the_first_reply(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    store: SessionStore,
    turns: list[tuple[str, str]],
    summaries: tuple[Summary, ...],
) -> None:
    measured = converse(fake_server, provider, store, turns, summaries=summaries)

    after_replies = measured.errors[1:]
    assert len(after_replies) >= 3
    assert all(abs(error) <= TOLERANCE for error in after_replies), measured.errors


def test_a_first_hello_teaches_nothing_and_harms_nothing(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, store: SessionStore
) -> None:
    measured = converse(fake_server, provider, store, STARTS_WITH_HI)

    # "Hi!" is too small to learn from; from the next reply on, the gauge is calibrated.
    assert all(abs(error) <= TOLERANCE for error in measured.errors[2:]), measured.errors


def test_the_memory_block_is_sent_after_the_instructions(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, store: SessionStore
) -> None:
    converse(fake_server, provider, store, CODE_AND_UNICODE[:1], summaries=MEMORY)

    (sent,) = [r.body for r in fake_server.requests_to("/v1/messages", "POST")]
    assert sent["system"][0] == {"type": "text", "text": SYSTEM}
    # Shorter than Sonnet's minimum cacheable length: no breakpoint (test_prompt_cache.py
    # sends a long one).
    assert "cache_control" not in sent["system"][-1]
    assert "# Conversation so far" in sent["system"][-1]["text"]
    assert "route files exported from a GPS app" in sent["system"][-1]["text"]


def test_calibration_and_counts_survive_a_restart(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    database = tmp_path / "cairn.db"
    calibration_file = CalibrationFile.in_data_dir(AppPaths.from_environment())
    first = SessionStore(open_database(database).connection, database=database)
    calibrations = Calibrations()
    try:
        converse(fake_server, provider, first, PROSE[:3], calibrations=calibrations)
        (session,) = first.list_sessions()
        before = ContextBuilder(calibrations=calibrations).estimate_state(
            RequestInputs(
                model=FALLBACK_MODELS[0], system_prompt=SYSTEM, tail=first.live_messages(session.id)
            )
        )
        stored = [m.token_estimate for m in first.live_messages(session.id)]
        assert calibration_file.save(calibrations)
    finally:
        first.close()

    # A new process: a fresh counter, the files read back.
    counter = SpyCounter()
    again = SessionStore(open_database(database).connection, database=database)
    try:
        tail = again.live_messages(session.id)
        after = ContextBuilder(counter, calibration_file.load()).estimate_state(
            RequestInputs(model=FALLBACK_MODELS[0], system_prompt=SYSTEM, tail=tail)
        )
    finally:
        again.close()

    assert [m.token_estimate for m in tail] == stored
    assert all(estimate is not None and estimate > 0 for estimate in stored)
    assert after == before
    assert after.calibrated
    assert counter.texts == [SYSTEM]  # history was not tokenized again


def test_a_failing_model_list_falls_back_without_a_crash(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(500, path=MODELS_PATH, times=3)
    cache = ModelCache(AppPaths.from_environment().data_dir / "models.json")

    models = cache.refresh(provider.list_models)

    assert models == list(FALLBACK_MODELS)
    info, known = model_limits("claude-not-listed", models)
    assert (known, info.max_input_tokens) == (False, 100_000)


def test_the_fetched_model_list_is_cached_for_offline_starts(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.models = [
        ModelInfo(
            id="claude-wide", display_name="Wide", max_input_tokens=1_000_000, max_tokens=64_000
        )
    ]
    cache = ModelCache(AppPaths.from_environment().data_dir / "models.json")
    cache.refresh(provider.list_models)
    fake_server.add_error(500, path=MODELS_PATH, times=3)

    offline = cache.refresh(provider.list_models)

    assert [model.id for model in offline] == ["claude-wide"]
    assert model_limits("claude-wide", offline)[0].max_input_tokens == 1_000_000


class SpyCounter(TokenCounter):
    """The real counter, remembering every text it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def count(self, text: str) -> int:
        self.texts.append(text)
        return super().count(text)


# --- near the limit, the server's own count decides -------------------------------------------

TINY = ModelInfo(
    id="claude-tiny", display_name="Claude Tiny", max_input_tokens=2_000, max_tokens=200
)


def exact_count_with(provider: AnthropicProvider) -> Callable[[BuiltRequest], int]:
    """What the app passes as `exact_count`: the provider's count_tokens on the built request."""

    def count(built: BuiltRequest) -> int:
        return provider.count_tokens(
            ChatRequest(
                model=built.model,
                messages=built.messages,
                max_tokens=built.max_tokens,
                system=built.system,
            )
        )

    return count


def test_near_the_limit_an_overestimate_does_not_block_a_request_that_fits(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.models = [TINY]
    # A calibration that overestimates by a lot: on its own it would refuse.
    high = Calibrations({TINY.id: Calibration(ratio=1.25, weight=1.0, samples=1)})
    draft = "stone " * 1_490

    estimate = ContextBuilder(calibrations=high).estimate_state(
        RequestInputs(model=TINY, draft=draft)
    )
    built = ContextBuilder(calibrations=high).build_request(
        RequestInputs(model=TINY, draft=draft), exact_count=exact_count_with(provider)
    )
    fake_server.add_reply("Fine.")
    reply = provider.stream_reply(
        ChatRequest(model=built.model, messages=built.messages, max_tokens=built.max_tokens),
        StreamCallbacks(),
        CancelToken(),
    )

    assert not estimate.fits
    assert built.state.counted_exactly
    assert reply.usage is not None
    assert built.state.used == reply.usage.total_input_tokens  # the server's figure, exactly


def test_near_the_limit_an_underestimate_is_caught_before_sending(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.models = [TINY]
    low = Calibrations({TINY.id: Calibration(ratio=0.95, weight=1.0, samples=1)})
    draft = "stone " * 1_790

    estimate = ContextBuilder(calibrations=low).estimate_state(
        RequestInputs(model=TINY, draft=draft)
    )
    with pytest.raises(MessageTooLargeError) as caught:
        ContextBuilder(calibrations=low).build_request(
            RequestInputs(model=TINY, draft=draft), exact_count=exact_count_with(provider)
        )

    assert estimate.fits  # the estimate alone would have let it through …
    assert caught.value.tokens > caught.value.limit == 1_800  # … and the server would refuse
    assert fake_server.requests_to("/v1/messages", "POST") == []
