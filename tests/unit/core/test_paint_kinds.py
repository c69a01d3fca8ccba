"""The enums and words the window paints with, apart from the pydantic records (issue 20).

app.core.message_kinds, summary_kinds and token_words: the old import paths give the same
objects, and importing the three loads no pydantic.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from app.core import context, message_kinds, models, summary, summary_kinds, token_words

REPO = Path(__file__).resolve().parents[3]


def test_the_old_import_paths_give_the_same_objects() -> None:
    # Other branches, and the rest of Cairn, still import them from where they were.
    assert models.Role is message_kinds.Role
    assert models.MessageStatus is message_kinds.MessageStatus
    assert summary.SummaryTier is summary_kinds.SummaryTier
    assert summary.SummaryMode is summary_kinds.SummaryMode
    assert summary.EventKind is summary_kinds.EventKind
    assert summary.EventOutcome is summary_kinds.EventOutcome
    assert summary.dated_text is summary_kinds.dated_text
    assert summary.archived_facts_note is summary_kinds.archived_facts_note
    assert context.format_token_count is token_words.format_token_count
    assert context.say_token_pair is token_words.say_token_pair


def test_the_records_still_validate_the_enums_they_hold() -> None:
    message = models.Message.model_validate(
        {
            "id": 1,
            "session_id": "s",
            "seq": 1,
            "role": "assistant",
            "content": "Hi",
            "created_at": datetime(2026, 3, 3, tzinfo=UTC),
            "status": "cut_off",
        }
    )

    assert message.role is message_kinds.Role.ASSISTANT
    assert message.status is message_kinds.MessageStatus.CUT_OFF


def test_the_kinds_load_without_pydantic() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            "import app.core.message_kinds, app.core.summary_kinds, app.core.token_words\n"
            "print(json.dumps('pydantic' in sys.modules))\n",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    )

    assert json.loads(loaded.stdout) is False
