"""Display blocks for huge plain text, and the way back to the original."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.ui.transcript_text import LONG_LINE_CHARS, display_text, utf16_to_index

_STAND_INS = {"\u240d": "\r", "\u00b6": "\u2029", "\ufffd": None}


def _matches(shown: str, original: str) -> bool:
    """`shown` is `original` with paragraph-breaking characters replaced one for one."""
    if len(shown) != len(original):
        return False
    for seen, real in zip(shown, original, strict=True):
        if seen == real:
            continue
        if seen not in _STAND_INS or (_STAND_INS[seen] not in (None, real)):
            return False
    return True


_TEXT = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "\n", "\r", "\u2029", "\ufdd0", "é", "🙂", "\t"]),
    max_size=400,
)


@given(_TEXT, st.integers(min_value=2, max_value=40))
def test_display_blocks_are_the_original_cut_at_line_ends_or_long_lines(
    source: str, limit: int
) -> None:
    shown = display_text(source, limit)
    blocks = shown.text.split("\n")
    assert len(blocks) == len(shown.block_starts)
    assert shown.block_starts[0] == 0
    for index, block in enumerate(blocks):
        start = shown.block_starts[index]
        assert len(block) <= limit
        assert _matches(block, source[start : start + len(block)])
        end = start + len(block)
        following = shown.block_starts[index + 1] if index + 1 < len(blocks) else len(source)
        # Between two blocks: nothing (a cut for display), or the line's own ending.
        assert source[end:following] in ("", "\n", "\r\n")
        if source[end:following] == "" and index + 1 < len(blocks):
            assert len(block) > 0


def test_short_lines_are_left_alone() -> None:
    shown = display_text("one\ntwo\r\nthree")
    assert shown.text == "one\ntwo\nthree"
    assert shown.block_starts == (0, 4, 9)


def test_a_long_line_is_cut_after_a_space() -> None:
    line = ("word " * 2000).strip()
    shown = display_text(line)
    blocks = shown.text.split("\n")
    assert len(blocks) > 1
    assert all(len(block) <= LONG_LINE_CHARS for block in blocks)
    assert all(block.endswith(" ") for block in blocks[:-1])
    assert "".join(blocks) == line


def test_a_long_line_without_spaces_is_cut_hard() -> None:
    shown = display_text("x" * 10_001, 4000)
    assert [len(block) for block in shown.text.split("\n")] == [4000, 4000, 2001]


def test_offset_shifts_block_starts() -> None:
    assert display_text("ab\ncd", offset=10).block_starts == (10, 13)


def test_utf16_positions_map_to_python_indices() -> None:
    assert utf16_to_index("abc", 2) == 2
    assert utf16_to_index("🙂a", 2) == 1
    assert utf16_to_index("🙂a", 3) == 2
    assert utf16_to_index("é🙂", 1) == 1
