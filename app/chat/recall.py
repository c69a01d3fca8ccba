"""Gathering the recall block for one reply, on the reply's worker thread (issue 12).

`AutomaticRecall.gather` takes the newest user message of the live tail, looks its
salient terms up in the conversation's archive and fits the best quotes into the
recall budget: `budget_ratio` of the model's window (at least `RECALL_FLOOR_TOKENS`), and
never more than the room the request leaves (below the margin where an exact count
would be asked), so the recall block never makes a request fail that would have fitted
without it. The kinds of fact the message asks for (`wanted_kinds`) rank the quotes.
A failure to read the archive is logged and the reply goes without recall.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Protocol

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder
from app.core.errors import StorageError
from app.core.live_tail import TailTally
from app.core.lookup import ToolOffer
from app.core.models import Message, Role
from app.core.recall import (
    ArchivedMatch,
    RecallBlock,
    RecallTerm,
    fit_recall,
    fold,
    salient_terms,
)
from app.core.recall_kinds import wanted_kinds
from app.core.settings import RecallSettings
from app.core.summary import Summary
from app.store.recall import QUESTION_CANDIDATES

log = logging.getLogger(__name__)


class ArchiveLookup(Protocol):
    """Where archived messages are found: `app.store.recall.RecallIndex`, or a fake."""

    def archived_matches(
        self,
        session_id: str,
        terms: Sequence[RecallTerm],
        limit: int = ...,
        *,
        other_forms: bool = False,
    ) -> list[ArchivedMatch]: ...


class AutomaticRecall:
    """Builds the recall block for a reply.

    Attributes:
        builder: measures the request without recall, to know the room left.
        budget_ratio: the share of the window recall may use (0: recall is off).
    """

    def __init__(self, builder: ContextBuilder, budget_ratio: float) -> None:
        self.builder = builder
        self.budget_ratio = budget_ratio

    def gather(
        self,
        index: ArchiveLookup,
        *,
        session_id: str,
        model: ModelInfo,
        system_prompt: str,
        summaries: Sequence[Summary],
        tail: Sequence[Message],
        model_known: bool = True,
        tools: ToolOffer | None = None,
        tail_tally: TailTally | None = None,
    ) -> RecallBlock | None:
        """The recall block for the newest user message of `tail`, or None; it leaves the
        room `tools` take when offered (`tail_tally`: the tail's, when the caller has it)."""
        if self.budget_ratio <= 0 or not summaries:
            return None  # nothing archived without a summary
        newest = next((m for m in reversed(tail) if m.role is Role.USER and m.content), None)
        terms = salient_terms(newest.content) if newest is not None else []
        if not terms:
            return None
        budget = self.raw_budget(
            model, system_prompt, summaries, tail, model_known, tools, tail_tally
        )
        if budget <= 0:
            return None
        wanted = wanted_kinds(newest.content, fold) if newest is not None else frozenset()
        try:
            if wanted:  # a question: a deeper pool, and words said in another form
                matches = index.archived_matches(
                    session_id, terms, QUESTION_CANDIDATES, other_forms=True
                )
            else:
                matches = index.archived_matches(session_id, terms)
        except StorageError as error:
            log.warning("Could not look in the archive; the reply goes without recall: %s", error)
            return None
        return fit_recall(
            matches,
            terms,
            budget,
            self.builder.counter.count,
            exclude_seqs={m.seq for m in tail},
            wanted=wanted,
        )

    def raw_budget(
        self,
        model: ModelInfo,
        system_prompt: str,
        summaries: Sequence[Summary],
        tail: Sequence[Message],
        model_known: bool = True,
        tools: ToolOffer | None = None,
        tail_tally: TailTally | None = None,
    ) -> int:
        """Raw (uncalibrated) tokens recall may use for this request."""
        state = self.builder.estimate_state(
            model=model,
            system_prompt=system_prompt,
            summaries=summaries,
            tail=tail,
            model_known=model_known,
            tools=tools,
            recall_budget_ratio=self.budget_ratio,
            tail_tally=tail_tally,
        )
        calibrations = self.builder.calibrations
        ratio = calibrations.for_model(model.id).ratio if calibrations is not None else 1.0
        return math.floor(state.recall_allowed / max(ratio, 1e-6))


def recall_budget(settings: RecallSettings) -> float:
    """The share of the window automatic recall may use under `settings` (0: off)."""
    return settings.budget_ratio if settings.automatic else 0.0
