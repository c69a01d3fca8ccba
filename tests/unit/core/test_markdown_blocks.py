"""The prose/code splitter behind the transcript's code blocks."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from app.core.markdown_blocks import (
    GrowingTextSplitter,
    Segment,
    SegmentKind,
    last_fresh_start,
    split_prose,
    split_segments,
)

# Text built from the pieces that matter to fences, so hypothesis hits the
# interesting cases (fences, indentation, blank lines, CRLF) often.
_PIECES = st.sampled_from(
    [
        "```",
        "```python",
        "~~~",
        "````",
        "``",
        "`x`",
        "   ",
        "\t",
        "\n",
        "\r\n",
        "code()",
        "# Heading",
        "- item",
        "text",
        "é🙂",
        "\u2028",
    ],
)
_MARKDOWNISH = st.lists(_PIECES, max_size=40).map("".join)


def kinds(segments: list[Segment]) -> list[SegmentKind]:
    return [segment.kind for segment in segments]


@given(st.text())
def test_joining_the_segments_gives_back_any_text(text: str) -> None:
    assert "".join(segment.source for segment in split_segments(text)) == text


@given(_MARKDOWNISH)
def test_joining_the_segments_gives_back_markdown_like_text(text: str) -> None:
    segments = split_segments(text)
    assert "".join(segment.source for segment in segments) == text
    assert all(segment.source for segment in segments)
    # Prose runs are merged: two prose segments are never neighbours.
    for first, second in pairwise(segments):
        assert not (first.kind is SegmentKind.PROSE and second.kind is SegmentKind.PROSE)


@given(_MARKDOWNISH)
def test_a_code_segment_starts_with_its_fence(text: str) -> None:
    for segment in split_segments(text):
        if segment.kind is SegmentKind.CODE:
            assert segment.source.lstrip(" \t")[:3] in ("```", "~~~")


def test_plain_prose_is_one_segment() -> None:
    assert split_segments("Hello **there**.\n\n- a\n- b\n") == [
        Segment(SegmentKind.PROSE, "Hello **there**.\n\n- a\n- b\n"),
    ]


def test_empty_text_has_no_segments() -> None:
    assert split_segments("") == []


def test_a_fenced_block_between_prose() -> None:
    text = "Run this:\n\n```python\nprint('hi')\nx = 1\n```\nThen relax.\n"
    segments = split_segments(text)
    assert kinds(segments) == [SegmentKind.PROSE, SegmentKind.CODE, SegmentKind.PROSE]
    code = segments[1]
    assert code.code == "print('hi')\nx = 1"
    assert code.language == "python"
    assert code.closed
    assert code.source == "```python\nprint('hi')\nx = 1\n```\n"
    assert segments[2].source == "Then relax.\n"


def test_an_unterminated_fence_is_code_up_to_the_end() -> None:
    text = "Here:\n```js\nconst a = 1;\nconst b"
    segments = split_segments(text)
    assert kinds(segments) == [SegmentKind.PROSE, SegmentKind.CODE]
    assert segments[1].code == "const a = 1;\nconst b"
    assert segments[1].language == "js"
    assert not segments[1].closed


def test_an_opening_fence_alone_while_streaming_is_an_empty_code_block() -> None:
    segments = split_segments("Look:\n```py")
    assert kinds(segments) == [SegmentKind.PROSE, SegmentKind.CODE]
    assert segments[1].code == ""
    assert segments[1].language == "py"
    assert not segments[1].closed


def test_two_backticks_are_not_a_fence() -> None:
    assert kinds(split_segments("``\ncode\n``")) == [SegmentKind.PROSE]


def test_inline_triple_backticks_on_one_line_are_not_a_fence() -> None:
    assert kinds(split_segments("Use ```x``` here\n```y```\n")) == [SegmentKind.PROSE]


def test_a_closing_fence_must_be_at_least_as_long() -> None:
    text = "````md\n```\ninner\n```\n````\n"
    segments = split_segments(text)
    assert kinds(segments) == [SegmentKind.CODE]
    assert segments[0].code == "```\ninner\n```"
    assert segments[0].closed


def test_tilde_fences_and_backtick_fences_do_not_close_each_other() -> None:
    segments = split_segments("~~~\n```\nstill code\n~~~\n")
    assert kinds(segments) == [SegmentKind.CODE]
    assert segments[0].code == "```\nstill code"


def test_an_indented_fence_in_a_list_item_loses_its_indentation() -> None:
    text = "1. Install:\n   ```bash\n   pip install x\n     --upgrade\n   ```\n2. Done\n"
    segments = split_segments(text)
    assert kinds(segments) == [SegmentKind.PROSE, SegmentKind.CODE, SegmentKind.PROSE]
    assert segments[1].code == "pip install x\n  --upgrade"
    assert segments[2].source == "2. Done\n"


def test_crlf_line_endings() -> None:
    segments = split_segments("a\r\n```\r\nx\r\n```\r\nb")
    assert kinds(segments) == [SegmentKind.PROSE, SegmentKind.CODE, SegmentKind.PROSE]
    assert segments[1].code == "x"


def test_an_empty_code_block() -> None:
    segments = split_segments("```\n```")
    assert segments == [Segment(SegmentKind.CODE, "```\n```", code="", closed=True)]


def test_the_language_is_the_first_word_of_the_info_string() -> None:
    (segment,) = split_segments("``` python title=x.py\npass\n```")
    assert segment.language == "python"


@given(_MARKDOWNISH, st.integers(min_value=1, max_value=60))
def test_splitting_prose_is_loss_free(text: str, target: int) -> None:
    pieces = split_prose(text, target)
    assert "".join(pieces) == text
    assert all(pieces) or text == ""


@given(_MARKDOWNISH, _MARKDOWNISH, st.integers(min_value=1, max_value=60))
def test_prose_cuts_do_not_move_as_text_streams_in(head: str, tail: str, target: int) -> None:
    before = split_prose(head, target)
    after = split_prose(head + tail, target)
    # Every finished piece of the shorter text is still there, unchanged.
    assert after[: len(before) - 1] == before[:-1]


def test_short_prose_is_one_piece() -> None:
    assert split_prose("a\n\nb\n", target=100) == ["a\n\nb\n"]


def test_long_prose_is_cut_between_paragraphs_not_inside_lists() -> None:
    paragraph = "Words " * 10 + "\n\n"
    listing = (
        "- one\n\n- two\n\n  more of two\n\n1. three\n\n> quote\n\n| a |\n\n[x]: https://x\n\n"
    )
    text = paragraph * 3 + listing + paragraph * 3
    pieces = split_prose(text, target=50)
    assert "".join(pieces) == text
    assert len(pieces) > 2
    for piece in pieces[1:]:
        assert not piece.startswith(("-", " ", "1.", ">", "|", "[x]"))
        assert piece.startswith("Words")


# Pieces that change meaning as a line grows ("1" becomes a list item once "." comes,
# "[" a link definition), so hypothesis streams text through those moments often.
_GROWING = st.lists(
    st.sampled_from(
        ["1", ".", " ", "[x]", ":", "[", ">", "|", "-", "\n", "\n\n", "`", "~", "word"]
    ),
    max_size=60,
).map("".join)


def fresh_split(text: str, target: int) -> list[tuple[Segment, list[str]]]:
    return [
        (segment, split_prose(segment.source, target) if segment.kind is SegmentKind.PROSE else [])
        for segment in split_segments(text)
    ]


@given(
    st.one_of(_MARKDOWNISH, _GROWING),
    st.lists(st.integers(min_value=0, max_value=200), max_size=12),
    st.integers(min_value=1, max_value=30),
)
def test_splitting_a_growing_text_gives_what_splitting_it_afresh_gives(
    text: str, cuts: list[int], target: int
) -> None:
    splitter = GrowingTextSplitter(target)
    for end in [*sorted(cuts), len(text)]:
        prefix = text[:end]
        assert splitter.split(prefix) == fresh_split(prefix, target)


@given(_MARKDOWNISH, _MARKDOWNISH, st.integers(min_value=1, max_value=30))
def test_a_text_that_changed_instead_of_growing_is_split_afresh(
    first: str, second: str, target: int
) -> None:
    splitter = GrowingTextSplitter(target)
    splitter.split(first)
    assert splitter.split(second) == fresh_split(second, target)
    splitter.reset()
    assert splitter.split(first) == fresh_split(first, target)


def test_a_growing_reply_keeps_its_finished_segments() -> None:
    splitter = GrowingTextSplitter(target=20)
    head = "Intro words here.\n\n```py\nprint(1)\n```\nMore prose after the code.\n\n"
    first = splitter.split(head)
    second = splitter.split(head + "Another paragraph, long enough to be cut.\n\nAnd one more.")
    assert second[0][0] is first[0][0]  # the same object: not split again
    assert [segment.kind for segment, _ in second] == [
        SegmentKind.PROSE,
        SegmentKind.CODE,
        SegmentKind.PROSE,
    ]
    assert len(second[2][1]) > 1


# --- where a growing text's end may be rendered again on its own ---------------------


def test_markdown_starts_afresh_after_a_blank_line_before_an_unindented_paragraph() -> None:
    text = "First paragraph.\n\nSecond one, still"
    assert last_fresh_start(text) == text.index("Second")


def test_no_fresh_start_inside_lists_quotes_tables_or_indented_text() -> None:
    for text in (
        "- one\n\n- two",
        "1. one\n\n2) two",
        "> quoted\n\n> more",
        "| a | b |\n\n| c | d |",
        "para\n\n    indented code",
        "para\n\n\tindented code",
        "para\nno blank line before",
    ):
        assert last_fresh_start(text) == 0, text


def test_a_last_line_that_may_still_become_a_list_item_is_not_a_fresh_start() -> None:
    for partial in ("", "-", "*", "12", "12.", "3)", "[ref", "[ref]"):
        assert last_fresh_start("para\n\n" + partial) == 0, partial
    # Once its start is past doubt, it is (a whole line is never in doubt).
    for decided in ("12a", "1234567890", "[ref] and more", "Word", "12\n"):
        assert last_fresh_start("para\n\n" + decided) == len("para\n\n"), decided


def test_a_line_of_other_white_space_is_not_blank() -> None:
    """CommonMark's blank line holds spaces and tabs only; a no-break space is text."""
    assert last_fresh_start("para\n\u00a0\nmore") == 0
    assert last_fresh_start("para\n \t\nmore") == len("para\n \t\n")


def test_the_search_starts_where_it_is_told() -> None:
    text = "one\n\ntwo\n\nthree"
    assert last_fresh_start(text, text.index("three")) == text.index("three")
    assert last_fresh_start("one\n\ntwo", len("one\n\ntwo")) == len("one\n\ntwo")


@given(_MARKDOWNISH, _MARKDOWNISH)
def test_the_fresh_start_never_moves_back_as_text_streams_in(head: str, tail: str) -> None:
    before = last_fresh_start(head)
    after = last_fresh_start(head + tail)
    assert after >= before
    assert last_fresh_start(head + tail, before) == after
