"""Calibration: correcting cl100k estimates with the usage Claude reports (DESIGN §4).

Cairn counts with cl100k (`app.core.tokens`), which is not Claude's tokenizer.
Every reply reports what its request really cost (input + cache creation +
cache read tokens); the ratio actual/estimated, averaged per model, turns the
next estimate into a figure within a few percent of the server's.

The average is a moving one, weighted two ways: each new reply halves the
weight of what came before (`KEEP`), so the figure follows the conversation
the user is in now; and a request under `FULL_WEIGHT_TOKENS` counts for less,
because in a small request the fixed framing (which a ratio cannot model)
weighs more. A request under `MIN_SAMPLE_TOKENS` ("Hi!") teaches nothing: its
ratio is mostly framing. The first reply to a larger one replaces the starting
guess (`UNCALIBRATED_RATIO`) outright, so the gauge is calibrated after one
reply.

Usage figures that make no sense are ignored, never learned (see `judge`):
zero or negative counts, a ratio outside [`MIN_RATIO`, `MAX_RATIO`] (100× the
estimate, say), or, once calibrated, a ratio outside
[ratio / `MAX_JUMP`, ratio × `MAX_JUMP`]. `RELEARN_AFTER` such jumps in a row
mean the old figure was wrong, not the samples: calibration starts over from
the newest one.

Pure logic: the file lives in `app.store.calibration_file`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.models import Usage

log = logging.getLogger(__name__)

CALIBRATION_SCHEMA_VERSION = 1

# Before any reply: Claude's tokenizers give somewhat more tokens than cl100k
# for most text, so assume 15 % more. Erring high keeps a first request from
# overflowing; the first reply replaces the guess.
UNCALIBRATED_RATIO = 1.15

# What a single reply may teach, at most: a tokenizer 4× more or less efficient
# than cl100k is not a tokenizer, it is a wrong figure.
MIN_RATIO = 0.25
MAX_RATIO = 4.0
# Once calibrated, a sample more than 2× off the current ratio is an outlier ...
MAX_JUMP = 2.0
# ... unless it happens three times in a row: then the model (or server) changed.
RELEARN_AFTER = 3

# Share of its weight the past keeps when a new reply arrives (each reply halves it).
KEEP = 0.5
# Requests of at least this many estimated tokens count fully; smaller ones in proportion.
FULL_WEIGHT_TOKENS = 1_000
# Smaller requests are not learned from at all (see the module's docstring).
MIN_SAMPLE_TOKENS = 128


@dataclass(frozen=True)
class Calibration:
    """The correction for one model.

    Attributes:
        ratio: actual / estimated tokens, the moving average.
        weight: the total (decayed) weight of the samples behind `ratio`.
        samples: how many replies were learned from.
        rejected_in_a_row: outliers ignored since the last accepted sample.
    """

    ratio: float = UNCALIBRATED_RATIO
    weight: float = 0.0
    samples: int = 0
    rejected_in_a_row: int = 0

    @property
    def calibrated(self) -> bool:
        """True once at least one reply's real usage corrected the ratio."""
        return self.samples > 0

    def apply(self, estimate: int) -> int:
        """The calibrated figure for a cl100k estimate (rounded up: better full than over)."""
        if estimate <= 0:
            return 0
        # The epsilon keeps float noise (1000 × 1.1 = 1100.0000000000002) from adding a token.
        return math.ceil(estimate * self.ratio - 1e-9)

    def judge(self, estimated: int, actual: int) -> str | None:
        """Why the sample (estimated, actual) must not be learned, or None when it may."""
        if estimated <= 0:
            return f"the estimate was {estimated} tokens"
        if actual <= 0:
            return f"the server reported {actual} tokens"
        sample = actual / estimated
        if not MIN_RATIO <= sample <= MAX_RATIO:
            return f"{actual} reported for {estimated} estimated is a ratio of {sample:.3g}"
        if self.calibrated and not self.ratio / MAX_JUMP <= sample <= self.ratio * MAX_JUMP:
            return (
                f"{actual} reported for {estimated} estimated (ratio {sample:.3g}) "
                f"is too far from the learned ratio {self.ratio:.3g}"
            )
        return None

    def learn(self, estimated: int, actual: int) -> Calibration:
        """The calibration after one more reply: `estimated` is the raw (uncalibrated)
        estimate of the request sent, `actual` the input tokens the server reported.

        Returns `self` when the sample is too small to teach anything.
        """
        reason = self.judge(estimated, actual)
        if reason is None and estimated < MIN_SAMPLE_TOKENS:
            return self
        if reason is not None:
            jumped = estimated > 0 and actual > 0 and MIN_RATIO <= actual / estimated <= MAX_RATIO
            if jumped and self.rejected_in_a_row + 1 >= RELEARN_AFTER:
                log.info(
                    "Token calibration starts over: %s, %d times in a row", reason, RELEARN_AFTER
                )
                return Calibration().learn(estimated, actual)
            log.info("Token usage ignored for calibration: %s", reason)
            return dataclasses.replace(self, rejected_in_a_row=self.rejected_in_a_row + 1)
        sample = actual / estimated
        sample_weight = min(1.0, estimated / FULL_WEIGHT_TOKENS)
        kept = self.weight * KEEP
        weight = kept + sample_weight
        ratio = (kept * self.ratio + sample_weight * sample) / weight
        return Calibration(ratio=ratio, weight=weight, samples=self.samples + 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ratio": self.ratio,
            "weight": self.weight,
            "samples": self.samples,
            "rejected_in_a_row": self.rejected_in_a_row,
        }

    @classmethod
    def from_dict(cls, data: object) -> Calibration:
        """Read `to_dict`'s output back; ValueError when anything is off."""
        if not isinstance(data, Mapping):
            raise ValueError("a calibration must be an object")
        ratio = _number(data, "ratio")
        weight = _number(data, "weight")
        samples = _count(data, "samples")
        rejected = _count(data, "rejected_in_a_row")
        if not MIN_RATIO <= ratio <= MAX_RATIO:
            raise ValueError(f"ratio {ratio} is outside [{MIN_RATIO}, {MAX_RATIO}]")
        if weight < 0 or (samples == 0) != (weight == 0):
            raise ValueError(f"weight {weight} does not match {samples} samples")
        return cls(ratio=ratio, weight=weight, samples=samples, rejected_in_a_row=rejected)


def _number(data: Mapping[str, object], key: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key} must be a finite number, not {value!r}")
    return float(value)


def _count(data: Mapping[str, object], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a whole number ≥ 0, not {value!r}")
    return value


class Calibrations:
    """The calibration of every model, shared between threads.

    The chat worker learns from each reply; the gauge reads on every keystroke.

    Attributes:
        revision: bumped on every change, so a saver can tell whether to write.
    """

    def __init__(self, by_model: Mapping[str, Calibration] | None = None) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, Calibration] = dict(by_model or {})
        self.revision = 0

    def for_model(self, model_id: str) -> Calibration:
        """The model's calibration (uncalibrated when it never replied)."""
        with self._lock:
            return self._by_model.get(model_id, _UNCALIBRATED)

    def learn(self, model_id: str, estimated: int, actual: int) -> bool:
        """Learn from one reply; True when the sample was accepted."""
        with self._lock:
            before = self._by_model.get(model_id, _UNCALIBRATED)
            after = before.learn(estimated, actual)
            if after is before:
                return False
            self._by_model[model_id] = after
            self.revision += 1
        return after.rejected_in_a_row == 0

    def learn_usage(self, model_id: str, estimated: int, usage: Usage) -> bool:
        """`learn` from a reply's `usage`: input + cache creation + cache read tokens."""
        return self.learn(model_id, estimated, usage.total_input_tokens)

    def snapshot(self) -> dict[str, Calibration]:
        with self._lock:
            return dict(self._by_model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": CALIBRATION_SCHEMA_VERSION,
            "models": {model: item.to_dict() for model, item in sorted(self.snapshot().items())},
        }

    @classmethod
    def from_dict(cls, data: object) -> Calibrations:
        """Read `to_dict`'s output back; ValueError when anything is off."""
        if not isinstance(data, Mapping):
            raise ValueError("calibration data must be an object")
        version = data.get("schema_version")
        if version != CALIBRATION_SCHEMA_VERSION:
            raise ValueError(f"unknown schema_version {version!r}")
        models = data.get("models")
        if not isinstance(models, Mapping):
            raise ValueError("models must be an object")
        by_model: dict[str, Calibration] = {}
        for model_id, item in models.items():
            if not isinstance(model_id, str) or not model_id:
                raise ValueError(f"bad model id {model_id!r}")
            by_model[model_id] = Calibration.from_dict(item)
        return cls(by_model)


_UNCALIBRATED = Calibration()
