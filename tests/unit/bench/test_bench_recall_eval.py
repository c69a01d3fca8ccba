"""The evaluation's stand-ins for Claude (bench/bench_recall_eval.py) answer the way
the summarizer expects, and the adversarial one really carries no facts."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.core.models import Message, MessageStatus, Role
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer_llm import LlmSummary, build_prompt
from app.core.summarizer_transcript import TranscriptBuilder
from app.core.tokens import default_counter
from bench.bench_recall_eval import extractive_claude, fact_free_claude

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def prompt_for(texts: list[str], target: int = 800) -> str:
    messages = [
        Message(
            id=seq,
            session_id="s1",
            seq=seq,
            role=Role.USER if seq % 2 else Role.ASSISTANT,
            content=text,
            created_at=START + timedelta(minutes=seq),
            token_estimate=len(text) // 4,
            status=MessageStatus.COMPLETE,
        )
        for seq, text in enumerate(texts, start=1)
    ]
    transcripts = TranscriptBuilder(default_counter(), 60_000, UTC)
    transcript = transcripts.build([transcripts.message_block(m) for m in messages])
    return build_prompt(
        SummarizationConfig(),
        intro="Summarize these messages.",
        transcript=transcript.text,
        instructions=None,
        target=target,
    )


TEXTS = [
    "I've been thinking about the sink again. The plumber is called Ingrid Holloway.",
    "A checklist for the sink avoids the usual last-minute surprises.",
    "Writing it down here: the gate code is AX-7731. We spent the weekend on the boxes.",
    "Got it. Compare at least two options for the boxes before committing.",
]


def test_the_extractive_stand_in_keeps_the_specific_sentences_verbatim() -> None:
    answer = LlmSummary.model_validate(extractive_claude(prompt=prompt_for(TEXTS)))
    points = [point.text for point in answer.key_points]
    assert points == [
        "The plumber is called Ingrid Holloway.",
        "Writing it down here: the gate code is AX-7731.",
    ]
    assert [point.sources for point in answer.key_points] == [[1], [3]]
    assert answer.entities == ["Ingrid Holloway", "AX-7731"]


def test_the_extractive_stand_in_keeps_to_the_length_asked() -> None:
    many = [f"The code for box {i} is QX-{1000 + i}." for i in range(200)]
    answer = extractive_claude(prompt=prompt_for(many, target=100))
    assert 0 < sum(len(point["text"]) for point in answer["key_points"]) <= 400


def test_the_fact_free_stand_in_is_valid_and_says_nothing_specific() -> None:
    answer = LlmSummary.model_validate(fact_free_claude(prompt=prompt_for(TEXTS)))
    said = " ".join([answer.narrative, *(p.text for p in [*answer.key_points, *answer.decisions])])
    assert answer.key_points and answer.narrative
    assert not re.search(r"\d", said)
    assert "Holloway" not in said and "AX-7731" not in said
    assert not answer.entities
