"""A structured call (`ChatProvider.complete_structured`) that answers from a script."""

from __future__ import annotations

from typing import Any


class FakeCompletion:
    """Answers from a script, in order (an exception is raised), and records each call's
    keywords."""

    def __init__(self, *answers: dict[str, Any] | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **call: Any) -> dict[str, Any]:
        self.calls.append(call)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
