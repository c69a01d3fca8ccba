"""The walk down a list of models that a summary and an automatic title share."""

from __future__ import annotations

from typing import Any

from app.core.errors import BadRequestError, ModelNotFoundError, OverloadedError
from app.core.structured_call import ModelReply, call_down


class FakeCall:
    """One structured call per model: answers from a script, records the models asked."""

    def __init__(self, *answers: dict[str, Any] | Exception) -> None:
        self.answers = list(answers)
        self.models: list[str] = []

    def __call__(self, model: str) -> dict[str, Any]:
        self.models.append(model)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_a_missing_or_refusing_model_passes_to_the_next() -> None:
    call = FakeCall(ModelNotFoundError("gone"), BadRequestError("no forced tool"), {"a": 1})
    reply = call_down(["m1", "m2", "m3"], call, "Test")
    assert (reply.tool_input, reply.model, reply.calls, reply.error) == ({"a": 1}, "m3", 3, None)
    assert call.models == ["m1", "m2", "m3"]


def test_any_other_failure_ends_the_walk() -> None:
    busy = OverloadedError("busy")
    call = FakeCall(busy, {"a": 1})
    reply = call_down(["m1", "m2"], call, "Test")
    assert (reply.tool_input, reply.model, reply.calls, reply.error) == (None, "m1", 1, busy)
    assert call.models == ["m1"], "the provider retried already: the next model is not asked"


def test_when_no_model_takes_the_request_the_last_refusal_is_kept() -> None:
    refused = BadRequestError("no forced tool")
    reply = call_down(["m1", "m2"], FakeCall(ModelNotFoundError("gone"), refused), "Test")
    assert (reply.tool_input, reply.model, reply.calls, reply.error) == (None, None, 2, refused)
    assert call_down([], FakeCall(), "Test") == ModelReply(None, None, 0, None)
