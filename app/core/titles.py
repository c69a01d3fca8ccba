"""A conversation's automatic title: a few words a small model writes after the first
reply, never over a title the user gave (issue 23).

The call goes the summarizer's way (`ChatProvider.complete_structured`, down the
list of summarizer models, a forced tool), so the title costs one small request
to the cheapest model that is there; without a key, with offline summaries, or when
no model answers, the title stays what the first message gave (`title_from_first_message`).
Pure: the caller runs the call on a worker and decides whether the title still applies.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, Final

from app.core.structured_call import StructuredCompletion, call_down
from app.core.text import TITLE_LENGTH

log = logging.getLogger(__name__)

TITLE_TOOL: Final = "set_conversation_title"
TITLE_TOOL_DESCRIPTION: Final = "Record the short title of this conversation."
TITLE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "description": "Three to six words naming what the conversation is about, "
            "in the language of the question, without quotes or a final full stop.",
        }
    },
    "required": ["title"],
}
TITLE_SYSTEM: Final = (
    "You name conversations for a list the user scrolls through. Read the first "
    "question and the start of the answer, and answer by calling the "
    f"{TITLE_TOOL} tool with a short, specific title (like 'Weekend trip to Lisbon' or "
    "'Fixing the printer'). Never add quotes, emoji or a full stop."
)
# What of the exchange the model reads: the question and the answer's start are enough.
QUESTION_CHARS: Final = 2_000
ANSWER_CHARS: Final = 1_000
# The title is a few words; the call is capped well above that.
TITLE_MAX_TOKENS: Final = 100

_QUOTES: Final = "\"'“”‘’«»`*_#"
# A first message this short, on one line, is already a good title ("Say hello",
# "Lisbon in March?"): asking a model for another would only cost a request.
SHORT_ENOUGH: Final = 40


def wants_a_title(first_message: str) -> bool:
    """Whether the first message makes a poor title by itself: long, or several lines."""
    lines = [line for line in first_message.splitlines() if line.strip()]
    return len(lines) > 1 or len(" ".join(first_message.split())) > SHORT_ENOUGH


def title_prompt(question: str, answer: str) -> str:
    """The exchange the title is written from, the question first."""
    return (
        f"<question>\n{question.strip()[:QUESTION_CHARS]}\n</question>\n"
        f"<answer>\n{answer.strip()[:ANSWER_CHARS]}\n</answer>\n"
        "Write the conversation's title."
    )


def clean_title(raw: object) -> str | None:
    """The model's title made fit for the list: one line, no quotes or final full stop,
    at most `TITLE_LENGTH` characters (cut at a word, never with "…"); None when
    nothing usable is left."""
    if not isinstance(raw, str):
        return None
    title = " ".join(raw.split()).strip(_QUOTES + " ")
    title = re.sub(r"^(title|titre|titel)\s*:\s*", "", title, flags=re.IGNORECASE)
    title = title.rstrip(".。!").strip(_QUOTES + " ")
    if len(title) > TITLE_LENGTH:
        title = title[:TITLE_LENGTH].rsplit(" ", 1)[0].rstrip(" ,;:-–—")
    return title or None


def ask_for_title(
    complete: StructuredCompletion, models: Sequence[str], question: str, answer: str
) -> tuple[str | None, str | None]:
    """(title, the model that wrote it): one structured call down `models`, as the
    summarizer goes (a missing or refusing model: the next); (None, None) when none
    gave a usable title. Transport failures were retried by the provider already."""
    prompt = title_prompt(question, answer)
    reply = call_down(
        models,
        lambda model: complete(
            model=model,
            system=TITLE_SYSTEM,
            prompt=prompt,
            tool_name=TITLE_TOOL,
            tool_description=TITLE_TOOL_DESCRIPTION,
            input_schema=TITLE_SCHEMA,
            max_tokens=TITLE_MAX_TOKENS,
        ),
        "Title",
    )
    if reply.tool_input is None:
        if reply.error is not None and reply.model is not None:
            log.info("No automatic title: %s", reply.error.detail or reply.error)
        return None, None
    title = clean_title(reply.tool_input.get("title"))
    return (title, reply.model) if title is not None else (None, None)
