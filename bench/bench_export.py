"""Export and import of one long conversation, as `cairn export` / `cairn import` and the
File menu run them.

Run: .venv/bin/python bench/bench_export.py [--messages 10000] [--runs 3]

A conversation of `--messages` messages (realistic lengths: short questions, longer
replies; about 7.8 MB of text at 10,000) with its older four fifths condensed into
summaries (a condensed one every 100 messages) is built once into /tmp/cairn-bench/.
Timed, per run: export to JSON and to Markdown (the file written and synced), reading
and checking the JSON (`read_export`: parse + every field validated), and importing it
into a fresh database in one transaction (with the full-text index and the counts kept
in step by their triggers). Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FOLDER = Path("/tmp/cairn-bench")
T = TypeVar("T")
WORDS = [
    "the", "a", "of", "to", "and", "we", "budget", "invoice", "kitchen", "tiles", "quote",
    "Monday", "garden", "flight", "hotel", "price", "meeting", "report", "deadline", "plan",
    "could", "would", "should", "think", "about", "with", "for", "from", "next", "week",
]  # fmt: skip


def build(path: Path, messages: int) -> None:
    from app.core.summary import (
        SummaryContent,
        SummaryDraft,
        SummaryMode,
        SummaryTier,
        SummaryTrigger,
    )
    from app.store import SessionStore, SummaryStore, open_database
    from app.store.database import mark_clean_shutdown

    rng = random.Random(3)
    opened = open_database(path)
    store = SessionStore(opened.connection, database=opened.path)
    summaries = SummaryStore.open(path)
    session = store.create_session("A long conversation", "claude-sonnet-4-5")
    ids: list[int] = []
    for turn in range(messages):
        length = rng.randint(10, 60) if turn % 2 == 0 else rng.randint(80, 260)
        text = " ".join(rng.choice(WORDS) for _ in range(length))
        role = "user" if turn % 2 == 0 else "assistant"
        ids.append(store.append_message(session.id, role, text, token_estimate=length).id)
    for first in range(0, messages * 4 // 5, 100):
        summaries.commit_summary(
            SummaryDraft(
                session_id=session.id,
                tier=SummaryTier.CONDENSED,
                first_seq=first + 1,
                last_seq=first + 100,
                message_ids=ids[first : first + 100],
                content=SummaryContent(narrative="They planned " + rng.choice(WORDS)),
                source_tokens=10_000,
                summary_tokens=200,
                mode=SummaryMode.RULE,
                trigger=SummaryTrigger.AUTO,
            )
        )
    summaries.close()
    store.close()
    mark_clean_shutdown(opened.path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from app.store import open_database
    from app.store.database import connect
    from app.store.export import (
        ExportFormat,
        export_conversations,
        import_conversations,
        read_export,
    )

    FOLDER.mkdir(exist_ok=True)
    source = FOLDER / f"export-{args.messages}.db"
    if not source.exists():
        print(f"building {source} (once)")
        build(source, args.messages)
    times: dict[str, list[float]] = {}

    def timed(label: str, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        result = work(*args, **kwargs)
        times.setdefault(label, []).append((time.perf_counter() - started) * 1000)
        return result

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        json_file, markdown_file = out / "talk.json", out / "talk.md"
        for run in range(args.runs):
            connection = connect(source)
            timed(
                "export, JSON", export_conversations, connection, json_file, fmt=ExportFormat.JSON
            )
            markdown = ExportFormat.MARKDOWN
            timed("export, Markdown", export_conversations, connection, markdown_file, fmt=markdown)
            connection.close()
            export = timed("import: read and check the JSON", read_export, json_file)
            opened = open_database(out / f"fresh-{run}.db")
            timed(
                "import: write (one transaction)", import_conversations, opened.connection, export
            )
            opened.connection.close()
        sizes = f"JSON {json_file.stat().st_size / 1024**2:.1f} MB, "
        sizes += f"Markdown {markdown_file.stat().st_size / 1024**2:.1f} MB"
    print(f"one conversation of {args.messages:,} messages ({sizes}); {args.runs} runs")
    for label, samples in times.items():
        print(
            f"  {label:<34} median {statistics.median(samples):7.0f} ms   "
            f"min {min(samples):7.0f}   max {max(samples):7.0f}"
        )


if __name__ == "__main__":
    main()
