"""A long conversation with planted hard facts, and a question for each (issue 12, item 5).

Independent of the app: plain data that bench/bench_recall_eval.py feeds through
Cairn. One call, `make_conversation(seed)`, gives the same conversation every
time for the same seed: several hundred messages over many weeks, drifting
between a handful of everyday topics, with at least 20 facts of every kind —
people's names, letter-and-digit codes and ids, amounts, numbers with units,
dates, clock times, file names, URLs and decisions — each stated once, in a
user turn, never in the last `QUIET_TAIL` messages. Every fact comes with a
question that needs it and does not contain its value.

tests/unit/bench/test_planted_facts.py checks those promises.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

Kind = Literal["name", "code", "amount", "quantity", "date", "time", "file", "url", "decision"]
KINDS: tuple[Kind, ...] = (
    "name",
    "code",
    "amount",
    "quantity",
    "date",
    "time",
    "file",
    "url",
    "decision",
)
# No fact is stated in the newest messages: the question must reach back.
QUIET_TAIL = 40
DEFAULT_LENGTH = 640
# Planted clock times use these minutes and no message is sent on them, so the times
# a summary or the transcript shows ("2026-02-05 09:36") are never taken for a fact
# (shifted by any whole or half-hour time zone, they stay off these minutes too).
PLANTED_MINUTES = (5, 10, 20, 25, 35, 40, 50, 55)

# --- what the facts are about ----------------------------------------------------------

# (subject as said in the statement, question) — one fact each.
NAME_SUBJECTS = (
    ("the plumber", "What is the plumber called?"),
    ("the tiler", "Who is the tiler?"),
    ("our accountant", "What is our accountant's name?"),
    ("the new landlord", "Who is the new landlord?"),
    ("the vet", "What is the vet's name?"),
    ("the wedding photographer", "Who is the wedding photographer?"),
    ("the bakery's first hire", "Who did the bakery hire first?"),
    ("the tour guide in Porto", "What was the name of the tour guide in Porto?"),
    ("Mum's neighbour", "What is Mum's neighbour called?"),
    ("the architect", "Who is the architect?"),
    ("the mortgage adviser", "What is the mortgage adviser's name?"),
    ("the piano teacher", "Who is the piano teacher?"),
    ("the flat's surveyor", "Who surveyed the flat?"),
    ("the marketing freelancer", "What is the marketing freelancer called?"),
    ("the kids' swimming coach", "Who is the kids' swimming coach?"),
    ("the electrician", "What is the electrician's name?"),
    ("the insurance claims handler", "Who handles the insurance claim?"),
    ("the flour supplier's rep", "Who is the rep at the flour supplier?"),
    ("the site manager", "What is the site manager's name?"),
    ("the Airbnb host in Lisbon", "Who is our host in Lisbon?"),
    ("the GP I saw", "Which GP did I see?"),
    ("the solicitor", "What is the solicitor called?"),
)
FIRST_NAMES = (
    "Ingrid", "Tobias", "Aiko", "Rashid", "Marta", "Declan", "Yusuf", "Oksana", "Bartek",
    "Niamh", "Kwame", "Solveig", "Priyanka", "Emeric", "Lourdes", "Hamish", "Zofia", "Tendai",
    "Anouk", "Caius", "Mireille", "Jarrah",
)  # fmt: skip
LAST_NAMES = (
    "Holloway", "Brenner", "Takeda", "Qureshi", "Villanueva", "Ashcombe", "Demir", "Kovalenko",
    "Wiśniewski", "Gallagher", "Mensah", "Eriksen", "Raghavan", "Duplessis", "Ferreira",
    "McTavish", "Lewandowska", "Moyo", "Vermeulen", "Pennington", "Rousseau", "Okonjo",
)  # fmt: skip

CODE_SUBJECTS = (
    ("the boiler warranty number", "What is the boiler warranty number?"),
    ("the ferry booking reference", "What is the ferry booking reference?"),
    ("the parcel tracking id", "What is the tracking id of the parcel?"),
    ("the planning application reference", "What is the planning application reference?"),
    ("the bakery's VAT number", "What is the bakery's VAT number?"),
    ("the hire car's registration", "What is the hire car's registration?"),
    ("the insurance policy number", "What is the insurance policy number?"),
    ("the gate code at the allotment", "What is the allotment gate code?"),
    ("the support ticket", "What is the support ticket number?"),
    ("the paint colour code", "Which paint colour code did we choose?"),
    ("the flight number", "Which flight are we on?"),
    ("the order number for the oven", "What is the oven's order number?"),
    ("the invoice id from the tiler", "What is the tiler's invoice id?"),
    ("the exam candidate number", "What is my exam candidate number?"),
    ("the council tax account", "What is the council tax account number?"),
    ("the router's serial", "What is the router's serial?"),
    ("the hotel confirmation code", "What is the hotel confirmation code?"),
    ("the prescription reference", "What is the prescription reference?"),
    ("the bike frame number", "What is the bike's frame number?"),
    ("the storage unit number", "What is the storage unit number?"),
    ("the venue contract id", "What is the venue contract id?"),
    ("the train seat reservation", "What is the train seat reservation?"),
)

AMOUNT_SUBJECTS = (
    ("the builder's quote", "What did the builder quote?"),
    ("the venue deposit", "How much was the venue deposit?"),
    ("the monthly rent for the shop", "What is the shop's monthly rent?"),
    ("the flights to Porto", "What did the flights to Porto cost?"),
    ("the new oven", "How much is the new oven?"),
    ("the accountant's fee", "What is the accountant's fee?"),
    ("the survey", "What did the survey cost?"),
    ("the photographer's package", "How much is the photographer's package?"),
    ("the vet bill", "How much was the vet bill?"),
    ("the kitchen worktops", "How much are the kitchen worktops?"),
    ("the Lisbon apartment", "What does the Lisbon apartment cost?"),
    ("the shop fit-out", "What will the shop fit-out cost?"),
    ("the piano lessons per term", "How much are the piano lessons per term?"),
    ("the insurance excess", "What is the insurance excess?"),
    ("the skip hire", "How much is the skip hire?"),
    ("the catering per head", "What does the catering cost per head?"),
    ("the bike repair", "What did the bike repair cost?"),
    ("the solicitor's fixed fee", "What is the solicitor's fixed fee?"),
    ("the first flour order", "How much was the first flour order?"),
    ("the wedding cake", "What does the wedding cake cost?"),
    ("the boiler service", "What does the boiler service cost?"),
    ("the stamp duty estimate", "What is the stamp duty estimate?"),
)
# A believable range for each amount (whole units).
AMOUNT_RANGES = {
    "the builder's quote": (8000, 42000),
    "the venue deposit": (500, 4000),
    "the monthly rent for the shop": (900, 3500),
    "the flights to Porto": (180, 900),
    "the new oven": (2500, 14000),
    "the accountant's fee": (300, 1800),
    "the survey": (350, 1200),
    "the photographer's package": (900, 3200),
    "the vet bill": (60, 900),
    "the kitchen worktops": (800, 5000),
    "the Lisbon apartment": (400, 1600),
    "the shop fit-out": (6000, 30000),
    "the piano lessons per term": (150, 600),
    "the insurance excess": (100, 1000),
    "the skip hire": (180, 450),
    "the catering per head": (35, 120),
    "the bike repair": (40, 300),
    "the solicitor's fixed fee": (800, 2500),
    "the first flour order": (200, 1500),
    "the wedding cake": (250, 900),
    "the boiler service": (70, 200),
    "the stamp duty estimate": (2000, 15000),
}
CURRENCIES = ("£", "€", "$")

QUANTITY_SUBJECTS = (
    ("the living room floor area", "square metres", "How big is the living room floor?"),
    ("the flour we need per week", "kg", "How much flour do we need each week?"),
    ("the drive from Porto to Lisbon", "km", "How long is the drive from Porto to Lisbon?"),
    ("the water tank", "litres", "How much does the water tank hold?"),
    ("the dog's weight at the vet", "kg", "How much did the dog weigh at the vet?"),
    ("the oven's power draw", "kW", "What is the oven's power draw?"),
    ("the garden wall", "metres", "How long is the garden wall?"),
    ("the marquee", "square metres", "How big is the marquee?"),
    ("my long run on Sunday", "km", "How far was my long run on Sunday?"),
    ("the baby's height at the check-up", "cm", "How tall was the baby at the check-up?"),
    ("the ceiling height in the shop", "metres", "How high is the shop's ceiling?"),
    ("the solar panels' yearly output", "kWh", "How much do the solar panels produce a year?"),
    ("the tile adhesive we need", "bags", "How much tile adhesive do we need?"),
    ("the walk on the second day", "miles", "How long is the walk on the second day?"),
    ("the boiler's output", "kW", "What is the boiler's output?"),
    ("the luggage allowance", "kg", "What is the luggage allowance?"),
    ("the fridge", "litres", "How big is the fridge?"),
    ("the insulation for the loft", "mm", "How thick is the loft insulation?"),
    ("the sourdough hydration", "percent", "What hydration is the sourdough?"),
    ("the cable run to the shed", "metres", "How long is the cable run to the shed?"),
    ("the guest list", "guests", "How many guests are on the list?"),
    ("the fish tank", "litres", "How much does the fish tank hold?"),
)

DATE_SUBJECTS = (
    ("the completion on the flat", "When is completion on the flat?"),
    ("the wedding tasting", "When is the wedding tasting?"),
    ("the bakery's opening day", "When does the bakery open?"),
    ("the flight out to Porto", "When do we fly out to Porto?"),
    ("the planning committee meeting", "When does the planning committee meet?"),
    ("the piano exam", "When is the piano exam?"),
    ("the boiler service visit", "When is the boiler service visit?"),
    ("Mum's birthday lunch", "When is Mum's birthday lunch?"),
    ("the food hygiene inspection", "When is the food hygiene inspection?"),
    ("the tiler's start", "When does the tiler start?"),
    ("the tax return deadline", "When is the tax return due?"),
    ("the vet follow-up", "When is the vet follow-up?"),
    ("the lease signing", "When do we sign the lease?"),
    ("the school open day", "When is the school open day?"),
    ("the half marathon", "When is the half marathon?"),
    ("the skip delivery", "When is the skip delivered?"),
    ("the insurance renewal", "When does the insurance renew?"),
    ("the architect's site visit", "When is the architect's site visit?"),
    ("the return train from Lisbon", "When is the return train from Lisbon?"),
    ("the first staff training", "When is the first staff training?"),
    ("the dentist appointment", "When is the dentist appointment?"),
    ("the venue walk-through", "When is the venue walk-through?"),
)

TIME_SUBJECTS = (
    ("the ferry leaves", "What time does the ferry leave?"),
    ("the plumber arrives", "What time is the plumber coming?"),
    ("the bakery opens on Saturdays", "What time does the bakery open on Saturdays?"),
    ("the ceremony starts", "What time does the ceremony start?"),
    ("the flour delivery comes", "What time does the flour delivery come?"),
    ("check-in closes for the flight", "When does check-in close for the flight?"),
    ("the piano lesson is", "What time is the piano lesson?"),
    ("the vet opens", "What time does the vet open?"),
    ("the surveyor is coming", "What time is the surveyor coming?"),
    ("the train to Lisbon departs", "What time does the train to Lisbon leave?"),
    ("the school run starts", "What time does the school run start?"),
    ("the call with the accountant is", "What time is the call with the accountant?"),
    ("the skip lorry turns up", "What time does the skip lorry come?"),
    ("the first dance is", "What time is the first dance?"),
    ("the museum in Porto opens", "What time does the museum in Porto open?"),
    ("the parkrun starts", "What time does the parkrun start?"),
    ("the electrician finishes", "What time does the electrician finish?"),
    ("the bank's appointment is", "What time is the bank appointment?"),
    ("the oven preheat timer is set", "What time is the oven preheat timer set for?"),
    ("the dentist appointment is", "What time is the dentist appointment?"),
    ("the swimming lesson ends", "What time does the swimming lesson end?"),
    ("the tasting menu is booked", "What time is the tasting menu booked for?"),
)

FILE_SUBJECTS = (
    ("the renovation budget", "What is the renovation budget file called?"),
    ("the floor plan", "What is the floor plan file called?"),
    ("the bakery menu", "Which file has the bakery menu?"),
    ("the guest list", "What is the guest list file called?"),
    ("the Porto itinerary", "What is the Porto itinerary file called?"),
    ("the signed lease", "What is the file of the signed lease?"),
    ("the tax spreadsheet", "What is the tax spreadsheet called?"),
    ("the survey report", "What is the survey report file called?"),
    ("the seating plan", "Which file holds the seating plan?"),
    ("the supplier price list", "What is the supplier price list file?"),
    ("the insurance claim photos", "What is the zip of the insurance claim photos?"),
    ("the piano practice log", "What is the piano practice log called?"),
    ("the training plan", "What is the training plan file called?"),
    ("the kitchen elevations", "What is the kitchen elevations drawing called?"),
    ("the shop logo", "What is the shop logo file?"),
    ("the cash-flow forecast", "What is the cash-flow forecast file called?"),
    ("the mortgage offer", "What is the mortgage offer file called?"),
    ("the packing list", "What is the packing list file?"),
    ("the vows draft", "What is the vows draft file called?"),
    ("the electrical certificate", "What is the electrical certificate file?"),
    ("the allergen sheet", "Which file is the allergen sheet?"),
    ("the photo shortlist", "What is the photo shortlist file called?"),
)
FILE_EXTENSIONS = ("xlsx", "pdf", "docx", "csv", "png", "zip", "md", "ods")

URL_SUBJECTS = (
    ("the tile shop's page for the ones we liked", "Where is the page of the tiles we liked?"),
    ("the Porto walking tour", "Where can I book the Porto walking tour?"),
    ("the council's planning portal", "What is the link to the council's planning portal?"),
    ("the oven's manual", "Where is the oven manual online?"),
    ("the wedding gift list", "What is the link to the wedding gift list?"),
    ("the bakery's booking form", "Where is the bakery's booking form?"),
    ("the mortgage calculator", "Which mortgage calculator did I use?"),
    ("the piano exam syllabus", "Where is the piano exam syllabus?"),
    ("the Lisbon apartment listing", "What is the link to the Lisbon apartment listing?"),
    ("the race entry page", "Where do I enter the half marathon?"),
    ("the vet's aftercare notes", "Where are the vet's aftercare notes?"),
    ("the boiler's registration form", "Where do I register the boiler?"),
    ("the shared photo album", "What is the link to the shared photo album?"),
    ("the flour supplier's catalogue", "Where is the flour supplier's catalogue?"),
    ("the school's term dates", "Where are the school's term dates?"),
    ("the insurer's claim form", "Where is the insurer's claim form?"),
    ("the caterer's sample menu", "Where is the caterer's sample menu?"),
    ("the train timetable", "Where is the train timetable we used?"),
    ("the paint supplier's colour chart", "Where is the paint colour chart?"),
    ("the allotment waiting list", "Where is the allotment waiting list?"),
    ("the tax guidance page", "Which tax guidance page did we read?"),
    ("the hotel in Porto", "What is the link to the hotel in Porto?"),
)
URL_HOSTS = (
    "tilesdirect.example.co.uk", "portowalks.example.pt", "planning.example.gov.uk",
    "manuals.example.com", "giftlist.example.com", "book.example.org", "calc.example.net",
    "music-exams.example.org", "stays.example.pt", "racehub.example.com",
    "vetcare.example.co.uk", "heatreg.example.com", "photos.example.com",
    "millers.example.co.uk", "school.example.sch.uk", "claims.example.com",
    "feast.example.co.uk", "trains.example.eu", "colours.example.com",
    "allotments.example.org", "tax.example.gov.uk", "hotel.example.pt",
)  # fmt: skip

# (what was decided about, question, the options; one of them is chosen)
DECISION_SUBJECTS = (
    ("the worktops", "Which worktops did we decide on?",
     ("oak butcher block", "white quartz slab", "recycled glass composite")),
    ("the wedding band", "Which band did we book?",
     ("the Velvet Foxes", "Brass Lantern Quartet", "the Jukebox Saints")),
    ("the bakery's name", "What did we decide to call the bakery?",
     ("Crumb & Copper", "Rise Street Bakehouse", "The Flour Ledger")),
    ("where to stay in Porto", "Where did we decide to stay in Porto?",
     ("a flat in Ribeira", "the guesthouse in Foz", "the hotel by São Bento")),
    ("the mortgage", "Which mortgage did we go for?",
     ("the five-year fixed", "the two-year tracker", "the offset deal")),
    ("the floor", "What floor did we choose?",
     ("herringbone parquet", "polished concrete", "terracotta quarry tiles")),
    ("the dog's food", "Which food did we settle on for the dog?",
     ("the salmon kibble", "raw turkey mince", "the grain-free lamb")),
    ("the cake", "Which cake did we pick?",
     ("lemon and elderflower", "chocolate and salted caramel", "carrot and walnut")),
    ("the accountant", "Which accounting firm did we go with?",
     ("Ledgerline Partners", "Hollis & Crane", "Northgate Bookkeeping")),
    ("the school", "Which school did we put first?",
     ("St Aldhelm's Primary", "Riverside Academy", "Meadowbank School")),
    ("the oven", "Which oven did we order?",
     ("the deck oven", "the rack oven", "the convection combi")),
    ("the boiler", "Which boiler did we choose?",
     ("the combi boiler", "the heat pump", "the system boiler")),
    ("the piano", "Which piano did I decide to buy?",
     ("the upright Yamaha", "the digital Kawai", "the second-hand Bechstein")),
    ("the honeymoon", "Where did we decide to go for the honeymoon?",
     ("the Azores", "Slovenian lakes", "Sicily by train")),
    ("the shop's opening hours", "What opening hours did we decide on?",
     ("seven till two", "eight till four", "six till noon")),
    ("the insurance", "Which insurer did we go with?",
     ("Harbourside Mutual", "Clearwater Cover", "Beacon Home")),
    ("the garden fence", "What fence did we decide on?",
     ("larch slatted panels", "a hawthorn hedge", "woven willow hurdles")),
    ("the car for Lisbon", "What did we decide about a car in Lisbon?",
     ("no car, trams only", "a small electric hire", "a car for the coast days only")),
    ("the invitations", "What invitations did we go with?",
     ("letterpress cards", "an e-invite with RSVP", "seed-paper postcards")),
    ("the tiles", "Which tiles did we go for in the bathroom?",
     ("green zellige", "white metro tiles", "grey hexagons")),
    ("the training shoes", "Which running shoes did I settle on?",
     ("the carbon-plate racers", "the cushioned trainers", "the trail pair")),
    ("the coffee for the shop", "Which coffee did we decide to serve?",
     ("the Ethiopian single origin", "a house espresso blend", "the decaf-friendly Colombian")),
)  # fmt: skip

STATEMENTS: dict[Kind, tuple[str, ...]] = {
    "name": (
        "{s} is called {v}.",
        "Oh, and {s} is {v}, in case I forget.",
        "For the record, {s} is {v}.",
    ),
    "code": (
        "{s} is {v}.",
        "Writing it down here: {s} is {v}.",
        "I found it, {s} is {v}.",
    ),
    "amount": (
        "{s} came to {v}.",
        "Got the number: {s} is {v}.",
        "So {s} will be {v}, which is more than I hoped.",
    ),
    "quantity": (
        "I measured it: {s} is {v}.",
        "{s} comes to {v}.",
        "Noting that {s} is {v}.",
    ),
    "date": (
        "{s} is on {v}.",
        "It's confirmed, {s} is {v}.",
        "Put it in the calendar: {s} on {v}.",
    ),
    "time": (
        "It turns out {s} at {v}.",
        "Just checked, {s} at {v}.",
        "Good to know: {s} at {v}.",
    ),
    "file": (
        "I saved {s} as {v}.",
        "{s} is in {v} now.",
        "Updated {s}, the file is {v}.",
    ),
    "url": (
        "Here's {s}: {v}",
        "Bookmarking {s}: {v}",
        "{s} is at {v} if you need it.",
    ),
    "decision": (
        "Decided on {s}: we'll go with {v}.",
        "Right, for {s} let's go with {v}.",
        "We talked it over and chose {v} for {s}.",
    ),
}

# --- the filler ------------------------------------------------------------------------

TOPICS: dict[str, tuple[str, ...]] = {
    "the kitchen renovation": (
        "the extractor hood", "the cabinet doors", "the sink", "the lighting", "the splashback",
        "the plumbing", "the dust everywhere", "the budget",
    ),
    "the wedding": (
        "the guest list", "the venue", "the speeches", "the flowers", "the seating plan",
        "the music", "the dress", "the timings",
    ),
    "opening the bakery": (
        "the sourdough", "the counter", "pricing", "the shop sign", "staff rotas",
        "the morning bake", "the suppliers", "the till",
    ),
    "the trip to Portugal": (
        "the itinerary", "the day trips", "the packing", "the restaurants", "the weather",
        "the trains", "the budget", "the beaches",
    ),
    "the house move": (
        "the boxes", "the removal van", "the solicitor's questions", "the utilities",
        "the survey", "the new school run", "the keys", "the storage",
    ),
    "family and health": (
        "the dog's appointments", "Mum's knee", "the kids' clubs", "sleep", "my running",
        "the piano practice", "the weekly shop", "the dentist",
    ),
}  # fmt: skip
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
    "Could you draft a short checklist for {t}?",
    "Honestly {t} is the part I keep putting off.",
    "A friend said {t} was the easy bit for them, I'm not so sure.",
    "Let's get back to {t} for a minute.",
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
    "That sounds like real progress on {t}.",
    "It's normal to feel unsure about {t} at this stage.",
    "You could ask around locally about {t}; people are usually glad to share.",
    "Keep a short note of what you decide about {t}, so you don't revisit it every week.",
)
ACKNOWLEDGEMENTS = (
    "Noted, I'll keep that in mind.",
    "Thanks, that's useful to have written down.",
    "Got it.",
    "Good, one less thing to chase.",
)


# --- the conversation ------------------------------------------------------------------


@dataclass(frozen=True)
class PlantedFact:
    """One fact, where it was said, and the question that needs it.

    Attributes:
        kind: which kind of hard fact it is.
        value: the fact itself, exactly as written in the message ("AX-7731").
        question: asks for the value without containing it.
        index: the 0-based position of the message that states it.
    """

    kind: Kind
    value: str
    question: str
    index: int


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation: `role` is "user" or "assistant"."""

    role: Literal["user", "assistant"]
    text: str
    sent_at: datetime


@dataclass(frozen=True)
class PlantedConversation:
    messages: tuple[ChatMessage, ...]
    facts: tuple[PlantedFact, ...]


def _values(rng: random.Random) -> dict[Kind, list[tuple[str, str, str]]]:
    """(subject, question, value) for every fact, by kind; values are unique."""
    first, last = list(FIRST_NAMES), list(LAST_NAMES)
    rng.shuffle(first)
    rng.shuffle(last)
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    # Planted dates are upcoming, after the conversation's last day: a date line the
    # request carries ("Wednesday 22 April 2026") is never taken for a planted date.
    start = datetime(2026, 6, 1)
    facts: dict[Kind, list[tuple[str, str, str]]] = {kind: [] for kind in KINDS}
    for i, (subject, question) in enumerate(NAME_SUBJECTS):
        facts["name"].append((subject, question, f"{first[i]} {last[i]}"))
    for i, (subject, question) in enumerate(CODE_SUBJECTS):
        shape = i % 3
        if shape == 0:
            value = f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(1000, 9999)}"
        elif shape == 1:
            value = f"{rng.choice(letters)}{rng.randint(10, 99)}{rng.choice(letters)}"
            value += f"{rng.randint(1000, 9999)}"
        else:
            value = (
                f"{''.join(rng.choice(letters) for _ in range(3))}-2026-{rng.randint(1, 999):03d}"
            )
        facts["code"].append((subject, question, value))
    for i, (subject, question) in enumerate(AMOUNT_SUBJECTS):

        def amount(i: int = i, subject: str = subject) -> str:
            cents = f".{rng.randint(10, 99)}" if i % 4 == 0 else ""
            return f"{CURRENCIES[i % 3]}{rng.randint(*AMOUNT_RANGES[subject]):,}{cents}"

        facts["amount"].append((subject, question, _distinct(amount, facts)))
    for i, (subject, unit, question) in enumerate(QUANTITY_SUBJECTS):

        def quantity(i: int = i, unit: str = unit) -> str:
            whole = f"{rng.randint(3, 480)}.{rng.randint(1, 9)}" if i % 2 else rng.randint(7, 950)
            return f"{whole} {unit}"

        facts["quantity"].append((subject, question, _distinct(quantity, facts)))
    for i, (subject, question) in enumerate(DATE_SUBJECTS):

        def date(i: int = i) -> str:
            day = start + timedelta(days=rng.randint(0, 210))
            return day.strftime("%d %B %Y").lstrip("0") if i % 2 else day.strftime("%Y-%m-%d")

        facts["date"].append((subject, question, _distinct(date, facts)))
    for i, (subject, question) in enumerate(TIME_SUBJECTS):

        def clock_time(i: int = i) -> str:
            hour, minute = rng.randint(6, 21), rng.choice(PLANTED_MINUTES)
            if i % 2:
                return f"{hour:02d}:{minute:02d}"
            return f"{hour % 12 or 12}:{minute:02d} {'am' if hour < 12 else 'pm'}"

        facts["time"].append((subject, question, _distinct(clock_time, facts)))
    for i, (subject, question) in enumerate(FILE_SUBJECTS):
        stem = subject.removeprefix("the ").replace(" ", "_").replace("'", "")
        value = f"{stem}_v{rng.randint(2, 9)}.{FILE_EXTENSIONS[i % len(FILE_EXTENSIONS)]}"
        facts["file"].append((subject, question, value))
    for i, (subject, question) in enumerate(URL_SUBJECTS):
        path = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(6))
        facts["url"].append((subject, question, f"https://{URL_HOSTS[i]}/p/{path}"))
    for subject, question, options in DECISION_SUBJECTS:
        facts["decision"].append((subject, question, rng.choice(options)))
    return facts


def _distinct(make: Callable[[], str], taken: dict[Kind, list[tuple[str, str, str]]]) -> str:
    """A value of `make` that is not part of another value, nor another of it ("£81"
    would be found inside "£815", "2:20 pm" inside "12:20 pm"), so that finding a
    value means finding that fact."""
    others = [value for facts in taken.values() for _subject, _question, value in facts]
    while True:
        value = make()
        if not any(value in other or other in value for other in others):
            return value


def _capitalized(text: str) -> str:
    return text[0].upper() + text[1:]


def make_conversation(seed: int = 12, length: int = DEFAULT_LENGTH) -> PlantedConversation:
    """`length` alternating messages (user first) over many weeks, facts planted in user turns.

    The same seed and length give the same conversation, message for message.
    """
    rng = random.Random(seed)
    by_kind = _values(rng)
    facts = [(kind, *fact) for kind in KINDS for fact in by_kind[kind]]
    user_slots = list(range(0, length - QUIET_TAIL, 2))
    if len(user_slots) < len(facts):
        raise ValueError(f"{length} messages are too few for {len(facts)} facts")
    slots = sorted(rng.sample(user_slots, len(facts)))
    rng.shuffle(facts)
    planted_at = dict(zip(slots, facts, strict=True))
    decision_options = {subject: options for subject, _q, options in DECISION_SUBJECTS}
    topics = list(TOPICS)
    topic = rng.choice(topics)
    stretch_left = rng.randint(18, 40)
    when = datetime(2026, 2, 2, 8, 30, tzinfo=UTC)
    messages: list[ChatMessage] = []
    planted: list[PlantedFact] = []
    for index in range(length):
        stretch_left -= 1
        if stretch_left <= 0 and index % 2 == 0:
            topic = rng.choice([t for t in topics if t != topic])
            stretch_left = rng.randint(18, 40)
        when += timedelta(minutes=rng.randint(1, 25))
        if when.minute in PLANTED_MINUTES:
            when += timedelta(minutes=1)
        if index % 2 == 0 and rng.random() < 0.1:
            when += timedelta(days=rng.randint(1, 3), hours=rng.randint(0, 6))
        things = TOPICS[topic]
        if index % 2 == 0:
            lines = [
                rng.choice(USER_LINES).format(t=rng.choice(things))
                for _ in range(rng.randint(1, 3))
            ]
            if index in planted_at:
                kind, subject, question, value = planted_at[index]
                statement = rng.choice(STATEMENTS[kind]).format(s=subject, v=value)
                if kind == "decision":  # the options were weighed before choosing
                    others = [o for o in decision_options[subject] if o != value]
                    lines.append(f"We were torn between {others[0]} and {others[1]} for {subject}.")
                lines.insert(rng.randint(0, len(lines)), _capitalized(statement))
                planted.append(PlantedFact(kind, value, question, index))
            messages.append(ChatMessage("user", " ".join(lines), when))
        else:
            lines = [
                rng.choice(ASSISTANT_LINES).format(t=rng.choice(things))
                for _ in range(rng.randint(2, 6))
            ]
            if index - 1 in planted_at:
                lines.insert(0, rng.choice(ACKNOWLEDGEMENTS))
            messages.append(ChatMessage("assistant", " ".join(lines), when))
    return PlantedConversation(tuple(messages), tuple(planted))
