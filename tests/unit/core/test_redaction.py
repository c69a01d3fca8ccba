"""The one redactor (app.core.redaction): secrets of every shape become `[redacted]`,
ordinary prose stays, and reading a long text in pieces changes nothing."""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from app.core import redaction, text_scan
from app.core.extract import extract_facets
from app.core.models import Role
from app.core.redaction import REDACTED, looks_like_random_token, redact_secrets
from tests.unit.core.test_extract import message, small_pieces

# --- what is a secret


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-ant-api03-AbC_12-xyz end", "key [redacted] end"),
        ("Authorization: Bearer abcDEF123456789", "Authorization: Bearer [redacted]"),
        ("my password is hunter2, ok?", "my password is [redacted], ok?"),
        ("password: hunter2", "password: [redacted]"),
        ("pwd=s3cr3t!", "pwd=[redacted]"),
        ("the passcode is 4321.", "the passcode is [redacted]"),
        ('PASSWORD = "correct horse battery staple"', "PASSWORD = [redacted]"),
        ("api_key: abc123xyz", "api_key: [redacted]"),
        ("x-api-key: abc123", "x-api-key: [redacted]"),
        ("use ghp_" + "a1B2" * 9 + " here", "use [redacted] here"),
        ("AKIAIOSFODNN7EXAMPLE is the id", "[redacted] is the id"),
        ("token xoxb-123456789012-abcdefABCDEF", "token [redacted]"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123", "jwt [redacted]"),
        ("https://bob:pa55w0rd@db.example.com/x", "https://bob:[redacted]@db.example.com/x"),
        (
            "https://x.com/cb?access_token=abc123&q=1",
            "https://x.com/cb?access_token=[redacted]&q=1",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----\nthanks",
            "[redacted]\nthanks",
        ),
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", "[redacted]"),
        ("key aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5 here", "key [redacted] here"),
    ],
)
def test_secrets_are_redacted(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Your password is wrong, and the password is required.",
        "The bearer instrument is old.",
        "commit 3f5c9e1b2d4f6a8c0e2b4d6f8a0c2e4d6f8a0c2f fixed it",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "getUserAccountSettingsForTenant2 and test_summarization_config_roundtrip_v2",
        "ContextBuilderEstimateStateTests2 and MAX_SUMMARY_TOKENS_FOR_THE_MODEL_V2",
        "The token limit is 800 and the secret to good soup is time.",
        "Use sk-ant- keys only from the console.",  # the prefix alone is no key
    ],
)
def test_ordinary_text_is_not_redacted(text: str) -> None:
    assert redact_secrets(text) == text


_WORDS = st.lists(
    st.sampled_from(
        [
            "the",
            "plan",
            "is",
            "to",
            "ship",
            "on",
            "Friday",
            "with",
            "Maria",
            "and",
            "Tom",
            "budget",
            "$1,200",
            "report_v2.xlsx",
            "getUserName",
            "MAX_TOKENS",
            "5 kg",
            "2026-03-05",
            "https://example.com/a",
            "token",
            "limit",
            "key",
            "ideas",
            "café",
            "naïve",
            "résumé",
            "Straße",
            "東京",
            "42",
            "3.5 GB",
            "user_id",
            "snake_case_name",
            "ContextBuilder",
            "deadbeefcafebabe0123456789abcdef",
            "of",
            "bad",
            "news",
            "secret",
            "sauce",
            "—",
            "!",
            "?",
            ",",
        ]
    ),
    max_size=40,
)
_KEY_CHARS = string.ascii_letters + string.digits + "_-"


@st.composite
def _prefixed_secret(draw: st.DrawFn) -> str:
    """A key-like string of one of the shapes recognised by their prefix."""
    body = draw(st.text(alphabet=_KEY_CHARS, min_size=1, max_size=60))
    alnum = draw(st.text(alphabet=string.ascii_letters + string.digits, min_size=40, max_size=60))
    upper = draw(st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16))
    value = draw(st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=30))
    digit = draw(st.sampled_from(string.digits))
    return draw(
        st.sampled_from(
            [
                f"sk-ant-{body}",
                f"sk-ant-api03-{body}",
                f"ghp_{alnum}",
                f"github_pat_{alnum}",
                f"AKIA{upper}",
                f"Bearer {alnum}",
                f"password: {value}{digit}",
                f"my password is {value}{digit}",
                f"pwd={value}{digit}",
                f"api_key={value}",
            ]
        )
    )


def _secret_value(secret: str) -> str:
    """The part of `secret` that must not survive (labels may stay)."""
    for label in ("Bearer ", "password: ", "my password is ", "pwd=", "api_key="):
        if secret.startswith(label):
            return secret[len(label) :]
    return secret


@given(before=_WORDS, after=_WORDS, secret=_prefixed_secret())
def test_prefixed_secrets_embedded_in_text_never_survive(
    before: list[str], after: list[str], secret: str
) -> None:
    text = " ".join([*before, secret, *after])
    value = _secret_value(secret)
    standing = rf"(?<![\w-]){re.escape(value)}(?![\w-])"
    # A short value may stand in the words around it too ("a" in ".../a"), where it is
    # no secret and rightly kept.
    assume(not re.search(standing, " ".join([*before, *after])))

    redacted = redact_secrets(text)

    assert REDACTED in redacted
    assert not re.search(standing, redacted)


@given(before=_WORDS, after=_WORDS, seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_tokens_embedded_in_text_never_survive(
    before: list[str], after: list[str], seed: int
) -> None:
    """A generated key of 40+ characters mixing upper case, lower case and digits."""
    rng = random.Random(seed)
    length = rng.randint(40, 64)
    token = list(rng.choices(string.ascii_letters + string.digits, k=length))
    for position, alphabet in zip(
        rng.sample(range(length), 3),
        (string.ascii_uppercase, string.ascii_lowercase, string.digits),
        strict=True,
    ):
        token[position] = rng.choice(alphabet)
    secret = "".join(token)
    assert looks_like_random_token(secret)

    facets = extract_facets([message(1, Role.USER, " ".join([*before, secret, *after]))])

    assert secret not in redact_secrets(" ".join([*before, secret, *after]))
    assert secret not in facets.model_dump_json()


@given(_WORDS)
def test_ordinary_words_are_never_redacted(words: list[str]) -> None:
    text = " ".join(words)

    assert redact_secrets(text) == text


# --- read in pieces and windows


@pytest.mark.parametrize(
    "text",
    [
        "Bearer " + "a1B2" * 100 + "==",
        "password: " + " " * 350 + '"correct horse battery staple"',
        'api_key = "' + "value " * 30 + '"',
        "x-api-key: " + "v" * 500,
        "https://" + "u" * 400 + ":" + "p" * 400 + "@db.example.com",
        "eyJ" + "a" * 400 + "." + "b" * 400 + "." + "c" * 400,
        "eyJ" + "a" * 400 + "." + "b" * 400,
        "sk-ant-" + "k" * 700 + " and https://x.example/cb?token=" + "t" * 500 + "&q=1",
        "-----BEGIN PRIVATE KEY-----\n" + "MIIE\n" * 200 + "-----END PRIVATE KEY-----\nok",
        # A secret's replacement brings a label's quote closer to what follows it.
        "{'x-api-key': '" + "Q1w" * 70 + "',x\t{'x-api-key': 'next value'",
    ],
)
def test_secrets_longer_than_a_window_are_redacted_as_a_whole(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = redact_secrets(text)

    small_pieces(monkeypatch)

    assert redact_secrets(text) == expected


def test_long_tokens_are_judged_the_same_when_read_in_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(9)
    tokens = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(32, 900)))
        for alphabet in (string.ascii_letters + string.digits, "aB1", "abcdE1", "xyzAeio9", "aB")
        * 50
    ]
    expected = [looks_like_random_token(token) for token in tokens]

    monkeypatch.setattr(redaction, "_TOKEN_WINDOW_CHARS", 30)
    monkeypatch.setattr(text_scan, "WINDOW_CHARS", 40)

    assert [looks_like_random_token(token) for token in tokens] == expected
