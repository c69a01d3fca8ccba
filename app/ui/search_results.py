"""Search hits as a list: each with its conversation, date, author and a snippet
whose matched words stand out (History window, §8)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

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
from app.core.search import Author, SearchHit, SnippetPart
from app.ui.theme import blend, muted_text_colour

HIT_ROLE = Qt.ItemDataRole.UserRole
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


_ROOT = QModelIndex()


class SearchResultsModel(QAbstractListModel):
    """The hits shown: the first page, and the pages "Load more" added."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hits: list[SearchHit] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._hits)

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._hits):
            return None
        hit = self._hits[index.row()]
        if role == HIT_ROLE:
            return hit
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{hit_line(hit)}: {''.join(part.text for part in hit.snippet)}"
        return None

    def hits(self) -> list[SearchHit]:
        return list(self._hits)

    def reset(self, hits: Sequence[SearchHit]) -> None:
        self.beginResetModel()
        self._hits = list(hits)
        self.endResetModel()

    def extend(self, hits: Sequence[SearchHit]) -> None:
        if not hits:
            return
        first = len(self._hits)
        self.beginInsertRows(QModelIndex(), first, first + len(hits) - 1)
        self._hits.extend(hits)
        self.endInsertRows()


def _row_width(option: QStyleOptionViewItem) -> int:
    """The width a hit is laid out at: its row's, or (when Qt asks for a size before the
    row has one) the list's; the same either way, so measured and painted heights agree."""
    view = option.widget
    if isinstance(view, QAbstractItemView):
        return view.viewport().width()
    return option.rect.width() if option.rect.width() > 0 else 600


class HitDelegate(QStyledItemDelegate):
    """Paints a hit as two lines of rich text (where it is, then the snippet)."""

    def _document(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QTextDocument:
        hit = index.data(HIT_ROLE)
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(0)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        document.setHtml(hit_html(hit, option.palette, selected))
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
