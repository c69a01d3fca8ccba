"""The one LLM call of a summary: the tool schema, the prompt and the call (DESIGN §6).

`Summarizer` (`app.core.summarizer`) decides when to call and what to do with the
answer; this module owns what the model is asked for and how: the `record_summary`
tool whose input schema is generated from `LlmSummary`, the system prompt and the
user prompt, and the call (down the list of summarizer models, as
`app.core.structured_call.call_down` walks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.structured_call import StructuredCompletion, call_down
from app.core.summarization_config import SummarizationConfig
from app.core.summary import FACT_KINDS, MAX_KEY_POINTS

TOOL_NAME = "record_summary"

# The reply is JSON around the summary (keys, quotes, source numbers): room for twice
# the summary and some, bounded so a non-streaming call stays short.
MAX_CALL_TOKENS = 16_384


# --- what the model is asked for ---------------------------------------------------


def _source_numbers(value: Any) -> Any:
    """Accept "#12" and "12" as message numbers; drop anything that is not one."""
    if not isinstance(value, list):
        return []
    numbers: list[int] = []
    for item in value:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            numbers.append(item)
        elif isinstance(item, str) and item.strip().lstrip("#").isdigit():
            numbers.append(int(item.strip().lstrip("#")))
    return numbers


class LlmPoint(BaseModel):
    """One statement of the summary, with the messages it comes from."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(description="One statement; identifiers, numbers and dates verbatim.")
    sources: list[int] = Field(
        default_factory=list,
        description="The numbers (#) of the messages this statement comes from.",
    )

    date: str | None = Field(
        default=None,
        description="The day it was said, YYYY-MM-DD, from the message headers.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmActionItem(BaseModel):
    """Something someone is to do."""

    model_config = ConfigDict(extra="ignore")

    task: str = Field(description="What is to be done.")
    owner: str | None = Field(default=None, description="Who does it, if the messages say.")
    due: str | None = Field(default=None, description="When it is due, verbatim, if said.")
    sources: list[int] = Field(
        default_factory=list,
        description="The numbers (#) of the messages this comes from.",
    )
    date: str | None = Field(
        default=None,
        description="The day it was said, YYYY-MM-DD, from the message headers.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmFact(BaseModel):
    """One hard fact for the fact ledger, verbatim."""

    model_config = ConfigDict(extra="ignore")

    kind: str = Field(
        description="What it is: " + ", ".join(FACT_KINDS) + ".",
        json_schema_extra={"enum": list(FACT_KINDS)},
    )
    value: str = Field(description="The fact exactly as written: a name, code, amount, time…")
    sources: list[int] = Field(
        default_factory=list,
        description="The number (#) of the message it was first said in.",
    )
    date: str | None = Field(
        default=None,
        description="The day it was first said, YYYY-MM-DD, from the message headers.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmSearchKey(BaseModel):
    """Words a later question about a stretch of the messages might use."""

    model_config = ConfigDict(extra="ignore")

    words: str = Field(
        description=(
            "A few plain words someone might later ask about this stretch with: its topics "
            "and the things referred to, including the general word for specific things "
            "(“hobbies” for hiking and photography, “car trouble” for a flat battery)."
        )
    )
    sources: list[int] = Field(
        default_factory=list,
        description="The numbers (#) of the messages of this stretch.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmSummary(BaseModel):
    """The input of the `record_summary` tool: the summary as the model writes it."""

    model_config = ConfigDict(extra="ignore")

    narrative: str = Field(
        min_length=1,
        description="A few sentences: what was discussed and concluded, and when.",
    )
    key_points: list[LlmPoint] = Field(
        max_length=MAX_KEY_POINTS,
        description=f"The most important points, at most {MAX_KEY_POINTS}, oldest first.",
    )
    decisions: list[LlmPoint] = Field(description="What was decided. Empty if nothing was.")
    action_items: list[LlmActionItem] = Field(
        description="Tasks someone took on or was given. Empty if none."
    )
    open_questions: list[LlmPoint] = Field(
        description="Questions still unanswered at the end. Empty if none."
    )
    entities: list[str] = Field(
        description="Identifiers, file names, numbers, amounts, dates, URLs and names, verbatim."
    )
    # Required by the schema the model is given (`summary_tool_schema`); a reply without
    # it is still a summary: the rules' ledger is merged in either way.
    facts: list[LlmFact] = Field(
        default_factory=list,
        description=(
            "The fact ledger: every name, code or id, amount, number with its unit, date, "
            "clock time, file name, URL and e-mail said, each once, verbatim, with where "
            "and when it was first said."
        ),
    )

    standing: str = Field(
        default="",
        description=(
            "Where things stand at the end: the open goal, the latest decision, what is "
            "still being worked on. One or two sentences; empty if nothing is open."
        ),
    )
    search_keys: list[LlmSearchKey] = Field(
        default_factory=list,
        description=(
            "For each stretch of the conversation on one subject, a search key: words a "
            "later question about it might use, with the stretch's message numbers."
        ),
    )

    @field_validator("narrative")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the narrative is blank")
        return value

    @field_validator("key_points", mode="before")
    @classmethod
    def _at_most_max_key_points(cls, value: Any) -> Any:
        # A model that writes 31 points has still written a good summary: keep the first 30.
        return value[:MAX_KEY_POINTS] if isinstance(value, list) else value


def summary_tool_schema() -> dict[str, Any]:
    """The JSON schema of `LlmSummary`, self-contained (every `$ref` inlined)."""
    schema = LlmSummary.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs", {})
    # Every point and fact carries its day, and the ledger is asked for: required here,
    # while validation accepts a reply without them (the day then comes from the sources).
    for name in ("LlmPoint", "LlmActionItem", "LlmFact"):
        definition = definitions[name]
        described = definition["properties"]["date"]["description"]
        definition["properties"]["date"] = {"type": "string", "description": described}
        definition["required"] = [*definition.get("required", []), "date"]
    schema["required"] = [*schema.get("required", []), "facts", "standing", "search_keys"]

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return inline(definitions[reference.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined


_SCHEMA = summary_tool_schema()

SYSTEM_PROMPT = (
    "You write the memory of a long conversation between a user and Claude, an AI "
    "assistant. Your summary replaces the older messages, so whatever you leave out is "
    f"gone from the conversation. Answer only by calling the tool `{TOOL_NAME}`."
)

_RULES = """\
Rules:
- Keep when things happened: use the dates and times shown in the headers, and give
  every point, decision, action item, question and fact the day it was said (YYYY-MM-DD).
- List every hard fact in `facts`: names, codes and ids, amounts, numbers with units,
  dates, clock times, file names, URLs, e-mails.
- Copy identifiers, file names, numbers, amounts, dates, URLs and names exactly as written.
- Invent nothing: write only what the text below says. Leave a list empty when nothing fits it.
- For every point, give the numbers (#) of the messages it comes from.
- Say in `standing` where things stand now, and give each stretch on one subject
  `search_keys`: the words someone might later ask about it with, in plain words.
- At most {max_points} key points. Keep the whole summary under about {target} tokens."""


def build_prompt(
    config: SummarizationConfig,
    *,
    intro: str,
    transcript: str,
    instructions: str | None,
    target: int,
) -> str:
    """The user prompt: the configured template if any, else intro, rules, transcript, focus."""
    rules = _RULES.format(max_points=MAX_KEY_POINTS, target=target)
    wrapped = f"<transcript>\n{transcript}\n</transcript>"
    focus = (
        f"The user asks you to focus on this:\n<focus>\n{instructions}\n</focus>"
        if instructions
        else ""
    )
    custom = config.render_prompt(
        transcript=wrapped, instructions=instructions or "", target_tokens=target
    )
    if custom is not None:
        template = config.prompt_template or ""
        if focus and "{instructions}" not in template:
            custom += "\n\n" + focus
        return custom
    return "\n\n".join(part for part in (intro, rules, wrapped, focus) if part)


# --- the call ------------------------------------------------------------------------


@dataclass
class LlmAnswer:
    """What the call gave: the validated summary, or None and why not."""

    summary: LlmSummary | None
    model: str | None
    calls: int
    error: BaseException | None = None
    detail: str | None = None


def ask_for_summary(
    complete: StructuredCompletion | None,
    config: SummarizationConfig,
    prompt: str,
    model_order: Sequence[str] | None,
) -> LlmAnswer:
    """One structured call, down the model list (`call_down`)."""
    models = list(model_order if model_order is not None else config.summarizer_models)
    if complete is None or not models:
        return LlmAnswer(None, None, 0, detail="no summarizer model is available")
    reply = call_down(
        models,
        lambda model: complete(
            model=model,
            system=SYSTEM_PROMPT,
            prompt=prompt,
            tool_name=TOOL_NAME,
            tool_description=_tool_description(config),
            input_schema=_SCHEMA,
            max_tokens=_call_max_tokens(config),
        ),
        "Summarizer",
    )
    if reply.model is None:
        detail = "none of the summarizer models is available"
        return LlmAnswer(None, None, reply.calls, reply.error, detail)
    if reply.error is not None:
        detail = reply.error.detail or str(reply.error)
        return LlmAnswer(None, reply.model, reply.calls, reply.error, detail)
    try:
        summary = LlmSummary.model_validate(reply.tool_input)
    except ValidationError as error:
        return LlmAnswer(None, reply.model, reply.calls, error, _validation_detail(error))
    return LlmAnswer(summary, reply.model, reply.calls)


def _call_max_tokens(config: SummarizationConfig) -> int:
    return min(MAX_CALL_TOKENS, 2 * config.max_summary_tokens + 1024)


def _tool_description(config: SummarizationConfig) -> str:
    return (
        "Record the summary of the conversation. Keep identifiers, numbers and dates "
        "verbatim, invent nothing, and leave lists empty when nothing fits them. "
        f"The whole summary must stay under {config.max_summary_tokens} tokens."
    )


def _validation_detail(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'input'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)[:5]
    ]
    return f"{error.error_count()} validation error(s): " + "; ".join(problems)
