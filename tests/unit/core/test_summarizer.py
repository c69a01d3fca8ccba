"""The summarizer (DESIGN §6): modes, the merge and retention check, sources, redaction,
the capped transcript, the single retry, the fallback and abort, compression, the size cap.

The model is a hand-written fake `complete` callable, never a mock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.core.errors import (
    BadRequestError,
    ModelNotFoundError,
    OverloadedError,
    StructuredOutputError,
)
from app.core.models import Message, Role
from app.core.summarization_config import DEFAULT_SUMMARIZER_MODELS, SummarizationConfig
from app.core.summarizer import (
    TOOL_NAME,
    Summarizer,
    SummarizeResult,
    summary_tool_schema,
)
from app.core.summary import (
    EventOutcome,
    SearchKey,
    SourcedPoint,
    Summary,
    SummaryContent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
    render_summary_text,
)
from app.core.tokens import TokenCounter

START = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
SECRET = "sk-ant-api03-SECRETsecretSECRET123456"

Answer = dict[str, Any] | BaseException | Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def message(seq: int, content: str, role: Role | None = None) -> Message:
    if role is None:
        role = Role.USER if seq % 2 else Role.ASSISTANT
    return Message(
        id=1000 + seq,
        session_id="s1",
        seq=seq,
        role=role,
        content=content,
        created_at=START + timedelta(minutes=seq),
    )


def conversation(*texts: str, first_seq: int = 1) -> list[Message]:
    return [message(first_seq + index, text) for index, text in enumerate(texts)]


CONVERSATION = conversation(
    "I'm planning the Q3 report; the numbers are in report_v2.xlsx.",
    "Happy to help. What should the report cover?",
    "Revenue grew 12% to $4,250,000. Let's go with the short format.",
    "Noted: the short format, with revenue first.",
    "I'll send the draft to Maria by 2026-04-01.",
    "Sounds good. Anything else?",
)


def llm_answer(**changes: Any) -> dict[str, Any]:
    """A valid tool input that mentions none of the conversation's hard facts."""
    answer: dict[str, Any] = {
        "narrative": "The user planned the quarterly report with Claude.",
        "key_points": [{"text": "The report uses the short format.", "sources": [3, 4]}],
        "decisions": [],
        "action_items": [],
        "open_questions": [],
        "entities": [],
    }
    answer.update(changes)
    return answer


class FakeCompletion:
    """Stands in for `ChatProvider.complete_structured`: answers from a script and
    remembers every call. With the script used up it answers `llm_answer()`."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        answer: Answer = self.answers.pop(0) if self.answers else llm_answer()
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(kwargs)
        return answer

    @property
    def prompt(self) -> str:
        return str(self.calls[-1]["prompt"])


def make(
    counter: TokenCounter,
    complete: FakeCompletion | None,
    *,
    budget: int = 60_000,
    **settings: Any,
) -> Summarizer:
    return Summarizer(
        SummarizationConfig(**settings),
        complete=complete,
        counter=counter,
        transcript_budget_tokens=budget,
        tz=UTC,
    )


def summarize(
    summarizer: Summarizer, messages: Sequence[Message] = CONVERSATION, **kwargs: Any
) -> SummarizeResult:
    return summarizer.summarize_messages(
        "s1", messages, trigger=kwargs.pop("trigger", SummaryTrigger.AUTO), **kwargs
    )


def rendered(result: SummarizeResult) -> str:
    assert result.draft is not None
    return render_summary_text(result.draft.content)


# --- modes ---------------------------------------------------------------------------


def test_rule_mode_never_calls_the_model(counter: TokenCounter) -> None:
    complete = FakeCompletion(AssertionError("rule mode called the model"))

    result = summarize(make(counter, complete, mode="rule"))

    assert complete.calls == []
    assert result.outcome is EventOutcome.OK
    assert result.llm_calls == 0
    draft = result.draft
    assert draft is not None
    assert draft.mode is SummaryMode.RULE
    assert draft.model is None
    assert draft.tier is SummaryTier.CONDENSED
    assert (draft.first_seq, draft.last_seq, draft.depth) == (1, 6, 1)
    assert draft.message_ids == [m.id for m in CONVERSATION]
    assert draft.source_tokens == sum(counter.count_message(m.content) for m in CONVERSATION)
    assert draft.summary_tokens == counter.count(render_summary_text(draft.content))
    assert "report_v2.xlsx" in rendered(result)
    assert "Let's go with the short format." in [p.text for p in draft.content.decisions]


def test_the_draft_covers_exactly_the_messages_given_in_any_order(counter: TokenCounter) -> None:
    messages = conversation("First point.", "Second point.", "Third point.", first_seq=40)

    result = summarize(make(counter, FakeCompletion()), list(reversed(messages)))

    assert result.draft is not None
    assert result.draft.message_ids == [1040, 1041, 1042]
    assert (result.draft.first_seq, result.draft.last_seq) == (40, 42)


def test_hybrid_merges_rule_facets_and_keeps_every_hard_fact(counter: TokenCounter) -> None:
    complete = FakeCompletion(
        llm_answer(decisions=[{"text": "Let's go with the short format", "sources": [3]}])
    )

    result = summarize(make(counter, complete), instructions="Focus on money.")

    assert result.outcome is EventOutcome.OK
    assert result.llm_calls == 1
    draft = result.draft
    assert draft is not None
    assert draft.mode is SummaryMode.HYBRID
    assert draft.model == "claude-haiku-5-5"
    assert draft.instructions == "Focus on money."
    # The rule's decision is the LLM's, de-duplicated; the rule's action item is merged in.
    assert [p.text for p in draft.content.decisions] == ["Let's go with the short format"]
    assert any("Maria" in item.task for item in draft.content.action_items)
    text = rendered(result)
    for fact in ("report_v2.xlsx", "12%", "$4,250,000", "2026-04-01"):
        assert fact in text


def test_llm_mode_adds_only_the_missing_hard_facts(counter: TokenCounter) -> None:
    complete = FakeCompletion(llm_answer(narrative="Revenue grew 12% according to report_v2.xlsx."))

    result = summarize(make(counter, complete, mode="llm"))

    draft = result.draft
    assert draft is not None
    assert draft.mode is SummaryMode.LLM
    assert draft.content.decisions == []  # the rules' decisions are not merged in llm mode
    assert draft.content.action_items == []
    # The hard facts the model left out are kept by the rules' fact ledger, dated.
    ledger = {fact.value: fact for fact in draft.content.facts}
    assert ledger["$4,250,000"].seq is not None and ledger["$4,250,000"].day is not None
    assert "2026-04-01" in ledger
    # Not repeated as entities: the ledger has them.
    assert "report_v2.xlsx" not in draft.content.entities
    assert "12%" not in draft.content.entities
    text = render_summary_text(draft.content)
    assert text.count("$4,250,000") == 1


def test_sources_outside_the_covered_range_are_dropped(counter: TokenCounter) -> None:
    complete = FakeCompletion(
        llm_answer(
            key_points=[{"text": "A point.", "sources": [0, 2, "#5", 7, 99]}],
            action_items=[{"task": "Send it.", "sources": [-1, 6]}],
        )
    )

    result = summarize(make(counter, complete, mode="llm"))

    assert result.draft is not None
    # Dated by its first source message.
    assert result.draft.content.key_points == [
        SourcedPoint(text="A point.", sources=[2, 5], day=START.astimezone().date())
    ]
    assert result.draft.content.action_items[0].sources == [6]


def test_secrets_are_redacted_in_the_prompt_and_every_field(counter: TokenCounter) -> None:
    messages = conversation(
        f"My key is {SECRET}, please remember it. The file is notes.md.",
        "I won't repeat it.",
    )
    leak = f"key {SECRET}"
    complete = FakeCompletion(
        {
            "narrative": f"The user shared {leak}.",
            "key_points": [{"text": leak, "sources": [1]}],
            "decisions": [{"text": leak, "sources": [1]}],
            "action_items": [{"task": leak, "owner": leak, "due": leak, "sources": [1]}],
            "open_questions": [{"text": leak, "sources": [1]}],
            "entities": [SECRET, "notes.md"],
        }
    )

    result = summarize(make(counter, complete), messages, instructions=f"Never lose {SECRET}")

    assert SECRET not in complete.prompt
    assert result.draft is not None
    dumped = result.draft.model_dump_json()
    assert "SECRETsecret" not in dumped
    assert "[redacted]" in result.draft.content.narrative
    assert "notes.md" in result.draft.content.entities


def test_the_transcript_shows_numbers_roles_dates_and_the_focus(counter: TokenCounter) -> None:
    complete = FakeCompletion()

    summarize(make(counter, complete), instructions="the budget")

    call = complete.calls[0]
    assert "[#1 · user · 2026-03-05 14:31]\nI'm planning the Q3 report" in call["prompt"]
    assert "[#6 · assistant · 2026-03-05 14:36]" in call["prompt"]
    assert "verbatim" in call["tool_description"]
    assert "exactly as written" in call["prompt"]
    assert "Invent nothing" in call["prompt"]
    assert call["prompt"].rstrip().endswith("<focus>\nthe budget\n</focus>")
    assert call["tool_name"] == TOOL_NAME
    assert call["input_schema"] == summary_tool_schema()
    assert call["max_tokens"] <= 2 * 800 + 1024


def test_a_custom_prompt_template_is_used(counter: TokenCounter) -> None:
    complete = FakeCompletion()
    template = "Be brief ({target_tokens} tokens).\n{transcript}"

    summarize(make(counter, complete, prompt_template=template), instructions="dates")

    prompt = complete.prompt
    assert prompt.startswith("Be brief (")
    assert "<transcript>\n[#1 · user" in prompt
    assert prompt.endswith("<focus>\ndates\n</focus>")  # appended: the template has no slot


# --- the capped transcript ---------------------------------------------------------------


def test_the_oldest_messages_are_left_out_and_the_summary_says_so(counter: TokenCounter) -> None:
    messages = [
        message(seq, f"Message {seq} talks about topic_{seq} at length. " + "More words. " * 20)
        for seq in range(1, 21)
    ]
    complete = FakeCompletion()

    result = summarize(make(counter, complete, mode="llm", budget=600), messages)

    prompt = complete.prompt
    assert "topic_20" in prompt
    assert "[#1 · " not in prompt
    shown = [int(seq) for seq in re.findall(r"^\[#(\d+) ·", prompt, re.MULTILINE)]
    left_out = 20 - len(shown)
    assert left_out > 0
    assert shown == list(range(left_out + 1, 21))
    assert result.draft is not None
    note = (
        f"The oldest {left_out} messages were too long to include; their facts come from the rules."
    )
    assert note in result.draft.content.notes
    # The facts of what the model did not read come from the rules.
    assert "topic_1" in [fact.value for fact in result.draft.content.facts]
    assert len(complete.calls) == 1


def test_a_huge_single_message_is_cut_in_the_middle_and_still_one_call(
    counter: TokenCounter,
) -> None:
    middle = "The secret ingredient is budget_code_XYZ_77 in the middle. "
    content = (
        "Start: the plan lives in plan_final.md. "
        + "filler text goes here " * 6_000
        + middle
        + "more filler words " * 6_000
        + "End: ship on 2026-05-01."
    )
    complete = FakeCompletion()

    result = summarize(make(counter, complete, budget=2_000), [message(1, content)])

    assert len(complete.calls) == 1
    prompt = complete.prompt
    assert "plan_final.md" in prompt
    assert "2026-05-01" in prompt
    assert "budget_code_XYZ_77" not in prompt
    assert "tokens of this message are left out here" in prompt
    assert counter.count(prompt) < 2_000 + 400  # the budget, plus the rules around it
    draft = result.draft
    assert draft is not None
    assert any("Message #1 was too long to read in full" in note for note in draft.content.notes)
    assert "budget_code_XYZ_77" in rendered(result)  # from the rules
    assert draft.summary_tokens <= 800


# --- failures ---------------------------------------------------------------------------


def test_a_transport_error_is_not_retried_here(counter: TokenCounter) -> None:
    # The provider retries once (the SDK's retries); the summarizer never adds its own.
    complete = FakeCompletion(OverloadedError("Claude is busy."), llm_answer())

    result = summarize(make(counter, complete))

    assert len(complete.calls) == 1
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == "OverloadedError"
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.RULE


@pytest.mark.parametrize(
    ("answer", "error_class"),
    [
        (
            StructuredOutputError("No tool call.", detail="stop_reason=end_turn"),
            "StructuredOutputError",
        ),
        ({"narrative": "Missing every list."}, "ValidationError"),
        (llm_answer(narrative="   "), "ValidationError"),
        (llm_answer(key_points="not a list"), "ValidationError"),
    ],
)
def test_a_bad_answer_is_not_retried_and_becomes_a_basic_summary(
    counter: TokenCounter, answer: Answer, error_class: str
) -> None:
    complete = FakeCompletion(answer)

    result = summarize(make(counter, complete))

    assert len(complete.calls) == 1
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == error_class
    assert result.llm_calls == 1
    assert result.detail
    draft = result.draft
    assert draft is not None
    assert draft.mode is SummaryMode.RULE
    assert draft.model is None
    assert draft.content.narrative.startswith("Basic summary of 6 messages (#1–#6")
    assert "report_v2.xlsx" in rendered(result)


def test_a_model_refusing_the_request_hands_it_to_the_next_model(
    counter: TokenCounter,
) -> None:
    # e.g. a model whose thinking cannot be turned off refuses the forced tool call.
    refused = BadRequestError(
        "Claude couldn't accept this request.",
        detail="HTTP 400; type=invalid_request_error; message=Thinking may not be enabled "
        "when tool_choice forces tool use.",
    )
    complete = FakeCompletion(refused)

    result = summarize(make(counter, complete, summarizer_models=["model-a", "model-b"]))

    assert [call["model"] for call in complete.calls] == ["model-a", "model-b"]
    assert result.outcome is EventOutcome.OK
    assert result.draft is not None and result.draft.model == "model-b"


def test_when_every_model_refuses_the_summary_is_basic(counter: TokenCounter) -> None:
    complete = FakeCompletion(BadRequestError("Bad request."), BadRequestError("Bad request."))

    result = summarize(make(counter, complete, summarizer_models=["model-a", "model-b"]))

    assert len(complete.calls) == 2
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == "BadRequestError"
    assert result.draft is not None and result.draft.mode is SummaryMode.RULE


def test_abort_on_failure_returns_no_draft(counter: TokenCounter) -> None:
    complete = FakeCompletion(StructuredOutputError("No tool call."))

    result = summarize(make(counter, complete, abort_on_failure=True))

    assert result.draft is None
    assert result.outcome is EventOutcome.ABORTED
    assert result.error_class == "StructuredOutputError"
    assert result.llm_calls == 1


def test_no_model_at_all_falls_back(counter: TokenCounter) -> None:
    result = summarize(make(counter, None))

    assert result.outcome is EventOutcome.FALLBACK
    assert result.llm_calls == 0
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.RULE


def test_a_missing_model_moves_down_the_list_and_nothing_else_does(
    counter: TokenCounter,
) -> None:
    complete = FakeCompletion(ModelNotFoundError("No such model."), llm_answer())

    result = summarize(make(counter, complete), model_order=["gone-model", "claude-sonnet-4-6"])

    assert [call["model"] for call in complete.calls] == ["gone-model", "claude-sonnet-4-6"]
    assert result.outcome is EventOutcome.OK
    assert result.draft is not None
    assert result.draft.model == "claude-sonnet-4-6"


def test_every_model_missing_falls_back(counter: TokenCounter) -> None:
    complete = FakeCompletion(*(ModelNotFoundError("No.") for _ in DEFAULT_SUMMARIZER_MODELS))

    result = summarize(make(counter, complete))

    assert [call["model"] for call in complete.calls] == list(DEFAULT_SUMMARIZER_MODELS)
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == "ModelNotFoundError"


# --- the size cap -------------------------------------------------------------------------


def test_a_long_answer_is_trimmed_to_max_summary_tokens(counter: TokenCounter) -> None:
    complete = FakeCompletion(
        llm_answer(
            narrative=" ".join(
                f"Sentence {n} says something long and detailed." for n in range(60)
            ),
            key_points=[
                {"text": f"Point {n}: " + "detail " * 30, "sources": [1]} for n in range(40)
            ],
        )
    )

    result = summarize(make(counter, complete, max_summary_tokens=150))

    draft = result.draft
    assert draft is not None
    assert draft.summary_tokens <= 150
    assert draft.summary_tokens == counter.count(render_summary_text(draft.content))
    assert any(note.startswith("Shortened to fit") for note in draft.content.notes)


def test_a_basic_summary_of_many_messages_fits_the_cap(counter: TokenCounter) -> None:
    messages = [
        message(seq, f"We decided to use option_{seq} with file_{seq}.py for {seq}00 users?")
        for seq in range(1, 301)
    ]

    result = summarize(make(counter, None, mode="rule", max_summary_tokens=200), messages)

    assert result.draft is not None
    assert result.draft.summary_tokens <= 200


# --- compression ----------------------------------------------------------------------------


def child(
    summary_id: str, first: int, last: int, depth: int, *, decisions: Sequence[str] = ()
) -> Summary:
    content = SummaryContent(
        narrative=f"Messages {first} to {last} discussed part {summary_id}.",
        key_points=[SourcedPoint(text=f"Point of {summary_id}.", sources=[first])],
        decisions=[SourcedPoint(text=text, sources=[last]) for text in decisions],
        entities=[f"file_{summary_id}.py", "shared.md"],
    )
    return Summary(
        id=summary_id,
        session_id="s1",
        tier=SummaryTier.CONDENSED if depth == 1 else SummaryTier.COMPRESSED,
        parent_id=None,
        first_seq=first,
        last_seq=last,
        content=content,
        source_tokens=5_000,
        summary_tokens=counter_for_children.count(render_summary_text(content)),
        mode=SummaryMode.HYBRID,
        model="claude-haiku-4-5",
        trigger=SummaryTrigger.AUTO,
        instructions=None,
        state=SummaryState.ACTIVE,
        depth=depth,
        created_at=START,
    )


counter_for_children = TokenCounter()
CHILDREN = [
    child("c", 61, 90, 1, decisions=["Use SQLite."]),
    child("a", 1, 30, 2, decisions=["Use SQLite."]),
    child("b", 31, 60, 1),
]


def test_compression_covers_the_summaries_one_level_deeper(counter: TokenCounter) -> None:
    complete = FakeCompletion(llm_answer(key_points=[{"text": "Merged.", "sources": [0, 45, 120]}]))

    result = make(counter, complete).compress_summaries("s1", CHILDREN, trigger=SummaryTrigger.AUTO)

    draft = result.draft
    assert draft is not None
    assert draft.tier is SummaryTier.COMPRESSED
    assert draft.summary_ids == ["a", "b", "c"]
    assert draft.message_ids == []
    assert (draft.first_seq, draft.last_seq, draft.depth) == (1, 90, 3)
    assert draft.source_tokens == sum(summary.summary_tokens for summary in CHILDREN)
    assert draft.content.key_points[0].sources == [45]
    prompt = complete.prompt
    positions = [prompt.index(f"part {name}") for name in "abc"]
    assert positions == sorted(positions)  # oldest first
    assert "[Summary of messages #1–#30]" in prompt
    text = rendered(result)
    for entity in ("file_a.py", "file_b.py", "file_c.py", "shared.md"):
        assert entity in text  # the retention check
    assert [p.text for p in draft.content.decisions] == ["Use SQLite."]


def test_rule_compression_merges_by_rule(counter: TokenCounter) -> None:
    complete = FakeCompletion(AssertionError("rule mode called the model"))

    result = make(counter, complete, mode="rule").compress_summaries(
        "s1", CHILDREN, trigger=SummaryTrigger.MANUAL
    )

    draft = result.draft
    assert draft is not None
    assert complete.calls == []
    assert draft.mode is SummaryMode.RULE
    assert draft.trigger is SummaryTrigger.MANUAL
    assert [p.text for p in draft.content.decisions] == ["Use SQLite."]  # de-duplicated
    assert [p.text for p in draft.content.key_points] == [
        "Point of a.",
        "Point of b.",
        "Point of c.",
    ]
    assert draft.content.entities == ["file_a.py", "shared.md", "file_b.py", "file_c.py"]
    assert draft.content.narrative.startswith("Messages 1 to 30 discussed part a.")


def test_failed_compression_falls_back_to_the_rule_merge(counter: TokenCounter) -> None:
    complete = FakeCompletion(StructuredOutputError("Cut off."))

    result = make(counter, complete).compress_summaries("s1", CHILDREN, trigger=SummaryTrigger.AUTO)

    assert result.outcome is EventOutcome.FALLBACK
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.RULE
    assert result.draft.depth == 3


def test_nothing_to_summarize_is_a_caller_bug(counter: TokenCounter) -> None:
    summarizer = make(counter, FakeCompletion())
    with pytest.raises(ValueError):
        summarizer.summarize_messages("s1", [], trigger=SummaryTrigger.AUTO)
    with pytest.raises(ValueError):
        summarizer.compress_summaries("s1", [], trigger=SummaryTrigger.AUTO)


def test_the_model_says_where_things_stand_and_gives_search_keys(counter: TokenCounter) -> None:
    complete = FakeCompletion(
        llm_answer(
            standing="The report's format is agreed; the figures are still being checked.",
            search_keys=[
                {"words": "quarterly report, format", "sources": [1, 2, 3]},
                {"words": "points nowhere", "sources": [99]},  # outside: dropped
                {"words": "  ", "sources": [2]},  # no words: dropped
            ],
        )
    )

    result = summarize(make(counter, complete, mode="llm"))

    assert result.draft is not None
    content = result.draft.content
    assert content.search_keys == [SearchKey(words="quarterly report, format", sources=[1, 2, 3])]
    text = rendered(result)
    assert "Where things stand now: The report's format is agreed" in text
    assert "quarterly report, format" not in text  # keys are for recall, not for Claude
    schema = complete.calls[-1]["input_schema"]
    assert {"standing", "search_keys"} <= set(schema["required"])


def test_a_compressed_summary_keeps_its_childrens_search_keys(counter: TokenCounter) -> None:
    plain = child("b", 31, 60, 1)
    keys = [SearchKey(words="the allotment", sources=[40])]
    keyed_child = plain.model_copy(
        update={"content": plain.content.model_copy(update={"search_keys": keys})}
    )
    children = [CHILDREN[1], keyed_child, CHILDREN[0]]
    complete = FakeCompletion(llm_answer(search_keys=[{"words": "merged", "sources": [45]}]))

    llm = make(counter, complete).compress_summaries("s1", children, trigger=SummaryTrigger.AUTO)
    rule = make(counter, None, mode="rule").compress_summaries(
        "s1", children, trigger=SummaryTrigger.AUTO
    )

    for result in (llm, rule):
        assert result.draft is not None
        assert SearchKey(words="the allotment", sources=[40]) in result.draft.content.search_keys
    assert llm.draft is not None
    assert SearchKey(words="merged", sources=[45]) in llm.draft.content.search_keys


def test_a_basic_summary_gives_each_exchange_its_topic_as_search_keys(
    counter: TokenCounter,
) -> None:
    # Rule mode writes no model's keys; it derives them from the turns (issue 22).
    result = summarize(make(counter, None, mode="rule"))

    assert result.draft is not None
    keys = result.draft.content.search_keys
    assert keys and all(set(key.sources) <= set(range(1, 7)) for key in keys)
    report = {seq for key in keys if "report" in key.words.split() for seq in key.sources}
    assert {1, 2} <= report  # the report is what the first exchange is about
    # Not shown to Claude.
    assert not any(key.words in rendered(result) for key in keys)


def test_a_basic_summary_says_the_newest_decision_and_open_question(
    counter: TokenCounter,
) -> None:
    messages = conversation(
        "Let's go with the blue tiles for the bathroom.",
        "Good choice.",
        "Should we also redo the grout?",
        "Perhaps, if the budget allows.",
    )
    result = summarize(make(counter, None, mode="rule"), messages)
    text = rendered(result)
    assert "Where things stand now:" in text
    assert "redo the grout?" in text.split("Where things stand now:")[1].splitlines()[0]
