"""What the fake Anthropic server does about thinking, per model, as the documentation says.

Every rule cites its page (read 2026-11-28):

- Which `thinking.type` values each model refuses with a 400, and what it does when
  `thinking` is left out: https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting
  ("only Claude Sonnet 5.5 accepts "between_tools", and it uses it in place of
  "disabled""; Claude 4.7 and later refuse `enabled`), with the models overview's
  "Thinking" column (https://platform.claude.com/docs/about-claude/models/overview).
- Opus 5.5 and Fable 5.1: "thinking can't be disabled" — `disabled` and `enabled`
  are a 400 with the message quoted in `_TYPE_REFUSED`
  (https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5).
- Forced tool use (`tool_choice` any or tool) "returns an error" on the 5.5 models and
  Fable 5.1 (same page, and /models/sonnet-5-5/whats-new-sonnet-5-5), and "Thinking
  may not be enabled when tool_choice forces tool use" on the others
  (https://platform.claude.com/docs/en/build-with-claude/extended-thinking#feature-compatibility).
- `display`: "summarized" returns the thinking text, "omitted" an empty `thinking`
  with the signature; the default is omitted from Claude 4.7 on, summarized before
  (https://platform.claude.com/docs/en/build-with-claude/thinking#controlling-thinking-display;
  the SDK's `ThinkingConfigAdaptiveParam.display`).
- Text between tool calls "comes back in thinking blocks whose text is empty at the
  default display setting" on Opus 5.5, Sonnet 5.5 and Fable 5.1
  (whats-new-opus-5-5#text-between-tool-calls).
- Thinking blocks go back "complete and unmodified"; "thinking or redacted_thinking
  blocks in the latest assistant message cannot be modified"
  (https://platform.claude.com/docs/en/build-with-claude/extended-thinking#preserving-thinking-blocks).
- Preserved thinking: from Fable 5.1 (and on the 5.5 models, "thinking blocks are tied
  to the model and the conversation"), a block whose prefix (system, tools, the
  messages before it) changed is refused with a 400; a block another model made that
  this one cannot read is dropped without an error
  (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking).
- Prefill: "Prefilling assistant messages returns a 400 error on Claude 4.6 models"
  and later (https://platform.claude.com/docs/en/about-claude/models/migration-guide,
  whats-new-claude-4-6#prefill-removal).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.catalog import ModelInfo, family_and_version

# Signatures are the fake's own: an HMAC over what the block says and where it was made.
_SECRET = b"cairn-fake-thinking"

# The models whose blocks bind to their prefix (preserved-thinking, whats-new pages).
PRESERVED_THINKING = frozenset(
    {"claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"}
)
# "Claude Fable 5.1 reads blocks from Claude Opus 5 and, on the Claude API, from Claude
# Opus 5.5" (preserved-thinking); every model reads its own.
_READS_ALSO = {"claude-fable-5-1": frozenset({"claude-opus-5", "claude-opus-5-5"})}
# Text between tool calls arrives as thinking (whats-new-opus-5-5, whats-new-sonnet-5-5).
BETWEEN_CALLS_AS_THINKING = frozenset({"claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1"})
# Only Sonnet 5.5 takes "between_tools", in place of "disabled" (thinking-troubleshooting).
_BETWEEN_TOOLS = frozenset({"claude-sonnet-5-5"})
# Forced tool use "returns an error" whatever thinking says (whats-new pages).
_NO_FORCED_TOOLS = frozenset({"claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1"})

_TYPE_REFUSED = (
    '"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" '
    'and "output_config.effort" to control thinking behavior.'
)


@dataclass(frozen=True)
class ThinkingPlan:
    """Whether a request's reply thinks, and how its thinking is shown."""

    thinks: bool
    display: str  # "summarized" or "omitted"


def _base_id(model_id: str) -> str:
    """The model id without a dated snapshot suffix."""
    family, (major, minor) = family_and_version(model_id)
    if family is None:
        return model_id
    return f"claude-{family}-{major}" + (f"-{minor}" if minor else "")


def refuses_prefill(model_id: str) -> bool:
    """Claude 4.6 and later refuse a request that ends with Claude's turn."""
    family, version = family_and_version(model_id)
    return family is None or version >= (4, 6)


def _refused_types(model: ModelInfo, always_on: bool) -> frozenset[str]:
    base = _base_id(model.id)
    version = family_and_version(model.id)[1]
    if always_on or model.thinking == "always":
        return frozenset({"disabled", "enabled", "between_tools"})
    refused = set() if base in _BETWEEN_TOOLS else {"between_tools"}
    if base in _BETWEEN_TOOLS:
        refused.add("disabled")
    if model.thinking == "adaptive" and version >= (4, 7):
        refused.add("enabled")
    if model.thinking == "extended":
        refused.add("adaptive")
    return frozenset(refused)


def capabilities_json(model: ModelInfo, always_on: bool = False) -> dict[str, Any]:
    """The `capabilities` object of a model in `/v1/models` (the SDK's `ModelCapabilities`)."""
    refused = _refused_types(model, always_on)
    thinks = model.thinking != "none" or always_on
    types = {
        kind: {"supported": thinks and kind not in refused}
        for kind in ("adaptive", "between_tools", "enabled")
    }
    types["disabled"] = {"supported": "disabled" not in refused}
    yes, no = {"supported": True}, {"supported": False}
    effort = {level: (yes if model.effort else no) for level in ("low", "medium", "high", "max")}
    return {
        "batch": yes,
        "citations": yes,
        "code_execution": no,
        "context_management": {"supported": False},
        "effort": {"supported": model.effort, **effort, "xhigh": yes if model.effort else no},
        "image_input": yes,
        "pdf_input": yes,
        "server_tools": {"supported": False},
        "structured_outputs": yes,
        "thinking": {"supported": thinks, "types": types},
    }


def plan(model: ModelInfo, body: Mapping[str, Any], always_on: bool = False) -> ThinkingPlan:
    """How the reply to `body` thinks (the request is valid: `request_error` said so)."""
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    display = thinking.get("display") if isinstance(thinking, Mapping) else None
    version = family_and_version(model.id)[1]
    default_display = "omitted" if version >= (4, 7) else "summarized"
    if kind is None:
        thinks = always_on or model.thinking in ("always", "adaptive")
    else:
        thinks = kind in ("adaptive", "enabled") or (always_on and kind != "disabled")
    return ThinkingPlan(thinks=thinks, display=display or default_display)


def request_error(model: ModelInfo, body: Mapping[str, Any], always_on: bool = False) -> str | None:
    """The 400 message for a request's `thinking`, `output_config`, `tool_choice` or final
    turn that `model` refuses; None when it takes them."""
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind is not None and kind in _refused_types(model, always_on):
        return _TYPE_REFUSED.format(kind=kind)
    if kind == "enabled":
        budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
        if not isinstance(budget, int) or budget < 1024 or budget >= body.get("max_tokens", 0):
            return "thinking.budget_tokens: must be at least 1024 and less than max_tokens"
    output_config = body.get("output_config")
    if isinstance(output_config, Mapping) and output_config.get("effort") is not None:
        # "Default effort: Not supported" (models overview, Haiku 4.5).
        if not model.effort:
            return f"output_config.effort: effort is not supported by {model.id}"
        if output_config["effort"] not in ("low", "medium", "high", "xhigh", "max"):
            return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        if _base_id(model.id) in _NO_FORCED_TOOLS or always_on:
            return (
                "tool_choice: forced tool use is not supported for this model; use "
                '"auto" or "none".'
            )
        if plan(model, body, always_on).thinks:
            return "Thinking may not be enabled when tool_choice forces tool use."
    messages = body.get("messages")
    if (
        isinstance(messages, list)
        and messages
        and isinstance(messages[-1], Mapping)
        and messages[-1].get("role") == "assistant"
        and refuses_prefill(model.id)
    ):
        return (
            "This model does not support assistant message prefill. The conversation "
            "must end with a user message."
        )
    return None


# --- signatures and the blocks that come back ----------------------------------------


def _without_cache_control(value: Any) -> Any:
    """`value` with every `cache_control` key left out: markers are not part of a prefix."""
    if isinstance(value, Mapping):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(item) for item in value]
    return value


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def prefix_digest(body: Mapping[str, Any], messages: Sequence[Any]) -> str:
    """What a block made after `messages` is bound to: system, tools and those messages."""
    normal = [
        {"role": m.get("role"), "content": _blocks(m.get("content"))}
        for m in messages
        if isinstance(m, Mapping)
    ]
    prefix = {
        "system": _blocks(body.get("system") or []),
        "tools": body.get("tools") or [],
        "messages": normal,
    }
    encoded = json.dumps(_without_cache_control(prefix), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


def sign(model_id: str, prefix: str, text: str) -> str:
    """The opaque signature (or redacted `data`) of a block the fake made."""
    claim = {"m": _base_id(model_id), "p": prefix, "t": hashlib.sha256(text.encode()).hexdigest()}
    payload = json.dumps(claim, sort_keys=True).encode()
    mac = hmac.new(_SECRET, payload, hashlib.sha256).hexdigest()
    return base64.b64encode(payload + b"." + mac.encode()).decode()


def _claim(signature: object) -> dict[str, str] | None:
    if not isinstance(signature, str):
        return None
    try:
        payload, _, mac = base64.b64decode(signature, validate=True).rpartition(b".")
        expected = hmac.new(_SECRET, payload, hashlib.sha256).hexdigest().encode()
        if not payload or not hmac.compare_digest(mac, expected):
            return None
        claim = json.loads(payload)
    except (ValueError, TypeError):
        return None
    return claim if isinstance(claim, dict) else None


def _maker(token: str) -> str:
    return (_claim(token) or {}).get("m", "")


def _readable(model_id: str, maker: str) -> bool:
    base = _base_id(model_id)
    return maker == base or maker in _READS_ALSO.get(base, frozenset())


def returned_thinking_error(
    model: ModelInfo, body: Mapping[str, Any], issued: Mapping[str, Sequence[str]]
) -> str | None:
    """The 400 for a thinking or redacted_thinking block that came back altered, or that
    the latest assistant turn which called a tool left out; None when all is well.

    `issued` maps each tool_use id the fake sent to the signatures (or redacted data) of
    the thinking blocks that came before it in the same turn, in order.
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    last_assistant = max(
        (
            i
            for i, m in enumerate(messages)
            if isinstance(m, Mapping) and m.get("role") == "assistant"
        ),
        default=None,
    )
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        content = _blocks(message.get("content"))
        seen: list[str] = []
        for position, block in enumerate(content):
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            where = f"messages.{index}.content.{position}"
            if kind in ("thinking", "redacted_thinking"):
                token = block.get("signature") if kind == "thinking" else block.get("data")
                claim = _claim(token)
                text = block.get("thinking") if kind == "thinking" else ""
                if claim is None or (
                    kind == "thinking"
                    and claim.get("t") != hashlib.sha256(str(text).encode()).hexdigest()
                ):
                    return f"{where}: Invalid `signature` in `{kind}` block"
                if not _readable(model.id, claim.get("m", "")):
                    continue  # another model's block: dropped, no error (preserved-thinking)
                if claim.get("m") in PRESERVED_THINKING and claim.get("p") != prefix_digest(
                    body, messages[:index]
                ):
                    return (
                        f"{where}: the prefix of this thinking block (system, tools and the "
                        "messages before it) differs from the request that produced it"
                    )
                seen.append(str(token))
            elif kind == "tool_use" and index == last_assistant:
                expected = list(issued.get(str(block.get("id")), ()))
                expected = [
                    t for t in expected if _readable(model.id, (_claim(t) or {}).get("m", ""))
                ]
                if expected and seen[-len(expected) :] != expected:
                    return (
                        f"{where}: thinking or redacted_thinking blocks in the latest "
                        "assistant message cannot be modified. These blocks must remain "
                        "as they were in the original response."
                    )
    return None
