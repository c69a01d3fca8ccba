"""The real-window benches' helpers (bench/real_window.py) measure what they say: the fake
server's answer arrives whole in the deltas it is cut into, the right answer goes to each
question, and the longest GUI-thread silence counts the stretch before the first beat."""

from __future__ import annotations

import pytest

from bench.real_window import longest_silence, question_number, split_answer


@pytest.mark.parametrize(
    "text",
    ["one", "two words", "Here is a longer answer with several words in it, and a comma. " * 5],
)
@pytest.mark.parametrize("pieces", [1, 3, 8])
def test_an_answer_cut_into_deltas_joins_back_to_itself(text: str, pieces: int) -> None:
    chunks = split_answer(text, pieces)
    assert "".join(chunks) == text
    assert 1 <= len(chunks) <= pieces
    assert all(chunks)


def test_the_question_number_is_read_from_the_question_only() -> None:
    assert question_number("Question 12: what did Maya say about the boiler?") == 12
    assert question_number("Question 3:") is None  # nothing asked
    assert question_number("A question: 12") is None
    assert question_number("Question twelve: and then?") is None
    assert question_number("") is None


def test_the_longest_silence_counts_the_work_before_the_first_beat() -> None:
    # The key press's own work (0.0 → 0.050) comes before any beat: it is the longest.
    assert longest_silence([0.050, 0.051, 0.052], start=0.0, end=0.053) == pytest.approx(50.0)


def test_the_longest_silence_ignores_beats_outside_the_window() -> None:
    beats = [0.0, 0.5, 1.0, 1.001, 1.003, 1.010, 2.0]
    assert longest_silence(beats, start=1.0, end=1.012) == pytest.approx(7.0)


def test_without_a_beat_the_whole_window_is_one_silence() -> None:
    assert longest_silence([], start=1.0, end=1.25) == pytest.approx(250.0)
