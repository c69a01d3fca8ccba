"""What the History window's one search box finds, as one list in two groups: the
conversations whose title has the words, then the messages that say them (each hit
with its conversation, date, author and a snippet whose matched words stand out, §8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
)
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app.core.dates import friendly_date
from app.core.search import Author, ConversationOverview, SearchHit, SnippetPart
from app.ui.theme import blend, muted_text_colour

HIT_ROLE = Qt.ItemDataRole.UserRole  # the row's SearchHit, ConversationOverview or Heading
TITLES_SHOWN: Final = 5  # conversations listed before "Show all …"
AUTHOR_NAMES = {Author.YOU: "You", Author.CLAUDE: "Claude", Author.SUMMARY: "Summary"}
_PADDING = 8


def snippet_html(parts: Sequence[SnippetPart], palette: QPalette, selected: bool = False) -> str:
    """The snippet as HTML: every piece escaped, matched ones bold on a soft highlight
    (on a selected row, a darker shade of the selection)."""
    highlight = palette.color(QPalette.ColorRole.Highlight)
    under = highlight if selected else palette.color(QPalette.ColorRole.Base)
    over = palette.color(QPalette.ColorRole.Shadow) if selected else highlight
    mark = blend(under, over, 0.3)
    html = []
    for part in parts:
        text = escape(part.text.replace("\n", " "))
        if part.matched:
            html.append(f'<b style="background-color:{mark.name()}">{text}</b>')
        else:
            html.append(text)
    return "".join(html)


def hit_line(hit: SearchHit) -> str:
    """Where a hit is, in plain words: "Trip plans · 3 Mar · Claude · archived"."""
    pieces = [hit.session_title, friendly_date(hit.created_at), AUTHOR_NAMES[hit.author]]
    if hit.archived:
        pieces.append("archived")
    return " · ".join(pieces)


def hit_html(hit: SearchHit, palette: QPalette, selected: bool = False) -> str:
    muted = (
        palette.color(QPalette.ColorRole.HighlightedText)
        if selected
        else muted_text_colour(palette)
    ).name()
    title, _, rest = hit_line(hit).partition(" · ")
    return (
        f'<div><b>{escape(title)}</b> <span style="color:{muted}">· {escape(rest)}</span></div>'
        f"<div>{snippet_html(hit.snippet, palette, selected)}</div>"
    )


@dataclass(frozen=True)
class Heading:
    """A group's name in the list ("Conversations", "Messages"): read, never picked."""

    text: str


@dataclass(frozen=True)
class MoreTitles:
    """The row that lists every conversation whose title matched."""

    count: int

    @property
    def text(self) -> str:
        return f"Show all {self.count:,} conversations"


def title_words(text: str) -> list[str]:
    return text.casefold().split()


def title_matches(title: str, words: Sequence[str]) -> bool:
    """Every word is somewhere in the title (any case, any order)."""
    folded = title.casefold()
    return bool(words) and all(word in folded for word in words)


def title_parts(title: str, words: Sequence[str]) -> list[SnippetPart]:
    """The title in pieces, the words found in it marked."""
    folded = title.casefold()
    marked = [False] * len(title)
    for word in words:
        start = folded.find(word)
        while word and start >= 0:
            marked[start : start + len(word)] = [True] * len(word)
            start = folded.find(word, start + len(word))
    parts: list[SnippetPart] = []
    for index, character in enumerate(title):
        if parts and parts[-1].matched == marked[index]:
            parts[-1] = SnippetPart(parts[-1].text + character, marked[index])
        else:
            parts.append(SnippetPart(character, marked[index]))
    return parts


def conversation_line(overview: ConversationOverview) -> str:
    """ "Conversation · last active 3 Mar · 16 messages": what the row is, in plain words."""
    count = overview.messages
    said = f"{count:,} message{'' if count == 1 else 's'}"
    return f"Conversation · last active {friendly_date(overview.updated_at)} · {said}"


def conversation_html(
    overview: ConversationOverview, words: Sequence[str], palette: QPalette, selected: bool
) -> str:
    muted = (
        palette.color(QPalette.ColorRole.HighlightedText)
        if selected
        else muted_text_colour(palette)
    ).name()
    title = snippet_html(title_parts(overview.title, words), palette, selected)
    return (
        f'<div><b>{title}</b></div><div style="color:{muted}">'
        f"{escape(conversation_line(overview))}</div>"
    )


_ROOT = QModelIndex()


Row = SearchHit | ConversationOverview | Heading | MoreTitles


class SearchResultsModel(QAbstractListModel):
    """The list under the box: "Conversations" (titles with the words; the first
    `TITLES_SHOWN`, then "Show all …") and "Messages" (the first page of hits, and the
    pages "Load more" added). Headings are disabled rows, so arrows pass over them."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hits: list[SearchHit] = []
        self._titles: list[ConversationOverview] = []
        self._all_titles = False
        self.words: list[str] = []  # the words the titles were matched with
        self._rows: list[Row] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == HIT_ROLE:
            return row
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            if isinstance(row, SearchHit):
                return f"{hit_line(row)}: {''.join(part.text for part in row.snippet)}"
            if isinstance(row, ConversationOverview):
                return f"{row.title}. {conversation_line(row)}"
            return row.text
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if index.isValid() and isinstance(self._rows[index.row()], Heading):
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index)

    def hits(self) -> list[SearchHit]:
        return list(self._hits)

    def conversations(self) -> list[ConversationOverview]:
        """The conversations listed (the titles that matched, as far as shown)."""
        return [row for row in self._rows if isinstance(row, ConversationOverview)]

    def set_titles(
        self,
        titles: Sequence[ConversationOverview],
        words: Sequence[str],
        *,
        keep_hits: bool = False,
    ) -> None:
        """A new search: the conversations whose titles have `words`, and no hits until
        its first page comes (`reset`), so no hit of the words before stays listed;
        `keep_hits` when the words are the same (the titles read again)."""
        if not keep_hits:
            self._hits = []
        self._titles = list(titles)
        self.words = list(words)
        self._all_titles = False
        self._rebuild()

    def show_all_titles(self) -> None:
        self._all_titles = True
        self._rebuild()

    def reset(self, hits: Sequence[SearchHit]) -> None:
        self._hits = list(hits)
        self._rebuild()

    def extend(self, hits: Sequence[SearchHit]) -> None:
        if not hits:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(hits) - 1)
        self._hits.extend(hits)
        self._rows.extend(hits)
        self.endInsertRows()

    def first_choice(self) -> QModelIndex:
        """The first row that can be picked (invalid when there is none)."""
        return self.step(-1, 1)

    def step(self, row: int, by: int) -> QModelIndex:
        """The row `by` rows from `row` that can be picked, passing over headings and
        stopping at either end (invalid when there is none)."""
        count = len(self._rows)
        if count == 0:
            return QModelIndex()
        target = min(max(0, row + by), count - 1)
        ahead = range(target, count) if by > 0 else range(target, -1, -1)
        behind = range(target, -1, -1) if by > 0 else range(target, count)
        for candidate in (*ahead, *behind):
            if not isinstance(self._rows[candidate], Heading):
                return self.index(candidate)
        return QModelIndex()

    def _rebuild(self) -> None:
        rows: list[Row] = []
        if self._titles:
            shown = self._titles if self._all_titles else self._titles[:TITLES_SHOWN]
            rows.append(Heading("Conversations"))
            rows.extend(shown)
            if len(shown) < len(self._titles):
                rows.append(MoreTitles(len(self._titles)))
        if self._hits:
            if rows:
                rows.append(Heading("Messages"))
            rows.extend(self._hits)
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()


def _row_width(option: QStyleOptionViewItem) -> int:
    """The width a hit is laid out at: its row's, or (when Qt asks for a size before the
    row has one) the list's; the same either way, so measured and painted heights agree."""
    view = option.widget
    if isinstance(view, QAbstractItemView):
        return view.viewport().width()
    return option.rect.width() if option.rect.width() > 0 else 600


def row_html(row: Row, words: Sequence[str], palette: QPalette, selected: bool) -> str:
    """A row of the list as rich text: a hit, a conversation, a heading or "Show all"."""
    if isinstance(row, SearchHit):
        return hit_html(row, palette, selected)
    if isinstance(row, ConversationOverview):
        return conversation_html(row, words, palette, selected)
    if isinstance(row, Heading):
        muted = muted_text_colour(palette).name()
        return f'<div style="color:{muted}"><b>{escape(row.text)}</b></div>'
    link = palette.color(
        QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Link
    ).name()
    return f'<div style="color:{link}">{escape(row.text)}…</div>'


class HitDelegate(QStyledItemDelegate):
    """Paints a row as rich text: a hit in two lines (where it is, then the snippet),
    a conversation in two (its title, then what it is), a group's heading in one."""

    def _document(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QTextDocument:
        row = index.data(HIT_ROLE)
        model = index.model()
        words = model.words if isinstance(model, SearchResultsModel) else []
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(0)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        document.setHtml(row_html(row, words, option.palette, selected))
        document.setTextWidth(max(100, _row_width(option) - 2 * _PADDING))
        return document

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        self.initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if isinstance(widget, QWidget) else None
        text, option.text = option.text, ""
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, widget)
        option.text = text
        document = self._document(option, index)
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = option.palette
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, palette.color(role))
        painter.save()
        rect = option.rect
        painter.setClipRect(rect)  # never over the next hit, whatever the text's height
        painter.translate(rect.left() + _PADDING, rect.top() + _PADDING)
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        self.initStyleOption(option, index)
        document = self._document(option, index)
        return QSize(int(document.idealWidth()), int(document.size().height()) + 2 * _PADDING)
