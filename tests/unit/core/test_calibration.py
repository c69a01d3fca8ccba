"""Calibration: a per-model moving ratio actual/estimated that ignores absurd figures."""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.calibration import (
    CALIBRATION_SCHEMA_VERSION,
    MAX_RATIO,
    MIN_RATIO,
    MIN_SAMPLE_TOKENS,
    RELEARN_AFTER,
    UNCALIBRATED_RATIO,
    Calibration,
    Calibrations,
)
from app.core.models import Usage

MODEL = "claude-sonnet-4-6"


def server_rule(estimate: int) -> int:
    """A server whose tokenizer gives 9 % more, plus a fixed 12 tokens of framing."""
    return math.ceil(estimate * 1.09) + 12


def test_uncalibrated_estimates_assume_the_high_side() -> None:
    calibration = Calibration()

    assert calibration.calibrated is False
    assert calibration.apply(1_000) == math.ceil(1_000 * UNCALIBRATED_RATIO)
    assert calibration.apply(0) == 0
    assert calibration.apply(-5) == 0


def test_the_first_reply_sets_the_ratio() -> None:
    learned = Calibration().learn(2_000, 2_300)

    assert learned.calibrated
    assert learned.samples == 1
    assert learned.ratio == pytest.approx(1.15)
    assert learned.apply(2_000) == 2_300


def test_apply_rounds_up_without_float_noise() -> None:
    calibration = Calibration(ratio=1.1, weight=1.0, samples=1)

    assert calibration.apply(1_000) == 1_100
    assert calibration.apply(1_001) == 1_102


def test_converges_within_five_percent_after_one_to_three_replies() -> None:
    calibration = Calibration()
    requests = [600, 1_400, 2_500, 3_900, 5_600]
    errors = []
    for sent, following in itertools.pairwise(requests):
        calibration = calibration.learn(sent, server_rule(sent))
        actual = server_rule(following)
        errors.append(abs(calibration.apply(following) - actual) / actual)

    assert all(error <= 0.05 for error in errors), errors


def test_newer_replies_weigh_more_than_older_ones() -> None:
    calibration = Calibration()
    for _ in range(5):
        calibration = calibration.learn(1_000, 1_300)
    for _ in range(3):
        calibration = calibration.learn(1_000, 1_000)

    assert calibration.ratio == pytest.approx(1.0, abs=0.05)


def test_a_small_request_counts_for_less() -> None:
    calibration = Calibration().learn(4_000, 4_400)

    after_small = calibration.learn(200, 300)
    after_large = calibration.learn(2_000, 3_000)

    # Both say 1.5; the 200-token request moves 1.1 a third as far.
    assert after_small.ratio == pytest.approx(1.1 + (1.5 - 1.1) * 0.2 / 0.7)
    assert after_large.ratio == pytest.approx(1.1 + (1.5 - 1.1) * 1.0 / 1.5)


def test_a_tiny_request_teaches_nothing() -> None:
    calibration = Calibration()

    assert calibration.learn(MIN_SAMPLE_TOKENS - 1, 40) is calibration


@pytest.mark.parametrize(
    ("estimated", "actual"),
    [
        (1_000, 0),  # zero
        (1_000, -50),  # negative
        (1_000, 100_000),  # 100× the estimate
        (1_000, 10),  # a hundredth
        (0, 1_000),
        (-1, 1_000),
    ],
)
def test_absurd_usage_is_ignored_not_learned(estimated: int, actual: int) -> None:
    calibration = Calibration().learn(1_000, 1_100)
    book = Calibrations({MODEL: calibration})

    accepted = book.learn(MODEL, estimated, actual)

    after = book.for_model(MODEL)
    assert accepted is False
    assert (after.ratio, after.samples, after.weight) == (
        calibration.ratio,
        calibration.samples,
        calibration.weight,
    )
    assert calibration.judge(estimated, actual) is not None


def test_absurd_usage_is_never_learned_however_often_it_comes() -> None:
    calibration = Calibration().learn(1_000, 1_100)

    for _ in range(10):
        calibration = calibration.learn(1_000, 100_000)

    assert calibration.ratio == pytest.approx(1.1)


def test_a_jump_is_ignored_until_it_repeats() -> None:
    calibration = Calibration().learn(1_000, 1_000)

    once = calibration.learn(1_000, 3_000)
    assert once.ratio == pytest.approx(1.0)
    assert once.rejected_in_a_row == 1

    repeated = once
    for _ in range(RELEARN_AFTER - 1):
        repeated = repeated.learn(1_000, 3_000)

    assert repeated.ratio == pytest.approx(3.0)
    assert repeated.samples == 1
    assert repeated.rejected_in_a_row == 0


def test_an_accepted_sample_ends_a_run_of_jumps() -> None:
    calibration = Calibration().learn(1_000, 1_000).learn(1_000, 3_000).learn(1_000, 1_050)

    assert calibration.rejected_in_a_row == 0
    assert calibration.samples == 2


@settings(max_examples=300, deadline=None)
@given(
    samples=st.lists(
        st.tuples(
            st.integers(min_value=-10, max_value=10**9), st.integers(min_value=-10, max_value=10**9)
        ),
        max_size=30,
    )
)
def test_whatever_the_server_says_the_ratio_stays_plausible(samples: list[tuple[int, int]]) -> None:
    calibration = Calibration()
    for estimated, actual in samples:
        calibration = calibration.learn(estimated, actual)

    assert MIN_RATIO <= calibration.ratio <= MAX_RATIO
    assert Calibration.from_dict(calibration.to_dict()) == calibration


def test_each_model_has_its_own_calibration() -> None:
    book = Calibrations()

    assert book.learn_usage(MODEL, 1_000, Usage(input_tokens=900, cache_read_input_tokens=300))
    assert book.for_model(MODEL).ratio == pytest.approx(1.2)
    assert book.for_model("claude-haiku-4-5").calibrated is False
    assert book.revision == 1


def test_round_trips_through_a_dict_with_a_schema_version() -> None:
    book = Calibrations()
    book.learn(MODEL, 1_000, 1_234)
    book.learn("claude-opus-4-6", 5_000, 5_500)

    data = book.to_dict()
    again = Calibrations.from_dict(data)

    assert data["schema_version"] == CALIBRATION_SCHEMA_VERSION
    assert again.snapshot() == book.snapshot()


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {},
        {"schema_version": 99, "models": {}},
        {"schema_version": 1, "models": []},
        {"schema_version": 1, "models": {"": {}}},
        {"schema_version": 1, "models": {MODEL: "1.2"}},
        {"schema_version": 1, "models": {MODEL: {"ratio": 1.1}}},
        {
            "schema_version": 1,
            "models": {MODEL: {"ratio": "x", "weight": 1, "samples": 1, "rejected_in_a_row": 0}},
        },
        {
            "schema_version": 1,
            "models": {
                MODEL: {"ratio": float("nan"), "weight": 1, "samples": 1, "rejected_in_a_row": 0}
            },
        },
        {
            "schema_version": 1,
            "models": {MODEL: {"ratio": 50.0, "weight": 1, "samples": 1, "rejected_in_a_row": 0}},
        },
        {
            "schema_version": 1,
            "models": {MODEL: {"ratio": 1.1, "weight": -1, "samples": 1, "rejected_in_a_row": 0}},
        },
        {
            "schema_version": 1,
            "models": {MODEL: {"ratio": 1.1, "weight": 1, "samples": True, "rejected_in_a_row": 0}},
        },
        {
            "schema_version": 1,
            "models": {MODEL: {"ratio": 1.1, "weight": 0, "samples": 3, "rejected_in_a_row": 0}},
        },
    ],
)
def test_damaged_data_is_refused(data: Any) -> None:
    with pytest.raises(ValueError):
        Calibrations.from_dict(data)


def test_threads_learning_at_once_lose_no_sample() -> None:
    book = Calibrations()
    barrier = threading.Barrier(8)

    def learn() -> None:
        barrier.wait()
        for _ in range(50):
            book.learn(MODEL, 1_000, 1_100)

    threads = [threading.Thread(target=learn) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert book.for_model(MODEL).samples == 400
    assert book.revision == 400
