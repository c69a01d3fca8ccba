"""Six months of one person's chats with Claude, and questions asked the way people ask
them (issue 22, item 6).

Independent of the app: plain data that bench/bench_recall_eval.py feeds through Cairn.
Maya, a librarian in Leeds, talks to Claude two or three times a week from January to
June 2026: each session opens with a greeting ("Hi Claude!" / "Hi Maya, …"), wanders
through everyday things (her dog Biscuit, running, guitar practice, work, her partner
Tom, her mum, the allotment) and now and then brings news — a storyline that comes
back weeks later. The questions were written from the storylines, as a person asks
about them afterwards, before any tuning of recall, and are not changed to suit it:

- they name the participants ("What design is on Maya's guitar?") or speak as the user
  ("Where did I buy my guitar?");
- they paraphrase ("dental work" for "two teeth out", "racket" for the drums);
- they carry dates, relative ones included ("in April", "last week", "a few days ago");
- their answer often leans on the turn before (Claude asks "What does it look like?",
  the answer is "A deep blue one with an octopus…": no word of the question in it);
- some need several turns, weeks apart.

Categories: "single" (one turn answers it), "several" (two or more turns), "date" (the
question dates what it asks about), "context" (the answer shares no content word with
the question; the turn it answers does). Each question is "dev" or "test": tuning may
look at the dev questions' misses, never at the test ones; both are reported. A second
set (`HELD_OUT`, split "held-out"), written the same way before a later round of tuning,
was never looked at while tuning; it is reported in a table of its own.

`make_natural(seed)` gives the same conversation for the same seed: the storylines are
fixed, the everyday filler around them is drawn from the seed.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

Category = Literal["single", "several", "date", "context"]
CATEGORIES: tuple[Category, ...] = ("single", "several", "date", "context")
# The questions are asked the day after the last session.
FIRST_DAY = date(2026, 1, 6)
LAST_DAY = date(2026, 6, 28)
ASKED_ON = date(2026, 6, 30)


@dataclass(frozen=True)
class Turn:
    """One message of a storyline; `key` names it when a question needs it."""

    role: Literal["user", "assistant"]
    text: str
    key: str = ""


@dataclass(frozen=True)
class Question:
    text: str
    category: Category
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["user", "assistant"]
    text: str
    sent_at: datetime
    key: str = ""


@dataclass(frozen=True)
class NaturalQuestion:
    """A question, its category, its split (dev, test or held-out) and the indexes of the
    messages it needs."""

    text: str
    category: Category
    split: Literal["dev", "test", "held-out"]
    evidence: tuple[int, ...]


@dataclass(frozen=True)
class NaturalConversation:
    messages: tuple[ChatMessage, ...]
    questions: tuple[NaturalQuestion, ...]
    asked_at: datetime


def _u(text: str, key: str = "") -> Turn:
    return Turn("user", text, key)


def _c(text: str, key: str = "") -> Turn:
    return Turn("assistant", text, key)


# --- the storylines: (day, turns) ------------------------------------------------------

STORIES: tuple[tuple[date, tuple[Turn, ...]], ...] = (
    (
        date(2026, 1, 8),
        (
            _u(
                "Big news: I finally bought a guitar! A secondhand acoustic from the music shop "
                "on Mill Lane.",
                "guitar-shop",
            ),
            _c(
                "Congratulations, that's exciting! Secondhand instruments often have a lot of "
                "character. What does it look like?"
            ),
            _u(
                "It's a deep blue one with an octopus painted across the front, the tentacles "
                "curling round the sound hole. The previous owner painted it herself.",
                "guitar-look",
            ),
            _c(
                "That sounds gorgeous, and very much yours. Start with short daily practice, "
                "ten or fifteen minutes, so your fingertips can toughen up without getting sore."
            ),
        ),
    ),
    (
        date(2026, 1, 13),
        (
            _u(
                "Took Biscuit to the vet this morning. She has to have two teeth out next month, "
                "poor thing, and the estimate is £340.",
                "vet-teeth",
            ),
            _c(
                "Poor Biscuit. Dogs usually bounce back from extractions within a few days; soft "
                "food for a week helps. It might be worth asking whether the estimate includes "
                "the follow-up check."
            ),
        ),
    ),
    (
        date(2026, 1, 15),
        (
            _u(
                "I've been floored by flu all week. I've watched every episode of Bake Off ever "
                "made and I can't taste anything.",
                "flu",
            ),
            _c(
                "I'm sorry, flu is miserable. Rest, fluids and paracetamol for the aches; if "
                "you're short of breath or it drags on past ten days, see your GP."
            ),
        ),
    ),
    (
        date(2026, 1, 20),
        (
            _u(
                "Denise wants me to run the children's reading hour on Saturdays from February. "
                "I said yes but I'm nervous, I've never read aloud to a room full of kids.",
                "reading-hour",
            ),
            _c(
                "You'll be great. Pick books with rhythm and repetition, do the voices, and let "
                "the children join in. Have you got a first book in mind?"
            ),
            _u(
                "Probably 'The Gruffalo', it's short and everybody knows the rhymes.",
                "reading-book",
            ),
            _c("Perfect choice: they'll chant along, which takes the pressure off you."),
        ),
    ),
    (
        date(2026, 1, 22),
        (
            _u(
                "Our upstairs neighbour has a new cat called Pickle who keeps sneaking into our "
                "flat through the kitchen window.",
                "cat",
            ),
            _c(
                "Ha, a regular visitor! Biscuit must have opinions about that. If you'd rather "
                "Pickle didn't wander in, a window restrictor lets the air in but not the cat."
            ),
        ),
    ),
    (
        date(2026, 1, 27),
        (
            _u(
                "My brother Sam and Aisha have set the date: 15 August, at a barn near Hebden "
                "Bridge. And I'm doing a reading at the ceremony!",
                "wedding-date",
            ),
            _c(
                "How lovely, congratulations to them both. A reading is an honour; short and "
                "warm usually works best."
            ),
        ),
    ),
    (
        date(2026, 1, 30),
        (
            _u(
                "Tom and I sat down with a spreadsheet last night. We need about £18,000 for a "
                "deposit on a house, so we're putting away £600 a month.",
                "deposit-plan",
            ),
            _c(
                "That's a clear plan. A separate easy-access savings account or a Lifetime ISA "
                "could add a bit on top, since the ISA's bonus is 25 %."
            ),
        ),
    ),
    (
        date(2026, 2, 3),
        (
            _u(
                "I signed up for the Riverside 10k on 19 April! My goal is to get under 60 "
                "minutes.",
                "race-goal",
            ),
            _c(
                "Brilliant. Eleven weeks is plenty: three runs a week, one of them long and "
                "easy, and one with some faster intervals."
            ),
        ),
    ),
    (
        date(2026, 2, 5),
        (
            _u(
                "Dentist says I grind my teeth at night, so I'm getting a mouthguard fitted on "
                "the 20th.",
                "mouthguard",
            ),
            _c(
                "Grinding is really common, often with stress. A fitted guard protects the "
                "enamel; some people also find a wind-down routine before bed helps."
            ),
        ),
    ),
    (
        date(2026, 2, 10),
        (
            _u(
                "Priya dragged me to the bouldering gym on Thursday night. My arms are jelly but "
                "I loved it, we're going every week now.",
                "hobby-climb",
            ),
            _c(
                "That's great! Bouldering is sociable and good for grip strength, which might "
                "even help with the guitar."
            ),
        ),
    ),
    (
        date(2026, 2, 12),
        (
            _u(
                "For Valentine's I got Tom a vintage map of the Yorkshire Dales for his study. "
                "He went very quiet and then hugged me for ages.",
                "valentine",
            ),
            _c("What a thoughtful present, especially for someone who loves walking there."),
        ),
    ),
    (
        date(2026, 2, 17),
        (
            _u("It's Mum's 65th on Saturday and she's coming to ours."),
            _c("A milestone! What are you thinking of cooking for your mum's birthday?"),
            _u(
                "A lemon and thyme roast chicken, then her favourite sticky toffee pudding. "
                "Tom's in charge of the potatoes.",
                "mum-dinner",
            ),
            _c(
                "That sounds like a feast. Roast the chicken on a bed of lemon halves and let it "
                "rest twenty minutes before carving."
            ),
        ),
    ),
    (
        date(2026, 2, 19),
        (
            _u(
                "We keep going back and forth about adopting a second dog now or waiting until "
                "we move."
            ),
            _c(
                "Both are fair. A second dog is a bigger commitment in a flat; waiting means you "
                "can choose with a garden in mind."
            ),
            _u(
                "We've decided to wait until we've got a garden. Biscuit can be an only child a "
                "bit longer.",
                "second-dog",
            ),
            _c("That sounds sensible, and Biscuit will enjoy the attention."),
        ),
    ),
    (
        date(2026, 2, 24),
        (
            _u(
                "The boiler died again. Our landlord Mr Hartley says an engineer can't come until "
                "Friday, so we're living on the kettle and an electric heater.",
                "boiler-broke",
            ),
            _c(
                "That's miserable in February. Keep the heater away from curtains, and note the "
                "days without heating in case you want to ask for a rent reduction."
            ),
        ),
    ),
    (
        date(2026, 2, 26),
        (
            _c("How did the first Saturday reading session go?"),
            _u(
                "Eleven kids turned up and one of them corrected my Gruffalo voice. Humbling.",
                "reading-first",
            ),
            _c(
                "Eleven is a great turnout for a first week, and being corrected means they "
                "were listening!"
            ),
        ),
    ),
    (
        date(2026, 3, 3),
        (
            _u(
                "Boiler's finally fixed, they replaced the whole pump. Mr Hartley is knocking £50 "
                "off March's rent for the hassle.",
                "boiler-fixed",
            ),
            _c("Good, and good of him to offer something back."),
        ),
    ),
    (
        date(2026, 3, 5),
        (
            _u(
                "Tom got the job at the architecture firm in Leeds! He starts on 6 April. The "
                "commute's longer but the salary is much better.",
                "tom-job",
            ),
            _c(
                "Congratulations to Tom! A longer commute is easier with a routine: podcasts, a "
                "book, or just some quiet."
            ),
        ),
    ),
    (
        date(2026, 3, 8),
        (
            _u("We had the lazy weekend we promised ourselves."),
            _c("You deserved it. What did you two end up watching?"),
            _u("The Night Manager, all six episodes in one go. Zero regrets.", "series"),
            _c("A classic binge. The hotel scenes alone are worth it."),
        ),
    ),
    (
        date(2026, 3, 12),
        (
            _c("Which book did the club pick this month?"),
            _u(
                "Piranesi, by Susanna Clarke. I'm halfway and I honestly can't tell if I love it "
                "or if it's breaking my brain.",
                "book-club",
            ),
            _c("It does both to most readers. Keep going: the second half rewards you."),
        ),
    ),
    (
        date(2026, 3, 17),
        (
            _u(
                "We finally got an allotment! Plot 14 at Greenside, after two years on the "
                "waiting list.",
                "allotment",
            ),
            _c(
                "Two years! Congratulations. Start small: clear one bed properly rather than the "
                "whole plot badly."
            ),
        ),
    ),
    (
        date(2026, 3, 19),
        (
            _c("What are you planning to grow on the new plot?"),
            _u(
                "Mostly potatoes and runner beans this year, plus a row of sweet peas for Mum.",
                "allotment-grow",
            ),
            _c("Good first-year crops: forgiving and generous."),
        ),
    ),
    (
        date(2026, 3, 24),
        (
            _u(
                "The physio says my knee pain is from tight hip flexors, not the knee itself. "
                "I've got stretches to do twice a day.",
                "physio",
            ),
            _c(
                "That's common in runners. Do the stretches after runs while you're warm, and "
                "don't push through sharp pain."
            ),
        ),
    ),
    (
        date(2026, 3, 27),
        (
            _u(
                "Priya is moving to Glasgow in the summer for a research job at the university. "
                "I'm happy for her but gutted about bouldering.",
                "priya-moving",
            ),
            _c(
                "Mixed feelings make sense. Glasgow's a short train ride: a climbing weekend "
                "there could become a tradition."
            ),
        ),
    ),
    (
        date(2026, 3, 31),
        (
            _u(
                "Tom and I are trying to choose between Lisbon and Porto for our anniversary in "
                "May."
            ),
            _c(
                "Both are lovely. Lisbon is bigger and livelier; Porto is smaller, with the "
                "river and the port cellars. What matters most to you two?"
            ),
            _u(
                "We went for Porto in the end: four nights at a little guesthouse by the river, "
                "flying out on 22 May.",
                "porto-choice",
            ),
            _c("Lovely choice. Book a port cellar tour in Gaia ahead; the good ones fill up."),
        ),
    ),
    (
        date(2026, 4, 2),
        (
            _u(
                "The car failed its MOT, something about the brake discs. The garage quoted £280 "
                "to sort it.",
                "mot",
            ),
            _c(
                "Annoying, but brakes are the right thing to fail on. £280 for discs and pads is "
                "a fair price."
            ),
        ),
    ),
    (
        date(2026, 4, 7),
        (
            _u(
                "I've signed up for an eight-week pottery course at the community centre, "
                "Tuesday evenings.",
                "hobby-pottery",
            ),
            _c("How lovely, clay is very absorbing after a day at a desk."),
        ),
    ),
    (
        date(2026, 4, 9),
        (
            _u(
                "Tom's commute to Leeds is brutal, an hour and twenty each way on the train.",
                "commute-bad",
            ),
            _c(
                "That's a lot. Could he ask about a day or two from home once he's settled in?",
                "commute-advice",
            ),
        ),
    ),
    (
        date(2026, 4, 14),
        (
            _u(
                "Biscuit had her checkup today and the vet says she's lost a kilo since January, "
                "so the diet's working.",
                "biscuit-checkup",
            ),
            _c("Well done, both of you. A kilo is a lot for a small dog."),
        ),
    ),
    (
        date(2026, 4, 16),
        (
            _c("What did the pottery teacher have you make first?"),
            _u(
                "A wonky little bowl. It's meant to hold keys but it's more of a key suggestion.",
                "pottery-first",
            ),
            _c("Every potter's first bowl is wonky. Keep it: you'll want to see it in a year."),
        ),
    ),
    (
        date(2026, 4, 20),
        (
            _c("How did the Riverside 10k go yesterday?"),
            _u(
                "I did it! 57:42 on the clock, and Tom was waiting at the finish with a flask of "
                "tea.",
                "race-result",
            ),
            _c("Under an hour, as you wanted! Take a few easy days now."),
        ),
    ),
    (
        date(2026, 4, 21),
        (
            _u(
                "I applied for the senior librarian post at Central. The interview is on 5 May "
                "and I have to prepare a ten-minute presentation on family learning.",
                "job-apply",
            ),
            _c(
                "Exciting! Build the presentation around your reading hour: real numbers, real "
                "children, what you'd do next."
            ),
        ),
    ),
    (
        date(2026, 4, 28),
        (
            _u(
                "The self-service machines at the library crashed again, the screen just says "
                "'ERR 0x80070057 parameter incorrect' and nobody can check out books.",
                "machine-error",
            ),
            _c(
                "That code usually means a bad setting or a corrupted update. Worth logging it "
                "with IT with the exact message and when it happened."
            ),
        ),
    ),
    (
        date(2026, 5, 1),
        (
            _u(
                "Mum's hip replacement is booked for 9 June at St James's. She's putting a brave "
                "face on it.",
                "mum-op-date",
            ),
            _c(
                "It's a very routine operation now, and most people are walking the next day. "
                "Practical help in the first weeks will matter most."
            ),
        ),
    ),
    (
        date(2026, 5, 6),
        (
            _u(
                "The interview went okay I think? They asked loads about budgets, which I wasn't "
                "expecting.",
                "job-interview",
            ),
            _c("Questions on budgets are a good sign: they picture you in the role."),
        ),
    ),
    (
        date(2026, 5, 8),
        (
            _c("Did you manage to talk to the neighbours about the noise?"),
            _u(
                "I did, and it was fine in the end. Their son is learning the drums and they've "
                "agreed he stops by eight.",
                "noise",
            ),
            _c("A good outcome, and a friendly one."),
        ),
    ),
    (
        date(2026, 5, 12),
        (
            _u(
                "Tom's firm is letting him work from home on Mondays and Fridays now, which has "
                "saved his sanity.",
                "commute-better",
            ),
            _c("That makes a huge difference: three long days are much easier than five."),
        ),
    ),
    (
        date(2026, 5, 14),
        (
            _u("I GOT IT. Senior librarian, starting in June!", "job-got"),
            _c("Congratulations! That's wonderful news, and well deserved."),
        ),
    ),
    (
        date(2026, 5, 19),
        (
            _u(
                "Joined the community choir! We meet in the church hall on Wednesdays, and "
                "apparently I'm an alto.",
                "hobby-choir",
            ),
            _c("Singing with others is a joy. Altos are the glue of a choir."),
        ),
    ),
    (
        date(2026, 5, 21),
        (
            _c("What's the choir working on for the summer concert?"),
            _u(
                "Three songs: 'Shenandoah', a Beatles medley and something in Latin I can't "
                "pronounce yet.",
                "choir-songs",
            ),
            _c("A good mix. Latin is easier than it looks: the vowels are always the same."),
        ),
    ),
    (
        date(2026, 5, 26),
        (
            _u("I'm trying to cook more vegetarian meals during the week."),
            _c("Good idea. Any that worked so far?"),
            _u(
                "The crispy peanut tofu with noodles was a hit, even Tom had seconds.", "veggie-hit"
            ),
            _c("Pressing the tofu first is the secret to crispy; sounds like you nailed it."),
        ),
    ),
    (
        date(2026, 5, 28),
        (
            _u(
                "Back from Porto! The highlight was a port tasting in a cellar in Gaia, and Tom "
                "got horribly sunburnt on day two.",
                "porto-back",
            ),
            _c("Welcome back! Sounds like a wonderful anniversary, sunburn aside."),
        ),
    ),
    (
        date(2026, 5, 30),
        (
            _u(
                "Dress shopping for Sam's wedding was a success: a green silk dress from a "
                "vintage shop in York.",
                "wedding-dress",
            ),
            _c("Green silk sounds stunning for a summer barn wedding."),
        ),
    ),
    (
        date(2026, 6, 2),
        (
            _u(
                "First week as senior librarian done. My desk is next to the local history "
                "archive, and I've inherited a very opinionated cactus.",
                "new-desk",
            ),
            _c("Congratulations on week one! Cacti are forgiving: water it once a fortnight."),
        ),
    ),
    (
        date(2026, 6, 5),
        (
            _u("Tom's birthday is next week and I want to take him somewhere nice."),
            _c("Lovely. Where are you thinking of for Tom's birthday dinner?"),
            _u(
                "That little Georgian place on Call Lane, the one with the cheese bread.",
                "tom-dinner",
            ),
            _c("Khachapuri for a birthday: excellent choice. Book ahead for a weekend."),
        ),
    ),
    (
        date(2026, 6, 9),
        (
            _u(
                "We finally replaced the car: sold the old Fiesta and bought a secondhand Toyota "
                "Yaris hybrid.",
                "new-car",
            ),
            _c("Nice, a hybrid will be cheap to run on short trips."),
        ),
    ),
    (
        date(2026, 6, 11),
        (
            _u(
                "Mum's surgery went well, she was up with a frame the next day. The nurses are "
                "angels.",
                "mum-op-done",
            ),
            _c(
                "That's such good news. The first fortnight is the hardest; she's lucky to have "
                "you."
            ),
        ),
    ),
    (
        date(2026, 6, 16),
        (
            _u("Deposit fund check: we're at £9,400, just over halfway!", "deposit-now"),
            _c("Great progress, you're ahead of your plan."),
        ),
    ),
    (
        date(2026, 6, 19),
        (
            _u(
                "First harvest from the allotment: a bag of new potatoes and more courgettes "
                "than any human needs.",
                "harvest",
            ),
            _c("The courgette glut is a rite of passage. Courgette fritters freeze well."),
        ),
    ),
    (
        date(2026, 6, 23),
        (
            _u(
                "I've drafted my reading for Sam's wedding: it's a poem by Wendy Cope called "
                "'The Orange'. Short, funny, and it won't make me cry.",
                "poem",
            ),
            _c("A perfect choice: warm, light and about everyday love."),
        ),
    ),
    (
        date(2026, 6, 26),
        (
            _u(
                "Biscuit ate one of Tom's socks. The vet made her sick and it came back up, but "
                "that's £120 we'll never see again.",
                "sock",
            ),
            _c("Oh no, but what a relief it came up. Socks can cause real blockages."),
        ),
    ),
)

QUESTIONS: tuple[Question, ...] = (
    Question("What design is on Maya's guitar?", "context", ("guitar-look",)),
    Question("Where did I buy my guitar?", "single", ("guitar-shop",)),
    Question("How much is Biscuit's dental work going to cost?", "single", ("vet-teeth",)),
    Question("What was wrong with Maya in mid-January?", "date", ("flu",)),
    Question("Who asked me to do the Saturday story time?", "single", ("reading-hour",)),
    Question(
        "Which book did Maya plan to start the kids' reading sessions with?",
        "context",
        ("reading-book",),
    ),
    Question("What's the name of the cat that keeps getting into our flat?", "single", ("cat",)),
    Question("When is my brother getting married?", "single", ("wedding-date",)),
    Question("How much are Maya and Tom saving each month?", "single", ("deposit-plan",)),
    Question("What time is Maya aiming for in her 10k?", "single", ("race-goal",)),
    Question("Why do I need a mouth guard?", "single", ("mouthguard",)),
    Question("Who got me into climbing?", "single", ("hobby-climb",)),
    Question("What did I give Tom in February?", "date", ("valentine",)),
    Question("What did I make for my mum's birthday dinner?", "context", ("mum-dinner",)),
    Question("Did Maya and Tom decide to get another dog?", "single", ("second-dog",)),
    Question(
        "What happened with the heating at Maya's flat?",
        "several",
        ("boiler-broke", "boiler-fixed"),
    ),
    Question("How many children came to Maya's first story time?", "context", ("reading-first",)),
    Question("What good news did Tom get in early March?", "date", ("tom-job",)),
    Question("What series did Maya and Tom binge?", "context", ("series",)),
    Question("What novel was my book club reading in March?", "context", ("book-club",)),
    Question("How long had Maya been waiting for an allotment?", "single", ("allotment",)),
    Question("What is Maya growing at the allotment?", "context", ("allotment-grow",)),
    Question(
        "What did the physiotherapist think was causing my knee trouble?", "single", ("physio",)
    ),
    Question("Why is Priya leaving?", "single", ("priya-moving",)),
    Question("Where did we decide to go for our anniversary?", "single", ("porto-choice",)),
    Question("How much did the garage want to fix the car's brakes?", "single", ("mot",)),
    Question("What did the vet say at Biscuit's check-up in April?", "date", ("biscuit-checkup",)),
    Question("What was the first thing I made at pottery?", "context", ("pottery-first",)),
    Question("How did my race go in April?", "date", ("race-result",)),
    Question("Did Maya hit her running goal in the 10k?", "several", ("race-goal", "race-result")),
    Question(
        "What new hobbies has Maya taken up this year?",
        "several",
        ("hobby-climb", "hobby-pottery", "hobby-choir"),
    ),
    Question(
        "How did Maya's application for the senior job go, from start to finish?",
        "several",
        ("job-apply", "job-interview", "job-got"),
    ),
    Question("What did I have to present at my interview?", "single", ("job-apply",)),
    Question("What error did the library's machines show?", "single", ("machine-error",)),
    Question("When is my mother's operation?", "single", ("mum-op-date",)),
    Question("What was causing the racket next door?", "context", ("noise",)),
    Question(
        "How has Tom's new job affected his travel?", "several", ("commute-bad", "commute-better")
    ),
    Question("What songs is Maya's choir singing this summer?", "context", ("choir-songs",)),
    Question("Which meat-free recipe did Tom like?", "context", ("veggie-hit",)),
    Question("What was the best part of Maya's trip in May?", "date", ("porto-back",)),
    Question("What am I wearing to my brother's wedding?", "single", ("wedding-dress",)),
    Question("What did Maya inherit at her new desk?", "single", ("new-desk",)),
    Question("Which restaurant did I choose for Tom's birthday?", "context", ("tom-dinner",)),
    Question("What car do we drive now?", "single", ("new-car",)),
    Question("How did Mum's hip surgery go in June?", "date", ("mum-op-done",)),
    Question("How is our house deposit saving going?", "several", ("deposit-plan", "deposit-now")),
    Question("What did Maya harvest in June?", "date", ("harvest",)),
    Question("Which poem did I pick last week for the wedding?", "date", ("poem",)),
    Question("What happened with the dog a few days ago?", "date", ("sock",)),
    Question("Where is Sam and Aisha's wedding?", "single", ("wedding-date",)),
    Question("What did I tell you about the dentist back in February?", "date", ("mouthguard",)),
    Question("What did Claude suggest for Tom's long commute?", "context", ("commute-advice",)),
)

# A second set, held out (issue 22, round 3): written the same way, from the same
# storylines, before the round's tuning began, and never looked at while tuning (no
# `--misses` for it). It guards against fitting recall to the questions above.
HELD_OUT: tuple[Question, ...] = (
    Question("What colour is my guitar?", "context", ("guitar-look",)),
    Question("What did I catch in January that kept me on the sofa?", "date", ("flu",)),
    Question("Where does Tom's new employer have its office?", "single", ("tom-job",)),
    Question(
        "Did the landlord give us anything back for the broken heating?",
        "single",
        ("boiler-fixed",),
    ),
    Question("Which plot number is our allotment?", "single", ("allotment",)),
    Question("What exercises did the physio give Maya?", "single", ("physio",)),
    Question("Which city is my climbing partner moving to?", "single", ("priya-moving",)),
    Question("Where are we staying on the anniversary trip?", "single", ("porto-choice",)),
    Question("What went wrong with the car in early April?", "date", ("mot",)),
    Question("How much weight has the dog lost?", "single", ("biscuit-checkup",)),
    Question("How fast did Maya run the Riverside race?", "context", ("race-result",)),
    Question("What did the interview panel quiz me about?", "single", ("job-interview",)),
    Question("Which part does Maya sing in the choir?", "single", ("hobby-choir",)),
    Question("Where did I find my outfit for the wedding?", "single", ("wedding-dress",)),
    Question("What plant came with Maya's new desk?", "single", ("new-desk",)),
    Question("What car did we get rid of?", "single", ("new-car",)),
    Question(
        "How far along are we with the money for a house?",
        "several",
        ("deposit-plan", "deposit-now"),
    ),
    Question(
        "How did the children's reading hour start off, and which book did I pick?",
        "several",
        ("reading-book", "reading-first"),
    ),
    Question(
        "Where was Mum's hip done and how did she get on?",
        "several",
        ("mum-op-date", "mum-op-done"),
    ),
    Question("What did we watch on our lazy weekend in March?", "date", ("series",)),
    Question("What broke in the flat in late February?", "date", ("boiler-broke",)),
    Question("What did the dog swallow in June?", "date", ("sock",)),
    Question("What class did I start on Tuesday evenings in April?", "date", ("hobby-pottery",)),
    Question("Did the drumming next door get sorted?", "context", ("noise",)),
    Question("What did I think of Piranesi?", "single", ("book-club",)),
    Question("What is my brother's fiancée called?", "single", ("wedding-date",)),
    Question(
        "What did the screens say when the checkout machines broke?", "single", ("machine-error",)
    ),
)

# --- the everyday filler ----------------------------------------------------------------

GREETINGS_USER = (
    "Hi Claude!", "Morning Claude.", "Hey Claude, me again.", "Hello Claude, quick one tonight.",
    "Hi Claude, how's it going?", "Evening Claude!", "Hiya Claude.",
)  # fmt: skip
GREETINGS_CLAUDE = (
    "Hi Maya! Good to hear from you. What's on your mind today?",
    "Hello Maya, lovely to see you again. How are things?",
    "Hi Maya! How's your week going?",
    "Good to hear from you, Maya. What shall we talk about?",
    "Hey Maya! I'm here, go ahead.",
    "Evening, Maya! How was your day?",
)
CLOSINGS_USER = (
    "Thanks Claude, that helps a lot.", "Right, Biscuit needs a walk. Thanks Claude!",
    "Cheers Claude, talk soon.", "Thanks, that's really useful.", "Okay, off to bed. Night Claude!",
)  # fmt: skip
CLOSINGS_CLAUDE = (
    "Any time, Maya. Take care!", "You're welcome, Maya. Enjoy the walk!",
    "Talk soon, Maya.", "Glad it helped. Good night, Maya!", "Happy to help, Maya. See you soon.",
)  # fmt: skip

# (user line, Claude's answer) pairs by theme; {x} is filled from the theme's words.
FILLER: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "guitar": (
        (
            "I practised guitar for {x} tonight and my fingertips are killing me.",
            "Still stuck on the F chord. Any tricks?",
            "Learning a new song on the guitar, it's {x} of strumming the same four chords.",
            "Tom says my guitar playing is improving, but he might just be kind.",
        ),
        (
            "Sore fingertips are normal for the first weeks; they harden up.",
            "For the F chord, roll your index finger slightly onto its side and move the "
            "thumb lower behind the neck.",
            "Short, regular practice beats long sessions once a week.",
            "Play slowly with a metronome before speeding up; clean beats fast.",
            "Recording yourself now and again shows progress you can't hear while playing.",
        ),
        ("half an hour", "forty minutes", "an hour", "twenty minutes"),
    ),
    "running": (
        (
            "Did a {x} run this morning before work, legs feel heavy.",
            "It was pouring so I ran on the treadmill at the gym instead.",
            "My running app says I'm getting faster, which is nice.",
            "Should I run when I'm a bit tired or take the day off?",
        ),
        (
            "Heavy legs after an early run usually mean you need more sleep or more fuel.",
            "Easy runs should feel conversational; most of your running should be easy.",
            "A rest day is training too: the body adapts while it recovers.",
            "Good shoes and a gradual build-up prevent most running injuries.",
            "If you're tired, a short easy jog or a walk is a fine compromise.",
        ),
        ("5k", "slow 6k", "short", "hilly 8k"),
    ),
    "biscuit": (
        (
            "Biscuit rolled in something disgusting at the park, so it was bath night.",
            "Biscuit refuses to walk in the rain. She just sits down on the path.",
            "Took Biscuit on a long walk by the canal, she was so happy.",
            "Biscuit has started barking at the postman every single morning.",
        ),
        (
            "Dogs love a smelly roll; a quick rinse with dog shampoo does the job.",
            "Some dogs hate rain: a coat or a shorter walk at a drier time can help.",
            "Long sniffy walks tire dogs out more than fast ones.",
            "Barking at the door is about guarding; rewarding calm behaviour helps over time.",
            "A puzzle feeder can keep a bored dog busy on rainy days.",
        ),
        ("the park", "the canal", "the woods"),
    ),
    "work": (
        (
            "Busy day at the library, the {x} was packed.",
            "We had a school visit today, thirty kids and one very loud teacher.",
            "Spent the afternoon weeding the non-fiction shelves.",
            "The library's wifi was down all morning, people were not happy.",
        ),
        (
            "Libraries are so much more than books now; it's a lot to juggle.",
            "School visits are tiring but they make a real difference to kids.",
            "Weeding the collection is thankless but it makes the shelves usable.",
            "A short break away from the desk helps on the busy days.",
            "It sounds like the library is lucky to have you.",
        ),
        ("study area", "children's corner", "computer room"),
    ),
    "cooking": (
        (
            "Made a {x} tonight, turned out okay.",
            "Any ideas for a quick dinner with whatever's in the fridge?",
            "Tried baking bread again, still too dense.",
            "Batch cooking on Sunday so the week is easier.",
        ),
        (
            "A frittata or fried rice turns most leftovers into a meal.",
            "Dense bread usually means under-proofed dough; give it longer in a warm place.",
            "Batch cooking soups and stews saves a lot of weeknight stress.",
            "Taste and season as you go: salt at the end changes everything.",
            "Keep a few staples in: tins of tomatoes, chickpeas, pasta, eggs.",
        ),
        ("curry", "risotto", "soup", "stir-fry"),
    ),
    "tom": (
        (
            "Tom's been working late all week, we've barely seen each other.",
            "Tom and I went for a walk up to the reservoir on Sunday.",
            "Tom is trying to learn Italian on an app, it's very funny.",
            "We had a silly argument about whose turn it was to do the washing up.",
        ),
        (
            "Busy weeks happen; even a short walk together helps.",
            "Shared little rituals, a coffee or a walk, keep you close on busy weeks.",
            "Language apps are a good start; speaking with someone makes it stick.",
            "Small arguments are usually about being tired, not about the dishes.",
            "A rota for chores saves a surprising number of arguments.",
        ),
        ("",),
    ),
    "family": (
        (
            "Called Mum this evening, she's been doing her crossword and gossiping.",
            "My brother Sam sent a photo of his new shed. He's very proud.",
            "Mum wants to learn how to video call, I'll show her at the weekend.",
            "Sam rang to ask for advice about his garden, which is a first.",
        ),
        (
            "Regular calls mean a lot to parents, even short ones.",
            "Video calls are easy to learn with someone showing you once or twice.",
            "Sounds like you and your family are close.",
            "Writing the steps down on a card helps when you're not there.",
        ),
        ("",),
    ),
    "weather": (
        (
            "It's been grey and drizzly all week here in Leeds.",
            "Finally a sunny day! Ate lunch outside for the first time this year.",
            "The wind was so strong today it nearly took my umbrella.",
        ),
        (
            "Grey weeks are hard; getting outside at lunchtime helps.",
            "Sunny lunches outside are one of the best small pleasures.",
            "Yorkshire weather keeps you guessing.",
        ),
        ("",),
    ),
    "reading": (
        (
            "Finished a {x} novel on the bus, couldn't put it down.",
            "Any recommendations for something light to read?",
            "I keep starting books and not finishing them lately.",
        ),
        (
            "It's fine to abandon a book that isn't working for you.",
            "Short story collections are great when your attention is scattered.",
            "Audiobooks can help on the commute or on walks.",
            "Rereading an old favourite is a lovely way out of a slump.",
        ),
        ("crime", "fantasy", "very sad"),
    ),
}
GENERAL_CLAUDE = (
    "That's completely understandable.",
    "It sounds like you're handling it well.",
    "Let me know how it goes.",
    "Small steps add up.",
    "There's no single right answer, so go with what feels manageable.",
    "I'd keep it simple for now and adjust later.",
)


def _filler_exchange(rng: random.Random, theme: str) -> tuple[Turn, Turn]:
    asks, answers, words = FILLER[theme]
    user = rng.choice(asks).format(x=rng.choice(words))
    parts = rng.sample(answers, k=min(len(answers), rng.randint(2, 4)))
    parts += rng.sample(GENERAL_CLAUDE, k=rng.randint(1, 3))
    return _u(user), _c(" ".join(parts))


def _session_days(rng: random.Random) -> list[date]:
    days = {day for day, _turns in STORIES}
    day = FIRST_DAY
    while day <= LAST_DAY:
        days.add(day)
        day += timedelta(days=rng.randint(2, 5))
    return sorted(d for d in days if FIRST_DAY <= d <= LAST_DAY)


def make_natural(seed: int = 22) -> NaturalConversation:
    """The conversation and its questions; the same seed gives the same messages."""
    rng = random.Random(seed)
    stories: dict[date, list[tuple[Turn, ...]]] = {}
    for day, story_turns in STORIES:
        stories.setdefault(day, []).append(story_turns)
    themes = list(FILLER)
    messages: list[ChatMessage] = []
    for day in _session_days(rng):
        when = datetime(day.year, day.month, day.day, rng.randint(7, 20), rng.randint(0, 59),
                        tzinfo=UTC)  # fmt: skip
        turns: list[Turn] = [_u(rng.choice(GREETINGS_USER)), _c(rng.choice(GREETINGS_CLAUDE))]
        parts: list[tuple[Turn, ...]] = [
            _filler_exchange(rng, rng.choice(themes)) for _ in range(rng.randint(1, 4))
        ]
        for story in stories.get(day, []):
            parts.insert(rng.randint(0, len(parts)), story)
        for part in parts:
            if part[0].role == "assistant" and turns[-1].role == "assistant":
                # Claude asks after a user's aside: the user said something first.
                turns.append(_u(rng.choice(("Oh, and…", "Anyway.", "By the way."))))
            turns.extend(part)
            if turns[-1].role == "user":
                turns.append(_c(rng.choice(GENERAL_CLAUDE)))
        turns += [_u(rng.choice(CLOSINGS_USER)), _c(rng.choice(CLOSINGS_CLAUDE))]
        for turn in turns:
            messages.append(ChatMessage(turn.role, turn.text, when, turn.key))
            when += timedelta(minutes=rng.randint(1, 6))
    _check_alternates(messages)
    where = {m.key: index for index, m in enumerate(messages) if m.key}
    questions = tuple(
        NaturalQuestion(
            q.text, q.category, "dev" if n % 2 == 0 else "test", tuple(where[k] for k in q.evidence)
        )
        for n, q in enumerate(QUESTIONS)
    ) + tuple(
        NaturalQuestion(q.text, q.category, "held-out", tuple(where[k] for k in q.evidence))
        for q in HELD_OUT
    )
    asked = datetime(ASKED_ON.year, ASKED_ON.month, ASKED_ON.day, 19, 0, tzinfo=UTC)
    return NaturalConversation(tuple(messages), questions, asked)


def _check_alternates(messages: list[ChatMessage]) -> None:
    for before, after in itertools.pairwise(messages):
        if before.role == after.role:
            raise ValueError(f"two {before.role} turns in a row: {before.text!r}")
