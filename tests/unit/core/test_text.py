"""What text can be sent: nothing invisible-only, nothing damaged, pasted text kept as is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import InvalidInputError
from app.core.text import has_visible_text, restore_pasted_line_breaks, validate_message_text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\x00",
        "\x00\x00\x00",
        "\x01\x02\x1b\x7f",
        "\t\r\n\x00 ",
        "\u200b\ufeff",
        "\x85",
    ],
)
def test_a_message_of_nothing_visible_is_refused_like_an_empty_one(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_message_text(text)

    assert caught.value.message == "Type a message first."
    assert not has_visible_text(text)


@pytest.mark.parametrize("text", ["a", "NUL\x00inside", "\x00x", "🪨", "عربى", "a\r\nb"])
def test_text_with_something_to_read_passes_unchanged(text: str) -> None:
    assert validate_message_text(text) == text


def test_a_lone_surrogate_is_refused_with_words_not_changed() -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_message_text("half an emoji \ud83d here")

    assert "damaged character" in caught.value.message
    assert "position 15" in caught.value.message


def test_a_pasted_text_gets_its_windows_line_breaks_back() -> None:
    pasted = "line one\r\nline two\r\n"
    shown = "Look:\nline one\nline two\n and more"

    assert restore_pasted_line_breaks(shown, [pasted]) == "Look:\nline one\r\nline two\r\n and more"


def test_an_edited_paste_keeps_the_boxes_line_breaks() -> None:
    assert restore_pasted_line_breaks("line one\nline 2", ["line one\r\nline two"]) == (
        "line one\nline 2"
    )


def test_old_mac_line_breaks_are_kept_too() -> None:
    assert restore_pasted_line_breaks("a\nb", ["a\rb"]) == "a\rb"


@given(st.lists(st.sampled_from(["a", "b", " ", "\r\n", "\n", "\r"]), max_size=30))
def test_a_paste_typed_nowhere_else_comes_back_exactly(pieces: list[str]) -> None:
    original = "".join(pieces)
    shown = original.replace("\r\n", "\n").replace("\r", "\n")

    assert restore_pasted_line_breaks(shown, [original]) == original
