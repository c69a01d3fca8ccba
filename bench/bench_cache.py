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

Figures: the cache-read share of all input tokens (read / (input + written + read)),
the written share, and the input cost relative to sending the same tokens uncached
(reads at 0.1×, 5-minute writes at 1.25× the base price, as the pricing page says).
Not a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import keyring  # noqa: E402

from app.chat.events import Activity, ChatEvents  # noqa: E402
from app.chat.loop import QueueLoop  # noqa: E402
from app.chat.service import ChatService, ServiceDependencies  # noqa: E402
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
from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402
from tests.fakes.keyring_backend import MemoryKeyring  # noqa: E402

SONNET = FALLBACK_MODELS[0]
OPUS = next(model for model in FALLBACK_MODELS if model.id.startswith("claude-opus"))

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

    @property
    def total(self) -> int:
        return self.input + self.written + self.read

    def add(self, usage: Usage) -> None:
        self.input += usage.input_tokens
        self.written += usage.cache_creation_input_tokens
        self.read += usage.cache_read_input_tokens

    def line(self) -> str:
        cost = (self.input + 1.25 * self.written + 0.1 * self.read) / self.total
        return (
            f"{self.name:<12} {self.turns:>5} {self.total:>11,} {self.read / self.total:>9.1%} "
            f"{self.written / self.total:>9.1%} {cost:>9.2f}× {self.summaries:>9}"
        )


def run(name: str, model: ModelInfo, turns: int) -> Figures:
    home = Path(tempfile.mkdtemp(prefix="cairn-bench-cache-"))
    os.environ["CAIRN_HOME"] = str(home)
    paths = AppPaths.from_environment()
    paths.ensure()
    server = FakeAnthropicServer(models=[model]).start()
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
        return current.activity is Activity.IDLE and not current.has_jobs

    try:
        service.start()
        loop.run_until(lambda: service.counter.ready and service.runner.running == 0, 60)
        loop.run_until(lambda: service.selected_model == model.id, 60)
        for _turn in range(turns):
            server.add_reply(prose(rng, rng.randint(120, 320)))
            if not service.send(prose(rng, rng.randint(30, 160))):
                loop.run_until(lambda: service.current.activity is Activity.REPLYING, 120)
            loop.run_until(idle, 120)
        if events.problems:
            raise RuntimeError(f"the conversation went wrong: {events.problems}")
        session_id = service.current.session_id
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args(argv)
    backend = MemoryKeyring()
    backend.passwords[(SERVICE_NAME, USERNAME)] = "sk-ant-bench-cache-key"
    keyring.set_keyring(backend)
    print(
        f"{'scenario':<12} {'turns':>5} {'input all':>11} {'read':>9} {'written':>9} "
        f"{'cost':>10} {'summaries':>9}"
    )
    for name, model in (("sonnet-200k", SONNET), ("opus-200k", OPUS)):
        print(run(name, model, args.turns).line(), flush=True)
    print(
        "read / written: shares of all input tokens; cost: input cost against no caching "
        "(reads 0.1×, writes 1.25×)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
