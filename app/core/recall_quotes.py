"""A quote's body as recall's block holds it, and its stored count (issue 22).

Apart from `app.core.recall` so that the store, which counts a message's quote body as
it saves it (migration 17), imports no more than this and the tokenizer's module.
"""

from __future__ import annotations

from app.core.tokens import ENCODING_NAME, TokenCounter, default_counter

# About this many characters around what matched (≈ 150 tokens): enough for the sentence.
EXCERPT_CHARS = 600


def quote_body(excerpt: str) -> str:
    """An excerpt as a quotation: each line after "> " (a blank one: ">")."""
    return "\n".join(f"> {line}" if line else ">" for line in excerpt.splitlines())


def whole_quote_tokens(content: str, counter: TokenCounter | None = None) -> int | None:
    """The tokens of a message's quote body when it is quoted whole (`quote_body` of its
    stripped text), counted once and stored with it (migration 17) so that fitting counts
    only the quote's heading (`_fitted_quote`); None when the message is longer than any
    excerpt (never quoted whole), or when `counter` (the app's) is not cl100k, or not
    loaded yet (never waited for: the caller may be the GUI thread).

    Exact, not an estimate: cl100k's pre-tokenizer never joins a line break to a
    non-white-space character after it (none of its patterns holds a line break followed
    by one), and the body always begins with ">", so the heading's line and its line break
    are tokens of their own: count(heading + "\n" + body) == count(heading + "\n") +
    count(body), for any heading (tests/unit/core/test_recall_quotes.py)."""
    counter = counter if counter is not None else default_counter()
    text = content.strip()
    if len(text) > EXCERPT_CHARS or not exact_counter(counter):
        return None
    return counter.count(quote_body(text))


def exact_counter(counter: object) -> bool:
    """Whether `counter` counts with cl100k (`ENCODING_NAME`), loaded: the stored body
    counts (`whole_quote_tokens`) are its counts."""
    return (
        isinstance(counter, TokenCounter)
        and counter.encoding_name == ENCODING_NAME
        and counter.ready
        and not counter.flagged
    )


__all__ = ["EXCERPT_CHARS", "exact_counter", "quote_body", "whole_quote_tokens"]
