"""The real-window benches' helpers (bench/real_window.py) measure what they say: the fake
server's answer arrives whole in the deltas it is cut into, the right answer goes to each
question, the longest GUI-thread silence counts the stretch before the first beat, and
what each clock did in it is read over that silence and no other."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from bench.real_window import (
    Silence,
    longest_gap,
    longest_silence,
    process_cpu_clock,
    question_number,
    split_answer,
)


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


def test_the_longest_gap_reads_each_clock_over_that_gap_alone() -> None:
    beats = [0.0, 0.001, 0.011, 0.012]  # the silence: 0.001 → 0.011
    gap = longest_gap(
        beats,
        on_cpu=[1.0, 1.001, 1.004, 1.005],
        queued=[2.0, 2.0, 2.002, 2.002],
        process=[5.0, 5.002, 5.012, 5.013],
        other=[7.0, 7.0, 7.001, 7.001],
    )
    assert gap is not None
    assert (gap.start, gap.end) == (0.001, 0.011)
    assert gap.ms == pytest.approx(10.0)
    assert gap.cpu == pytest.approx(3.0)
    assert gap.queued == pytest.approx(2.0)
    assert gap.blocked == pytest.approx(5.0)  # neither running nor waiting for a CPU
    assert gap.rest_of_app == pytest.approx(7.0)  # the process's 10 less the GUI's 3
    assert gap.other == pytest.approx(1.0)


def test_a_single_beat_has_no_gap() -> None:
    assert longest_gap([1.0], [0.0], [0.0], [0.0], [0.0]) is None


def test_clock_skew_never_makes_a_part_negative() -> None:
    # schedstat and the process clock are read a few µs apart: a part may come out above
    # the silence; what is left is then nothing, not less.
    gap = Silence(start=0.0, end=0.001, cpu=0.8, queued=0.3, process=0.7, other=0.0)
    assert gap.blocked == 0.0
    assert gap.rest_of_app == 0.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's CPU clocks")
def test_another_process_cpu_clock_reads_its_cpu_time() -> None:
    busy = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nend = time.process_time() + 0.3\n"
            "while time.process_time() < end: pass\nprint('spent', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        clock = process_cpu_clock(busy.pid)
        assert busy.stdout is not None
        assert busy.stdout.readline() == b"spent\n"  # its 0.3 s of CPU are behind it
        spent = time.clock_gettime(clock)
        assert 0.3 <= spent < 5  # its own CPU, not this process's nor the machine's
        assert time.clock_gettime(clock) < spent + 0.05  # it waits on its input now
    finally:
        assert busy.stdin is not None
        busy.stdin.close()
        busy.wait(30)
        if busy.stdout is not None:
            busy.stdout.close()
