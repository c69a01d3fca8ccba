"""Token counts in words people say ("1.2k", "68k"): the gauge's, and the messages'.

Apart from app.core.context (which re-exports them) so that the gauge's words do not
import the request builder and pydantic to paint the window (issue 20).
"""

from __future__ import annotations


def format_token_count(tokens: int) -> str:
    """A token count the way people say it: 950, 1.2k, 68k, 1.2M (half rounds up).

    The one formatter for counts a user reads — the gauge, its tooltip and the
    "too long to send" messages — so they never disagree by a rounding.
    """
    if tokens < 0:
        return "-" + format_token_count(-tokens)
    if tokens < 1000:
        return str(tokens)
    tenths = (tokens + 50) // 100  # tenths of a thousand
    if tenths < 100:
        return _with_tenths(tenths, "k")
    thousands = (tokens + 500) // 1000
    if thousands < 1000:
        return f"{thousands}k"
    tenths = (tokens + 50_000) // 100_000  # tenths of a million
    if tenths < 100:
        return _with_tenths(tenths, "M")
    return f"{(tokens + 500_000) // 1_000_000}M"


def _with_tenths(tenths: int, unit: str) -> str:
    whole, tenth = divmod(tenths, 10)
    return f"{whole}{unit}" if tenth == 0 else f"{whole}.{tenth}{unit}"


def say_token_pair(tokens: int, limit: int) -> tuple[str, str]:
    """Two counts said briefly, or exactly when briefly they would read the same.

    The gauge says its "used of usable" with this too, so it matches these messages.
    """
    said, said_limit = format_token_count(tokens), format_token_count(limit)
    if said == said_limit and tokens != limit:
        return f"{tokens:,}", f"{limit:,}"
    return said, said_limit
