"""Which model a conversation uses: the picker's choice, Ask another model, or the
one a reply fell to after a 404 (app.chat.model_fallback says why and how).

`ModelInUse` belongs to one conversation and runs on the loop's thread. The choice
is kept where each part belongs: on the conversation, on its stored row, and in the
settings (the model new conversations start with).
"""

from __future__ import annotations

import logging

from app.chat.gauge import ConversationGauge
from app.chat.model_fallback import SWITCHED_TITLE, switched_notice
from app.chat.state import ConversationState
from app.core.catalog import ModelInfo
from app.core.errors import StorageError

log = logging.getLogger(__name__)


class ModelInUse:
    """The model of one conversation, and changing it."""

    def __init__(self, state: ConversationState, gauge: ConversationGauge) -> None:
        self._state = state
        self._gauge = gauge

    def fallback(self) -> tuple[ModelInfo, bool] | None:
        """The model a reply asks if this one answers 404, with its limits (and whether
        they are known); None when no other model is listed."""
        return self._state.shared.model_choice.fallback(self._state.model_id)

    def select(self, model_id: str) -> None:
        """The picker changed: use `model_id` here and in new conversations."""
        if not model_id or model_id == self._state.model_id:
            return
        self._use(model_id, for_new_conversations=True)

    def use_here(self, model_id: str) -> None:
        """Use `model_id` in this conversation only (Ask another model), and show it."""
        if model_id != self._state.model_id:
            self._use(model_id, for_new_conversations=False)
        models = self._state.shared.model_choice.models
        self._state.tell(lambda events: events.models_changed(models, model_id))

    def switched(self, old: str, new: str) -> None:
        """A reply fell from `old` (a 404) to `new`: use `new` from now on, show it in
        the picker, and say so."""
        state = self._state
        if state.model_id != old:
            chosen = state.model_id
            log.info("A reply fell from %s to %s; the user chose %s meanwhile", old, new, chosen)
            return
        choice = state.shared.model_choice
        self._use(new, for_new_conversations=choice.for_new_conversations() in (None, "", old))
        models = choice.models
        notice = switched_notice(choice.display_name(old), choice.display_name(new))
        state.tell(lambda events: events.models_changed(models, new))
        state.tell(lambda events: events.notice_raised(SWITCHED_TITLE, notice))

    def _use(self, model_id: str, *, for_new_conversations: bool) -> None:
        state = self._state
        state.model_id = model_id
        self._gauge.tell()
        try:
            if for_new_conversations:
                state.shared.model_choice.use_for_new_conversations(model_id)
            if state.session is not None:
                state.session = state.shared.store.set_session_model(state.session.id, model_id)
        except StorageError as error:
            state.error(error)
