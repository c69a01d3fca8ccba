"""The walk down a list of models that a summary and an automatic title share."""

from __future__ import annotations

from app.core.errors import BadRequestError, ModelNotFoundError, OverloadedError
from app.core.structured_call import ModelReply, call_down
from tests.fakes.structured import FakeCompletion


def _walk(complete: FakeCompletion, models: list[str]) -> ModelReply:
    return call_down(models, lambda model: complete(model=model), "Test")


def _asked(complete: FakeCompletion) -> list[str]:
    return [call["model"] for call in complete.calls]


def test_a_missing_or_refusing_model_passes_to_the_next() -> None:
    complete = FakeCompletion(ModelNotFoundError("gone"), BadRequestError("no tool"), {"a": 1})
    assert _walk(complete, ["m1", "m2", "m3"]) == ModelReply({"a": 1}, "m3", 3)
    assert _asked(complete) == ["m1", "m2", "m3"]


def test_any_other_failure_ends_the_walk() -> None:
    busy = OverloadedError("busy")
    complete = FakeCompletion(busy, {"a": 1})
    assert _walk(complete, ["m1", "m2"]) == ModelReply(None, "m1", 1, busy)
    assert _asked(complete) == ["m1"], "the provider retried already: no next model"


def test_when_no_model_takes_the_request_the_last_refusal_is_kept() -> None:
    refused = BadRequestError("no forced tool")
    complete = FakeCompletion(ModelNotFoundError("gone"), refused)
    assert _walk(complete, ["m1", "m2"]) == ModelReply(None, None, 2, refused)
    assert _walk(FakeCompletion(), []) == ModelReply(None, None, 0)
