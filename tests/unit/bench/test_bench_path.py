"""bench_path says in which step of a turn its longest silence fell: before the POST,
while the fake answers, while the reply streams, or at the reply's end."""

from __future__ import annotations

import pytest

from bench.bench_path import Marks, step_of, where
from bench.real_window import Silence


def marks() -> Marks:
    # Key press at 10.0 s, POST at 10.02, headers at 10.5, the last text at 10.55.
    return Marks(wall=10.0, request_wall=10.02, response_wall=10.5, last_text=10.55)


@pytest.mark.parametrize(
    ("moment", "step"),
    [
        (10.0, "before the POST"),
        (10.019, "before the POST"),
        (10.02, "the fake's answer"),
        (10.3, "the fake's answer"),
        (10.5, "streaming"),
        (10.55, "streaming"),
        (10.56, "the reply's end"),
    ],
)
def test_each_moment_falls_in_its_step(moment: float, step: str) -> None:
    assert step_of(moment, marks()) == step


def test_a_turn_whose_request_never_left_is_all_before_the_post() -> None:
    assert step_of(99.0, Marks(wall=10.0)) == "before the POST"


def test_a_silence_across_two_steps_names_both_and_when_it_began() -> None:
    silence = Silence(start=10.49, end=10.51, cpu=4.0, queued=3.0, process=9.0, other=1.0)
    found = where(silence, marks())
    assert found["step"] == "the fake's answer → streaming"
    assert found["at"] == pytest.approx(490.0)
    assert found["ms"] == pytest.approx(20.0)
    assert found["blocked"] == pytest.approx(13.0)
    assert found["app"] == pytest.approx(5.0)
