"""Rule-based facets (DESIGN §6 step 1): decisions, action items, open questions,
entities kept verbatim, bounded output, and secrets that never reach them (the
redactor itself: test_redaction.py)."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core import extract, extract_entities, extract_text, redaction, text_scan
from app.core.extract import (
    MAX_ENTITIES,
    MAX_FACTS,
    MAX_SOURCE_SEQS,
    Facets,
    entity_spans,
    extract_facets,
    hard_facts,
)
from app.core.extract_text import MAX_FACT_CHARS
from app.core.models import Message, Role
from app.core.redaction import REDACTED, looks_like_random_token, redact_secrets
from app.core.summary import SourcedPoint

WHEN = datetime(2026, 3, 5, 9, 30, tzinfo=UTC)


def message(seq: int, role: Role, content: str) -> Message:
    return Message(id=seq, session_id="s", seq=seq, role=role, content=content, created_at=WHEN)


def conversation(*turns: str, first_seq: int = 1) -> list[Message]:
    """Alternating turns, the user first."""
    return [
        message(first_seq + i, Role.USER if i % 2 == 0 else Role.ASSISTANT, text)
        for i, text in enumerate(turns)
    ]


def texts(facts: tuple[SourcedPoint, ...]) -> list[str]:
    return [fact.text for fact in facts]


def actions(facets: Facets) -> list[tuple[str | None, str, str | None]]:
    return [(item.owner, item.task, item.due) for item in facets.action_items]


def entities(facets: Facets) -> set[tuple[str, str]]:
    return {(entity.kind, entity.text) for entity in facets.entities}


def entity_texts(text: str, role: Role = Role.USER) -> set[tuple[str, str]]:
    return entities(extract_facets([message(1, role, text)]))


# --- realistic conversations

PROJECT = conversation(
    "We're planning the Q2 launch of the mobile app. Should we use Postgres or SQLite for "
    "the sync server? Budget is $12,500 and the deadline is 2026-04-01.",
    "Both work. Postgres scales better for concurrent writers; SQLite is simpler. For a sync "
    "server with 200 users, I'd pick Postgres. You need to provision the database before "
    "the load test.",
    "OK, let's go with Postgres. Maria will draft the API spec by Friday. I'll send the deck "
    "to the board by 3 March. Who will own the release notes?",
    "Noted. Next steps:\n"
    "- TODO: set up CI on GitHub Actions\n"
    "- Action: Tom to review `sync_engine.py` before 2026-03-20\n"
    "See https://example.com/docs/sync?ref=plan. Latency target is 200 ms and the bundle "
    "must stay under 3.5 MB.",
    "Can you summarise the risks by tomorrow? Also my password is hunter2 and the key is "
    "sk-ant-api03-abcdefXYZ123_-xx. MAX_RETRIES in config/settings.toml is 5; call "
    "retry_with_backoff() from app.core.policy.",
)


def test_a_project_planning_conversation() -> None:
    facets = extract_facets(PROJECT)

    assert texts(facets.decisions) == ["OK, let's go with Postgres."]
    assert facets.decisions[0].sources == [3]
    assert actions(facets) == [
        ("user", "provision the database before the load test", None),
        ("Maria", "draft the API spec", "by Friday"),
        ("user", "send the deck to the board", "by 3 March"),
        (None, "set up CI on GitHub Actions", None),
        ("Tom", "review `sync_engine.py`", "before 2026-03-20"),
        ("assistant", "summarise the risks", "by tomorrow"),
    ]
    # "Postgres or SQLite?" was settled by the decision; nobody answered this one.
    assert texts(facets.open_questions) == ["Who will own the release notes?"]
    assert {
        ("money", "$12,500"),
        ("date", "2026-04-01"),
        ("number", "200 users"),
        ("date", "3 March"),
        ("url", "https://example.com/docs/sync?ref=plan"),
        ("file", "sync_engine.py"),
        ("date", "2026-03-20"),
        ("number", "200 ms"),
        ("number", "3.5 MB"),
        ("file", "config/settings.toml"),
        ("identifier", "MAX_RETRIES"),
        ("identifier", "retry_with_backoff()"),
        ("identifier", "app.core.policy"),
    } <= entities(facets)


def test_a_planning_conversation_never_keeps_its_secrets() -> None:
    dumped = extract_facets(PROJECT).model_dump_json()

    assert "hunter2" not in dumped
    assert "sk-ant" not in dumped


TRIP = conversation(
    "Planning a trip to Lisbon with my partner, 12-16 May 2026. Budget around €2,000 for "
    "4 nights. Which neighbourhood should we stay in, Alfama or Baixa?",
    "Alfama is charming but hilly; Baixa is central and flat. The 28 tram runs through "
    "Alfama. A double room is about €150 per night. You'll need to book the Belém tower "
    "tickets in advance.",
    "We'll go with Alfama then. I'll book the hotel by Friday. What's the best way from "
    "the airport?",
    "The metro red line takes about 20 minutes to Alameda, then change to green. A taxi is "
    "roughly 25 EUR. Do you want restaurant suggestions?",
)


def test_a_trip() -> None:
    facets = extract_facets(TRIP)

    assert texts(facets.decisions) == ["We'll go with Alfama then."]
    assert actions(facets) == [
        ("user", "book the Belém tower tickets in advance", None),
        ("user", "book the hotel", "by Friday"),
    ]
    # The neighbourhood was decided; the airport question was answered; Claude's own
    # question is still waiting for the user.
    assert texts(facets.open_questions) == ["Do you want restaurant suggestions?"]
    assert entities(facets) == {
        ("date", "12-16 May 2026"),
        ("money", "€2,000"),
        ("number", "4 nights"),
        ("money", "€150"),
        ("number", "20 minutes"),
        ("money", "25 EUR"),
    }


CODING = conversation(
    "I'm getting a KeyError in parse_config() when settings.json lacks the `timeout` key. "
    "Here's the traceback from app/main.py line 42.",
    'The fix: use `config.get("timeout", 30)` instead of indexing. Also add a test in '
    "tests/test_config.py.\n"
    "```python\n"
    "def parse_config(path):\n"
    "    # TODO: validate the schema\n"
    "    data = json.load(open(path))  # see https://docs.python.org/3/library/json.html\n"
    "    return data.get('timeout', 30)  # is 30 right?\n"
    "```\n"
    "We decided earlier to keep DEFAULT_TIMEOUT = 30 s.",
    "Agreed, keep DEFAULT_TIMEOUT at 30 seconds. I'll open a PR on "
    "https://github.com/acme/tool/pull/17 tonight. Not sure whether we should also bump the "
    "version to v1.4.2?",
    "Yes, bump it to v1.4.2 since it's a bug fix. Run the tests with pytest -k config.",
)


def test_a_coding_session() -> None:
    facets = extract_facets(CODING)

    assert texts(facets.decisions) == [
        "We decided earlier to keep DEFAULT_TIMEOUT = 30 s.",
        "Agreed, keep DEFAULT_TIMEOUT at 30 seconds.",
    ]
    assert actions(facets) == [
        (None, "validate the schema", None),
        ("user", "open a PR on https://github.com/acme/tool/pull/17", "tonight"),
    ]
    # Marked as open, and no decision settled it (the reply was not phrased as one).
    assert texts(facets.open_questions) == [
        "Not sure whether we should also bump the version to v1.4.2?"
    ]
    found = entities(facets)
    assert {
        ("identifier", "KeyError"),
        ("identifier", "parse_config()"),
        ("identifier", "timeout"),
        ("identifier", 'config.get("timeout", 30)'),
        ("identifier", "DEFAULT_TIMEOUT"),
        ("file", "settings.json"),
        ("file", "app/main.py"),
        ("file", "tests/test_config.py"),
        ("url", "https://docs.python.org/3/library/json.html"),  # from the code block
        ("url", "https://github.com/acme/tool/pull/17"),
        ("number", "v1.4.2"),
        ("number", "30 s"),
        ("number", "30 seconds"),
    } <= found
    # Inside code, only addresses and file names count: not every variable.
    assert ("identifier", "data") not in found
    assert not any("json.load" in text for _, text in found)


def test_a_repeated_entity_is_one_entity_from_several_messages() -> None:
    facets = extract_facets(CODING)

    [timeout] = [e for e in facets.entities if e.text == "DEFAULT_TIMEOUT"]
    assert timeout.sources == (2, 3)
    [version] = [e for e in facets.entities if e.text == "v1.4.2"]
    assert version.sources == (3, 4)


def test_hard_facts_are_the_verbatim_entities() -> None:
    facets = extract_facets(PROJECT)

    facts = hard_facts(facets)

    assert facts == {entity.text for entity in facets.entities}
    assert {"$12,500", "2026-04-01", "sync_engine.py", "MAX_RETRIES", "3.5 MB"} <= facts
    assert all(fact in " ".join(m.content for m in PROJECT) for fact in facts)


def test_nothing_to_extract() -> None:
    assert extract_facets([]).is_empty
    assert extract_facets(conversation("hello", "Hi! How can I help you today?")).is_empty is False
    assert extract_facets(conversation("hello there", "   ")).is_empty


def test_extraction_is_deterministic() -> None:
    messages = PROJECT + CODING + TRIP

    assert extract_facets(messages) == extract_facets(list(messages))


# --- decisions


@pytest.mark.parametrize(
    "sentence",
    [
        "We decided to ship on Tuesday.",
        "Let's go with the blue theme.",
        "Let’s use Redis for the cache.",
        "We'll use the EU region.",
        "We will go with plan B.",
        "Agreed: two reviewers per PR.",
        "We settled on 14 px for the body text.",
        "Final answer: the hotel near the station.",
        "The decision is to keep the free tier.",
        "We went with the cheaper flight.",
    ],
)
def test_decisions_are_recognised(sentence: str) -> None:
    facets = extract_facets([message(1, Role.USER, f"Some context first. {sentence}")])

    assert texts(facets.decisions) == [sentence]


@pytest.mark.parametrize(
    "sentence",
    [
        "We haven't decided yet.",
        "I don't think we agreed on the colour.",
        "Should we go with Postgres?",
        "Have you decided?",
        "Postgres is a good database.",
        "We never settled on a name.",
    ],
)
def test_non_decisions_are_not_decisions(sentence: str) -> None:
    assert extract_facets([message(1, Role.USER, sentence)]).decisions == ()


def test_the_same_decision_twice_is_kept_once_with_both_sources() -> None:
    facets = extract_facets(
        conversation("Let's go with Postgres.", "Sounds good.", "let's go  with postgres")
    )

    assert facets.decisions == (SourcedPoint(text="Let's go with Postgres.", sources=[1, 3]),)


# --- action items


@pytest.mark.parametrize(
    ("role", "sentence", "expected"),
    [
        (Role.USER, "I'll send the invoice by Friday.", ("user", "send the invoice", "by Friday")),
        (Role.USER, "I need to renew my passport.", ("user", "renew my passport", None)),
        (
            Role.USER,
            "I will file the report before 2026-04-01.",
            ("user", "file the report", "before 2026-04-01"),
        ),
        (Role.USER, "I'll call the venue tomorrow.", ("user", "call the venue", "tomorrow")),
        (Role.USER, "I'll read today's notes.", ("user", "read today's notes", None)),
        (
            Role.ASSISTANT,
            "You need to restart the server after the upgrade.",
            ("user", "restart the server after the upgrade", None),
        ),
        (
            Role.USER,
            "Can you draft the agenda by 3 March?",
            ("assistant", "draft the agenda", "by 3 March"),
        ),
        (
            Role.USER,
            "Please translate the menu by end of the week.",
            ("assistant", "translate the menu", "by end of the week"),
        ),
        (
            Role.USER,
            "Priya will book the room by next Monday.",
            ("Priya", "book the room", "by next Monday"),
        ),
        (Role.USER, "TODO: rotate the logs", (None, "rotate the logs", None)),
        (
            Role.ASSISTANT,
            "Action: Sam to check the numbers by 5 March 2026.",
            ("Sam", "check the numbers", "by 5 March 2026"),
        ),
        (Role.USER, "TODO(ana): fix the footer", ("ana", "fix the footer", None)),
        (Role.USER, "We need to renew the domain.", (None, "renew the domain", None)),
    ],
)
def test_action_items_with_owner_and_due_date(
    role: Role, sentence: str, expected: tuple[str | None, str, str | None]
) -> None:
    facets = extract_facets([message(7, role, sentence)])

    assert actions(facets) == [expected]
    assert facets.action_items[0].sources == [7]


@pytest.mark.parametrize(
    ("role", "sentence"),
    [
        (Role.ASSISTANT, "I'll explain how the cache works."),  # narration, not a promise
        (Role.USER, "Can you explain the cache?"),  # a question, without a due date
        (Role.USER, "The build will fail without the key."),
        (Role.USER, "This will take a while."),
        (Role.USER, "Python will raise a KeyError here."),
        (Role.USER, "Testing will take two more days."),
        (Role.USER, "Deployment will need a review."),
    ],
)
def test_non_actions_are_not_actions(role: Role, sentence: str) -> None:
    assert extract_facets([message(1, role, sentence)]).action_items == ()


def test_a_todo_in_a_code_comment_is_an_action_item() -> None:
    facets = extract_facets(
        [message(1, Role.ASSISTANT, "```js\n// TODO: debounce the search box by Friday\n```")]
    )

    assert actions(facets) == [(None, "debounce the search box", "by Friday")]


# --- open questions


def test_an_unanswered_question_is_open_and_an_answered_one_is_not() -> None:
    facets = extract_facets(
        conversation(
            "What is the capital of Australia?",
            "Canberra. Would you like a list of the other capitals?",
        )
    )

    assert texts(facets.open_questions) == ["Would you like a list of the other capitals?"]


def test_a_deliberated_choice_stays_open_until_a_decision_settles_it() -> None:
    opened = conversation(
        "Should we fly or take the train to Porto?",
        "The train takes 3 hours; flying is faster but needs airport time.",
    )
    settled = [*opened, message(3, Role.USER, "Let's take the train to Porto, then.")]

    assert texts(extract_facets(opened).open_questions) == [
        "Should we fly or take the train to Porto?"
    ]
    assert extract_facets(settled).open_questions == ()


def test_a_decision_about_something_else_does_not_settle_a_question() -> None:
    facets = extract_facets(
        conversation(
            "Which logo should we use for the Q3 deck?",
            "Either works.",
            "Let's go with Arial for the body text.",
        )
    )

    assert texts(facets.open_questions) == ["Which logo should we use for the Q3 deck?"]


@pytest.mark.parametrize(
    "sentence",
    [
        "The venue is TBD.",
        "I'm not sure whether the client pays for travel.",
        "We still need to decide on the caterer.",
        "It is unclear whether the API supports batching.",
    ],
)
def test_sentences_marked_open_are_open_questions(sentence: str) -> None:
    facets = extract_facets(conversation(sentence, "Noted, we'll come back to it."))

    assert texts(facets.open_questions) == [sentence]
    assert facets.decisions == ()


def test_tiny_questions_are_not_open_questions() -> None:
    assert extract_facets([message(1, Role.USER, "Why? Really?")]).open_questions == ()


# --- entities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Open report_v2.xlsx and foo.py.", {("file", "report_v2.xlsx"), ("file", "foo.py")}),
        ("It lives in ~/notes/2026/plan.md", {("file", "~/notes/2026/plan.md")}),
        ("Edit /etc/nginx/sites-available/ now", {("file", "/etc/nginx/sites-available/")}),
        ("Copy C:\\Users\\ana\\budget.csv here", {("file", "C:\\Users\\ana\\budget.csv")}),
        (
            "See https://example.com/a/b?x=1&y=2, then www.example.org.",
            {("url", "https://example.com/a/b?x=1&y=2"), ("url", "www.example.org")},
        ),
        ("Write to ana.lima+cairn@example.co.uk", {("email", "ana.lima+cairn@example.co.uk")}),
        (
            "user_id, getUserName, MAX_TOKENS, ContextBuilder and __init__",
            {
                ("identifier", "user_id"),
                ("identifier", "getUserName"),
                ("identifier", "MAX_TOKENS"),
                ("identifier", "ContextBuilder"),
                ("identifier", "__init__"),
            },
        ),
        ("Run `git status` first", {("identifier", "git status")}),
        (
            "Call os.replace() from app.core.settings",
            {
                ("identifier", "os.replace()"),
                ("identifier", "app.core.settings"),
            },
        ),
        (
            "It weighs 5 kg, takes 200 ms, uses 3.5 GB and 80 % of the CPU (or 95%).",
            {
                ("number", "5 kg"),
                ("number", "200 ms"),
                ("number", "3.5 GB"),
                ("number", "80 %"),
                ("number", "95%"),
            },
        ),
        (
            "The tank holds 850 litres, the wall is 12.5 metres and the jug 2 l.",
            {
                ("number", "850 litres"),
                ("number", "12.5 metres"),
                ("number", "2 l"),
            },
        ),
        (
            "Python 3.11.7 on 192.168.1.20, build v2.0",
            {
                ("number", "3.11.7"),
                ("number", "192.168.1.20"),
                ("number", "v2.0"),
            },
        ),
        (
            "We have 15,000 rows, 4096 slots and 1,250,000 fans",
            {("number", "15,000 rows"), ("number", "4096"), ("number", "1,250,000")},
        ),
        (
            "It costs $1,200.50, or €30, or 1.2k USD, or £15 each.",
            {
                ("money", "$1,200.50"),
                ("money", "€30"),
                ("money", "1.2k USD"),
                ("money", "£15"),
            },
        ),
        (
            "Dates: 2026-03-05, 5 March 2026, March 5, 05/03/2026, Friday 6 March, March 2026.",
            {
                ("date", "2026-03-05"),
                ("date", "5 March 2026"),
                ("date", "March 5"),
                ("date", "05/03/2026"),
                ("date", "Friday 6 March"),
                ("date", "March 2026"),
            },
        ),
        ("Meet on Tuesday, March 10th, 2026 at noon", {("date", "Tuesday, March 10th, 2026")}),
    ],
)
def test_entities_by_kind(text: str, expected: set[tuple[str, str]]) -> None:
    assert entity_texts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "e.g. this, i.e. that, at 9 a.m. sharp",
        "May I ask something about the 28 tram?",
        "It is a plain sentence with ordinary words and 12 of them.",
        "Fine, thanks!",
    ],
)
def test_ordinary_text_has_no_entities(text: str) -> None:
    assert entity_texts(text) == set()


def test_entities_are_deduplicated_by_kind_rules() -> None:
    facets = extract_facets(
        conversation(
            "Mail Bob@Example.com about userId and 5\u00a0kg.",
            "I mailed bob@example.com; UserId differs from userId, and 5 kg is right.",
        )
    )

    found = sorted((e.kind, e.text, e.sources) for e in facets.entities)
    assert found == [
        ("email", "Bob@Example.com", (1, 2)),  # addresses ignore case
        ("identifier", "UserId", (2,)),  # identifiers do not
        ("identifier", "userId", (1, 2)),
        ("number", "5 kg", (1, 2)),  # whitespace normalised (a no-break space)
    ]


def test_a_url_is_not_also_a_file_nor_its_parts_identifiers() -> None:
    found = entity_texts("Read https://example.com/docs/setup_guide.pdf now.")

    assert found == {("url", "https://example.com/docs/setup_guide.pdf")}


_SNIPPETS = [
    "report_v2.xlsx",
    "https://example.com/x?y=1",
    "retry_count",
    "getUserName",
    "MAX_TOKENS",
    "5 kg",
    "3.5 GB",
    "$1,200.50",
    "2026-03-05",
    "5 March 2026",
    "ana@example.com",
    "src/app/main.py",
]
_FILLER = ["we", "looked", "at", "the", "plan", "and", "then", "it", "was", "fine", "today"]


@given(st.lists(st.sampled_from(_SNIPPETS + _FILLER), min_size=1, max_size=30))
def test_every_entity_is_verbatim_source_text(words: list[str]) -> None:
    text = " ".join(words) + "."

    facets = extract_facets([message(1, Role.USER, text)])

    for entity in facets.entities:
        assert entity.text in text
    for snippet in set(words) & set(_SNIPPETS):
        assert snippet in hard_facts(facets)


# --- bounds


def test_each_list_keeps_the_most_recent_items_in_order() -> None:
    messages = [
        message(seq, Role.USER, f"Let's go with option {seq}. TODO: check item {seq}")
        for seq in range(1, 101)
    ]

    facets = extract_facets(messages)

    assert len(facets.decisions) == MAX_FACTS
    assert facets.decisions[0].text == "Let's go with option 71."
    assert facets.decisions[-1].text == "Let's go with option 100."
    assert len(facets.action_items) == MAX_FACTS
    assert facets.action_items[-1].task == "check item 100"


def test_entities_keep_the_most_frequent() -> None:
    frequent = [f"frequent_name_{i}" for i in range(10)]
    messages = [
        message(seq, Role.USER, f"{' '.join(frequent)} and rare_name_{seq}")
        for seq in range(1, 201)
    ]

    facets = extract_facets(messages)

    kept = [entity.text for entity in facets.entities]
    assert len(kept) == MAX_ENTITIES
    assert kept[:10] == frequent  # in order of first mention
    # Ties among the rare ones go to the most recent.
    assert kept[10:] == [f"rare_name_{seq}" for seq in range(161, 201)]
    assert facets.entities[0].sources == tuple(range(181, 201))
    assert len(facets.entities[0].sources) == MAX_SOURCE_SEQS


def test_long_sentences_are_clipped() -> None:
    sentence = "We decided to " + " ".join(["keep going"] * 100) + "."

    [decision] = extract_facets([message(1, Role.USER, sentence)]).decisions

    assert len(decision.text) <= MAX_FACT_CHARS + 1
    assert decision.text.endswith("…")
    assert decision.text.startswith("We decided to keep going")


def test_a_thousand_long_messages_give_a_bounded_result() -> None:
    """A sanity check of the cost (bench/bench_extract.py has the figures)."""
    rng = random.Random(4)
    vocabulary = [*_FILLER, *_SNIPPETS, "Let's go with it.", "I'll fix it by Friday.", "Why not?"]
    messages = []
    for seq in range(1, 1_001):
        words: list[str] = []
        while sum(len(word) + 1 for word in words) < 500:
            words.append(rng.choice(vocabulary))
        messages.append(message(seq, Role.USER if seq % 2 else Role.ASSISTANT, " ".join(words)))

    facets = extract_facets(messages)

    assert len(facets.decisions) <= MAX_FACTS
    assert len(facets.action_items) <= MAX_FACTS
    assert len(facets.open_questions) <= MAX_FACTS
    assert len(facets.entities) <= MAX_ENTITIES
    assert {"report_v2.xlsx", "2026-03-05"} <= hard_facts(facets)


def test_secrets_never_reach_the_facets() -> None:
    facets = extract_facets(
        conversation(
            "Let's go with the key sk-ant-api03-SECRETsecret123 for staging. "
            "I'll rotate `ghp_aaaaBBBBccccDDDD1234eeeeFFFF` by Friday.",
            "You need to set password: Tr0ub4dor&3 in the `.env` file. "
            "See https://example.com/cb?token=abc123secret.",
        )
    )

    assert texts(facets.decisions) == ["Let's go with the key [redacted] for staging."]
    assert actions(facets) == [
        ("user", "rotate `[redacted]`", "by Friday"),
        ("user", "set password: [redacted] in the `.env` file", None),
    ]
    dumped = facets.model_dump_json()
    for secret in ("SECRETsecret123", "ghp_", "Tr0ub4dor", "abc123secret"):
        assert secret not in dumped
    assert all(REDACTED not in entity.text for entity in facets.entities)
    assert ("file", ".env") in entities(facets)


# --- bounded work: the quick paths find what the plain patterns find

# Pieces of text that exercise the patterns' edges: secrets, labels, quotes, numbers joined
# by commas and points, dates, units, paths, identifiers, non-ASCII letters and digits, and
# whitespace of every kind between them.
_ATOMS = [
    *("1", "12", "2026", "3.5", "1,250", "1,111,111", "v1.2", "1.2.3", "-", "+", "–", ",", "."),
    *(";", ":", "=", "/", "\\", "C:\\", "@", "a@b.co", "x.y@z.example.org", "_", "()", "(", ")"),
    *("'", '"', "`", "’", "?", "!", "%", "$", "€", "£", "US$", "k", "bn", "USD", "EUR", "cents"),
    *("kg", "ms", "GB", "users", "tokens", "°C", "×", "µs", "x", "m", "s", "Jan", "Jan.", "March"),
    *("May", "Tuesday", "Fri", "of", "th", "10:30", "password", "pwd", "pass", "word", "pin"),
    *("code", "is", "was", "not", "api", "key", "api_key", "secret", "token", "access_token"),
    *("Bearer", "x-api-key", "b'", "sk-ant-", "sk-", "ghp_", "AKIA", "eyJ", "xoxb-", "[redacted]"),
    *("://", "http://", "https://", "www.", "?token=", "&key=", "#frag", "report", ".py", ".PY"),
    *("src/", "app/core/", "~/", "./", ".env", "getUser", "ContextBuilder", "MAX_RETRIES"),
    *("user_id", "os.path.join", "a.b.c", "A.B.C", "we", "decided", "let's", "we'll", "will", "I"),
    *("I'll", "need", "to", "you", "must", "can", "please", "Maria", "Anna Lee", "by", "Friday"),
    *("tomorrow", "TODO", "FIXME", "Action", "TBD", "not sure whether", "should", "which", "or"),
    *("yet", "never", "agreed", "İ", "ı", "ſ", "K", "é", "東京", "٣", "😀", "```", "- ", "> "),
    *("aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5", "abcdefghijklmnopqrstuvwxyz0123"),
    *("-----BEGIN PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "1) ", "[x] "),
]
_GAPS = [" ", " ", "", "\n", "\n\n", "  ", "\t", "\u00a0", "\r\n", " \n ", "\u2028", ". "]


@st.composite
def _tricky_text(draw: st.DrawFn) -> str:
    atoms = draw(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=60))
    gaps = draw(st.lists(st.sampled_from(_GAPS), min_size=len(atoms), max_size=len(atoms)))
    return "".join(atom + gap for atom, gap in zip(atoms, gaps, strict=True))


@given(_tricky_text())
def test_each_entity_finder_finds_what_its_pattern_finds(text: str) -> None:
    text = redact_secrets(text)

    for _, pattern in extract_entities.PROSE_PATTERNS:
        expected = [match.span() for match in pattern.finditer(text)]
        assert list(extract_entities._FINDERS[pattern](text)) == expected, pattern.pattern


@given(_tricky_text())
def test_the_bounded_steps_do_what_the_plain_patterns_do(text: str) -> None:
    def redact_if_random(match: re.Match[str]) -> str:
        return REDACTED if looks_like_random_token(match.group()) else match.group()

    assert redaction._redact_private_keys(text) == redaction._PRIVATE_KEY.sub(REDACTED, text)
    assert redaction._redact_long_tokens(text) == redaction._LONG_TOKEN.sub(redact_if_random, text)
    for line in text.splitlines():
        start, end = extract_text._markup_stripped(line)
        stripped = extract_text._LINE_MARKUP.sub("", line).strip()
        assert line[start:end] == stripped
        if stripped:
            parts = [part.strip() for part in extract_text._SENTENCE_END.split(stripped)]
            spans = extract_text._part_spans(line, start, end)
            assert [line[a:b] for a, b in spans] == [part for part in parts if part]


def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut every text wherever it can be cut, and read long values in short windows."""
    monkeypatch.setattr(text_scan, "PIECE_CHARS", 8)
    monkeypatch.setattr(text_scan, "WINDOW_CHARS", 300)


@given(texts=st.lists(_tricky_text(), min_size=1, max_size=4))
def test_texts_read_in_pieces_give_what_the_whole_gives(texts: list[str]) -> None:
    messages = conversation(*texts)
    whole = extract_facets(messages)
    redacted = [redact_secrets(text) for text in texts]

    with pytest.MonkeyPatch.context() as monkeypatch:
        small_pieces(monkeypatch)
        assert extract_facets(messages) == whole
        assert [redact_secrets(text) for text in texts] == redacted


@pytest.mark.parametrize(
    "text",
    [
        ",".join(str(i % 10) for i in range(60_000)),  # a CSV row: once quadratic
        "111," * 30_000 + "1 USD",
        "a." * 60_000 + "@",
        ".A" * 60_000 + "()",
        "1. " * 40_000,
        "```\n" + "x = f(y)  # TODO: check\n" * 20_000 + "```",
    ],
)
def test_pathological_text_takes_linear_time(text: str) -> None:
    """No clock: at these sizes linear work takes a fraction of a second and quadratic work
    (the CSV row took seconds at a tenth of its length) many minutes, so a regression
    fails on the test's time limit (pyproject.toml), far from any machine's noise."""
    facets = extract_facets([message(1, Role.USER, text)])

    assert len(facets.entities) <= extract.MAX_ENTITIES


def test_a_long_run_without_whitespace_is_not_read_for_entities() -> None:
    """A pasted blob is not searched for entities (its text is still redacted)."""
    blob = "https://example.com/x," * (extract_entities.MAX_WORD_CHARS // 20)

    found = entity_texts(f"See {blob} and report_v2.xlsx")

    assert found == {("file", "report_v2.xlsx")}


def test_a_very_long_sentence_is_not_read_for_decisions_or_actions() -> None:
    filler = " ".join(["word"] * (extract.MAX_SENTENCE_CHARS // 5))

    facets = extract_facets(
        [message(1, Role.USER, f"We decided to ship {filler}. I'll send the invoice by Friday.")]
    )

    assert facets.decisions == ()
    assert actions(facets) == [("user", "send the invoice", "by Friday")]


def test_entity_spans_are_where_extract_facets_finds_each_kind() -> None:
    text = (
        "So the survey is £356, due 2026-09-16; the tank holds 850 litres, the plan is "
        "floor_plan_v5.pdf at https://x.example.com/p/abc and there are 12 kg."
    )
    found = {kind: [text[a:b] for a, b in entity_spans(text, kind)] for kind in ("money", "date")}
    assert found == {"money": ["£356"], "date": ["2026-09-16"]}
    assert [text[a:b] for a, b in entity_spans(text, "file")] == ["floor_plan_v5.pdf"]
    assert [text[a:b] for a, b in entity_spans(text, "url")] == ["https://x.example.com/p/abc"]
    numbers = {text[a:b] for a, b in entity_spans(text, "number")}
    assert {"850 litres", "12 kg"} <= numbers
    facets = extract_facets([message(1, Role.USER, text)])
    assert {e.text for e in facets.entities if e.kind == "number"} <= numbers
    assert list(entity_spans("nothing to see", "url")) == []
