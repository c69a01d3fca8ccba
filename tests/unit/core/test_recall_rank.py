"""recall_rank: Cairn's own scoring of the archive's pool (issue 22, items 1-3)."""

from __future__ import annotations

import math
import string
from collections import Counter
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.models import Role
from app.core.recall import ArchivedMatch, fit_recall, fold, is_common_word, recall_query
from app.core.recall_dates import is_calendar_word
from app.core.recall_rank import (
    _LETTERS,
    _SAYS_LITTLE,
    _TELLING,
    ASKED_SHARE,
    SPAN_TEXT,
    STORY_WORD_LETTERS,
    WORTH_WORDS,
    Ranked,
    RecallPool,
    _letter_runs,
    _ranked,
    _span_word_sets,
    _story_held,
    _story_words,
    _words_of,
    keyed,
    rank_pool,
    span_worth,
    term_values,
)
from app.core.summary import SearchKey
from app.core.tokens import default_counter

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TODAY = date(2026, 6, 30)
COUNT = default_counter().count


def turn(seq: int, text: str, *, days: int = 0) -> ArchivedMatch:
    role = Role.USER if seq % 2 else Role.ASSISTANT
    return ArchivedMatch(seq, seq, role, START + timedelta(days=days, minutes=seq), text)


def pool_of(*turns: ArchivedMatch) -> RecallPool:
    return RecallPool(turns, {t.seq: t for t in turns})


def test_an_answer_is_found_by_the_turn_it_answers_and_quoted_with_it() -> None:
    guitar = turn(1, "Big news: I finally bought a guitar!")
    asked = turn(2, "Congratulations! What does it look like?")
    answer = turn(3, "A deep blue one with an octopus painted across the front.")
    other = turn(5, "Lunch was a sandwich by the canal.")
    query = recall_query("What design is on Maya's guitar?", TODAY, {"maya"})
    ranked = rank_pool(pool_of(guitar, asked, answer, other), query)
    by_seq = {r.match.seq: r for r in ranked}
    assert 3 in by_seq and 5 not in by_seq  # the answer names no word of the question
    assert by_seq[3].score > 0
    assert by_seq[2].partner == guitar  # a reply is quoted with what it answers


def test_what_claude_asked_about_a_message_and_the_answer_come_with_it() -> None:
    guitar = turn(1, "Big news: I finally bought a guitar!")
    asked = turn(2, "Congratulations! What does it look like?")
    answer = turn(3, "A deep blue one with an octopus painted across the front.")
    practice = turn(5, "I practised guitar for an hour.")
    advice = turn(6, "Short daily practice is best.")  # no question: nothing follows up
    query = recall_query("What design is on Maya's guitar?", TODAY, {"maya"})
    by_seq = {
        r.match.seq: r for r in rank_pool(pool_of(guitar, asked, answer, practice, advice), query)
    }
    assert by_seq[1].quoted_with == (asked, answer)  # two hops: the answer names no guitar
    assert by_seq[5].quoted_with == ()

    block = fit_recall(
        (),
        query.terms,
        500,
        COUNT,
        ordered=[
            (r.match, *r.quoted_with) for r in sorted(by_seq.values(), key=lambda r: -r.score)
        ],
    )
    assert block is not None and {1, 2, 3} <= {q.seq for q in block.quotes}


def test_a_rare_word_outweighs_a_common_one() -> None:
    terms = recall_query("garden octopus", TODAY).terms  # and "gardenoctopus"
    values = term_values(terms, [900, 2, 0], 1_000)
    assert values[1] > 5 * values[0]


def test_messages_of_the_days_asked_about_rank_first() -> None:
    early = turn(1, "The vet said Biscuit is fine.", days=10)
    april = turn(3, "The vet said Biscuit lost a kilo.", days=100)
    query = recall_query("What did the vet say in April?", TODAY)
    assert query.days is not None and query.days.holds(date(2026, 4, 15))
    ranked = rank_pool(pool_of(early, april), query)
    assert [r.match.seq for r in ranked] == [3, 1]


def test_who_said_it_ranks_that_side_first() -> None:
    mine = turn(1, "The commute is brutal on the train.")
    claude = turn(2, "Could he work from home to cut the commute?")
    query = recall_query("What did Claude suggest about the commute?", TODAY)
    assert query.role is Role.ASSISTANT
    assert rank_pool(pool_of(mine, claude), query)[0].match.seq == 2


def test_a_summary_key_finds_a_stretch_worded_otherwise() -> None:
    hiking = turn(1, "I walked up Pen-y-ghent on Sunday with the camera.")
    photos = turn(3, "Got some lovely shots of the valley in the mist.")
    lunch = turn(5, "Lunch was a sandwich by the canal.")
    keys = [
        SearchKey(words="new hobbies: hiking, photography", sources=[1, 2, 3]),
        SearchKey(words="lunch", sources=[5]),
    ]
    query = recall_query("What new hobbies has Maya taken up?", TODAY, {"maya"})
    query = replace(query, keyed=keyed(keys, query.terms))
    assert [seq for seq, _terms in query.keyed] == [1, 2, 3]  # "lunch" holds no term
    ranked = rank_pool(pool_of(hiking, photos, lunch), query)
    assert {r.match.seq for r in ranked} == {1, 3}  # neither says "hobbies"
    assert all(r.score > 0 for r in ranked)


def test_a_key_and_the_turn_before_do_not_count_the_same_words_twice() -> None:
    # words5: a stretch's key ("guest list") and the turn before both name the question's
    # words; the reply holding neither must not outrank the message that holds both.
    asked = turn(1, "Let's get back to the guest list for a minute.")
    reply = turn(2, "Good, one less thing to chase: a short note of what you decide.")
    fact = turn(5, "The guest list comes to 117 guests now.")
    keys = [SearchKey(words="guest list wedding", sources=[1, 2])]
    query = recall_query("How many guests are on the list?", TODAY)
    query = replace(query, keyed=keyed(keys, query.terms))
    ranked = rank_pool(pool_of(asked, reply, fact), query)
    by_seq = {r.match.seq: r.score for r in ranked}
    assert by_seq[5] > by_seq[2] > 0


def test_keys_that_hold_no_term_add_nothing() -> None:
    query = recall_query("What did the vet say?", TODAY)
    assert keyed([SearchKey(words="garden, allotment", sources=[4])], query.terms) == ()
    cue_only = recall_query("what name", TODAY)
    assert keyed([SearchKey(words="name", sources=[4])], cue_only.terms) == ()


def test_the_user_going_on_from_a_reply_is_found_by_its_subject() -> None:
    asked = turn(1, "We keep going back and forth about adopting a second dog.")
    reply = turn(2, "A second dog is a bigger commitment in a flat.")
    decided = turn(3, "We've decided to wait until we've got a garden.")
    other = turn(5, "We've decided on pasta for tea.")
    query = recall_query("Did Maya and Tom decide to get another dog?", TODAY, {"maya"})
    ranked = rank_pool(pool_of(asked, reply, decided, other), query)
    by_seq = {r.match.seq: r.score for r in ranked}
    assert by_seq[3] > by_seq[5]  # both say "decided"; only one goes on about the dog


def test_a_later_turn_of_the_best_ones_story_ranks_above_the_name_alone() -> None:
    news = turn(1, "Tom got the job at the architecture firm in Leeds! The commute is long.")
    walks = [turn(3 + 2 * n, f"Tom and I went for a walk to the {place}.") for n, place in
             enumerate(("reservoir", "canal", "park", "market", "abbey"))]  # fmt: skip
    later = turn(21, "Tom's firm lets him work from home on Mondays now, which has saved him.")
    unrelated = turn(23, "The firm that fixed the roof sent the bill.")
    query = recall_query("How has Tom's new job affected his travel?", TODAY, {"maya"})
    ranked = [r.match.seq for r in rank_pool(pool_of(news, *walks, later, unrelated), query)]
    assert ranked[0] == 1
    assert ranked[1] == 21  # Tom and the best one's "firm": the same story, weeks later
    assert 23 not in ranked  # "firm" alone holds no word of the question: not lifted in


def test_no_story_lift_when_the_best_holds_one_word_of_the_question() -> None:
    best = turn(1, "Tom is learning Italian on an app, a new thing.")
    italian = turn(3, "Tom says Italian is hard.")
    walk = turn(5, "Tom and I went for a walk.")
    query = recall_query("How has Tom's commute changed?", TODAY, {"maya"})
    pool = pool_of(best, italian, walk)
    scores = {r.match.seq: r.score for r in rank_pool(pool, query)}
    assert scores[3] == scores[5]  # the best holds "Tom" only: nothing is lifted


# A month of small talk: greetings, templated news said again and again, and once, an
# answer to what Claude asked about a thing the question names otherwise ("race").
APRIL = [
    "Hi Claude!",
    "Evening, Maya! How was your day?",
    "Finished a crime novel on the bus, couldn't put it down.",
    "Audiobooks can help on the commute.",
    "Hi Claude!",
    "Evening, Maya! How was your day?",
    "Finished a crime novel on the bus, couldn't put it down.",
    "Audiobooks can help on the commute.",
    "By the way.",
    "How did the Riverside 10k go yesterday?",
    "I did it! 57:42 on the clock, and Tom was waiting at the finish with a flask of tea.",
    "Under an hour, as you wanted!",
    "Cheers Claude, talk soon.",
    "Glad it helped. Good night, Maya!",
]


def april() -> list[ArchivedMatch]:
    return [turn(n, text, days=100) for n, text in enumerate(APRIL, start=1)]


def test_a_spans_answer_to_what_claude_asked_about_is_worth_most() -> None:
    turns = april()
    worth = span_worth([(t.seq, t.role, t.content) for t in turns])
    assert max(worth, key=worth.__getitem__) == 11  # "I did it! 57:42 …"
    assert worth[11] == 1.0 and all(0.0 <= w <= 1.0 for w in worth.values())
    assert worth[11] > 1.5 * worth[3]  # the crime novel, said twice
    assert worth[2] < 0.2  # Claude's greeting question tells little (a name, said often)
    assert span_worth([]) == {}


def test_a_span_found_by_no_word_is_quoted_by_worth_with_claudes_question() -> None:
    turns = april()
    query = recall_query("How did my race go in April?", TODAY)
    assert query.days is not None and not query.days.exact
    worth = span_worth([(t.seq, t.role, t.content) for t in turns])
    pool = RecallPool(tuple(turns), {t.seq: t for t in turns}, (0,), 900, worth)
    ranked = rank_pool(pool, query)
    assert ranked[0].match.seq == 11
    assert ranked[0].partner is not None and ranked[0].partner.seq == 10
    assert all(r.score <= 0.4 * 2.5 * 1.3 for r in ranked)
    # Without the span's worth the words find nothing: nothing is ranked.
    assert rank_pool(RecallPool(tuple(turns), {t.seq: t for t in turns}, (0,), 900), query) == []


def test_a_term_found_outside_the_span_outranks_the_spans_filler() -> None:
    turns = april()
    vet = turn(41, "The vet said the race of dogs matters for the diet.", days=10)
    query = recall_query("How did my race go in April?", TODAY)
    worth = span_worth([(t.seq, t.role, t.content) for t in turns])
    everyone = (*turns, vet)
    pool = RecallPool(everyone, {t.seq: t for t in everyone}, (1,), 900, worth)
    assert rank_pool(pool, query)[0].match.seq == 41


def _span_words(texts: list[str]) -> list[frozenset[str]]:
    """`_telling_words` of each of `texts`, as `span_worth` reads them: its words less
    those that say little."""
    words, little = _span_word_sets(texts)
    return [found - little for found in words]


# Texts of the characters `_span_word_sets`' shortcut turns on: letters in both cases, digits,
# the underscore, spaces and punctuation, a NUL, an accent and a non-ASCII letter.
_SPAN_TEXTS = st.lists(
    st.text(alphabet="abcdEFxyZ09_ .,'!?-\n\t\0éß", max_size=40)
    | st.sampled_from(["the race went well", "Thanks, Claude!", "I did it: 57:42"]),
    max_size=12,
)


@given(_SPAN_TEXTS)
def test_a_spans_words_are_those_the_regex_finds_in_each_text(texts: list[str]) -> None:
    expected = [
        frozenset(_TELLING.findall(text.lower() if text.isascii() else fold(text))) - _SAYS_LITTLE
        for text in texts
    ]
    assert _span_words(texts) == expected


def _worth_as_it_was(messages: list[tuple[int, Role, str]]) -> dict[int, float]:
    """`span_worth` as recall11 left it: each message's words without those that say
    little, then its least held ones (the reference its faster form must equal)."""
    if not messages:
        return {}
    words = _span_words([text[:SPAN_TEXT] for _seq, _role, text in messages])
    held = Counter(word for found in words for word in found)
    size = len(messages) + 1
    rarity = [math.log(size / (count + 0.5)) for count in range(size + 1)]
    own = [sum(rarity[c] for c in sorted(held[w] for w in found)[:WORTH_WORDS]) for found in words]
    worth: dict[int, float] = {}
    for n, (seq, role, _text) in enumerate(messages):
        value = own[n]
        if n and role is Role.USER:
            before_seq, before_role, before_text = messages[n - 1]
            asked = before_role is Role.ASSISTANT and before_text.rstrip().endswith("?")
            if before_seq == seq - 1 and asked:
                value += ASKED_SHARE * own[n - 1]
        worth[seq] = value
    best = max(worth.values())
    return {seq: value / best for seq, value in worth.items()} if best > 0 else {}


_SPAN_MESSAGES = st.lists(
    st.tuples(
        st.sampled_from([Role.USER, Role.ASSISTANT]),
        st.lists(
            st.sampled_from(
                [
                    "the",
                    "race",
                    "went",
                    "well",
                    "Claude",
                    "tea",
                    "ran",
                    "finish",
                    "flask",
                    "a",
                    "river",
                    "Maya",
                    "crime",
                    "novel",
                    "how",
                    "was",
                    "it?",
                    "57:42",
                    "thanks!",
                    "zorblax",
                    "go",
                    "did",
                    "you",
                    "été",
                    "hour",
                    "under",
                    "as",
                    "I",
                ]
            ),
            max_size=14,
        ).map(" ".join),
        st.integers(1, 2),
    ),
    max_size=30,
)


@given(_SPAN_MESSAGES)
def test_a_spans_worth_is_as_it_was_with_its_little_words_dropped_late(
    drawn: list[tuple[Role, str, int]],
) -> None:
    seq = 0
    messages: list[tuple[int, Role, str]] = []
    for role, text, step in drawn:
        seq += step
        messages.append((seq, role, text))
    assert span_worth(messages) == _worth_as_it_was(messages)


def test_a_ranked_candidate_made_fast_is_the_one_the_dataclass_makes() -> None:
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    match = ArchivedMatch(1, 2, Role.USER, moment, "I bought a guitar!")
    partner = ArchivedMatch(2, 3, Role.ASSISTANT, moment, "What does it look like?")
    for made, expected in (
        (_ranked(match, 1.5, None, ()), Ranked(match, 1.5)),
        (_ranked(match, 0.2, partner, (partner,)), Ranked(match, 0.2, partner, (partner,))),
    ):
        assert made == expected
        assert vars(made) == vars(expected)
        assert made.quoted_with == expected.quoted_with


def _story_words_word_by_word(content: str) -> frozenset[str]:
    """`_story_words` as it was written: each word of `_LETTERS` tested in turn."""
    return frozenset(
        word
        for word in _LETTERS.findall(fold(content))
        if len(word) >= STORY_WORD_LETTERS
        and not is_common_word(word)
        and not is_calendar_word(word)
    )


# Words of every length, common and calendar words among them, in any script, with
# digits, underscores and marks between and inside them; and ASCII alone (the fast path).
_STORY_WORDS = st.one_of(
    st.sampled_from(
        [
            "the",
            "weekend",
            "March",
            "Tom",
            "guitar",
            "über",
            "Straße",
            "café",
            "x2y",
            "ab_cd",
            "naïve",
            "ÉCOLE",
            "İstanbul",
            "ﬁnal",
            "日本語",
            "ok",
            "about",
            "Ωmega",
            "Leeds",
        ]
    ),
    st.text(max_size=12),
)
_ASCII_STORY_WORDS = st.one_of(
    st.sampled_from(["the", "weekend", "March", "Tom", "guitar", "x2y", "ab_cd", "Leeds"]),
    st.text(alphabet=string.printable + "\0", max_size=12),
)
_STORY_TEXTS = st.one_of(
    st.lists(_STORY_WORDS, max_size=40).map(" ".join),
    st.lists(_ASCII_STORY_WORDS, max_size=40).map(" ".join),
)


@given(_STORY_TEXTS)
def test_a_texts_story_words_are_those_a_word_by_word_test_finds(content: str) -> None:
    assert _story_words.__wrapped__(content) == _story_words_word_by_word(content)


@given(_STORY_TEXTS, _STORY_TEXTS)
def test_a_candidates_words_among_a_story_are_its_story_words_among_it(
    best: str, candidate: str
) -> None:
    story = _story_words_word_by_word(best)
    assert story & _words_of(candidate) == story & _story_words_word_by_word(candidate)


# Text of every kind of character (surrogates too), with the ones that look like letters to
# some test and not to another: "²" and "Ⅻ" (alphanumeric, not decimal: letters to the
# regex), "٣" (a decimal digit), "ª", "_", "ø".
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(exclude_categories=()), max_size=8),
            st.sampled_from(["²", "Ⅻ", "٣", "ª", "_", "ø", "’", "£", "…", "word", "x9y"]),
        ),
        max_size=20,
    ).map("".join)
)
def test_a_texts_letter_runs_are_those_the_regex_finds(text: str) -> None:
    assert _letter_runs(text) == _LETTERS.findall(text)


# Text that folds as it lowers and text that does not: "’", "“", "—", "£", "…" (a compat
# decomposition: three dots), "\u00a0", "é" and "e\u0301", "ß", "ﬁ", "Ｆ", "İ", "K" (the
# Kelvin sign), "ª", "²", "٣", "㎏" (no letter, "kg" once folded), a lone surrogate, an emoji.
_FOLDING_PIECES = (
    *("’", "“", "—", "£", "…", "\u00a0", "é", "e\u0301", "ß", "ﬁ", "Ｆ", "İ", "\u212a"),
    *(
        "ª",
        "²",
        "٣",
        "㎏",
        "\ud800",
        "😀",
        "guitar",
        "Guitar",
        "Leeds",
        "x9y",
        "ab_cd",
        " ",
        "weekend",
    ),
)
_FOLDING_TEXTS = st.lists(
    st.one_of(
        st.text(st.characters(exclude_categories=()), max_size=6),
        st.sampled_from(_FOLDING_PIECES),
    ),
    max_size=24,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_FOLDING_TEXTS)
def test_a_texts_words_are_the_letter_runs_of_it_folded(content: str) -> None:
    assert _words_of.__wrapped__(content) == frozenset(_LETTERS.findall(fold(content)))


@settings(max_examples=300, deadline=None)
@given(_FOLDING_TEXTS, _FOLDING_TEXTS)
def test_a_candidates_story_words_held_are_the_story_among_its_words(
    best: str, candidate: str
) -> None:
    story = _story_words.__wrapped__(best) | {"guitar", "leeds", "weekend"}
    expected = story & frozenset(_LETTERS.findall(fold(candidate)))
    assert _story_held(frozenset(story), candidate) == expected
