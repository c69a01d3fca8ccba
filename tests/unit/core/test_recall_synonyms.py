"""Recall's synonyms: other words for a question's nouns, from the table derived from
WordNet 3.0 (issue 22, paraphrase)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import recall_synonyms
from app.core.recall_synonyms import synonyms_of


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A table of our own in place of the shipped one (read again for each test)."""
    path = tmp_path / "synonyms.txt"
    monkeypatch.setattr(recall_synonyms, "SYNONYM_TABLE", path)
    recall_synonyms._table.cache_clear()
    yield path
    recall_synonyms._table.cache_clear()


def test_the_shipped_table_knows_children_are_kids() -> None:
    assert "kid" in synonyms_of("child")
    assert "kid" in synonyms_of("children")  # an irregular plural, by its singular
    assert "child" in synonyms_of("kids")  # a regular plural
    assert "auto" in synonyms_of("car")


def test_a_word_that_is_mostly_not_a_noun_is_nobodys_synonym() -> None:
    # "minor" shares child's first sense, but is mostly said as an adjective ("a minor
    # issue"); "present" is mostly a verb or an adjective.
    assert "minor" not in synonyms_of("child")
    assert synonyms_of("present") == ()


def test_a_word_never_lists_itself_and_an_unknown_word_has_none() -> None:
    assert "child" not in synonyms_of("child")
    assert synonyms_of("qwertyuiop") == ()


def test_groups_and_plurals_are_read_from_the_table(table: Path) -> None:
    table.write_text(
        "# a comment\nchild kid youngster\nbox crate\n= children child\n", encoding="utf-8"
    )
    assert synonyms_of("children") == ("kid", "youngster")
    assert synonyms_of("youngsters") == ("child", "kid")
    assert synonyms_of("boxes") == ("crate",)
    assert synonyms_of("crate") == ("box",)


def test_a_missing_table_means_no_synonyms_and_says_so(
    table: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert synonyms_of("child") == ()
    assert "without synonyms" in caplog.text
