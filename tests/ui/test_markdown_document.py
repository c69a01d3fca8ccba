"""A streaming reply's prose grows in place: what it shows at every step, and when done, is
what rendering its text whole shows (same blocks, text, formats, lists and tables)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.ui.markdown_document import (
    MARKDOWN_FEATURES,
    GrowingMarkdown,
    _tint_inline_code,
    render_markdown,
)
from app.ui.message_text import MessageText
from app.ui.theme import code_background, monospace_font, quote_bar_colour
from app.ui.transcript_blocks import CodeBlock, MarkdownView
from tests.ui.test_token_gauge import PALETTES

# --- what a document shows, in comparable form ----------------------------------------


def _without_object(form: QTextFormat) -> QTextFormat:
    """`form` without the index of its list or table: indices count every object the
    document ever made, so they differ between documents that show the same."""
    form.setObjectIndex(-1)
    return form


def _fragments(block: object) -> list[tuple[str, QTextCharFormat]]:
    """A block's runs of text in one format (adjacent runs of one format joined)."""
    runs: list[tuple[str, QTextCharFormat]] = []
    iterator = block.begin()  # type: ignore[attr-defined]
    while not iterator.atEnd():
        fragment = iterator.fragment()
        text, form = fragment.text(), fragment.charFormat()
        if runs and runs[-1][1] == form:
            runs[-1] = (runs[-1][0] + text, form)
        else:
            runs.append((text, form))
        iterator += 1
    return runs


def structure(document: QTextDocument) -> list[tuple[object, ...]]:
    """Per block: its text, its block and character formats, its place in a list (which
    list, the list's format, the item's number) or table (which table, its format, the
    cell and the cell's format), and its runs of formatted text."""
    lists: dict[int, int] = {}
    tables: dict[int, int] = {}
    shown: list[tuple[object, ...]] = []
    block = document.begin()
    while block.isValid():
        in_list: tuple[object, ...] = ()
        text_list = block.textList()
        if text_list is not None:
            number = lists.setdefault(text_list.objectIndex(), len(lists))
            in_list = (number, _without_object(text_list.format()), text_list.itemNumber(block))
        in_table: tuple[object, ...] = ()
        table = QTextCursor(block).currentTable()
        if table is not None:
            number = tables.setdefault(table.objectIndex(), len(tables))
            cell = table.cellAt(block.position())
            in_table = (
                number,
                _without_object(table.format()),
                (table.rows(), table.columns(), cell.row(), cell.column()),
                (cell.rowSpan(), cell.columnSpan(), _without_object(cell.format())),
            )
        shown.append(
            (
                block.text(),
                _without_object(QTextBlockFormat(block.blockFormat())),
                _without_object(block.charFormat()),
                in_list,
                in_table,
                _fragments(block),
            )
        )
        block = block.next()
    return shown


def assert_same_document(streamed: QTextDocument, whole: QTextDocument) -> None:
    # The HTML first: when it differs, pytest shows a readable difference.
    assert streamed.toHtml() == whole.toHtml()
    assert structure(streamed) == structure(whole)


def rendered_whole(view: MarkdownView, text: str) -> QTextDocument:
    """`text` rendered at once, as the view renders a text it is given whole."""
    document = QTextDocument()
    document.setDefaultFont(view.document().defaultFont())
    render_markdown(document, text.strip("\n"), view.palette(), view.font())
    return document


# --- Markdown that exercises every block kind and the joins between them ----------------

_INLINE = st.sampled_from(
    [
        "word",
        "more words here",
        "`code`",
        "`two words`",
        "``tick ` inside``",
        "**bold**",
        "*em*",
        "_em_",
        "~~gone~~",
        "[a link](https://example.org)",
        "https://example.org/path",
        "x\\*y",
        "&amp;",
        "é🙂",
        "<br>",
        "2024.",
        "-",
        "|",
        "`",
        "**",
        "[",
        "]",
        "[text][ref]",
        "\t",
        "\u00a0",
        "end  \nbreak",
    ]
)
_LINE = st.lists(_INLINE, min_size=1, max_size=6).map(" ".join)
_TABLE_ROW = st.lists(_INLINE, min_size=2, max_size=2).map(" | ".join)


def _listed(items: list[tuple[str, str]]) -> str:
    return "\n".join(marker + line for marker, line in items)


_BLOCK = st.one_of(
    _LINE,
    st.lists(_LINE, min_size=2, max_size=3).map("\n".join),  # soft line breaks
    st.tuples(st.sampled_from(["# ", "## ", "### ", "###### "]), _LINE).map("".join),
    _LINE.map(lambda line: line + "\n==="),
    _LINE.map(lambda line: line + "\n---"),
    st.lists(
        st.tuples(
            st.sampled_from(["- ", "* ", "1. ", "2) ", "  - ", "   1. ", "- [ ] ", "- [x] "]),
            _LINE,
        ),
        min_size=1,
        max_size=4,
    ).map(_listed),
    _LINE.map(lambda line: "  continued in the item: " + line),  # after a list: loose item
    st.lists(
        st.tuples(st.sampled_from(["> ", "> > ", "> - ", ">"]), _LINE), min_size=1, max_size=3
    ).map(_listed),
    st.lists(_TABLE_ROW, min_size=1, max_size=3).map(
        lambda rows: "| h1 | h2 |\n|---|:--:|\n" + "\n".join(f"| {row} |" for row in rows)
    ),
    _TABLE_ROW.map(lambda row: f"{row}\n--|--\n1 | 2"),
    st.sampled_from(["---", "***", "    indented code", "\tcode(1)", "[ref]: https://example.org"]),
)
_BREAK = st.sampled_from(["\n", "\n\n", "\n\n", "\n\n\n", "\r\n\r\n", "\n \n", "\n\t\n"])
MARKDOWN = st.lists(st.tuples(_BLOCK, _BREAK), min_size=1, max_size=12).map(
    lambda parts: "".join(block + join for block, join in parts)
)


@st.composite
def streamed(draw: st.DrawFn, text_strategy: st.SearchStrategy[str]) -> tuple[str, list[int]]:
    """A text and where its deltas end (the last at its end): 1 to 80 characters each."""
    text = draw(text_strategy)
    ends: list[int] = []
    end = 0
    while end < len(text):
        end = min(len(text), end + draw(st.integers(min_value=1, max_value=80)))
        ends.append(end)
    return text, ends


@pytest.fixture(scope="module")
def markdown_view(qapp: QApplication) -> Iterator[MarkdownView]:
    """One view for many examples (Hypothesis runs an example per call, not per fixture)."""
    view = MarkdownView()
    yield view
    view.deleteLater()


# --- the properties -----------------------------------------------------------------------

# Qt's importer says this of some odd Markdown (an empty list item in a list item), when
# it renders the text whole just as when it renders its end.
_QT_LIST_WARNING = pytest.mark.qt_log_ignore("attempted to insert into a list that no longer")


@_QT_LIST_WARNING
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streamed(MARKDOWN))
def test_a_streamed_text_shows_at_every_step_what_rendering_it_whole_shows(
    markdown_view: MarkdownView, stream: tuple[str, list[int]]
) -> None:
    text, ends = stream
    markdown_view.set_source("")  # a new reply
    for end in ends:
        markdown_view.set_source(text[:end])
        assert_same_document(markdown_view.document(), rendered_whole(markdown_view, text[:end]))


def test_a_task_item_that_is_not_made_a_list_item_still_marks_what_follows(
    markdown_view: MarkdownView,
) -> None:
    # Qt makes "- [ ] &amp;" a plain paragraph without a mark, yet gives the mark to the
    # paragraph after it (found by Hypothesis): the streamed end must start from it too.
    text = "- [ ] &amp;\n\nword\n"
    markdown_view.set_source("")
    for end in (1, 2, len(text)):
        markdown_view.set_source(text[:end])
        assert_same_document(markdown_view.document(), rendered_whole(markdown_view, text[:end]))


@_QT_LIST_WARNING
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    streamed(
        st.lists(
            st.one_of(MARKDOWN, st.sampled_from(["```python\nx = 1\n", "```\n", "~~~\ncode\n"])),
            min_size=1,
            max_size=4,
        ).map("".join)
    )
)
def test_a_streamed_reply_with_code_ends_as_the_reply_shown_whole(
    qtbot: QtBot, stream: tuple[str, list[int]]
) -> None:
    text, ends = stream
    parent = QWidget()
    qtbot.addWidget(parent)
    growing, whole = MessageText(parent), MessageText(parent)
    for end in ends:
        growing.set_text(text[:end])
    whole.set_text(text)
    assert [type(block) for block in growing.blocks()] == [type(block) for block in whole.blocks()]
    for grown, shown in zip(growing.blocks(), whole.blocks(), strict=True):
        if isinstance(grown, MarkdownView):
            assert isinstance(shown, MarkdownView)
            assert_same_document(grown.document(), shown.document())
        else:
            assert isinstance(grown, CodeBlock) and isinstance(shown, CodeBlock)
            assert (grown.code, grown.source_text) == (shown.code, shown.source_text)


# --- the cases, one by one ------------------------------------------------------------------

_REPLY = (
    "## Plan\n\nFirst we call `load()` and then `save(path)`.\n\n"
    "| step | what |\n|---|---|\n| 1 | `load` |\n| 2 | save |\n\n"
    "> A quote, with **bold**\n> > and a deeper one\n\n"
    "- one\n- two with `code`\n\n  still two\n- three\n\n"
    "1. first\n2. second\n\n"
    "A closing paragraph that is long enough to stream in several deltas, "
    "with *emphasis* and a [link](https://example.org).\n"
)


def test_a_reply_streamed_a_character_at_a_time_ends_as_it_would_whole(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    for end in range(1, len(_REPLY) + 1):
        view.set_source(_REPLY[:end])
        if end % 37 == 0:
            assert_same_document(view.document(), rendered_whole(view, _REPLY[:end]))
    assert_same_document(view.document(), rendered_whole(view, _REPLY))
    assert view.render_count == len(_REPLY)


def test_a_larger_font_streams_as_it_renders_whole(qtbot: QtBot) -> None:
    """The importer sizes margins from the document's font: the end is imported with it."""
    view = MarkdownView()
    qtbot.addWidget(view)
    font = QFont(view.font())
    font.setPointSizeF(font.pointSizeF() * 1.6)
    view.setFont(font)
    for end in range(20, len(_REPLY) + 1, 20):
        view.set_source(_REPLY[:end])
    view.set_source(_REPLY)
    assert_same_document(view.document(), rendered_whole(view, _REPLY))


def test_only_the_end_is_imported_again_as_a_reply_grows(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "".join(f"Paragraph {n} with `code` in it.\n\n" for n in range(40))
    view.set_source(text + "A new")
    view.set_source(text + "A new paragraph")  # the first 40 paragraphs are settled now
    document = view.document()
    blocks = document.blockCount()
    # A mark on the first block and on one near the end of the settled ones: a block
    # imported again is a new block, without it. (Removing the end takes the last
    # settled block's mark with it: that block is Qt's to rebuild.)
    document.firstBlock().setUserState(7)
    document.findBlockByNumber(blocks - 3).setUserState(8)
    view.set_source(text + "A new paragraph, growing.")
    view.set_source(text + "A new paragraph, growing.\n\nAnd another.")
    assert document.firstBlock().userState() == 7
    assert document.findBlockByNumber(blocks - 3).userState() == 8
    document.firstBlock().setUserState(-1)
    document.findBlockByNumber(blocks - 3).setUserState(-1)
    assert document.blockCount() == blocks + 1
    assert_same_document(
        document, rendered_whole(view, text + "A new paragraph, growing.\n\nAnd another.")
    )


def test_a_link_target_arriving_late_links_the_text_before_it(qtbot: QtBot) -> None:
    """A link target gives meaning to text anywhere before it: the text renders whole."""
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "See [the docs][docs] for more.\n\nAnother paragraph.\n\n[docs]: https://example.org\n"
    for end in range(1, len(text) + 1):
        view.set_source(text[:end])
    assert_same_document(view.document(), rendered_whole(view, text))
    assert view.document().firstBlock().text() == "See the docs for more."


def test_a_reply_opening_with_a_rule_may_be_front_matter_and_renders_whole(
    qtbot: QtBot,
) -> None:
    """Qt hides front matter: "---" first, up to the next "---" line, however far on."""
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "---\nword\n\nA paragraph.\n\n---\nAfter."
    for end in range(1, len(text) + 1):
        view.set_source(text[:end])
        assert_same_document(view.document(), rendered_whole(view, text[:end]))


def test_a_list_item_whose_marker_is_still_arriving_joins_its_list(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    head = "1. first item\n\n"
    for tail in ("1", "12", "12.", "12. twelfth", "12. twelfth item\n\nAfter."):
        view.set_source(head + tail)
        assert_same_document(view.document(), rendered_whole(view, head + tail))
    lists = {view.document().findBlockByNumber(n).textList() is not None for n in (0, 1)}
    assert lists == {True}


def test_text_that_changed_instead_of_growing_is_rendered_afresh(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_source("First paragraph.\n\nSecond paragraph.")
    view.set_source("First paragraph.\n\nSecond paragraph, longer.")
    view.set_source("Other text.\n\n- a list")
    assert_same_document(view.document(), rendered_whole(view, "Other text.\n\n- a list"))


def test_a_theme_change_mid_stream_re_renders_whole_and_keeps_growing(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    half = len(_REPLY) // 2
    view.set_source(_REPLY[:half])
    palette = view.palette()
    palette.setColor(palette.ColorRole.Base, palette.color(palette.ColorRole.Text))
    view.setPalette(palette)  # a theme change re-renders with the new colours
    view.set_source(_REPLY)
    assert_same_document(view.document(), rendered_whole(view, _REPLY))


def test_growing_an_unshown_text_is_refused(qtbot: QtBot) -> None:
    """Nothing shown yet: there is nothing to grow, and the caller renders whole."""
    view = MarkdownView()
    qtbot.addWidget(view)
    growing = GrowingMarkdown()
    assert growing.grow(QTextDocument(), "Some text.\n\nMore.", view.palette(), view.font()) is None


def _tint_by_fragments(document: QTextDocument, palette: QPalette, font: QFont) -> None:
    """Inline code tinted as it was before `_tint_inline_code` read a block's runs at once:
    fragment by fragment."""
    inline_code = QTextCharFormat()
    inline_code.setBackground(code_background(palette))
    inline_code.setFontFamilies(monospace_font(font).families())
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().fontFixedPitch():
                cursor.setPosition(fragment.position())
                cursor.setPosition(
                    fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                )
                cursor.mergeCharFormat(inline_code)
            iterator += 1
        block = block.next()


@_QT_LIST_WARNING
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(MARKDOWN)
def test_inline_code_is_tinted_as_the_fragment_walk_tinted_it(
    markdown_view: MarkdownView, text: str
) -> None:
    palette, font = markdown_view.palette(), markdown_view.font()
    tinted, walked = QTextDocument(), QTextDocument()
    for document in (tinted, walked):
        document.setMarkdown(text, MARKDOWN_FEATURES)
    _tint_inline_code(tinted, QTextCursor(tinted), palette, font)
    _tint_by_fragments(walked, palette, font)
    assert_same_document(tinted, walked)


def test_a_selection_in_the_settled_text_survives_the_reply_growing(qtbot: QtBot) -> None:
    """Only the end is replaced, so what the reader selected above it stays selected."""
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "The first paragraph, to select.\n\nThe second one.\n\nThe third, growing"
    view.set_source(text)
    view.set_source(text + " still")
    cursor = view.textCursor()
    cursor.setPosition(4)
    cursor.setPosition(9, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    view.set_source(text + " still, and more.\n\nA fourth.")
    assert view.textCursor().selectedText() == "first"


def test_quote_bars_take_the_new_theme_s_colour(qtbot: QtBot) -> None:
    """The bar's colour is kept between paints, and found again when the palette changes."""
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.setPalette(PALETTES["light"])
    view.set_source("Before.\n\n> Quoted words\n> that go on.\n\nAfter.")
    view.show()
    qtbot.waitExposed(view)
    quoted = view.document().findBlockByNumber(1)
    middle = round(view.document().documentLayout().blockBoundingRect(quoted).center().y())
    for theme in ("light", "dark", "light"):
        view.setPalette(PALETTES[theme])
        bar = quote_bar_colour(view.palette())
        assert view.grab().toImage().pixelColor(1, middle).name() == bar.name(), theme


# --- a text's end, when it will not grow ------------------------------------------------------


class _CountedImports:
    """Counts the imports a `GrowingMarkdown` makes, by kind (a hand-written spy)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.settled_starts = 0
        self.ends = 0
        settle_start, import_end = GrowingMarkdown._settle_start, GrowingMarkdown._import

        def counted_settle_start(growing: GrowingMarkdown, *args: object) -> bool:
            self.settled_starts += 1
            return settle_start(growing, *args)  # type: ignore[arg-type]

        def counted_import(growing: GrowingMarkdown, *args: object, **kwargs: object) -> object:
            self.ends += 1
            return import_end(growing, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(GrowingMarkdown, "_settle_start", counted_settle_start)
        monkeypatch.setattr(GrowingMarkdown, "_import", counted_import)


def test_a_short_replys_end_is_rendered_whole_not_settled(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply's end (`final`) when nothing of it is settled yet: rendered whole, one
    import — not its start rendered again to settle it, and its end imported on its own
    (two), for updates that will not come (issue 20). Shown as it would be whole."""
    view = MarkdownView()
    qtbot.addWidget(view)
    first = "Sure. Here is what I found."
    final = first + " You bought it in June.\n\nIt was a **used** one, for `420` euros."
    view.set_source(first)
    imports = _CountedImports(monkeypatch)
    view.set_source(final, final=True)
    assert (imports.settled_starts, imports.ends) == (0, 0)
    assert view.render_count == 2
    assert_same_document(view.document(), rendered_whole(view, final))


def test_a_long_replys_end_grows_from_what_is_settled(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once some of the text is settled, its end (`final`) is imported on its own, as a
    streamed update's: what is settled is not rendered again."""
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "".join(f"Paragraph {n} with `code` in it.\n\n" for n in range(40))
    view.set_source(text + "A new")
    view.set_source(text + "A new paragraph")  # the first 40 paragraphs are settled now
    document = view.document()
    document.firstBlock().setUserState(7)
    imports = _CountedImports(monkeypatch)
    view.set_source(text + "A new paragraph, and its end.", final=True)
    assert imports.settled_starts == 0 and imports.ends >= 1
    assert document.firstBlock().userState() == 7  # not imported again
    document.firstBlock().setUserState(-1)
    assert_same_document(document, rendered_whole(view, text + "A new paragraph, and its end."))


@_QT_LIST_WARNING
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streamed(MARKDOWN))
def test_a_streamed_texts_final_end_shows_what_rendering_it_whole_shows(
    markdown_view: MarkdownView, stream: tuple[str, list[int]]
) -> None:
    """Streamed, then its end given as final (settled or not by then): the same document
    as the text rendered whole."""
    text, ends = stream
    markdown_view.set_source("")  # a new reply
    for end in ends[:-1]:
        markdown_view.set_source(text[:end])
    markdown_view.set_source(text, final=True)
    assert_same_document(markdown_view.document(), rendered_whole(markdown_view, text))
