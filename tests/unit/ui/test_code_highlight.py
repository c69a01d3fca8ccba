"""Pygments tokens cut into per-line spans, lexed again only at the end as code grows."""

from __future__ import annotations

from pygments.token import Token

from app.ui.code_highlight import FULL_LEX_LIMIT, CodeColouring, Span, lexer_for

PYTHON = '''import os

def greet(name):
    """Say hello,
    over two lines."""
    return f"Hello, {name}"  # done
'''


def coloured(code: str, language: str = "python") -> list[list[Span]]:
    colouring = CodeColouring()
    colouring.update(code, language, final=True)
    return colouring.lines


def tokens_of(line: list[Span], text: str) -> dict[str, object]:
    return {text[span.start : span.start + span.length]: span.token for span in line}


def test_languages_are_found_by_their_usual_names_and_unknown_ones_are_none() -> None:
    for name in ("python", "py", "Python", "js", "javascript", "c++", "rust", "sh", "json"):
        assert lexer_for(name) is not None, name
    assert lexer_for("zorblang") is None
    assert lexer_for("") is None


def test_spans_sit_on_their_lines_with_their_token_types() -> None:
    lines = coloured(PYTHON)
    texts = PYTHON.split("\n")
    assert len(lines) == len(texts)
    assert tokens_of(lines[0], texts[0])["import"] in Token.Keyword
    assert tokens_of(lines[2], texts[2])["greet"] in Token.Name.Function
    # The docstring's second line is still string, though it starts no string itself.
    assert all(span.token in Token.String for span in lines[4] if texts[4][span.start].strip())
    assert tokens_of(lines[5], texts[5])["# done"] in Token.Comment
    for line, text in zip(lines, texts, strict=True):
        for span in line:
            assert span.start >= 0 and span.start + span.length <= len(text)


def test_unknown_languages_and_plain_blocks_get_no_colours() -> None:
    assert coloured("frob 12 'x'\nmore", "zorblang") == [[], []]
    assert coloured("plain\ntext", "") == [[], []]


def test_windows_line_breaks_make_one_line_each_as_in_the_shown_document() -> None:
    lines = coloured("x = 1\r\ny = 'a'\r\n")
    assert len(lines) == 3
    (at_a,) = [span for span in lines[1] if span.start <= 5 < span.start + span.length]
    assert at_a.token in Token.String


def test_growing_code_is_lexed_again_only_from_its_last_line() -> None:
    colouring = CodeColouring()
    code = ""
    for index in range(200):
        code += f"value_{index} = compute({index}, 'text')\n"
        colouring.update(code, "python", final=False)
    # Lexing everything each time would be ~200 × 100 / 2 lines' worth.
    assert colouring.lex_count < len(code) * 3
    assert colouring.lines == coloured(code)


def test_growing_inside_a_multi_line_string_restarts_before_the_string() -> None:
    colouring = CodeColouring()
    code = 'x = 1\ns = """first\n'
    colouring.update(code, "python", final=False)
    code += "second\n"
    first_changed = colouring.update(code, "python", final=False)
    assert colouring.lines[2] and all(span.token in Token.String for span in colouring.lines[2])
    assert first_changed >= 1  # the line before the string kept its spans
    code += 'third"""\ny = 2\n'
    colouring.update(code, "python", final=False)
    assert colouring.lines == coloured(code)


def test_closing_the_fence_lexes_the_whole_block_once_more() -> None:
    colouring = CodeColouring()
    code = "a = 1\n"
    colouring.update(code, "python", final=False)
    code += "b = 2\nc = 3"
    colouring.update(code, "python", final=False)
    before = colouring.lex_count
    colouring.update(code, "python", final=True)
    assert colouring.lex_count == before + len(code)
    assert colouring.update(code, "python", final=True) == len(colouring.lines)  # nothing new
    assert colouring.lex_count == before + len(code)


def test_a_new_language_or_new_text_starts_afresh() -> None:
    colouring = CodeColouring()
    colouring.update("let x = 1;", "rust", final=True)
    colouring.update("let x = 1;", "zorblang", final=True)
    assert colouring.lines == [[]]
    colouring.update("print(1)", "python", final=True)
    assert colouring.lines == coloured("print(1)")


def test_a_long_block_keeps_its_streamed_colours_when_it_closes() -> None:
    colouring = CodeColouring()
    line = "value = compute(1, 'text')  # note\n"
    code = ""
    while len(code) <= FULL_LEX_LIMIT:
        code += line * 20
        colouring.update(code, "python", final=False)
    before = colouring.lex_count
    colouring.update(code, "python", final=True)
    assert colouring.lex_count == before  # no stall to lex it all again
    assert colouring.lines == coloured(code)  # and here the streamed colours are exact
