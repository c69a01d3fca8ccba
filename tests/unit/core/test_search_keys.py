"""search_keys: the keys rule summaries write, and reading only the keys a term can match
(issue 22, Build item 2)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.models import Message, Role
from app.core.recall import fold, recall_query
from app.core.recall_rank import keyed
from app.core.search_keys import (
    MAX_RULE_KEY_CHARS,
    MAX_RULE_KEYS,
    KeyIndex,
    rule_search_keys,
)
from app.core.summary import (
    SearchKey,
    Summary,
    SummaryContent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
)

START = datetime(2026, 2, 26, 18, 0, tzinfo=UTC)
TODAY = date(2026, 6, 30)
SECRET = "sk-ant-api03-SECRETsecretSECRET123456"


def said(seq: int, role: Role, text: str, *, minutes: int | None = None) -> Message:
    return Message(
        id=100 + seq,
        session_id="s1",
        seq=seq,
        role=role,
        content=text,
        created_at=START + timedelta(minutes=seq if minutes is None else minutes),
    )


def holding(keys: list[SearchKey], word: str) -> set[int]:
    """The messages the keys holding `word` name."""
    return {seq for key in keys if word in fold(key.words).split() for seq in key.sources}


def test_each_message_of_an_exchange_is_findable_by_its_topic() -> None:
    keys = rule_search_keys(
        [
            said(1, Role.ASSISTANT, "How did the first Saturday reading session go?"),
            said(2, Role.USER, "Eleven kids turned up and one corrected my Gruffalo voice."),
            said(3, Role.ASSISTANT, "Eleven is a great turnout for a first week!"),
            said(4, Role.USER, "My boiler broke again, the second boiler this year."),
            said(5, Role.ASSISTANT, "Call the landlord first; a boiler is their repair."),
        ]
    )
    # The answer by what the question and the reply both say; the question by the answer's.
    assert {1, 2, 3} <= holding(keys, "first") and {1, 2, 3} <= holding(keys, "eleven")
    assert {4, 5} <= holding(keys, "boiler")
    assert not holding(keys, "gruffalo")  # said once: in its message, not the topic
    assert 4 not in holding(keys, "eleven")  # another exchange keeps to its own topic
    assert all(key.words == key.words.casefold() for key in keys)


def test_the_turn_before_counts_only_in_the_same_sitting() -> None:
    keys = rule_search_keys(
        [
            said(1, Role.USER, "Any tips for potatoes at the allotment?"),
            said(2, Role.ASSISTANT, "Start with potatoes; they forgive a lot."),
            said(3, Role.USER, "Potatoes again, and Porto is booked!", minutes=3 * 24 * 60),
            said(4, Role.ASSISTANT, "Porto is a lovely choice.", minutes=3 * 24 * 60 + 1),
            said(5, Role.USER, "Should I pack a porto guide?", minutes=3 * 24 * 60 + 2),
        ]
    )
    assert holding(keys, "potatoes") == {1, 2}  # three days later: not the same topic
    assert {3, 4, 5} <= holding(keys, "porto")  # the turn before, in the same sitting


def test_keys_stay_within_the_caps_and_every_message_is_a_source() -> None:
    messages = [
        said(
            n,
            Role.USER if n % 2 else Role.ASSISTANT,
            f"topic{(n + 1) // 2} " + " ".join(f"word{n}x{i}" for i in range(60)),
        )
        for n in range(1, 301)
    ]
    keys = rule_search_keys(messages)
    assert len(keys) <= MAX_RULE_KEYS
    assert all(len(key.words) <= MAX_RULE_KEY_CHARS for key in keys)
    assert {seq for key in keys for seq in key.sources} == set(range(1, 301))
    assert all(1 <= len(key.sources) <= 16 for key in keys)


def test_no_secret_no_stop_word_and_no_word_every_exchange_says() -> None:
    messages: list[Message] = []
    for n in range(10):
        messages.append(said(2 * n + 1, Role.USER, f"Key {SECRET} for the lovely shop{n}."))
        messages.append(said(2 * n + 2, Role.ASSISTANT, f"Lovely, the shop{n} {SECRET}."))
    words = " ".join(key.words for key in rule_search_keys(messages)).split()
    assert not any("secret" in word.casefold() for word in words)
    assert "the" not in words and "lovely" not in words  # "lovely" is in every exchange
    assert "shop3" in words


def summary(summary_id: str, keys: list[SearchKey]) -> Summary:
    return Summary(
        id=summary_id,
        session_id="s1",
        tier=SummaryTier.CONDENSED,
        parent_id=None,
        first_seq=1,
        last_seq=100,
        content=SummaryContent(narrative="n", search_keys=keys),
        source_tokens=10,
        summary_tokens=5,
        mode=SummaryMode.RULE,
        model=None,
        trigger=SummaryTrigger.AUTO,
        instructions=None,
        state=SummaryState.ACTIVE,
        depth=1,
        created_at=START,
    )


def test_the_index_reads_a_summarys_keys_once_and_forgets_the_oldest() -> None:
    index = KeyIndex()
    first = summary("a", [SearchKey(words="pottery course", sources=[3])])
    query = recall_query("What did I make at pottery?", TODAY)
    assert index.keys_for([first], query.terms) == first.content.search_keys
    # An id names one content: the second read is the first's.
    again = summary("a", [SearchKey(words="something else", sources=[9])])
    assert index.keys_for([again], query.terms) == first.content.search_keys
    for n in range(100):
        index.keys_for([summary(f"other{n}", [SearchKey(words="x", sources=[1])])], query.terms)
    assert index.keys_for([again], query.terms) == []  # read anew


_WORDS = ["pottery", "choir", "checkups", "check-up", "guitar", "octopus", "wedding", "blue"]
_QUESTIONS = [
    "What did I make at pottery?",
    "When was Biscuit's check-up?",
    "What colour is the guitar with the octopus?",
    "Who sang in the choir at the wedding?",
    'What did I call "the blue guitar"?',
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5),
                st.lists(st.integers(1, 60), min_size=1, max_size=4),
            ),
            max_size=8,
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(_QUESTIONS),
)
def test_the_index_gives_what_reading_every_key_gives(
    summaries: list[list[tuple[list[str], list[int]]]], question: str
) -> None:
    made = [
        summary(f"s{n}", [SearchKey(words=" ".join(w), sources=s) for w, s in keys])
        for n, keys in enumerate(summaries)
    ]
    terms = recall_query(question, TODAY).terms
    every = [key for s in made for key in s.content.search_keys]
    assert keyed(KeyIndex().keys_for(made, terms), terms) == keyed(every, terms)
