"""The archive searches on a reply: "Looked in earlier messages: 2 found".

`LookupLine` is the collapsed line on a reply (a button, reachable by Tab, Space or
Enter opens it) that unfolds to what was sent to Claude: each query and the excerpts
returned (`app.ui.transcript_lookups` keeps the lines of the replies on screen up to
date).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QWidget

from app.core.dates import timestamp
from app.core.lookup import Lookup, LookupHit, lookup_heading, summary_line
from app.ui.foldable_line import FoldableLine

_AUTHORS = {"user": "You", "assistant": "Claude", "summary": "Summary"}


def details_html(lookups: Sequence[Lookup]) -> str:
    """`details_text` with each excerpt a link that opens it where it was said."""
    parts: list[str] = []
    for lookup in lookups:
        lines = [html.escape(lookup_heading(lookup))]
        for hit in lookup.hits:
            where = f" in “{hit.conversation}”" if hit.conversation else ""
            author = _AUTHORS.get(hit.author, hit.author)
            when = timestamp(hit.created_at)
            label = html.escape(f"#{hit.seq} · {author} · {when}{where}")
            if hit.seq > 0 and (not hit.conversation or hit.session_id):
                label = f'<a href="{_target(hit)}">{label}</a>'
            lines.append(f"{label}: {html.escape(hit.text)}")
        parts.append("<br>".join(lines))
    return "<br><br>".join(parts)


def _target(hit: LookupHit) -> str:
    """The link of an excerpt: "seq:12" in this conversation, "open:<id>:12" in another."""
    if hit.conversation and hit.session_id:
        return f"open:{hit.session_id}:{hit.seq}"
    return f"seq:{hit.seq}"


def details_text(lookups: Sequence[Lookup]) -> str:
    """What was sent to Claude, in plain words: each search and what it returned."""
    parts: list[str] = []
    for lookup in lookups:
        lines = [lookup_heading(lookup)]
        for hit in lookup.hits:
            where = f" in “{hit.conversation}”" if hit.conversation else ""
            author = _AUTHORS.get(hit.author, hit.author)
            when = timestamp(hit.created_at)
            lines.append(f"#{hit.seq} · {author} · {when}{where}: {hit.text}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


class LookupLine(FoldableLine):
    """The collapsed lookup line of one reply, expandable to what was sent.

    Attributes:
        toggle: the line itself (a button; checked when open).
        details: the queries and excerpts (hidden while collapsed); each excerpt is a link
            that opens the original, in this conversation or the one it was found in.

    Signals:
        open_requested(str, int): the user asked to see a message an excerpt quotes: the
            conversation ("" for this one) and the message's seq.
    """

    open_requested = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "What Claude found in the archive", "what Claude looked up", parent, checkable=True
        )
        self._lookups: tuple[Lookup, ...] = ()
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setOpenExternalLinks(False)
        self.details.linkActivated.connect(self._link)
        self.details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )

    @property
    def lookups(self) -> tuple[Lookup, ...]:
        return self._lookups

    def set_lookups(self, lookups: Sequence[Lookup]) -> None:
        self._lookups = tuple(lookups)
        self.toggle.setText(summary_line(self._lookups))
        self.details.setText(details_html(self._lookups))
        # Recall's quotes alone: Cairn added them; Claude looked nothing up itself.
        added = bool(self._lookups) and all(lookup.automatic for lookup in self._lookups)
        self._what = "what Cairn added for Claude" if added else "what Claude looked up"
        self.details.setAccessibleName(
            "What Cairn added for Claude" if added else "What Claude found in the archive"
        )
        self._name()

    def _link(self, target: str) -> None:
        kind, _, rest = target.partition(":")
        session_id, _, seq = rest.rpartition(":")
        if kind in ("seq", "open") and seq.isdigit() and (kind == "open") == bool(session_id):
            self.open_requested.emit(session_id, int(seq))
