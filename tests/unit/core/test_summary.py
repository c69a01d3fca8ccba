"""The fact ledger and dated points in a summary's content: render, merge, fit (issue 12)."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.summary import (
    MAX_JOINED_SOURCES,
    MAX_KEPT_KEYS,
    MAX_KEY_CHARS,
    ActionItem,
    LedgerFact,
    SearchKey,
    SourcedPoint,
    SummaryContent,
    archived_facts_note,
    bounded_keys,
    fit,
    merge,
    render_summary_text,
    unique_facts,
)
from app.core.tokens import TokenCounter

COUNTER = TokenCounter()
MARCH_3 = date(2026, 3, 3)
MARCH_5 = date(2026, 3, 5)


def fact(index: int, day: date = MARCH_3) -> LedgerFact:
    return LedgerFact(kind="code", value=f"AX-{7000 + index}", seq=index, day=day)


def content(facts: int = 3, points: int = 5, decisions: int = 2) -> SummaryContent:
    day = MARCH_3
    return SummaryContent(
        narrative="They planned the trip. They compared three huts. They booked one.",
        key_points=[
            SourcedPoint(text=f"Point {n} about the route and the weather.", sources=[n], day=day)
            for n in range(points)
        ],
        decisions=[
            SourcedPoint(text=f"Decision {n}: take the northern path.", sources=[n], day=MARCH_5)
            for n in range(decisions)
        ],
        facts=[fact(n) for n in range(facts)],
        first_day=MARCH_3,
        last_day=MARCH_5,
    )


def test_every_point_and_fact_says_when_it_was_said() -> None:
    text = render_summary_text(
        content().model_copy(
            update={"action_items": [ActionItem(task="Book the hut", sources=[4], day=MARCH_5)]}
        )
    )

    assert "- Point 0 about the route and the weather. (3 Mar 2026)" in text
    assert "- Decision 1: take the northern path. (5 Mar 2026)" in text
    assert "- Book the hut (5 Mar 2026)" in text
    assert "Facts, verbatim:\n- AX-7000 (code, #0, 3 Mar 2026)" in text


def test_a_summary_of_one_day_says_the_day_once() -> None:
    one_day = content().model_copy(update={"last_day": MARCH_3})

    text = render_summary_text(one_day)

    assert text.startswith("When: 3 March 2026")
    assert "- Point 0 about the route and the weather.\n" in text
    assert "- AX-7000 (code, #0, 3 Mar 2026)" in text  # a fact keeps its day


def test_an_entity_already_in_the_ledger_is_not_said_twice() -> None:
    text = render_summary_text(content().model_copy(update={"entities": ["AX-7000", "Okafor"]}))

    assert text.count("AX-7000") == 1
    assert "Names, numbers and references: Okafor" in text


def test_a_summary_stored_before_the_ledger_still_loads() -> None:
    old = SummaryContent.model_validate(
        {"narrative": "Old.", "key_points": [{"text": "A point.", "sources": [1]}]}
    )

    assert old.facts == [] and old.archived_facts == 0
    assert old.key_points[0].day is None
    assert render_summary_text(old) == "Old.\nKey points:\n- A point."


def test_merging_keeps_every_fact_once_with_its_first_mention() -> None:
    older = content(facts=3).model_copy(update={"archived_facts": 2})
    newer = SummaryContent(
        narrative="Later.",
        facts=[LedgerFact(kind="code", value="ax-7001", seq=40, day=MARCH_5), fact(9, MARCH_5)],
        archived_facts=1,
    )

    merged = merge([older, newer])

    assert [f.value for f in merged.facts] == ["AX-7000", "AX-7001", "AX-7002", "AX-7009"]
    assert merged.facts[1].seq == 1  # the first mention
    assert merged.archived_facts == 3


def test_a_fact_that_is_words_of_another_from_its_message_is_not_listed() -> None:
    """A summary card listed "2026 (number)" and "1,250 (number)" beside "28 Nov 2026"
    and "1,250 euros" from the same message (issue 23); other messages' and other
    numbers' facts stay."""
    said = [
        LedgerFact(kind="number", value="2026", seq=1, day=MARCH_3),
        LedgerFact(kind="date", value="28 Nov 2026", seq=1, day=MARCH_3),
        LedgerFact(kind="number", value="1,250", seq=1, day=MARCH_3),
        LedgerFact(kind="money", value="1,250 Euros", seq=1, day=MARCH_3),
        LedgerFact(kind="number", value="20", seq=1, day=MARCH_3),  # not a piece of "2026"
        LedgerFact(kind="number", value="1,250", seq=4, day=MARCH_5),  # a message of its own
    ]

    kept = unique_facts(said)

    assert [(f.value, f.seq) for f in kept] == [
        ("28 Nov 2026", 1),
        ("1,250 Euros", 1),
        ("20", 1),
    ], "the second 1,250 is a repeat of the first mention's value"


def test_fit_drops_narrative_and_key_points_before_any_fact() -> None:
    full = content(facts=8, points=12)
    facts_only = full.model_copy(
        update={"narrative": "", "key_points": [], "decisions": [], "notes": []}
    )
    budget = COUNTER.count(render_summary_text(facts_only)) + 30

    fitted = fit(full, budget, COUNTER.count)

    assert fitted.trimmed
    assert fitted.content.facts == full.facts  # every fact kept
    assert fitted.content.key_points == []
    # Decisions go just before the ledger, and are counted as facts in the archive.
    assert fitted.content.archived_facts == len(full.decisions) - len(fitted.content.decisions)


def test_when_facts_must_go_the_oldest_go_and_the_summary_says_how_many() -> None:
    full = content(facts=20, points=4, decisions=2)

    fitted = fit(full, 120, COUNTER.count)

    kept = fitted.content.facts
    assert 0 < len(kept) < 20
    assert kept == full.facts[-len(kept) :]  # the newest stay
    dropped = 20 - len(kept) + 2  # and both decisions
    assert fitted.content.decisions == []
    assert fitted.content.archived_facts == dropped
    text = render_summary_text(fitted.content)
    assert archived_facts_note(dropped) in text
    assert COUNTER.count(text) <= 120


@settings(max_examples=60, deadline=None)
@given(
    facts=st.integers(0, 40),
    points=st.integers(0, 20),
    decisions=st.integers(0, 6),
    archived=st.integers(0, 5),
    budget=st.integers(1, 700),
)
def test_fit_always_fits_and_counts_every_fact_it_drops(
    facts: int, points: int, decisions: int, archived: int, budget: int
) -> None:
    full = content(facts, points, decisions).model_copy(update={"archived_facts": archived})

    fitted = fit(full, budget, COUNTER.count).content

    assert COUNTER.count(render_summary_text(fitted)) <= budget
    kept = fitted.facts
    assert kept == full.facts[len(full.facts) - len(kept) :]
    dropped = (len(full.facts) - len(kept)) + (len(full.decisions) - len(fitted.decisions))
    if fitted.first_day is not None:  # the very last step clears the count with the days
        assert fitted.archived_facts == archived + dropped
    if len(kept) < len(full.facts):
        # A fact went only once narrative, key points and decisions had gone.
        assert fitted.key_points == [] and fitted.decisions == []
        assert fitted.narrative in ("", "…") or fitted.narrative.endswith(" …")


def test_a_merge_keeps_every_stretchs_search_keys_coarser_beyond_the_cap() -> None:
    keys = [SearchKey(words=f"topic{n} thing{n}", sources=[2 * n, 2 * n + 1]) for n in range(4000)]
    few = [SearchKey(words="pottery course", sources=[1])]
    assert bounded_keys(few) == few

    merged = merge(
        [
            SummaryContent(narrative="a", search_keys=keys[:2500]),
            SummaryContent(narrative="b", search_keys=keys[2500:]),
        ]
    )

    kept = merged.search_keys
    assert len(kept) <= MAX_KEPT_KEYS
    assert all(len(key.words) <= MAX_KEY_CHARS for key in kept)
    # Each joined key names a few of its stretch's messages, in order; each key's first
    # word stays.
    named = [seq for key in kept for seq in key.sources]
    assert named == sorted(named) and set(named) <= set(range(8000))
    assert all(1 <= len(key.sources) <= MAX_JOINED_SOURCES for key in kept)
    words = {word for key in kept for word in key.words.split()}
    assert {f"topic{n}" for n in range(4000)} <= words
