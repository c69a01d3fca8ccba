"""The archive tool Claude can call: `search_conversation_archive` (DESIGN §3 `tools`).

Pure data and text: the tool's definition as the Messages API takes it, what one
lookup found, the tool_result text Claude reads, and the line the transcript shows.
Running the search is `app.chat.lookups`; keeping lookups is `app.store.lookups`.
Tool use: https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TOOL_NAME = "search_conversation_archive"

# When tools are offered, the API adds a system prompt of its own that enables tool use:
# a few hundred tokens, depending on the model and tool_choice (auto/none: the most,
# 346 for the Claude 4.5 models), beside the tools' own definitions. Pricing section of
# https://docs.claude.com/en/docs/agents-and-tools/tool-use/overview
# (also https://docs.anthropic.com/en/docs/tool-use-pricing-and-tokens)
TOOL_SYSTEM_PROMPT_TOKENS = 346

# The ordinal of a reply's "lookup" that is no search of Claude's: the quotes automatic
# recall sent it from the user's other conversations (Settings → Memory), kept with the
# reply so its line names them, each opens, and the export lists them. Claude's own
# searches are numbered 1, 2, … as they ran.
RECALLED = 0

# At most this many snippets go back to Claude per lookup, each at most this many words.
MAX_RESULTS = 5
RESULT_WORDS = 80


def tool_definition(*, across_conversations: bool) -> dict[str, Any]:
    """The client tool as the `tools` parameter takes it (name, description, input_schema)."""
    where = (
        "this conversation and all of the user's other conversations with you (each "
        "excerpt names its conversation and date)"
        if across_conversations
        else "this conversation, including older messages that were condensed into summaries"
    )
    return {
        "name": TOOL_NAME,
        "description": (
            f"Search the full, exact text of {where}. Search before you answer whenever "
            "the user refers to something said earlier that you cannot see word for word "
            "above: a name, a number, a date, a decision, what someone said or felt, or "
            "how something turned out; and search again with other words (synonyms, the "
            "thing's name) when the first search finds nothing useful. Any of the words "
            "may match; the best matches come first, each with the message it answers. "
            "Filter by who said it and by date when the user says so ('what did I say "
            "in May')."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Words to look for, e.g. 'guitar colour painted'.",
                },
                "who": {
                    "type": "string",
                    "enum": ["user", "assistant"],
                    "description": "Only what the user said, or only what you said.",
                },
                "after": {
                    "type": "string",
                    "description": "Only messages written on or after this day, YYYY-MM-DD.",
                },
                "before": {
                    "type": "string",
                    "description": "Only messages written on or before this day, YYYY-MM-DD.",
                },
            },
            "required": ["query"],
        },
    }


@dataclass(frozen=True)
class ToolOffer:
    """Client tools a request may offer, and what offering them costs (DESIGN §3 `tools`).

    The definitions and the API's tool-use system prompt count in the request, the
    gauge and the overflow invariant; `room_needed` more tokens must be left for the tool
    turns (a call and one answer), or the tools are not offered at all.
    """

    definitions: tuple[dict[str, Any], ...]
    room_needed: int = 0

    @property
    def text(self) -> str:
        """The definitions as they are sent: what is counted."""
        return json.dumps(list(self.definitions))


@dataclass(frozen=True)
class LookupHit:
    """One excerpt a lookup returned: message `seq` of `conversation`, said by `author`."""

    seq: int
    author: str  # "user", "assistant" or "summary"
    created_at: datetime
    text: str
    conversation: str = ""  # the conversation's title, for a search across conversations
    # The conversation it is in ("" for the reply's own), so the user can open it there.
    session_id: str = field(default="", compare=False)
    # Not kept with the lookup: the turn it answers (or its answer) Claude reads beside it.
    context: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        found = {
            "seq": self.seq,
            "author": self.author,
            "created_at": self.created_at.isoformat(),
            "text": self.text,
            "conversation": self.conversation,
        }
        if self.conversation and self.session_id:
            found["session_id"] = self.session_id  # another conversation: open it there
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LookupHit:
        return cls(
            seq=int(data["seq"]),
            author=str(data["author"]),
            created_at=datetime.fromisoformat(str(data["created_at"])),
            text=str(data["text"]),
            conversation=str(data.get("conversation", "")),
            session_id=str(data.get("session_id", "")),
        )


@dataclass(frozen=True)
class Lookup:
    """One search Claude ran while writing reply `message_id` (`ordinal` 1, 2, …)."""

    message_id: int
    ordinal: int
    query: str
    hits: tuple[LookupHit, ...]
    created_at: datetime

    @property
    def automatic(self) -> bool:
        """Whether these are recall's quotes from other conversations, not a search."""
        return self.ordinal == RECALLED

    def hits_json(self) -> str:
        return json.dumps([hit.to_json() for hit in self.hits], ensure_ascii=False)

    @staticmethod
    def hits_from_json(text: str) -> tuple[LookupHit, ...]:
        return tuple(LookupHit.from_json(item) for item in json.loads(text))


def tool_result_text(query: str, hits: tuple[LookupHit, ...]) -> str:
    """What Claude reads back: each excerpt with its message number and date, quoted exactly."""
    if not hits:
        return f"Nothing in the archive matches “{query}”."
    lines = [f"{len(hits)} archived excerpt(s) matching “{query}”, quoted exactly:"]
    for hit in hits:
        where = f" in “{hit.conversation}”" if hit.conversation else ""
        when = f"{hit.created_at:%Y-%m-%d %H:%M}"
        around = f"\n  (around it: {hit.context})" if hit.context else ""
        lines.append(f"[#{hit.seq} · {hit.author} · {when}{where}] {hit.text}{around}")
    return "\n\n".join(lines)


def refused_text(max_lookups: int, *, no_room: bool = False) -> str:
    """The tool_result for a call beyond the bound (or the room): answer with what you have."""
    why = (
        "this request has no room left for more excerpts"
        if no_room
        else f"at most {max_lookups} searches per reply"
    )
    return f"Not searched: {why}. Answer with what you found so far."


def summary_line(lookups: tuple[Lookup, ...]) -> str:
    """The collapsed line on a reply: "Looked in earlier messages: 2 found", and the
    user's other conversations it found something in (Settings → Memory), by title;
    "Quoted 2 messages from your other conversations (“Trip to Porto”)" for recall's."""
    searched = tuple(lookup for lookup in lookups if not lookup.automatic)
    recalled = [hit for lookup in lookups if lookup.automatic for hit in lookup.hits]
    parts: list[str] = []
    if searched:
        found = sum(len(lookup.hits) for lookup in searched)
        parts.append(
            "Looked in earlier messages: nothing found"
            if found == 0
            else f"Looked in earlier messages: {found} found" + elsewhere_note(searched)
        )
    if recalled:
        titles = _titles(dict.fromkeys(hit.conversation for hit in recalled if hit.conversation))
        plural = "s" if len(recalled) != 1 else ""
        parts.append(
            f"Quoted {len(recalled)} message{plural} from your other conversations ({titles})"
        )
    return " · ".join(parts) or "Looked in earlier messages: nothing found"


def conversations_used(lookups: Iterable[Lookup]) -> list[str]:
    """The titles of the other conversations these searches quoted, in the order found."""
    titles = (hit.conversation for lookup in lookups for hit in lookup.hits)
    return list(dict.fromkeys(title for title in titles if title))


def elsewhere_note(lookups: Iterable[Lookup]) -> str:
    """ " (also in “Trip to Porto”, “Taxes”)" when hits came from other conversations."""
    titles = conversations_used(lookups)
    if not titles:
        return ""
    return f" (also in {_titles(titles)})"


def _titles(titles: Iterable[str]) -> str:
    """“Trip to Porto”, “Taxes” and 2 more: the first three conversations, by title."""
    shown = list(titles)
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return ", ".join(f"“{title}”" for title in shown[:3]) + more


def recalled_lookup(message_id: int, hits: Iterable[LookupHit], created_at: datetime) -> Lookup:
    """Recall's quotes from other conversations for reply `message_id`, kept as its lookup
    `RECALLED` (no query: Cairn chose them for the user's message)."""
    return Lookup(message_id, RECALLED, "", tuple(hits), created_at)


def lookup_heading(lookup: Lookup) -> str:
    """The first line of a lookup unfolded: what was searched for and how much was found,
    or that recall quoted the user's other conversations."""
    if lookup.automatic:
        return (
            "Cairn added these to what Claude read, from your other conversations "
            "(Settings → Memory)"
        )
    found = "nothing found" if not lookup.hits else f"{len(lookup.hits)} found"
    return f"Searched for “{lookup.query}” — {found}"
