"""What syntax colours cost a code block while a reply streams into it.

Run: .venv/bin/python bench/bench_code_colours.py [--lines 400] [--chunk 60]

A `CodeBlock` (offscreen Qt) receives a Python block of `--lines` lines the way a
streaming reply delivers it: the fenced text grows by `--chunk` characters per
update, then the closing fence arrives. Timed per update: `set_code` with colours
(lexing only the end, app/ui/code_highlight.py), the same with every update lexed
whole (what caching per block saves), and with no colours at all (the floor).
Figures: median and worst milliseconds per update (the worst is the first, where
Pygments compiles the lexer's patterns, once per language and session), and
characters lexed in all.
Not a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from app.ui.code_highlight import CodeColouring  # noqa: E402
from app.ui.transcript_blocks import CodeBlock  # noqa: E402


def sample_code(lines: int) -> str:
    body = []
    for index in range(lines):
        if index % 25 == 0:
            body.append(
                f'def step_{index}(value: int) -> str:\n    """Step {index}.\n\n    More.\n    """'
            )
        body.append(f"    total_{index} = compute(value, {index}, 'label {index}')  # note {index}")
    return "\n".join(body)


def stream(block: CodeBlock, code: str, chunk: int, whole: bool) -> tuple[list[float], int]:
    times: list[float] = []
    lexed = 0
    for end in [*range(chunk, len(code), chunk), len(code)]:
        if whole:
            lexed += block.highlighter.colouring.lex_count
            block.highlighter.colouring = CodeColouring()  # forget: lex everything again
        shown = code[:end]
        started = time.perf_counter()
        block.set_code(f"```python\n{shown}\n", shown, "python")
        times.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    block.set_code(f"```python\n{code}\n```", code, "python")
    times.append((time.perf_counter() - started) * 1000)
    return times, lexed + block.highlighter.colouring.lex_count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=400)
    parser.add_argument("--chunk", type=int, default=60)
    args = parser.parse_args()
    app = QApplication([])
    code = sample_code(args.lines)
    print(f"{len(code):,} characters, {code.count(chr(10)) + 1} lines, {args.chunk} per update")
    for name, language, whole in (
        ("colours, end lexed", "python", False),
        ("colours, all lexed", "python", True),
        ("no colours", "", False),
    ):
        block = CodeBlock()
        block.resize(700, 400)
        lexed = 0
        if language:
            times, lexed = stream(block, code, args.chunk, whole)
        else:
            times = []
            for end in [*range(args.chunk, len(code), args.chunk), len(code)]:
                started = time.perf_counter()
                block.set_code(f"```\n{code[:end]}\n", code[:end], "")
                times.append((time.perf_counter() - started) * 1000)
        print(
            f"{name:20} median {statistics.median(times):6.2f} ms  worst {max(times):6.2f} ms  "
            f"lexed {lexed:,} characters over {len(times)} updates"
        )
        block.deleteLater()
    app.processEvents()


if __name__ == "__main__":
    main()
