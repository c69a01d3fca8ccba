"""The overflow invariant with issue 22's parts, over random conversations: the memory
block, the recall block (its floor, and the archive's deep pool ranked and fitted) and
the live tail stay inside the usable window; recall never turns a request that fits
into a refusal; recall keeps its floor whenever the request leaves room for it."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.chat.recall import AutomaticRecall
from app.core.calibration import Calibration, Calibrations
from app.core.context import NEAR_LIMIT_MARGIN, BuiltRequest, ContextBuilder, RequestInputs
from app.core.errors import ContextOverflowError, InvalidInputError
from app.core.models import Message, Role
from app.core.recall import ArchivedMatch, RecallQuery
from app.core.recall_rank import RecallPool
from app.core.summary import Summary
from tests.fakes.summaries import make_summary
from tests.unit.core.test_context import conversations, message, tiny_model

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
WORDS = ["gate", "code", "guitar", "octopus", "invoice", "garden", "Maya", "hobbies", "語"]


class PoolArchive:
    """An archive that finds the same archived messages for any question."""

    def __init__(self, matches: tuple[ArchivedMatch, ...]) -> None:
        self.matches = matches

    def pool(self, session_id: str, query: RecallQuery, depth: int = 60) -> RecallPool:
        return RecallPool(self.matches, {m.seq: m for m in self.matches})

    def participants(self, session_id: str) -> frozenset[str]:
        return frozenset({"maya", "claude"})

    def pool_elsewhere(self, session_id: str, query: RecallQuery, depth: int = 30) -> RecallPool:
        return RecallPool()


@st.composite
def archives(draw: st.DrawFn) -> tuple[ArchivedMatch, ...]:
    """Archived messages (seq from 1,000: never the tail's), short to page-long."""
    texts = draw(
        st.lists(
            st.builds(
                lambda words, repeat: " ".join(words) * repeat,
                st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                st.integers(min_value=1, max_value=200),
            ),
            max_size=30,
        )
    )
    return tuple(
        ArchivedMatch(
            1_000 + n,
            1_000 + n,
            (Role.USER, Role.ASSISTANT)[n % 2],
            START + timedelta(hours=n),
            text,
        )
        for n, text in enumerate(texts)
    )


@st.composite
def memories(draw: st.DrawFn) -> list[Summary]:
    sizes = draw(st.lists(st.integers(min_value=1, max_value=3_000), max_size=3))
    return [
        make_summary("condensed", 1 + 10 * n, 10 + 10 * n, "gate code noted. " * size)
        for n, size in enumerate(sizes)
    ]


def asked(tail: list[Message], question: str) -> list[Message]:
    return [*tail, message(len(tail) + 1, Role.USER, question)]


def build(
    builder: ContextBuilder,
    tail: list[Message],
    summaries: list[Summary],
    window: int,
    output: int,
    recall: AutomaticRecall | None,
    archive: PoolArchive,
) -> BuiltRequest | Exception:
    model = tiny_model(window, output)
    block = None
    if recall is not None:
        block = recall.gather(
            archive,
            session_id="s",
            inputs=RequestInputs(
                model=model, system_prompt="Be brief.", summaries=summaries, tail=tail
            ),
        )
    if block is not None:
        # Only archived messages (never the live tail's), each at most once.
        seqs = [quote.seq for quote in block.quotes]
        assert all(seq >= 1_000 for seq in seqs) and len(set(seqs)) == len(seqs)
    try:
        return builder.build_request(
            RequestInputs(model=model, system_prompt="Be brief.", summaries=summaries, tail=tail),
            recall=block,
        )
    except (ContextOverflowError, InvalidInputError) as error:
        return error


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tail=conversations(),
    question=st.sampled_from(["What was the gate code?", "What design is on Maya's guitar?"]),
    summaries=memories(),
    archive=archives(),
    window=st.integers(min_value=1_000, max_value=40_000),
    output_share=st.floats(min_value=0.01, max_value=0.3),
    ratio=st.sampled_from([None, 0.8, 1.3]),
    budget=st.sampled_from([0.02, 0.05, 0.2]),
)
def test_memory_recall_and_the_live_tail_stay_inside_the_usable_window(
    tail: list[Message],
    question: str,
    summaries: list[Summary],
    archive: tuple[ArchivedMatch, ...],
    window: int,
    output_share: float,
    ratio: float | None,
    budget: float,
) -> None:
    output = max(1, int(window * output_share))
    calibrations = Calibrations(
        {"claude-tiny": Calibration(ratio=ratio, weight=1.0, samples=1)} if ratio else {}
    )
    builder = ContextBuilder(calibrations=calibrations)
    tail = asked(tail, question)
    recall = AutomaticRecall(builder, budget)
    archived = PoolArchive(archive)

    bare = build(builder, tail, summaries, window, output, None, archived)
    built = build(builder, tail, summaries, window, output, recall, archived)

    event(type(built).__name__)
    if isinstance(built, Exception):
        # Recall never makes a refusal of its own: the same as without it.
        assert isinstance(bare, Exception) and str(bare) == str(built)
        return
    assert isinstance(bare, BuiltRequest)
    state = built.state
    parts = state.breakdown
    assert state.used + built.max_tokens <= window
    assert parts.system + parts.memory + parts.recall + parts.history + parts.draft <= state.usable
    allowed = recall.raw_budget(
        RequestInputs(
            model=tiny_model(window, output),
            system_prompt="Be brief.",
            summaries=summaries,
            tail=tail,
        )
    )
    assert built.raw_recall_tokens <= allowed
    if built.raw_recall_tokens:
        event("quoted")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tail=conversations(),
    summaries=memories(),
    window=st.integers(min_value=1_000, max_value=200_000),
    output_share=st.floats(min_value=0.01, max_value=0.3),
    budget=st.sampled_from([0.01, 0.05, 0.2]),
)
def test_recall_keeps_its_floor_whenever_the_request_leaves_room_for_it(
    tail: list[Message], summaries: list[Summary], window: int, output_share: float, budget: float
) -> None:
    """The live tail gives way before recall is squeezed: summarizing goes by the figures
    with recall's floor (`ContextState.required`), so while those fit (short of the margin
    where an exact count is asked) recall may quote at least its floor."""
    builder = ContextBuilder()
    model = tiny_model(window, max(1, int(window * output_share)))
    state = builder.estimate_state(
        RequestInputs(model=model, system_prompt="Be brief.", summaries=summaries, tail=tail),
        recall_budget_ratio=budget,
    )
    if not summaries:
        return  # nothing archived: no recall block to keep room for
    assert 0 < state.recall_floor <= math.floor(state.usable * 0.2)
    required = state.required
    assert required.breakdown.recall == state.recall_floor
    room = math.floor(state.usable * (1 - NEAR_LIMIT_MARGIN))
    event("room for the floor" if required.used <= room else "the live tail gives way first")
    if required.used <= room:
        assert state.recall_allowed >= state.recall_floor
