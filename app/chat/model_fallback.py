"""A model the key cannot use: the next listed one, said (issue 10, item 2).

When a reply's request answers 404 `not_found_error` for its model (withdrawn, or
not offered to this key), the reply asks the next model of the server's list (the
catalog's ranking: `app.core.catalog.next_model`) once, into the same row: the
question is not stored twice and nothing typed is lost. The conversation then
uses that model: its stored row, the picker and, when they named the old model,
the settings for new conversations follow, and the user is told in plain words.
With no other model to ask, or when the next one is not available either, the
reply fails with words that say what to do. (A summary and a title walk their list of
models past a 404 the same way: `app.core.structured_call.call_down`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.catalog import ModelInfo, model_limits, next_model
from app.core.errors import ModelNotFoundError
from app.core.settings import AppSettings, save_settings

SWITCHED_TITLE = "Switched model"

# What to do when no model is left to try: the picker, or Settings → Conversation.
_WHAT_TO_DO = (
    "Choose another model at the top of the window or in Settings (or check your API "
    "key there), then press Retry on your question."
)


def switched_notice(old: str, new: str) -> str:
    """The notice after a switch, with the models' names."""
    return f"{old} isn't available to your API key, so Cairn switched this conversation to {new}."


def model_unavailable(
    model: ModelInfo, earlier: ModelInfo | None, error: ModelNotFoundError
) -> ModelNotFoundError:
    """The error when no model is left to ask: `model` answered 404, after `earlier`
    did (None: there was no other model to try)."""
    if earlier is None:
        said = f"{model.display_name} isn't available to your API key, and no other model is."
    else:
        said = (
            f"Neither {earlier.display_name} nor {model.display_name} is available to your API key."
        )
    return ModelNotFoundError(f"{said} {_WHAT_TO_DO}", detail=error.detail)


class ModelChoice:
    """The models on offer, as a conversation's model changes need them: the model a
    reply falls to after a 404, and the model new conversations start with (Settings).
    Runs on the loop's thread; a conversation's own choice is its `ModelInUse`.
    """

    def __init__(
        self,
        settings: Callable[[], AppSettings],
        settings_path: Path,
        models: Callable[[], Sequence[ModelInfo]],
    ) -> None:
        self._settings = settings
        self._settings_path = settings_path
        self._models = models
        # The last fallback found, for which model and list (a list is replaced, never
        # changed): asked at every reply, it ranks every listed model (issue 20).
        self._fallback: tuple[str, Sequence[ModelInfo], tuple[ModelInfo, bool] | None] | None
        self._fallback = None

    @property
    def models(self) -> Sequence[ModelInfo]:
        """The models to offer (the server's list, else the bundled one)."""
        return self._models()

    def fallback(self, model_id: str) -> tuple[ModelInfo, bool] | None:
        """The model a reply asks if `model_id` answers 404, with its limits (and
        whether they are known); None when no other model is listed."""
        models = self._models()
        last = self._fallback
        if last is not None and last[0] == model_id and last[1] is models:
            return last[2]
        following = next_model(model_id, models)
        found = None if following is None else model_limits(following, models)
        self._fallback = (model_id, models, found)
        return found

    def display_name(self, model_id: str) -> str:
        return model_limits(model_id, self._models())[0].display_name

    def for_new_conversations(self) -> str | None:
        """The model Settings names for new conversations (None or "": the default)."""
        return self._settings().model

    def use_for_new_conversations(self, model_id: str) -> None:
        """New conversations start with `model_id` (saved with the settings).

        Raises:
            StorageError: the settings could not be saved.
        """
        settings = self._settings()
        settings.model = model_id
        save_settings(self._settings_path, settings)
