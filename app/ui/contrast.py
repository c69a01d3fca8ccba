"""Contrast between colours, as WCAG 2 measures it, and nudging a colour until it reads.

Secondary text (times, captions, a code block's language) is drawn softer than body
text, but never below WCAG's AA ratio for normal text, 4.5:1, against whatever it
sits on: https://www.w3.org/TR/WCAG21/#contrast-minimum
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from PySide6.QtGui import QColor

# WCAG 2.1 AA for normal-sized text.
READABLE: Final = 4.5
_STEP: Final = 0.04


def relative_luminance(colour: QColor) -> float:
    """WCAG's relative luminance of an sRGB colour: 0 for black, 1 for white.

    https://www.w3.org/TR/WCAG21/#dfn-relative-luminance
    """

    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * linear(colour.red())
        + 0.7152 * linear(colour.green())
        + 0.0722 * linear(colour.blue())
    )


def contrast_ratio(first: QColor, second: QColor) -> float:
    """(lighter + 0.05) / (darker + 0.05): 1 for the same colour, 21 for black on white."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def readable_on(colour: QColor, backgrounds: Iterable[QColor], minimum: float = READABLE) -> QColor:
    """`colour`, or the closest colour in its direction (darker on a light background,
    lighter on a dark one) that reaches `minimum` against every one of `backgrounds`.

    The backgrounds of one place are all light or all dark (a panel tinted from the
    page): the direction is taken from the first.
    """
    grounds = list(backgrounds)
    if not grounds:
        return QColor(colour)
    target = QColor("#000000") if relative_luminance(grounds[0]) > 0.18 else QColor("#ffffff")
    amount = 0.0
    result = QColor(colour)
    while amount < 1.0 and min(contrast_ratio(result, ground) for ground in grounds) < minimum:
        amount = min(1.0, amount + _STEP)
        result = QColor(
            round(colour.red() + (target.red() - colour.red()) * amount),
            round(colour.green() + (target.green() - colour.green()) * amount),
            round(colour.blue() + (target.blue() - colour.blue()) * amount),
        )
    return result
