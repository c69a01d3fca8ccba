"""One structured call (a forced tool) down a list of models: what a summary
(`app.core.summarizer_llm`) and an automatic title (`app.core.titles`) ask for.

Light on purpose: the titles' module is imported before the window paints, and
the summarizer's (pydantic models, the tool schema) must not be.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.errors import ApiError, BadRequestError, ModelNotFoundError, StructuredOutputError

log = logging.getLogger(__name__)

StructuredCompletion = Callable[..., dict[str, Any]]
"""A `ChatProvider.complete_structured`: called with the keywords model, system, prompt,
tool_name, tool_description, input_schema and max_tokens; returns the tool's input."""


@dataclass(frozen=True)
class ModelReply:
    """What the walk down a list of models gave.

    Attributes:
        tool_input: the forced tool's input; None when no model gave one.
        model: the model that answered, or whose failure ended the walk; None when
            every model was missing or refused the request.
        calls: the requests made.
        error: the failure that ended the walk, or the last model's refusal.
    """

    tool_input: dict[str, Any] | None
    model: str | None
    calls: int
    error: ApiError | StructuredOutputError | None = None


def call_down(models: Sequence[str], call: Callable[[str], dict[str, Any]], who: str) -> ModelReply:
    """`call` (one structured call to a model) down `models`: a model that does not
    exist or refuses the request itself (a 400: one whose thinking cannot be turned off
    refuses a forced tool call) passes to the next; any other failure ends the walk.

    Transport failures are retried by the provider (the SDK's retries: once, with its
    backoff, honouring retry-after), never here; a bad answer is not retried.
    """
    calls = 0
    last_error: ApiError | None = None
    for model in models:
        calls += 1
        try:
            return ModelReply(call(model), model, calls)
        except (ModelNotFoundError, BadRequestError) as error:
            log.info(
                "%s model %s did not take the request (%s); trying the next one",
                who,
                model,
                error.detail,
            )
            last_error = error
        except (ApiError, StructuredOutputError) as error:
            return ModelReply(None, model, calls, error)
    return ModelReply(None, None, calls, last_error)
