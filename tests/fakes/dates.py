"""The request's date lines (`app.core.conversation.date_line`), taken out again.

The request carries "[Tuesday 3 March 2026]" and a blank line before a message
whose day differs from the one before; tests that compare what the fake server
received with what was typed take them out first.
"""

from __future__ import annotations

import re

DATE_LINE = re.compile(r"\[[A-Z][a-z]+ \d{1,2} [A-Z][a-z]+ \d{4}\]\n\n")


def undated(content: str) -> str:
    """`content` as sent, without its date lines."""
    return DATE_LINE.sub("", content)
