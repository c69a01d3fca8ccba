"""A streamed reply gathered from its raw events, as `AnthropicProvider._stream` reads
them (https://platform.claude.com/docs/en/build-with-claude/streaming): `take_event`
applies each event's JSON to a `GatheredReply` (text and thinking deltas, the message's
start, a text or thinking block's start, the last `message_delta`, without making the
SDK's objects), `ThinkingClock` times the thinking, and the result is a `ReplyResult`:
straight from the JSON for a plain reply (`GatheredReply.plain_result`), else from the
SDK's message the events make (`result_of`).

The SDK is imported on first use only (`typed_event`), as in the provider.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

from app.core.models import Usage
from app.llm.provider import Refusal, ReplyResult, StreamCallbacks, ToolCall

if TYPE_CHECKING:
    from anthropic.types import Message as SdkMessage
    from anthropic.types import RawMessageDeltaEvent
    from anthropic.types import Usage as SdkUsage


# The deltas whose text is all `GatheredReply` keeps of them, and the field that holds it
# (https://platform.claude.com/docs/en/build-with-claude/streaming#content-block-delta-types).
_DELTA_TEXT = {"text_delta": "text", "thinking_delta": "thinking"}


@functools.cache
def _event_classes() -> dict[str, Any]:
    """The SDK's class of each stream event `_stream` reads, by its `type`."""
    from anthropic import types

    return {
        "message_start": types.RawMessageStartEvent,
        "content_block_start": types.RawContentBlockStartEvent,
        "content_block_delta": types.RawContentBlockDeltaEvent,
        "message_delta": types.RawMessageDeltaEvent,
        "message_stop": types.RawMessageStopEvent,
    }


def take_event(
    reply: GatheredReply,
    data: dict[str, Any],
    thought: ThinkingClock,
    callbacks: StreamCallbacks,
    received: list[str],
) -> None:
    """One event of the reply's raw stream, as its JSON: a text or thinking delta told
    and kept, anything else gathered into `reply`. Nearly every event is applied from its
    JSON, no object made (a delta, the message's start, a text or thinking block's
    start, the last `message_delta`); the few others are made SDK objects (`typed_event`)."""
    kind = data.get("type")
    if kind == "content_block_delta":
        fields = data.get("delta")
        sort = fields.get("type") if isinstance(fields, dict) else None
        key = _DELTA_TEXT.get(sort) if isinstance(sort, str) else None
        text = fields.get(key) if key is not None and fields is not None else None
        if isinstance(text, str):  # a text or thinking delta: no object made
            if sort == "text_delta":
                received.append(text)
                callbacks.on_text(text)
            else:
                callbacks.on_thinking(text)
            reply.text_delta(data.get("index", 0), text)
            return
    elif kind == "message_stop":
        reply.finished = True  # nothing in it is read: no object made
        return
    elif kind in ("ping", "content_block_stop"):
        return  # nothing in them is read
    elif kind == "content_block_start":
        sort = reply.plain_block_start(data)
        if sort is not None:
            _block_started(sort, thought, callbacks)
            return
    if (kind == "message_start" and reply.plain_start(data)) or (
        kind == "message_delta" and reply.plain_message_delta(data)
    ):
        return
    event = typed_event(data)
    if event is None:
        return
    if event.type == "content_block_delta":
        reply.delta(event.index, event.delta)
    elif event.type == "content_block_start":
        block = event.content_block
        _block_started(block.type, thought, callbacks)
        reply.block_started(block)
    elif event.type == "message_start":
        reply.started(event.message)
    elif event.type == "message_delta":
        reply.message_delta(event)


def _block_started(kind: str, thought: ThinkingClock, callbacks: StreamCallbacks) -> None:
    if kind == "thinking" and thought.started:
        callbacks.on_thinking("\n\n")  # a later block: a new paragraph
    thought.block_started(kind)


def result_of(message: SdkMessage, text: str, model: str, seconds: float) -> ReplyResult:
    """A reply's result from its SDK message (`GatheredReply.final`); `model` when it names none."""
    tool_calls, content = _tool_calls(message)
    return ReplyResult(
        text=text,
        stop_reason=message.stop_reason,
        usage=_usage(message.usage),
        model=message.model or model,
        tool_calls=tool_calls,
        content=content,
        thinking=_thinking_text(message),
        thinking_seconds=seconds,
        refusal=_refusal(message),
    )


def typed_event(data: dict[str, Any]) -> Any:
    """A stream event's JSON as the SDK's object, built as the SDK builds it for its own
    stream (`construct`: nested types filled in, nothing validated); None for an event
    `_stream` does not read (`content_block_stop`, a type added since)."""
    cls = _event_classes().get(data.get("type", ""))
    return None if cls is None else cls.construct(**data)


# The token counts of a `message_delta`'s usage: `output_tokens` always, the others
# when given (see `GatheredReply.message_delta`).
_DELTA_COUNTS = (
    "output_tokens",
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class GatheredReply:
    """A streamed message gathered from its raw events
    (https://platform.claude.com/docs/en/build-with-claude/streaming): the message of
    `message_start`, each content block of its `content_block_start`, each block's deltas
    kept as they come and joined once, in `final`, into the SDK's own block types — as the
    SDK's `MessageStream` accumulates them, without a snapshot updated per delta. The
    usage of `message_delta` is cumulative: a figure it gives replaces the one before, one
    it leaves out keeps the `message_start` value (as the SDK's accumulation does)."""

    def __init__(self) -> None:
        self._message: SdkMessage | None = None
        # The message of `message_start` as its JSON (`plain_start`) until an SDK object
        # is needed (`message`), with the plain `message_delta`s applied to it.
        self._start: dict[str, Any] | None = None
        self.finished = False
        # Each block: the SDK's, or its `content_block_start` event's JSON (`plain_block_start`).
        self._blocks: list[Any] = []
        self._parts: dict[int, list[str]] = {}  # text, thinking or tool input JSON by block
        self._citations: dict[int, list[Any]] = {}
        self._signatures: dict[int, str] = {}

    @property
    def has_started(self) -> bool:
        """Whether its `message_start` came."""
        return self._message is not None or self._start is not None

    @property
    def message(self) -> SdkMessage | None:
        """The SDK's message (made from `plain_start`'s JSON on first use, as the SDK's
        event makes it); None before `message_start`."""
        if self._message is None and self._start is not None:
            start, self._start = self._start, None
            self._message = typed_event({"type": "message_start", "message": start}).message
        return self._message

    def started(self, message: SdkMessage) -> None:
        self._message, self._start = message, None
        self._blocks = list(message.content)  # none, as the API sends it; else indexed after

    def plain_start(self, data: dict[str, Any]) -> bool:
        """A `message_start` kept as its JSON, no object made; False, and nothing kept,
        unless its message is an object with no content yet (as the API sends it)."""
        message = data.get("message")
        if not isinstance(message, dict) or message.get("content") != []:
            return False
        self._message, self._start = None, message
        self._blocks = []
        return True

    def block_started(self, block: Any) -> None:
        self._blocks.append(block)

    def plain_block_start(self, data: dict[str, Any]) -> str | None:
        """A `content_block_start` of a text or thinking block kept as its JSON (made the
        SDK's block only if `final` is asked); its type, or None and nothing kept for
        any other block (the SDK's event then)."""
        block = data.get("content_block")
        if isinstance(block, dict):
            for kind in ("text", "thinking"):
                if block.get("type") == kind and isinstance(block.get(kind), str):
                    self._blocks.append(data)
                    return kind
        return None

    def text_delta(self, index: int, text: str) -> None:
        """A `text_delta` or `thinking_delta`'s text, for the block at `index`."""
        parts = self._parts.get(index)
        if parts is None:
            self._parts[index] = [text]
        else:
            parts.append(text)

    def delta(self, index: int, delta: Any) -> None:
        kind = delta.type
        if kind == "text_delta":
            self._parts.setdefault(index, []).append(delta.text)
        elif kind == "thinking_delta":
            self._parts.setdefault(index, []).append(delta.thinking)
        elif kind == "input_json_delta":
            self._parts.setdefault(index, []).append(delta.partial_json)
        elif kind == "signature_delta":
            self._signatures[index] = delta.signature
        elif kind == "citations_delta":
            self._citations.setdefault(index, []).append(delta.citation)

    def message_delta(self, event: RawMessageDeltaEvent) -> None:
        message = self.message
        if message is None:
            return
        message.stop_reason = event.delta.stop_reason
        message.stop_sequence = event.delta.stop_sequence
        message.stop_details = event.delta.stop_details
        if event.delta.container is not None:
            message.container = event.delta.container
        usage, given = message.usage, event.usage
        usage.output_tokens = given.output_tokens
        for name in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "server_tool_use",
            "output_tokens_details",
        ):
            value = getattr(given, name, None)
            if value is not None:
                setattr(usage, name, value)

    def plain_message_delta(self, data: dict[str, Any]) -> bool:
        """A `message_delta` of plain figures (nearly every one: the stop reason and the
        token counts) applied from its JSON, as `message_delta` applies the SDK's event,
        without building it; False, and nothing applied, when it carries an object (stop
        details, a container, server tool use) or anything unexpected: the SDK's event
        then."""
        delta, given = data.get("delta"), data.get("usage")
        if not self.has_started or not isinstance(delta, dict) or not isinstance(given, dict):
            return False
        reason, sequence = delta.get("stop_reason"), delta.get("stop_sequence")
        if not (reason is None or isinstance(reason, str)) or not (
            sequence is None or isinstance(sequence, str)
        ):
            return False
        if any(delta.get(name) is not None for name in ("stop_details", "container")) or any(
            given.get(name) is not None for name in ("server_tool_use", "output_tokens_details")
        ):
            return False
        counts = {name: given.get(name) for name in _DELTA_COUNTS}
        if type(counts["output_tokens"]) is not int or any(
            value is not None and type(value) is not int for value in counts.values()
        ):
            return False
        given_counts = {name: value for name, value in counts.items() if value is not None}
        start = self._start
        if start is not None:  # still JSON: applied to it, as to the SDK's message below
            figures = start.get("usage")
            if not isinstance(figures, dict):
                return False
            start.update(stop_reason=reason, stop_sequence=sequence, stop_details=None)
            figures.update(given_counts)
            return True
        message = self.message
        assert message is not None
        message.stop_reason = reason  # type: ignore[assignment]  # a str, as the SDK's event keeps it
        message.stop_sequence = sequence
        message.stop_details = None
        usage = message.usage
        for name, value in given_counts.items():
            setattr(usage, name, value)
        return True

    def plain_result(self, text: str, model: str, seconds: float) -> ReplyResult | None:
        """The reply's result without SDK objects, when it is made of text and thinking
        blocks and plain figures (`plain_start`, `plain_block_start`, `plain_message_delta`):
        what `result_of(final(), …)` gives for it; None for any other (the SDK's then).
        `text`: the reply's text deltas; `model`: the one asked, when the message names none."""
        start = self._start
        if start is None:
            return None
        usage, reason, name = start.get("usage"), start.get("stop_reason"), start.get("model")
        if (
            not isinstance(usage, dict)
            or not (reason is None or isinstance(reason, str))
            or not (name is None or isinstance(name, str))
            or start.get("stop_details") is not None
        ):
            return None
        counts = [usage.get(key) for key in _DELTA_COUNTS]
        if any(type(count) is not int for count in counts[:2]) or any(
            count is not None and type(count) is not int for count in counts[2:]
        ):
            return None
        thinking = []
        for index, block in enumerate(self._blocks):
            if not isinstance(block, dict):
                return None  # an SDK block: a tool call, say
            fields = block["content_block"]
            if fields["type"] == "thinking":
                thinking.append(fields["thinking"] + "".join(self._parts.get(index, ())))
        output, given, created, read = counts
        return ReplyResult(
            text=text,
            stop_reason=reason,
            usage=Usage(
                input_tokens=given,
                output_tokens=output,
                cache_creation_input_tokens=created or 0,
                cache_read_input_tokens=read or 0,
            ),
            model=name or model,
            thinking="\n\n".join(part.strip() for part in thinking if part.strip()),
            thinking_seconds=seconds,
            refusal=Refusal() if reason == "refusal" else None,
        )

    def final(self) -> SdkMessage:
        """The whole message: each block with its deltas joined."""
        import json

        message = self.message
        assert message is not None
        self._blocks = [
            typed_event(block).content_block if isinstance(block, dict) else block
            for block in self._blocks
        ]
        for index, block in enumerate(self._blocks):
            parts = self._parts.get(index)
            kind = block.type
            if kind == "text":
                if parts:
                    block.text += "".join(parts)
                if index in self._citations:
                    block.citations = [*(block.citations or ()), *self._citations[index]]
            elif kind == "thinking":
                if parts:
                    block.thinking += "".join(parts)
                if index in self._signatures:
                    block.signature = self._signatures[index]
            elif parts and kind in ("tool_use", "server_tool_use"):
                block.input = json.loads("".join(parts))
        message.content = self._blocks
        return message


class ThinkingClock:
    """How long a reply thought: from its first thinking (or redacted_thinking) block's
    start to the start of its first other block, on the stream's own events."""

    def __init__(self) -> None:
        self._started: float | None = None
        self._ended: float | None = None

    def block_started(self, kind: str) -> None:
        now = time.monotonic()
        if kind in ("thinking", "redacted_thinking"):
            if self._started is None:
                self._started = now
        elif self._started is not None and self._ended is None:
            self._ended = now

    @property
    def started(self) -> bool:
        return self._started is not None

    def seconds(self) -> float:
        if self._started is None:
            return 0.0
        return (self._ended if self._ended is not None else time.monotonic()) - self._started


# The fields each content block goes back with: every one the API sent (the SDK's own
# block types), so thinking and redacted_thinking blocks return "complete and
# unmodified", signature and data included, in their order
# (https://platform.claude.com/docs/en/build-with-claude/extended-thinking#preserving-thinking-blocks).
# In the order the API writes them, so the turn goes back byte for byte as it came.
_BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("type", "text"),
    "tool_use": ("type", "id", "name", "input"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


def _as_sent(block: Any) -> dict[str, Any]:
    """A content block as the API sent it: its fields in the API's order (any field of a
    block type this code does not know kept, after them)."""
    dumped: dict[str, Any] = block.model_dump(exclude_none=True)
    order = _BLOCK_FIELDS.get(dumped.get("type", ""), ("type",))
    known = {key: dumped[key] for key in order if key in dumped}
    return known | {key: value for key, value in dumped.items() if key not in known}


def _tool_calls(message: SdkMessage) -> tuple[tuple[ToolCall, ...], tuple[dict[str, Any], ...]]:
    """The tool_use blocks of a finished message, and every block of it as it goes back
    in the assistant's turn (the SDK accumulated the `input_json_delta`s into each
    block's `input`, the `thinking_delta`s and `signature_delta` into each thinking
    block: https://platform.claude.com/docs/en/build-with-claude/streaming). An empty
    text block is left out: the API refuses one."""
    calls = tuple(
        ToolCall(block.id, block.name, dict(block.input) if isinstance(block.input, dict) else {})
        for block in message.content
        if block.type == "tool_use"
    )
    if not calls:
        return (), ()
    content = tuple(
        _as_sent(block) for block in message.content if block.type != "text" or block.text
    )
    return calls, content


def _thinking_text(message: SdkMessage) -> str:
    """The readable thinking of a message (summarized, or notes between tool calls)."""
    parts = [block.thinking for block in message.content if block.type == "thinking"]
    return "\n\n".join(part.strip() for part in parts if part.strip())


def _refusal(message: SdkMessage) -> Refusal | None:
    details = getattr(message, "stop_details", None)
    if message.stop_reason != "refusal":
        return None
    if details is None:
        return Refusal()
    return Refusal(
        category=getattr(details, "category", None),
        explanation=getattr(details, "explanation", None),
    )


def _usage(usage: SdkUsage) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )
