"""A model the key cannot use: the next listed one, said (issue 10, item 2).

When a reply's request answers 404 `not_found_error` for its model (withdrawn, or
not offered to this key), the reply asks the next model of the server's list (the
catalog's ranking: `app.core.catalog.next_model`) once, into the same row: the
question is not stored twice and nothing typed is lost. The conversation then
uses that model: its stored row, the picker and, when they named the old model,
the settings for new conversations follow, and the user is told in plain words.
With no other model to ask, or when the next one is not available either, the
reply fails with words that say what to do. (The summarizer walks its own list
of models past a 404 the same way: `app.core.summarizer_llm.ask_for_summary`.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.catalog import ModelInfo, model_limits, next_model
from app.core.errors import ModelNotFoundError, StorageError
from app.core.settings import AppSettings, save_settings
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.chat.conversation import Conversation

log = logging.getLogger(__name__)

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
    """Which model each conversation uses: the picker's choice, or the one a reply
    switched to after a 404. Runs on the loop's thread.

    The choice is kept where each part belongs: on the conversation, on its stored
    row, and in the settings (the model new conversations start with).
    """

    def __init__(
        self,
        store: SessionStore,
        settings: Callable[[], AppSettings],
        settings_path: Path,
        models: Callable[[], Sequence[ModelInfo]],
    ) -> None:
        self._store = store
        self._settings = settings
        self._settings_path = settings_path
        self._models = models

    def fallback(self, model_id: str) -> tuple[ModelInfo, bool] | None:
        """The model a reply asks if `model_id` answers 404, with its limits (and
        whether they are known); None when no other model is listed."""
        models = self._models()
        following = next_model(model_id, models)
        return None if following is None else model_limits(following, models)

    def use_here(self, conversation: Conversation, model_id: str) -> None:
        """Use `model_id` in `conversation` only (Ask another model), and show it."""
        if model_id != conversation.model_id:
            self._use(conversation, model_id, for_new_conversations=False)
        models = self._models()
        conversation.tell(lambda events: events.models_changed(models, model_id))

    def select(self, conversation: Conversation, model_id: str) -> None:
        """The picker changed: use `model_id` in `conversation` and for new ones."""
        if not model_id or model_id == conversation.model_id:
            return
        self._use(conversation, model_id, for_new_conversations=True)

    def switched(self, conversation: Conversation, old: str, new: str) -> None:
        """A reply of `conversation` fell from `old` (a 404) to `new`: use `new` from now
        on, show it in the picker, and say so."""
        if conversation.model_id != old:
            chosen = conversation.model_id
            log.info("A reply fell from %s to %s; the user chose %s meanwhile", old, new, chosen)
            return
        settings = self._settings()
        self._use(conversation, new, for_new_conversations=settings.model in (None, "", old))
        models = self._models()
        old_name, new_name = (model_limits(name, models)[0].display_name for name in (old, new))
        conversation.tell(lambda events: events.models_changed(models, new))
        conversation.tell(
            lambda events: events.notice_raised(SWITCHED_TITLE, switched_notice(old_name, new_name))
        )

    def _use(
        self, conversation: Conversation, model_id: str, *, for_new_conversations: bool
    ) -> None:
        conversation.model_id = model_id
        state = conversation.context_state()
        conversation.tell(lambda events: events.context_changed(state))
        try:
            if for_new_conversations:
                settings = self._settings()
                settings.model = model_id
                save_settings(self._settings_path, settings)
            if conversation.session is not None:
                conversation.session = self._store.set_session_model(
                    conversation.session.id, model_id
                )
        except StorageError as error:
            conversation.error(error)
