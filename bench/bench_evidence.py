"""How much of the evidence for a question the request Cairn builds still carries verbatim.

Run: .venv/bin/python bench/bench_evidence.py [--conversations 10] [--messages 320]

Ten long synthetic conversations (a trip, a renovation, a job search, ...),
each 300+ messages over many days, with facts planted in known messages and a
question for each. Every conversation goes through the engine as the app runs
it (rule mode: offline, no LLM): after each reply the policy observes and
decides, and a summary runs when due. At two points (after 60 % of the
messages, and at the end) each question whose fact came before is asked: the
request is built with the question as the new message (an emergency summary
first if it would not fit, as the send path does), and we record

- whether the evidence message is present verbatim in the request's messages,
- how full the request is (share of the usable window),

beside plain truncation — the newest messages that fit with the question —
in the same run, at windows of 4k, 8k and 16k tokens. A last column is a
what-if, not what the app sends: Cairn's request with the room left filled
(up to 95 %) with the newest condensed originals before the live tail.

Prints a table; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import bisect
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.catalog import ModelInfo
from app.core.context import BuiltRequest, ContextBuilder, RequestInputs
from app.core.engine import SummarizationEngine
from app.core.errors import ContextOverflowError
from app.core.models import Message, Role
from app.core.policy import TriggerMemory
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import SummaryTrigger
from app.core.tokens import TokenCounter, default_counter
from tests.fakes.memory_repository import MemorySummaryRepository

WINDOWS = (4_000, 8_000, 16_000)
# The what-if column: how full a request filled back with condensed originals gets.
BACKFILL_RATIO = 0.95


@dataclass(frozen=True)
class Topic:
    """What one synthetic conversation is about.

    Attributes:
        name: its subject.
        things: nouns the small talk is about.
        facts: (statement, question) pairs; `{x}` in both is filled with a made-up value.
    """

    name: str
    things: tuple[str, ...]
    facts: tuple[tuple[str, str, str], ...]  # statement, question, kind of value


TOPICS: tuple[Topic, ...] = (
    Topic(
        "a three-week trip to Japan",
        (
            "the rail pass",
            "the ryokan in Hakone",
            "Kyoto temples",
            "the Osaka food tour",
            "luggage forwarding",
            "the Nakasendo walk",
            "pocket wifi",
            "the Tokyo hotel",
        ),
        (
            (
                "By the way, the Hakone ryokan booking reference is {x}.",
                "What was the Hakone ryokan booking reference?",
                "code",
            ),
            (
                "Our flight lands at Haneda at {x} on the first day.",
                "What time does our flight land at Haneda?",
                "time",
            ),
            (
                "I checked: the rail pass costs {x} yen for 21 days.",
                "How much did the rail pass cost?",
                "money",
            ),
            (
                "My sister's friend in Osaka is called {x}, she offered to show us around.",
                "What is the name of the friend in Osaka?",
                "name",
            ),
        ),
    ),
    Topic(
        "a kitchen renovation",
        (
            "the worktops",
            "the extractor hood",
            "the tiler",
            "the plumbing",
            "cabinet doors",
            "the electrician",
            "the floor",
            "the skip hire",
        ),
        (
            (
                "The builder's quote came in at {x} pounds all in.",
                "What was the builder's quote?",
                "money",
            ),
            (
                "The paint colour we settled on is code {x}.",
                "Which paint colour code did we pick?",
                "code",
            ),
            ("The tiler can only start on {x}.", "When can the tiler start?", "day"),
            (
                "The electrician's name is {x}, he's recommended by the neighbours.",
                "What is the electrician's name?",
                "name",
            ),
        ),
    ),
    Topic(
        "a job search as a data analyst",
        (
            "my CV",
            "the cover letter",
            "the recruiter call",
            "the SQL test",
            "salary bands",
            "the portfolio",
            "LinkedIn",
            "the second interview",
        ),
        (
            (
                "The recruiter at the fintech is {x}, she'll call next week.",
                "Who is the recruiter at the fintech?",
                "name",
            ),
            (
                "They offered a base salary of {x} pounds.",
                "What base salary did they offer?",
                "money",
            ),
            (
                "The take-home test reference is {x}.",
                "What was the take-home test reference?",
                "code",
            ),
            ("The final interview is on {x}.", "When is the final interview?", "day"),
        ),
    ),
    Topic(
        "planning a wedding",
        (
            "the venue",
            "the caterer",
            "the guest list",
            "the band",
            "invitations",
            "the flowers",
            "the cake",
            "the seating plan",
        ),
        (
            (
                "The venue deposit was {x} pounds, paid by card.",
                "How big was the venue deposit?",
                "money",
            ),
            ("The florist is called {x}.", "What is the florist's name?", "name"),
            ("The caterer's order number is {x}.", "What is the caterer's order number?", "code"),
            ("The cake tasting is at {x}.", "What time is the cake tasting?", "time"),
        ),
    ),
    Topic(
        "buying a used car",
        (
            "the test drive",
            "the service history",
            "insurance quotes",
            "the dealer",
            "the MOT",
            "financing",
            "the tyres",
            "the part exchange",
        ),
        (
            (
                "The registration of the one we liked is {x}.",
                "What was the registration of the car we liked?",
                "code",
            ),
            (
                "The dealer came down to {x} pounds.",
                "What price did the dealer come down to?",
                "money",
            ),
            ("The salesman's name was {x}.", "What was the salesman's name?", "name"),
            ("The test drive is booked for {x}.", "When is the test drive booked?", "time"),
        ),
    ),
    Topic(
        "training for a marathon",
        (
            "long runs",
            "intervals",
            "the running shoes",
            "gels",
            "the taper",
            "the physio",
            "the race pack",
            "recovery",
        ),
        (
            ("My target pace is {x} per kilometre.", "What is my target pace?", "time"),
            ("The race bib number is {x}.", "What is my race bib number?", "code"),
            ("The physio is called {x}.", "What is the physio's name?", "name"),
            ("The new shoes cost {x} pounds.", "How much did the new shoes cost?", "money"),
        ),
    ),
    Topic(
        "moving house",
        (
            "the removal firm",
            "packing boxes",
            "the solicitor",
            "the survey",
            "utilities",
            "the new school",
            "the mortgage",
            "the keys",
        ),
        (
            ("The solicitor's case number is {x}.", "What is the solicitor's case number?", "code"),
            ("The removal firm quoted {x} pounds.", "What did the removal firm quote?", "money"),
            ("Completion is set for {x}.", "When is completion set for?", "day"),
            ("The estate agent is {x}.", "Who is the estate agent?", "name"),
        ),
    ),
    Topic(
        "starting a small bakery",
        (
            "the oven",
            "the lease",
            "sourdough starter",
            "the food hygiene rating",
            "the opening menu",
            "suppliers",
            "the shop sign",
            "pricing",
        ),
        (
            ("The lease is {x} pounds a month.", "How much is the lease a month?", "money"),
            (
                "The flour supplier's account number is {x}.",
                "What is the flour supplier's account number?",
                "code",
            ),
            ("The inspector visiting is {x}.", "Who is the inspector visiting?", "name"),
            ("We open at {x} on weekdays.", "What time do we open on weekdays?", "time"),
        ),
    ),
    Topic(
        "learning the piano as an adult",
        (
            "scales",
            "the Chopin nocturne",
            "the teacher",
            "the digital piano",
            "sight reading",
            "the grade exam",
            "practice routine",
            "pedalling",
        ),
        (
            ("My teacher is {x}.", "What is my piano teacher's name?", "name"),
            ("The exam entry number is {x}.", "What is my exam entry number?", "code"),
            ("The exam is on {x}.", "When is the piano exam?", "day"),
            (
                "The piano we chose costs {x} pounds.",
                "How much does the chosen piano cost?",
                "money",
            ),
        ),
    ),
    Topic(
        "an allotment garden",
        (
            "the raised beds",
            "tomatoes",
            "the compost",
            "slugs",
            "the shed",
            "seed potatoes",
            "watering",
            "the committee",
        ),
        (
            ("Our plot number is {x}.", "What is our allotment plot number?", "code"),
            ("The annual fee is {x} pounds.", "What is the annual allotment fee?", "money"),
            ("The committee secretary is {x}.", "Who is the committee secretary?", "name"),
            ("The water is turned on at {x}.", "When is the water turned on?", "day"),
        ),
    ),
)

USER_LINES = (
    "I've been thinking about {t} again.",
    "Can you help me compare the options for {t}?",
    "What would you do about {t} if you were me?",
    "Quick update on {t}: it's going better than expected.",
    "I'm a bit worried about {t}, to be honest.",
    "My partner thinks we should rethink {t}.",
    "Is there anything I'm forgetting about {t}?",
    "I read a forum thread about {t} last night and now I'm unsure.",
    "We spent most of the weekend on {t}.",
    "How long should {t} take, realistically?",
)
ASSISTANT_LINES = (
    "For {t}, the main thing is to decide what matters most to you and plan around it.",
    "A sensible approach to {t} is to set a budget first, then a timeline, then the details.",
    "Many people underestimate {t}; leaving a margin of a week or two usually pays off.",
    "If {t} feels overwhelming, split it into three small steps and do the first today.",
    "It helps to write down what you already know about {t} and what is still open.",
    "With {t}, asking someone who has done it recently is often the quickest shortcut.",
    "I would keep {t} flexible for now, since other choices may change it.",
    "A checklist for {t} avoids the usual last-minute surprises.",
    "Compare at least two options for {t} before committing.",
    "The cost of {t} tends to grow with every small change, so fix the scope early.",
)
NAMES = (
    "Aiko Tanaka",
    "Priya Shah",
    "Tomasz Nowak",
    "Grace Okafor",
    "Lucía Romero",
    "Hamish Reid",
    "Mei Chen",
    "Olu Adeyemi",
    "Sven Larsen",
    "Fatima Khan",
)


def made_up_value(kind: str, rng: random.Random) -> str:
    if kind == "code":
        letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
        return f"{letters}-{rng.randint(1000, 9999)}"
    if kind == "money":
        return f"{rng.randint(12, 980) * 10:,}"
    if kind == "time":
        return f"{rng.randint(6, 21)}:{rng.choice(('05', '15', '30', '45', '50'))}"
    if kind == "day":
        day = datetime(2026, 5, 1) + timedelta(days=rng.randint(0, 120))
        return day.strftime("%A %d %B").replace(" 0", " ")
    return rng.choice(NAMES)


@dataclass(frozen=True)
class Planted:
    """A fact planted at message `index` (0-based), and the question that needs it."""

    index: int
    text: str
    question: str
    value: str  # the planted fact's value ("QX-4821"), to find in a summary too


@dataclass(frozen=True)
class Conversation:
    messages: tuple[tuple[Role, str, datetime], ...]
    planted: tuple[Planted, ...]


def make_conversation(topic: Topic, length: int, rng: random.Random) -> Conversation:
    """`length` alternating messages over many days, each fact planted in a user turn."""
    # Facts twice over (two values per fact kind), spread over the whole conversation.
    slots = sorted(rng.sample(range(2, length - 4, 2), 2 * len(topic.facts)))
    facts = [fact for fact in topic.facts for _ in range(2)]
    rng.shuffle(facts)
    planted_at: dict[int, tuple[str, str, str]] = {}
    for slot, (statement, question, kind) in zip(slots, facts, strict=True):
        value = made_up_value(kind, rng)
        label = f" (version {len(planted_at) + 1})"
        planted_at[slot] = (
            statement.format(x=value) + label,
            question.rstrip("?") + label + "?",
            value,
        )
    when = datetime(2026, 1, 5, 8, 30, tzinfo=UTC)
    messages: list[tuple[Role, str, datetime]] = []
    planted: list[Planted] = []
    for index in range(length):
        when += timedelta(minutes=rng.randint(1, 40))
        if index % 2 == 0 and rng.random() < 0.12:
            when += timedelta(days=rng.randint(1, 3), hours=rng.randint(0, 5))
        thing = rng.choice(topic.things)
        if index % 2 == 0:
            lines = [rng.choice(USER_LINES).format(t=thing) for _ in range(rng.randint(1, 3))]
            if index in planted_at:
                text, question, value = planted_at[index]
                lines.insert(rng.randint(0, len(lines)), text)
                planted.append(Planted(index, " ".join(lines), question, value))
        else:
            lines = [
                rng.choice(ASSISTANT_LINES).format(t=rng.choice(topic.things))
                for _ in range(rng.randint(2, 6))
            ]
        messages.append((Role.USER if index % 2 == 0 else Role.ASSISTANT, " ".join(lines), when))
    return Conversation(tuple(messages), tuple(planted))


@dataclass
class Figures:
    cairn_found: int = 0
    truncation_found: int = 0
    backfill_found: int = 0
    cairn_fact: int = 0
    truncation_fact: int = 0
    questions: int = 0
    cairn_fill: list[float] | None = None
    truncation_fill: list[float] | None = None

    def __post_init__(self) -> None:
        self.cairn_fill, self.truncation_fill = [], []


def sent_text(built: BuiltRequest) -> str:
    """Everything the request carries: the system blocks (memory) and the messages."""
    system = (
        built.system
        if isinstance(built.system, str)
        else "\n".join(str(block["text"]) for block in built.system)
    )
    return "\n".join([system, *(str(m["content"]) for m in built.messages)])


def truncation_request(
    builder: ContextBuilder, model: ModelInfo, messages: Sequence[Message], question: str
) -> BuiltRequest:
    """The newest messages that fit with the question, and nothing else."""

    def fits(start: int) -> bool:
        inputs = RequestInputs(model=model, tail=messages[start:], draft=question)
        return builder.estimate_state(inputs).fits

    low = bisect.bisect_left(range(len(messages)), True, key=fits)  # the first that fits
    return builder.build_request(RequestInputs(model=model, tail=messages[low:], draft=question))


def backfill_request(
    builder: ContextBuilder,
    model: ModelInfo,
    repo: MemorySummaryRepository,
    session: str,
    question: str,
) -> BuiltRequest:
    """A what-if, not what the app sends: Cairn's request with the room left (up to
    BACKFILL_RATIO of the usable window) filled with the newest condensed originals,
    verbatim, before the live tail — summaries adding to what fits."""
    summaries = repo.active_summaries(session)
    live = repo.live_messages(session)
    archived = [m for m in repo.messages(session) if m.summary_id is not None]

    def request_tail(start: int) -> list[Message]:
        return sorted([*archived[start:], *live], key=lambda m: m.seq)

    def fits(start: int) -> bool:
        state = builder.estimate_state(
            RequestInputs(
                model=model, summaries=summaries, tail=request_tail(start), draft=question
            )
        )
        return state.ratio <= BACKFILL_RATIO

    low = bisect.bisect_left(range(len(archived)), True, key=fits)  # the first that fits
    return builder.build_request(
        RequestInputs(model=model, summaries=summaries, tail=request_tail(low), draft=question)
    )


def run_window(
    conversation: Conversation, window: int, counter: TokenCounter, figures: Figures
) -> None:
    model = ModelInfo(
        id=f"bench-{window}",
        display_name=f"{window // 1000}k",
        max_input_tokens=window,
        max_tokens=window // 8,
    )
    config = SummarizationConfig(mode="rule")
    repo = MemorySummaryRepository(counter)
    builder = ContextBuilder(counter)
    engine = SummarizationEngine(
        config, repo, Summarizer(config, complete=None, counter=counter), builder
    )
    session = "bench"
    memory = TriggerMemory()
    checkpoints = {int(len(conversation.messages) * 0.6) // 2 * 2, len(conversation.messages)}
    stored: list[Message] = []
    for index, (role, text, when) in enumerate(conversation.messages):
        stored.append(repo.append(session, role, text, created_at=when))
        memory = engine.policy.observe(memory, engine.state(session, model=model), new_messages=1)
        if role is Role.ASSISTANT:
            decision = engine.decide(session, model=model, memory=memory)
            memory = engine.policy.after_decision(memory, decision)
            if decision.summarize:
                outcome = engine.run(
                    session,
                    model=model,
                    trigger=SummaryTrigger(decision.trigger or "auto"),
                    decision=decision,
                )
                if outcome.changed:
                    memory = engine.policy.after_summary(memory, outcome.state_after)
        if index + 1 not in checkpoints:
            continue
        for planted in conversation.planted:
            if planted.index > index:
                continue
            evidence = stored[planted.index].content
            try:
                built = builder.build_request(
                    RequestInputs(
                        model=model,
                        summaries=repo.active_summaries(session),
                        tail=repo.live_messages(session),
                        draft=planted.question,
                    )
                )
            except ContextOverflowError:
                engine.run(
                    session, model=model, draft=planted.question, trigger=SummaryTrigger.AUTO
                )
                built = builder.build_request(
                    RequestInputs(
                        model=model,
                        summaries=repo.active_summaries(session),
                        tail=repo.live_messages(session),
                        draft=planted.question,
                    )
                )
            truncated = truncation_request(builder, model, stored, planted.question)
            backfilled = backfill_request(builder, model, repo, session, planted.question)
            figures.backfill_found += evidence in sent_text(backfilled)
            figures.cairn_fact += planted.value in sent_text(built)
            figures.truncation_fact += planted.value in sent_text(truncated)
            figures.questions += 1
            figures.cairn_found += evidence in sent_text(built)
            figures.truncation_found += evidence in sent_text(truncated)
            longer = builder.estimate_state(
                RequestInputs(model=model, tail=stored, draft=planted.question)
            )
            if not longer.fits:  # the conversation is longer than the window
                assert figures.cairn_fill is not None and figures.truncation_fill is not None
                figures.cairn_fill.append(built.state.ratio)
                figures.truncation_fill.append(truncated.state.ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--messages", type=int, default=320)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    counter = default_counter()
    rng = random.Random(args.seed)
    conversations = [
        make_conversation(TOPICS[i % len(TOPICS)], args.messages, rng)
        for i in range(args.conversations)
    ]
    tokens = [sum(counter.count(text) for _, text, _ in c.messages) for c in conversations]
    days = [len({when.date() for _, _, when in c.messages}) for c in conversations]
    print(
        f"{len(conversations)} conversations, {args.messages} messages each, "
        f"{min(tokens):,}–{max(tokens):,} tokens, {min(days)}–{max(days)} days; "
        f"{sum(len(c.planted) for c in conversations)} planted facts; rule mode (offline)"
    )
    print(
        f"{'window':>7} | {'questions':>9} | {'Cairn evidence':>14} | "
        f"{'truncation evidence':>19} | "
        f"{'Cairn fill median/min':>21} | {'truncation fill median':>22} | "
        f"{'what-if: backfilled evidence':>28}"
    )
    facts: list[str] = []
    for window in WINDOWS:
        figures = Figures()
        for conversation in conversations:
            run_window(conversation, window, counter, figures)
        assert figures.cairn_fill is not None and figures.truncation_fill is not None
        cairn = figures.cairn_found / figures.questions
        truncation = figures.truncation_found / figures.questions
        print(
            f"{window // 1000:>6}k | {figures.questions:>9} | {cairn:>14.2f} | "
            f"{truncation:>19.2f} | {statistics.median(figures.cairn_fill):>11.0%} / "
            f"{min(figures.cairn_fill):<7.0%} | {statistics.median(figures.truncation_fill):>22.0%}"
            f" | {figures.backfill_found / figures.questions:>28.2f}"
        )
        facts.append(
            f"{window // 1000:>6}k | {figures.cairn_fact / figures.questions:>20.2f} | "
            f"{figures.truncation_fact / figures.questions:>25.2f}"
        )
    print("\nThe fact's value anywhere in the request (a summary's entities count too):")
    print(f"{'window':>7} | {'Cairn fact present':>20} | {'truncation fact present':>25}")
    for line in facts:
        print(line)


if __name__ == "__main__":
    main()
