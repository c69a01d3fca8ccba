"""The fact ledger's rules: names, codes, clock times, in several languages (issue 12)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from app.core.extract_facts import find_codes, find_errors, find_names, find_times, ledger_facts
from app.core.models import Message, Role

START = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)


def message(seq: int, content: str, *, days: int = 0) -> Message:
    return Message(
        id=seq,
        session_id="s1",
        seq=seq,
        role=Role.USER if seq % 2 else Role.ASSISTANT,
        content=content,
        created_at=START + timedelta(days=days, minutes=seq),
    )


def utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


# --- names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # English
        (
            "Our contact at the venue is Maria Schneider, and Dr. Okafor signs the contract.",
            ["Maria Schneider", "Dr. Okafor"],
        ),
        ("Please send the slides to Jonas Weber by Friday.", ["Jonas Weber"]),
        ("The file called Report.pdf is ready. Ask Priya about the budget.", ["Priya"]),
        ("My landlord is named Tomasz Nowak and he is strict.", ["Tomasz Nowak"]),
        # German: every noun is capitalised; only names are taken
        (
            "Ich treffe mich mit Anna um 14 Uhr. Frau Keller hat die Rechnung geschickt.",
            ["Anna", "Frau Keller"],
        ),
        ("Mein Nachbar heißt Jürgen und wohnt oben.", ["Jürgen"]),
        # French
        (
            "Je déjeune avec Claire demain. Mme Durand a envoyé le dossier.",
            ["Claire", "Mme Durand"],
        ),
        ("Le responsable s'appelle Jean-Luc Moreau.", ["Jean-Luc Moreau"]),
        # Spanish
        (
            "Hola, me llamo Lucía Fernández. La reunión con Sra. Ortega es mañana.",
            ["Lucía Fernández", "Sra. Ortega"],
        ),
    ],
)
def test_names_are_found_in_several_languages(text: str, names: list[str]) -> None:
    assert find_names(text) == names


@pytest.mark.parametrize(
    "text",
    [
        # A capitalised word that starts a sentence is not a name.
        "Thanks. Sounds good. Berlin is lovely in spring.",
        "Next Monday we meet in March. The API returns JSON.",
        "I think we should go. Yes, please.",
        # German nouns, with or without an article, are not names.
        "Die Rechnung kommt morgen. Der Vertrag liegt bei uns mit Freunden.",
        "Wir fahren mit der Deutschen Bahn und die Deutsche Bahn ist spät.",
        # French and Spanish sentence starts and months.
        "Bonjour ! Merci pour le message. Rendez-vous en Janvier.",
        "Gracias. Buenas noticias: el Lunes empieza.",
    ],
)
def test_what_is_not_a_name_is_not_taken(text: str) -> None:
    assert find_names(text) == []


# --- codes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("The gate code is AX-7731 and the invoice INV-2024-0042.", ["AX-7731", "INV-2024-0042"]),
        ("Frau Keller hat die Rechnung RE-4471 geschickt.", ["RE-4471"]),
        ("Le dossier DOS-88/B est arrivé, référence PO#4471.", ["DOS-88/B", "PO#4471"]),
        ("El código de reserva es ES-20931, asiento B12C.", ["ES-20931", "B12C"]),
        ("Flight LH2041 leaves from gate A12.", ["LH2041", "A12"]),
    ],
)
def test_codes_are_taken_whole(text: str, codes: list[str]) -> None:
    assert find_codes(text) == codes


@pytest.mark.parametrize(
    "text",
    [
        "It came 3rd, weighs 10kg, holds 5GB and costs 20€.",
        "Version v1.2.3 plays mp3 and h264 files.",
        "Dinner at 19h30, or 7pm, on the 2e floor.",
        "Wir sehen uns am 3. März um 14 Uhr.",
    ],
)
def test_what_is_not_a_code_is_not_taken(text: str) -> None:
    assert find_codes(text) == []


# --- times ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "times"),
    [
        ("Meeting at 14:30, or 2 pm if the train is late.", ["14:30", "2 pm"]),
        ("Call me at 9:05 am. Or at 11pm.", ["9:05 am", "11pm"]),
        ("Ich komme um 14 Uhr, spätestens 14.30 Uhr.", ["14 Uhr", "14.30 Uhr"]),
        ("Je déjeune à 12h30 et le train part à 18 h.", ["12h30", "18 h"]),
        ("La reunión es a las 10:00 y termina a las 11:45.", ["10:00", "11:45"]),
    ],
)
def test_clock_times_are_found(text: str, times: list[str]) -> None:
    assert find_times(text) == times


@pytest.mark.parametrize(
    "text",
    [
        "The score was 3:2 and the ratio 16:9.",
        "Version 2.10 costs 14.99 and weighs 25:61.",
        "Chapter 12 has 30 pages.",
    ],
)
def test_what_is_not_a_time_is_not_taken(text: str) -> None:
    assert find_times(text) == []


# --- the ledger ----------------------------------------------------------------------


def test_the_ledger_holds_every_kind_with_its_message_and_day() -> None:
    messages = [
        message(1, "Our contact is Maria Schneider; the gate code is AX-7731.", days=0),
        message(2, "Noted. The deposit is $1,250 and the room holds 40 people."),
        message(3, "See contract_v3.pdf at https://example.com/venue before 2026-04-01.", days=1),
        message(4, "Doors open at 18:30. Maria Schneider confirmed AX-7731 again.", days=2),
    ]

    ledger = ledger_facts(messages, utc_day)

    found = {fact.value: fact for fact in ledger}
    assert found["Maria Schneider"].kind == "name"
    assert found["AX-7731"].kind == "code"
    assert "7731" not in found  # a piece of the code is not a fact of its own
    assert found["18:30"].kind == "time"
    assert found["$1,250"].kind == "money"
    assert found["40 people"].kind == "number"
    assert found["contract_v3.pdf"].kind == "file"
    assert found["https://example.com/venue"].kind == "url"
    assert found["2026-04-01"].kind == "date"
    # The first mention is kept, once, with its message and that message's day.
    assert [fact.value for fact in ledger].count("AX-7731") == 1
    assert (found["AX-7731"].seq, found["AX-7731"].day) == (1, date(2026, 3, 5))
    assert (found["contract_v3.pdf"].seq, found["contract_v3.pdf"].day) == (3, date(2026, 3, 6))
    assert (found["18:30"].seq, found["18:30"].day) == (4, date(2026, 3, 7))
    # Oldest first.
    assert [fact.seq for fact in ledger] == sorted(fact.seq or 0 for fact in ledger)


def test_the_ledger_holds_no_secret() -> None:
    messages = [message(1, "My key is sk-ant-api03-SECRETsecretSECRET123456, code AX-7731.")]

    values = [fact.value for fact in ledger_facts(messages, utc_day)]

    assert "AX-7731" in values
    assert not any("SECRET" in value for value in values)


def test_an_error_the_user_pasted_is_kept_word_for_word() -> None:
    pasted = (
        "It fails with this:\nTraceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n    main()\n'
        "KeyError: 'user_id'\nAny idea?"
    )
    messages = [
        message(1, pasted),
        message(2, "A KeyError: means the key is missing."),  # Claude explaining it
        message(3, "The till just says 'ERR 0x80070057 parameter incorrect' again."),
    ]
    errors = [f.value for f in ledger_facts(messages, utc_day) if f.kind == "error"]
    assert errors == ["KeyError: 'user_id'", "ERR 0x80070057 parameter incorrect"]
    assert find_errors("I made an error: my mistake.") == []
