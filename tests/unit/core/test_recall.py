"""Automatic recall, the pure part: salient terms, ranking, excerpts, fitting a budget
and the labelled block (issue 12 item 1, DESIGN §3)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.models import Role
from app.core.recall import (
    KIND_BONUS,
    MAX_QUOTES,
    MAX_SYNONYM_TERMS,
    MAX_SYNONYMS,
    RECALL_HEADING,
    RECALL_PREAMBLE,
    RECALL_PREAMBLE_SHORT,
    SYNONYM_WEIGHT,
    ArchivedMatch,
    RecallTerm,
    _beyond_first_plane,
    archived_match,
    excerpt,
    fit_recall,
    fold,
    rank_matches,
    recall_block_text,
    recall_query,
    salient_terms,
    term_score,
    word_forms,
)
from app.core.recall_kinds import AnswerKind, wanted_kinds
from app.core.tokens import default_counter

COUNT = default_counter().count
START = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)


def texts(terms: list[RecallTerm]) -> list[str]:
    return [t.text for t in terms]


def archived(seq: int, content: str, *, rank: float = 0.0, role: Role = Role.USER) -> ArchivedMatch:
    return ArchivedMatch(seq + 1000, seq, role, START + timedelta(minutes=seq), content, rank)


# --- salient terms


def test_a_question_keeps_its_telling_words_and_drops_common_ones() -> None:
    found = texts(salient_terms("What was the gate code we agreed on in March?"))
    assert found == ["gate", "code", "agreed"]  # "in March" is a date (recall_dates), not a word


def test_codes_numbers_and_quoted_phrases_come_first_and_whole() -> None:
    found = texts(
        salient_terms('Is AX-7731 still the code for "the blue door", or 4412? Ask Priya.')
    )
    assert found[:3] == ["AX-7731", "the blue door", "4412"]
    assert "Priya" in found
    assert "still" not in found and "the" not in found


def test_file_names_times_and_versions_are_one_term() -> None:
    found = texts(salient_terms("send report_q3.pdf at 14:30 with v2.3.1"))
    assert {"report_q3.pdf", "14:30", "v2.3.1"} <= set(found)


def test_common_words_of_other_languages_are_dropped() -> None:
    # "code" only says what kind of answer is wanted: it comes after the subject.
    assert texts(salient_terms("Quel était le code de la porte ?")) == ["porte", "code"]
    assert texts(salient_terms("Wie war der Code für das Tor?")) == ["Tor", "Code"]
    assert texts(salient_terms("¿Cuál era el código de la puerta?")) == ["puerta", "código"]


def test_a_message_of_only_common_words_has_no_terms() -> None:
    assert salient_terms("What was it that we said?") == []
    assert salient_terms("") == []


def test_terms_are_at_most_the_limit_and_never_repeated() -> None:
    text = " ".join(f"word{n} alpha Alpha ALPHA" for n in range(30))
    found = salient_terms(text, limit=8)
    assert len(found) == 8
    assert len({tuple(w.casefold() for w in t.words) for t in found}) == 8


def test_acronyms_and_english_words_that_are_french_stop_words_are_terms() -> None:
    assert texts(salient_terms("Which GP did I see?"))[0] == "GP"
    assert "car" in texts(salient_terms("What did we decide about a car in Lisbon?"))


def test_words_that_only_say_the_kind_of_answer_weigh_less() -> None:
    terms = salient_terms("What is the vet's name?")
    assert texts(terms) == ["vet", "name"]
    assert [t.cue for t in terms] == [False, True]
    assert terms[1].weight < terms[0].weight
    cues = {t.text: t.cue for t in salient_terms("How long is the garden wall?")}
    # "garden wall" is also looked up as one word ("gardenwall"), after the others.
    assert cues == {"garden": False, "wall": False, "long": True, "gardenwall": False}
    assert not any(t.cue for t in salient_terms("My long run on Sunday"))


def test_a_word_counts_as_held_in_its_stems_forms() -> None:
    assert {"renewal", "renewed", "renews"} <= set(word_forms("renew"))
    assert "opening" in word_forms("open") and "insurance" in word_forms("insurer")
    assert "signing" in word_forms("sign") and "accountant" in word_forms("accounting")
    assert "tim" not in word_forms("time")  # "time" is not the name Tim
    assert "glas" not in word_forms("glass")
    assert word_forms("AX7") == word_forms("día") == word_forms("bus") == ()
    terms = salient_terms("When does the insurance renew?")
    assert term_score("It's confirmed, the insurance renewal is 2026-09-15.", terms) == 2.0
    codes = salient_terms("the code AX-7731")
    assert term_score("AX 7731", codes) > 0 and term_score("AX-77310", codes) < 3.0


# --- ranking and excerpts


def test_ranking_prefers_the_most_telling_terms_then_bm25_then_newest() -> None:
    terms = salient_terms("the gate code AX-7731?")
    matches = [
        archived(1, "The gate is blue.", rank=-5.0),
        archived(2, "Gate code is AX-7731.", rank=-1.0),
        archived(3, "The code for the gate.", rank=-2.0),
        archived(4, "The code for the gate, again.", rank=-2.0),
        archived(5, "Nothing to see here.", rank=-9.0),
    ]
    assert [m.seq for m in rank_matches(matches, terms)] == [2, 4, 3, 1]


def test_a_phrase_counts_only_where_its_words_are_together() -> None:
    terms = salient_terms('"blue door"')
    ranked = rank_matches([archived(1, "a door that is blue"), archived(2, "the blue door")], terms)
    assert [m.seq for m in ranked] == [2]


def ranked_for(question: str, matches: list[ArchivedMatch]) -> list[int]:
    return [m.seq for m in rank_matches(matches, salient_terms(question), asked(question))]


def asked(question: str) -> frozenset[AnswerKind]:
    return wanted_kinds(question, fold)


def test_the_message_holding_the_kind_of_fact_asked_for_ranks_first() -> None:
    matches = [
        archived(3, "For the record, the architect is Niamh Ferreira.", rank=-1.0),
        archived(9, "Put it in the calendar: the architect's site visit on 19 September 2026."),
        archived(12, "The architect sounds busy.", rank=-3.0),
    ]
    assert ranked_for("Who is the architect?", matches)[0] == 3
    assert ranked_for("When is the architect's visit?", matches)[0] == 9
    # Without a kind asked for: bm25, then the newest.
    assert ranked_for("Tell me about the architect", matches) == [12, 3, 9]


def test_a_name_next_to_the_cue_word_alone_gets_no_bonus() -> None:
    matches = [
        archived(4, "Oh, and the solicitor is Hamish Mensah, in case I forget."),
        archived(8, "The marketing freelancer is called Oksana Moyo.", rank=-5.0),
        archived(9, "The solicitor's questions keep coming.", rank=-4.0),
    ]
    # The solicitor's name first; talk of the solicitor before a name that is someone else's.
    assert ranked_for("What is the solicitor called?", matches) == [4, 9, 8]
    scores = salient_terms("What is the solicitor called?")
    assert term_score(matches[0].content, scores) + KIND_BONUS == 1.0 + KIND_BONUS


def test_a_question_of_only_cue_words_still_prefers_the_kind_asked_for() -> None:
    matches = [archived(1, "A link, somewhere."), archived(2, "The link: https://x.example/p")]
    assert ranked_for("Which link?", matches)[0] == 2


def test_a_cut_quote_is_centred_on_the_fact_asked_for() -> None:
    filler = " ".join(f"word{i}" for i in range(120))
    between = " ".join(f"more{i}" for i in range(40))
    content = f"{filler} the skip lorry is booked, {between} and it turns up at 7:40 pm. {filler}"
    question = "What time does the skip lorry come?"
    cut = excerpt(content, salient_terms(question), size=150, wanted=asked(question))
    assert "7:40 pm" in cut and cut.strip("…") in content
    plain = excerpt(content, salient_terms(question), size=150)
    assert "7:40 pm" not in plain and "skip lorry" in plain


def test_an_excerpt_is_exact_text_around_the_match() -> None:
    content = ("Lorem ipsum dolor sit amet. " * 60) + "The gate code is AX-7731. " + "Tail. " * 80
    cut = excerpt(content, salient_terms("gate code AX-7731"), size=200)
    assert "AX-7731" in cut
    assert cut.startswith("…") and cut.endswith("…")
    assert cut.strip("…") in content
    assert len(cut) <= 202


def test_a_short_message_is_quoted_whole() -> None:
    assert excerpt("  The code is AX-7731.  ", salient_terms("AX-7731")) == "The code is AX-7731."


# --- fitting and the block


def test_the_block_is_labelled_and_quotes_with_date_and_message_number() -> None:
    block = fit_recall(
        [archived(42, "The gate code is AX-7731.")],
        salient_terms("gate code"),
        500,
        COUNT,
    )
    assert block is not None
    assert block.text.startswith(f"# {RECALL_HEADING}\n")
    assert RECALL_HEADING == "From earlier in this conversation — archived, quoted exactly"
    assert "[message #42 · Tuesday 3 March 2026 · the user wrote]\n> The gate code is AX-7731." in (
        block.text
    )
    assert COUNT(block.text) <= block.tokens <= COUNT(block.text) + 2
    assert [q.seq for q in block.quotes] == [42]


def test_quotes_are_oldest_first_and_replies_are_named() -> None:
    block = fit_recall(
        [archived(9, "gate opens at nine", role=Role.ASSISTANT), archived(3, "gate is red")],
        salient_terms("gate"),
        500,
        COUNT,
    )
    assert block is not None
    assert block.text.index("message #3") < block.text.index("message #9")
    assert "you (Claude) wrote" in block.text


def test_the_live_tail_and_repeats_are_never_quoted() -> None:
    matches = [
        archived(5, "gate code AX-7731"),
        archived(5, "gate code AX-7731"),
        archived(7, "gate"),
    ]
    block = fit_recall(matches, salient_terms("gate code"), 500, COUNT, exclude_seqs={7})
    assert block is not None
    assert [q.seq for q in block.quotes] == [5]


def test_the_same_words_said_again_are_quoted_once() -> None:
    # "Thanks Claude, that helps" said in ten sessions: one quote, the room goes to others.
    matches = [
        archived(9, "The gate  code, thanks!"),
        archived(4, "the gate code, THANKS!"),
        archived(2, "The gate code changed to AX-7731."),
    ]
    block = fit_recall(matches, salient_terms("gate code"), 500, COUNT)
    assert block is not None
    assert [q.seq for q in block.quotes] == [2, 9]
    partner = archived(3, "the gate code, thanks!", role=Role.ASSISTANT)
    block = fit_recall(
        (),
        salient_terms("gate code"),
        500,
        COUNT,
        ordered=[(matches[0], None), (matches[2], partner)],
    )
    assert block is not None
    assert [q.seq for q in block.quotes] == [2, 9], "nor as the turn beside another quote"


def test_no_terms_no_budget_or_no_match_means_no_block() -> None:
    matches = [archived(1, "gate code")]
    assert fit_recall(matches, [], 500, COUNT) is None
    assert fit_recall(matches, salient_terms("gate"), 0, COUNT) is None
    assert fit_recall(matches, salient_terms("gate"), 20, COUNT) is None  # not even the heading
    assert fit_recall(matches, salient_terms("porch"), 500, COUNT) is None
    assert recall_block_text([]) == ""


def test_on_a_small_budget_the_quote_is_shortened_around_the_fact() -> None:
    filler = " ".join(f"word{i}" for i in range(150))
    long_message = f"{filler} and so the new gate code is AX-7731 from Monday. {filler}"
    terms = salient_terms("What was the gate code?")
    roomy = fit_recall([archived(1, long_message)], terms, 2_000, COUNT)
    assert roomy is not None and roomy.text.startswith(RECALL_PREAMBLE)

    small = fit_recall([archived(1, long_message)], terms, 100, COUNT)  # 5 % of a 2k window

    assert small is not None and small.tokens <= 100
    assert small.text.startswith(RECALL_PREAMBLE_SHORT)
    assert "gate code is AX-7731" in small.text
    assert len(small.quotes[0].excerpt) < len(roomy.quotes[0].excerpt)


def test_on_a_small_budget_headings_are_compact() -> None:
    block = fit_recall(
        [archived(42, "The gate code is AX-7731.")], salient_terms("gate"), 150, COUNT
    )
    assert block is not None and block.text.startswith(RECALL_PREAMBLE_SHORT)
    assert "[#42 · 3 Mar 2026 · the user]\n> The gate code is AX-7731." in block.text
    assert COUNT(block.text) <= block.tokens <= 150


def test_a_quote_that_cannot_fit_is_not_counted_again_and_again() -> None:
    calls: list[str] = []

    def counting(text: str) -> int:
        calls.append(text)
        return COUNT(text)

    filler = " ".join(f"word{i}" for i in range(400))
    matches = [archived(n, f"gate {filler} {n}") for n in range(1, 31)]
    block = fit_recall(matches, salient_terms("gate"), 300, counting)
    assert block is not None and block.tokens <= 300
    # The preamble, a heading, and about two counts a candidate at most (not four).
    assert len(calls) <= 2 + 2 * len(matches)


def test_recalls_floor_holds_more_than_a_dozen_short_quotes_but_never_past_the_cap() -> None:
    # At the 800-token floor a dozen one-line quotes left a third of it unused (issue 22).
    matches = [archived(n, f"Tom said the gate opens at number {n}.") for n in range(1, 41)]
    block = fit_recall(matches, salient_terms("gate"), 800, COUNT)
    assert block is not None
    assert 12 < len(block.quotes) <= MAX_QUOTES
    roomy = fit_recall(matches, salient_terms("gate"), 20_000, COUNT)
    assert roomy is not None and len(roomy.quotes) == MAX_QUOTES


@given(
    budget=st.integers(min_value=0, max_value=2_000),
    lengths=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=30),
)
def test_the_block_never_exceeds_its_budget(budget: int, lengths: list[int]) -> None:
    matches = [
        archived(n, " ".join(["gate"] + [f"w{n}x{i}" for i in range(length)]))
        for n, length in enumerate(lengths)
    ]
    block = fit_recall(matches, salient_terms("gate"), budget, COUNT)
    if block is not None:
        assert COUNT(block.text) <= block.tokens <= budget
        assert len({q.seq for q in block.quotes}) == len(block.quotes)


@given(
    st.text(
        st.characters(
            codec="utf-8",
            categories=("Lu", "Ll", "Mn", "Mc", "Me", "Nd", "Po", "Zs", "Lo", "So"),
        ),
        max_size=40,
    )
)
def test_folding_drops_exactly_the_combining_marks(text: str) -> None:
    # As defined: case folded, decomposed (NFKD), every combining mark dropped; the
    # marks of the first plane go in one pass, the others one character at a time.
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    expected = "".join(c for c in decomposed if not unicodedata.combining(c))
    assert fold(text) == (text.lower() if text.isascii() else expected)


@given(st.text(st.characters(exclude_categories=()), max_size=40))  # surrogates too
def test_a_text_is_beyond_the_first_plane_when_a_character_is(text: str) -> None:
    assert _beyond_first_plane(text) == (bool(text) and max(text) > "\uffff")


def test_folding_drops_marks_of_every_plane() -> None:
    assert fold("Crème BRÛLÉE, naïve") == "creme brulee, naive"
    assert fold("Ελληνικά ἄλφα") == "ελληνικα αλφα"
    assert fold("x\U0001d165\U0001d16d y") == "x y"  # musical combining marks (plane 1)


_WORDS = ("garden", "gardens", "gardening", "shed", "sheds", "café", "AX-7731", "x86")


@given(
    st.lists(
        st.tuples(
            st.sampled_from((*_WORDS, "Garden", "GARDENS", "ünder", "😀", "İ")),
            st.sampled_from(("", " ", ", ", "_", "-", "é", ". ")),
        ),
        max_size=30,
    ),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
)
def test_an_excerpt_centres_where_the_terms_pattern_finds_them(
    pieces: list[tuple[str, str]], asked: list[str]
) -> None:
    # The terms are found without compiling a pattern each turn (a turn's terms are new,
    # and a word's forms took ~0.25 ms to compile): at the same place as the pattern.
    from app.core.recall import _first_match, _term_pattern

    text = "".join(word + gap for word, gap in pieces)
    terms = salient_terms(" ".join(asked))
    expected = 0
    for term in sorted(terms, key=lambda t: -t.weight):
        found = _term_pattern(term.words, term.forms).search(text)
        if found is not None:
            expected = found.start()
            break
    assert _first_match(text, terms) == expected


# --- synonyms (issue 22: "children" finds "Eleven kids turned up")


def test_a_question_noun_brings_its_synonyms_as_a_weaker_term() -> None:
    terms = recall_query("How many children came to the story time?", date(2026, 6, 30)).terms
    synonym = next(t for t in terms if t.weight == SYNONYM_WEIGHT and not t.cue)
    assert ("kids",) in synonym.alternatives and ("kid",) in synonym.alternatives
    assert term_score("Eleven kids turned up.", [synonym]) == SYNONYM_WEIGHT
    assert term_score("Eleven adults turned up.", [synonym]) == 0


def test_a_name_gets_no_synonyms_and_only_a_few_words_do() -> None:
    named = recall_query("Where did Car leave the AX-7731?", date(2026, 6, 30)).terms
    assert not any(("auto",) in t.alternatives for t in named)  # "Car" is a name here
    many = "children car story wedding restaurant error job doctor holiday"
    terms = recall_query(many, date(2026, 6, 30)).terms
    synonyms = [t for t in terms if t.weight == SYNONYM_WEIGHT and not t.cue]
    assert len(synonyms) == MAX_SYNONYM_TERMS
    assert all(len(t.alternatives) <= 2 * MAX_SYNONYMS for t in synonyms)


@given(
    st.integers(),
    st.integers(),
    st.sampled_from(list(Role)),
    st.datetimes(timezones=st.just(UTC)),
    st.text(max_size=40),
    st.floats(allow_nan=False),
    st.none() | st.frozensets(st.integers(min_value=0, max_value=12)),
)
def test_an_archived_match_made_fast_is_the_one_the_dataclass_makes(
    message_id: int,
    seq: int,
    role: Role,
    created_at: datetime,
    content: str,
    rank: float,
    held: frozenset[int] | None,
) -> None:
    made = archived_match(message_id, seq, role, created_at, content, rank, held)
    expected = ArchivedMatch(message_id, seq, role, created_at, content, rank, held)
    assert made == expected
    assert hash(made) == hash(expected)
    assert vars(made) == vars(expected)  # every field, the defaults included


def _folded_as_defined(text: str) -> str:
    """`fold` by its definition: case folded, decomposed (NFKD), every mark dropped."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def test_folding_any_character_is_as_defined_the_first_time_and_after() -> None:
    # Every assigned code point and lone surrogate, between letters, then before a
    # mark: a character fold keeps as it is is learnt the first time (`_KEPT_BY_FOLD`),
    # and met again it is kept without decomposing the text; each time as defined.
    for code in range(0x110000):
        character = chr(code)
        if unicodedata.category(character) == "Cn":
            continue  # unassigned: nothing decomposes or folds it
        for text in (f"Ab{character}c", f"{character}\u0301 x"):
            assert fold(text) == _folded_as_defined(text), hex(code)


@given(st.text(st.characters(exclude_categories=()), max_size=60))  # surrogates too
def test_folding_any_text_is_as_defined(text: str) -> None:
    assert fold(text) == _folded_as_defined(text)


def _first_form_each(lowered: str, forms: Sequence[str], whole: bool) -> int:
    """`_first_form` as it was: each form searched for in the whole text."""
    first = -1
    for form in forms:
        start = lowered.find(form)
        while start >= 0 and (first < 0 or start < first):
            end = start + len(form)
            if not whole or (
                (start == 0 or not lowered[start - 1].isalnum())
                and (end == len(lowered) or not lowered[end].isalnum())
            ):
                first = start
                break
            start = lowered.find(form, start + 1)
    return first


_LETTERS = st.text(alphabet="ain", min_size=1, max_size=4)
# A stem's forms: the stem and endings ("renew", "renews", "renewal"…), some of them
# inside each other, as a text holds them.
_FORMS = st.builds(
    lambda stem, endings: tuple(stem + ending for ending in endings),
    st.text(alphabet="ai", min_size=1, max_size=2),
    st.lists(st.text(alphabet="ain", max_size=2), min_size=1, max_size=4),
)


@settings(max_examples=500)
@example(["aa", "in"], ("ai", "an"), False)  # the stem again one letter on
@given(
    st.lists(st.one_of(_LETTERS, st.sampled_from([" ", "-", "é", "1", ". "])), max_size=40),
    st.one_of(
        _FORMS,
        st.text(alphabet="aeinrs", min_size=1, max_size=4).map(lambda w: word_forms(w + "ing")),
        st.lists(_LETTERS, min_size=1, max_size=5).map(tuple),
    ),
    st.booleans(),
)
def test_a_words_forms_are_found_where_searching_each_finds_them(
    pieces: list[str], forms: tuple[str, ...], whole: bool
) -> None:
    # The stem searched for once, each form tried where it is: the same first place.
    from app.core.recall import _first_form

    lowered = "".join(pieces)
    assert _first_form(lowered, forms, whole) == _first_form_each(lowered, forms, whole)


@given(st.text(max_size=20), st.text(max_size=10), st.text(max_size=10))
def test_a_quote_is_made_as_the_dataclass_makes_it(text: str, session: str, title: str) -> None:
    # `_quote` fills the frozen dataclass's fields itself: the same value, every field.
    from dataclasses import fields, replace

    from app.core.recall import RecallQuote, _quote

    match = replace(archived(7, "the gate code"), session_id=session, conversation=title)
    quote = _quote(match, text)
    expected = RecallQuote(
        match.message_id,
        match.seq,
        match.role,
        match.created_at,
        text,
        title,
        session if title else "",
    )
    assert quote == expected and hash(quote) == hash(expected)
    assert set(vars(quote)) == {field.name for field in fields(RecallQuote)}
