"""How much of what Cairn sends is read from Claude's prompt cache, over a 50-turn conversation.

Run: .venv/bin/python bench/bench_cache.py [--turns 50]

The whole app path: a `ChatService` on a `QueueLoop` (built as
tests/unit/chat/conftest.py does), a real SQLite file, the real SDK against the
fake server in-process, whose prompt cache (tests/fakes/prompt_cache.py) reports
`cache_read_input_tokens` / `cache_creation_input_tokens` as the API documents
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching). Each turn
is `service.send(question)`, then the loop runs until the reply is stored; the
usage is read back from the stored replies.

Scenarios (each on a fresh data folder):
- sonnet-200k: Claude Sonnet 4.6 (minimum cacheable 1,024 tokens), a 200k window:
  nothing is condensed, the conversation simply grows.
- opus-200k: Claude Opus 4.6 (minimum 4,096 tokens): the first turns are too short.
- files-*: Claude Sonnet 5.5 (`claude-sonnet-5-5`, a 1M window), 50 turns with files:
  two 60-page PDFs of 2 MB (turns 1 and 2), then a 3000×2000 picture of 1.5 MB every
  other turn (25 in all), against the fake's request-wide limits (file_blocks.py):
  - files-before: every file re-sent every turn, as main did before issue 19 item 4
    (the strict fake refuses the requests that break a limit: counted as "refused");
  - files-every-turn: the oldest files left out exactly as far as needed, one more each
    turn (no steps);
  - files-after: left out in steps (app/core/file_limits.py, STEP_SHARE), every file sent
    as base64 (a server without the Files API: the fake's `files.mode` "off"), as main
    did before the Files API;
  - files-by-id: this branch: each file uploaded once through the Files API and referred
    to by `file_id` in every request (https://platform.claude.com/docs/en/build-with-claude/files;
    app/chat/uploads.py), its bytes out of the body, its pages and picture still counted.
  For them it also prints the mean request body per turn (MB, the bodies the fake
  received) and the time the SDK's JSON encoder takes for each, and for files-by-id the
  bytes uploaded (once) and how many uploads.

Figures: the cache-read share of all input tokens (read / (input + written + read)),
the written share, and the input cost relative to sending the same tokens uncached
(reads at 0.1×, 5-minute writes at 1.25× the base price, as the pricing page says).
Not a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import keyring  # noqa: E402

from app.chat.attachments import AttachmentPreparer  # noqa: E402
from app.chat.events import Activity, ChatEvents  # noqa: E402
from app.chat.loop import QueueLoop  # noqa: E402
from app.chat.service import ChatService, ServiceDependencies  # noqa: E402
from app.core.attachments import Attachment  # noqa: E402
from app.core.catalog import FALLBACK_MODELS, ModelInfo  # noqa: E402
from app.core.errors import UserFacingError  # noqa: E402
from app.core.models import Role, Usage  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.core.settings import AppSettings  # noqa: E402
from app.core.summarization_config import SummarizationConfig  # noqa: E402
from app.core.summary import SummaryMode  # noqa: E402
from app.core.tokens import default_counter  # noqa: E402
from app.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from app.secrets.keystore import SERVICE_NAME, USERNAME, KeyStore  # noqa: E402
from app.store.calibration_file import CalibrationFile  # noqa: E402
from app.store.database import open_database  # noqa: E402
from app.store.model_cache import ModelCache  # noqa: E402
from app.store.sessions import SessionStore  # noqa: E402
from app.store.summaries import SummaryStore  # noqa: E402
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer  # noqa: E402
from tests.fakes.keyring_backend import MemoryKeyring  # noqa: E402
from tests.fakes.sample_files import pdf_in_object_streams, png  # noqa: E402

SONNET = FALLBACK_MODELS[0]
OPUS = next(model for model in FALLBACK_MODELS if model.id.startswith("claude-opus"))
# https://platform.claude.com/docs/en/models/sonnet-5-5/overview: 1M tokens, 128K output.
SONNET_5_5 = ModelInfo(
    id="claude-sonnet-5-5",
    display_name="Claude Sonnet 5.5",
    max_input_tokens=1_000_000,
    max_tokens=128_000,
)

WORDS = [
    "route",
    "ridge",
    "cairn",
    "bothy",
    "glen",
    "burn",
    "corrie",
    "plateau",
    "compass",
    "bearing",
    "map",
    "grid",
    "reference",
    "water",
    "filter",
    "stove",
    "tent",
    "pitch",
    "wind",
    "forecast",
    "snow",
    "patch",
    "path",
    "descent",
    "ascent",
    "summit",
    "col",
    "loch",
    "river",
    "ford",
    "bridge",
    "shelter",
    "boots",
    "layers",
    "gloves",
    "hat",
]


def prose(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        length = min(words, rng.randint(8, 18))
        sentence = " ".join(rng.choice(WORDS) for _ in range(length))
        sentences.append(sentence.capitalize() + ".")
        words -= length
    return " ".join(sentences)


class Quiet(ChatEvents):
    def __init__(self) -> None:
        self.problems: list[UserFacingError] = []

    def error_raised(self, error: UserFacingError) -> None:
        self.problems.append(error)


@dataclass
class Figures:
    name: str
    turns: int
    input: int = 0
    written: int = 0
    read: int = 0
    summaries: int = 0
    refused: int = 0  # requests the fake refused (files over a request-wide limit)
    left_out: int = 0  # files named in a note in the last request
    body_mb: float = 0.0  # the mean request body the fake received
    encode_ms: float = 0.0  # the SDK's JSON encoding of a body
    uploads: int = 0  # files uploaded through the Files API (files-by-id)
    uploaded_mb: float = 0.0

    @property
    def total(self) -> int:
        return self.input + self.written + self.read

    def add(self, usage: Usage) -> None:
        self.input += usage.input_tokens
        self.written += usage.cache_creation_input_tokens
        self.read += usage.cache_read_input_tokens

    def line(self) -> str:
        cost = (self.input + 1.25 * self.written + 0.1 * self.read) / self.total
        line = (
            f"{self.name:<16} {self.turns:>5} {self.total:>11,} {self.read / self.total:>9.1%} "
            f"{self.written / self.total:>9.1%} {cost:>9.2f}× {self.summaries:>9}"
        )
        if self.name.startswith("files"):
            line += (
                f" {self.refused:>7} {self.left_out:>8}   body {self.body_mb:.3f} MB, "
                f"encode {self.encode_ms:.1f} ms"
            )
            if self.uploads:
                line += f", {self.uploads} uploads ({self.uploaded_mb:.1f} MB, once)"
        return line


def photo(width: int, height: int, size: int, seed: int) -> bytes:
    """A PNG header of `width` × `height` px made `size` bytes long (a photo's weight)."""
    head = png(width, height, (seed % 255, 90, 160))
    return head + random.Random(seed).randbytes(max(0, size - len(head)))


def turn_files(turn: int) -> list[tuple[str, bytes]]:
    """The files the files-* scenarios attach on `turn`."""
    if turn in (0, 1):
        pages = pdf_in_object_streams(60, padding=2_000_000)
        return [(("report.pdf", "annex.pdf")[turn], pages)]
    if turn % 2 == 0:
        return [(f"site{turn // 2:02}.png", photo(3000, 2000, 1_500_000, turn))]
    return []


def body_figures(figures: Figures, bodies: Sequence[dict[str, Any]]) -> None:
    """Mean body size and the SDK encoder's time over the requests the fake received."""
    from anthropic._utils._json import openapi_dumps

    size, elapsed = 0, 0.0
    for body in bodies:
        started = time.perf_counter()
        size += len(openapi_dumps(body))
        elapsed += time.perf_counter() - started
    figures.body_mb = size / len(bodies) / 1e6
    figures.encode_ms = elapsed / len(bodies) * 1000


def run(
    name: str, model: ModelInfo, turns: int, files: bool = False, by_id: bool = False
) -> Figures:
    home = Path(tempfile.mkdtemp(prefix="cairn-bench-cache-"))
    os.environ["CAIRN_HOME"] = str(home)
    paths = AppPaths.from_environment()
    paths.ensure()
    server = FakeAnthropicServer(models=[model]).start()
    server.files.mode = "ga" if by_id else "off"
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    database = paths.database
    # Rule-based summaries: the fake's scripted replies are for the chat, not the summarizer.
    settings = AppSettings().model_copy(
        update={
            "api_base_url": server.base_url,
            "model": model.id,
            "summarization": SummarizationConfig(mode=SummaryMode.RULE),
        }
    )
    loop = QueueLoop()
    events = Quiet()
    service = ChatService(
        ServiceDependencies(
            store=store,
            database=database,
            open_store=lambda: SessionStore.open(database),
            open_summaries=lambda: SummaryStore.open(database),
            keystore=KeyStore(),
            provider_factory=lambda key, url: AnthropicProvider(key, url),
            settings=settings,
            settings_path=paths.settings_file,
            calibration_file=CalibrationFile.in_data_dir(paths),
            model_cache=ModelCache.in_data_dir(paths),
            counter=default_counter(),
        ),
        loop,
        events,
    )
    figures = Figures(name, turns)
    rng = random.Random(7)

    def idle() -> bool:
        current = service.current
        return current.state.activity is Activity.IDLE and not current.has_jobs

    try:
        service.start()
        loop.run_until(lambda: service.counter.ready and service.runner.running == 0, 60)
        loop.run_until(lambda: service.current.state.model_id == model.id, 60)
        preparer = service.attachments.preparer if files else None
        for turn in range(turns):
            server.add_reply(prose(rng, rng.randint(120, 320)))
            if preparer is not None:
                attach(loop, preparer, service, turn_files(turn))
            if not service.send(prose(rng, rng.randint(30, 160))):
                if events.problems and files:
                    figures.refused += 1  # refused before sending (never on this path)
                    events.problems.clear()
                    continue
                loop.run_until(lambda: service.current.state.activity is Activity.REPLYING, 120)
            loop.run_until(idle, 120)
            if files and events.problems:
                figures.refused += len(events.problems)
                events.problems.clear()
        if events.problems:
            raise RuntimeError(f"the conversation went wrong: {events.problems}")
        if files:
            bodies = [r.body for r in server.requests_to(MESSAGES_PATH)]
            body_figures(figures, bodies)
            last = json.dumps(bodies[-1]["messages"], ensure_ascii=False)
            figures.left_out = sum(
                note.count(",") + 1
                for note in re.findall(r"\[earlier files?: ([^\]]*) — not re-sent\]", last)
            )
            figures.uploads = len(server.files.uploads)
            figures.uploaded_mb = sum(len(f.data) for f in server.files.uploads) / 1e6
        session_id = service.current.state.session_id
        assert session_id is not None
        for message in store.messages(session_id):
            if message.role is Role.ASSISTANT and message.usage is not None:
                figures.add(message.usage)
        summaries = SummaryStore.open(database)
        figures.summaries = len(summaries.summaries(session_id))
        summaries.close()
    finally:
        service.shutdown()
        store.close()
        server.close()
        shutil.rmtree(home, ignore_errors=True)
    return figures


def attach(
    loop: QueueLoop,
    preparer: AttachmentPreparer,
    service: ChatService,
    files: Sequence[tuple[str, bytes]],
) -> None:
    """Prepare `files` as the composer does and hand them to the conversation."""
    prepared: list[Attachment] = []
    for name, data in files:
        results: list[object] = []
        preparer.prepare(name, lambda data=data: data, results.append, results.append)
        loop.run_until(lambda results=results: bool(results), 60)
        assert isinstance(results[0], Attachment), results[0]
        prepared.append(results[0])
    service.current.outgoing.set(prepared)


def run_files(mode: str, turns: int) -> Figures:
    """A files-* scenario (see the module notes): before, every-turn, after or by-id."""
    import app.chat.attachments as chat_attachments
    import app.core.file_limits as file_limits

    plan, step = chat_attachments.plan_files, file_limits.STEP_SHARE
    if mode == "before":  # every file re-sent, as main did
        chat_attachments.plan_files = lambda *_args, **_kw: file_limits.FilePlan()  # type: ignore[assignment]
    elif mode == "every-turn":
        file_limits.STEP_SHARE = 1e-9
    try:
        return run(f"files-{mode}", SONNET_5_5, turns, files=True, by_id=mode == "by-id")
    finally:
        chat_attachments.plan_files, file_limits.STEP_SHARE = plan, step


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--files-only", action="store_true", help="only the files-* scenarios")
    args = parser.parse_args(argv)
    backend = MemoryKeyring()
    backend.passwords[(SERVICE_NAME, USERNAME)] = "sk-ant-bench-cache-key"
    keyring.set_keyring(backend)
    parser_args = args
    print(
        f"{'scenario':<16} {'turns':>5} {'input all':>11} {'read':>9} {'written':>9} "
        f"{'cost':>10} {'summaries':>9} {'refused':>7} {'left out':>8}"
    )
    if not parser_args.files_only:
        for name, model in (("sonnet-200k", SONNET), ("opus-200k", OPUS)):
            print(run(name, model, args.turns).line(), flush=True)
    for mode in ("before", "every-turn", "after", "by-id"):
        print(run_files(mode, args.turns).line(), flush=True)
    print(
        "read / written: shares of all input tokens; cost: input cost against no caching "
        "(reads 0.1×, writes 1.25×)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
