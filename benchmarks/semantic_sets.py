"""The semantic cache's measurement sets: paraphrases that should hit, near misses that must not.

No package ships a paraphrase corpus or an adversarial near-miss corpus that installs and
loads offline, so both sets are built by construction from question families: each family
has phrasings of one question (its paraphrases) and the ways to ask another question with
almost the same words (its near misses: a negation, an antonym, a comparison turned round,
another entity, another number or date, the same words in another order). The entities and
values come from Faker's shipped ``en_US`` data (first names, countries, companies, e-mail
addresses, URLs, dates), seeded, so every run builds the same sets.

Families are split in two halves by name (``half``): thresholds and guards are tuned on one
and reported on the other, whose phrasings were never seen while tuning.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Final

from faker import Faker

from adk_lattice.cache._lexicon import words

SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Family:
    """One question, its phrasings, and the near misses of it."""

    name: str
    variants: tuple[str, ...]
    #: (class, template): another question with the same slots.
    misses: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Pair:
    """A stored question, an asked one, and whether the answer may be shared."""

    stored: str
    asked: str
    same: bool
    kind: str  # "paraphrase", "surface" (the same words written otherwise) or a near-miss class
    family: str


F = Family
FAMILIES: tuple[Family, ...] = (
    F(
        "capital",
        (
            "What is the capital of {country}?",
            "What's the capital city of {country}?",
            "Which city is the capital of {country}?",
            "What is {country}'s capital?",
        ),
        (("comparison", "What is the largest city of {country}?"),),
    ),
    F(
        "store_hours",
        (
            "Is the {company} store open on {weekday}?",
            "Is the {company} shop open on {weekday}?",
            "Does the {company} store open on {weekday}?",
        ),
        (
            ("negation", "Is the {company} store not open on {weekday}?"),
            ("antonym", "Is the {company} store closed on {weekday}?"),
            ("negation", "Is the {company} store never open on {weekday}?"),
        ),
    ),
    F(
        "transfer",
        (
            "Send {amount} dollars to {person}.",
            "Transfer {amount} dollars to {person}.",
            "Please send {person} {amount} dollars.",
        ),
        (
            ("antonym", "Request {amount} dollars from {person}."),
            ("negation", "Do not send {amount} dollars to {person}."),
        ),
    ),
    F(
        "owes",
        (
            "Does {person} owe {person2} money?",
            "Does {person} owe money to {person2}?",
            "Is {person} in debt to {person2}?",
        ),
        (("negation", "Does {person} not owe {person2} money?"),),
    ),
    F(
        "flight",
        (
            "Find flights from {city} to {city2} on {date}.",
            "Show me flights from {city} to {city2} on {date}.",
            "Search for flights from {city} to {city2} on {date}.",
            "Any flights from {city} to {city2} on {date}?",
        ),
        (
            ("comparison", "Find flights from {city} to {city2} before {date}."),
            ("comparison", "Find flights from {city} to {city2} after {date}."),
        ),
    ),
    F(
        "refund_order",
        (
            "Can I get a refund for order {order}?",
            "Can I get my money back for order {order}?",
            "How do I get a refund for order {order}?",
        ),
        (
            ("negation", "Why can't I get a refund for order {order}?"),
            ("antonym", "Can I cancel the refund for order {order}?"),
        ),
    ),
    F(
        "password_reset",
        (
            "How do I reset my password for {company}?",
            "How can I reset my password for {company}?",
            "What's the way to reset my {company} password?",
            "How do I reset my {company} password?",
        ),
        (
            ("antonym", "How do I keep my password for {company}?"),
            ("negation", "Why can't I reset my password for {company}?"),
        ),
    ),
    F(
        "email_invoice",
        (
            "Email the invoice to {email}.",
            "Send the invoice to {email} by email.",
            "Please email {email} the invoice.",
        ),
        (
            ("negation", "Do not email the invoice to {email}."),
            ("antonym", "Delete the invoice sent to {email}."),
        ),
    ),
    F(
        "population",
        (
            "How many people live in {country}?",
            "What is the population of {country}?",
            "How many people live in {country} today?",
        ),
        (
            ("comparison", "Do more people live in {country} than in {country2}?"),
            ("antonym", "How many people left {country}?"),
        ),
    ),
    F(
        "compare_price",
        (
            "Is the {product} cheaper than the {product2}?",
            "Does the {product} cost less than the {product2}?",
            "Is the {product} less expensive than the {product2}?",
        ),
        (
            ("comparison", "Is the {product} more expensive than the {product2}?"),
            ("comparison", "Does the {product} cost more than the {product2}?"),
            ("negation", "Is the {product} not cheaper than the {product2}?"),
        ),
    ),
    F(
        "meeting",
        (
            "Schedule a meeting with {person} on {weekday} at {hour} pm.",
            "Set up a meeting with {person} on {weekday} at {hour} pm.",
            "Book a meeting with {person} on {weekday} at {hour} pm.",
        ),
        (
            ("antonym", "Cancel the meeting with {person} on {weekday} at {hour} pm."),
            ("comparison", "Schedule a meeting with {person} before {weekday} at {hour} pm."),
        ),
    ),
    F(
        "visit_website",
        (
            "Is {url} safe to visit?",
            "Is it safe to visit {url}?",
            "Is visiting {url} safe?",
        ),
        (
            ("antonym", "Is {url} dangerous to visit?"),
            ("negation", "Is {url} not safe to visit?"),
        ),
    ),
    F(
        "convert_currency",
        (
            "Convert {amount} {currency} to {currency2}.",
            "What is {amount} {currency} in {currency2}?",
            "How much is {amount} {currency} in {currency2}?",
        ),
        (),
    ),
    F(
        "birthday",
        (
            "When is {person}'s birthday?",
            "What day is {person}'s birthday?",
            "When was {person} born?",
        ),
        (("antonym", "When did {person} die?"),),
    ),
    F(
        "subscription",
        (
            "How do I cancel my {company} subscription?",
            "How can I cancel my {company} subscription?",
            "What's the way to cancel my {company} subscription?",
            "How do I cancel my subscription to {company}?",
        ),
        (
            ("antonym", "How do I renew my {company} subscription?"),
            ("antonym", "How do I start my {company} subscription?"),
            ("negation", "Why can't I cancel my {company} subscription?"),
        ),
    ),
    F(
        "temperature",
        (
            "Will it be above {number} degrees in {city} on {weekday}?",
            "Will the temperature in {city} be above {number} degrees on {weekday}?",
            "Is it going to be above {number} degrees in {city} on {weekday}?",
        ),
        (
            ("comparison", "Will it be below {number} degrees in {city} on {weekday}?"),
            ("negation", "Will it not be above {number} degrees in {city} on {weekday}?"),
        ),
    ),
    F(
        "account_balance",
        (
            "What is the balance of account {order}?",
            "What's the balance on account {order}?",
            "How much money is in account {order}?",
        ),
        (("comparison", "What was the highest balance of account {order}?"),),
    ),
    F(
        "translate",
        (
            "Translate '{word}' from {language} to {language2}.",
            "How do you say '{word}' in {language2}, from {language}?",
            "Translate the {language} word '{word}' into {language2}.",
        ),
        (),
    ),
    F(
        "delivery",
        (
            "Will my order {order} arrive by {date}?",
            "Will order {order} be delivered by {date}?",
            "Is order {order} arriving by {date}?",
        ),
        (
            ("negation", "Why won't my order {order} arrive by {date}?"),
            ("comparison", "Will my order {order} arrive after {date}?"),
        ),
    ),
    F(
        "allow_access",
        (
            "Give {person} access to the {product} folder.",
            "Grant {person} access to the {product} folder.",
            "Let {person} access the {product} folder.",
        ),
        (
            ("antonym", "Remove {person}'s access to the {product} folder."),
            ("negation", "Do not give {person} access to the {product} folder."),
        ),
    ),
    F(
        "hire_date",
        (
            "When did {person} join {company}?",
            "When did {person} start at {company}?",
            "What date did {person} join {company}?",
        ),
        (
            ("antonym", "When did {person} leave {company}?"),
            ("negation", "Did {person} never join {company}?"),
        ),
    ),
    F(
        "distance",
        (
            "How far is {city} from {city2}?",
            "What is the distance from {city} to {city2}?",
            "How many miles from {city} to {city2}?",
        ),
        (("comparison", "Is {city} closer to {city2} than to {city3}?"),),
    ),
    F(
        "enable_feature",
        (
            "How do I enable two-factor login on {company}?",
            "How can I enable two-factor login on {company}?",
            "How do I turn on two-factor login on {company}?",
        ),
        (
            ("antonym", "How do I disable two-factor login on {company}?"),
            ("antonym", "How do I turn off two-factor login on {company}?"),
        ),
    ),
    F(
        "stock_price",
        (
            "What was the {company} share price on {date}?",
            "What was the share price of {company} on {date}?",
            "How much was a {company} share on {date}?",
        ),
        (
            ("comparison", "What was the highest {company} share price before {date}?"),
            ("comparison", "What was the lowest {company} share price on {date}?"),
        ),
    ),
    F(
        "tickets",
        (
            "Book {number} tickets for the {month} concert.",
            "Reserve {number} tickets for the {month} concert.",
            "Get me {number} tickets for the {month} concert.",
        ),
        (
            ("antonym", "Cancel {number} tickets for the {month} concert."),
            ("antonym", "Sell {number} tickets for the {month} concert."),
        ),
    ),
    F(
        "allergy",
        (
            "Is the {dish} safe for someone allergic to nuts?",
            "Can someone with a nut allergy eat the {dish}?",
            "Is the {dish} okay for a nut allergy?",
        ),
        (
            ("negation", "Is the {dish} not safe for someone allergic to nuts?"),
            ("antonym", "Is the {dish} dangerous for someone allergic to nuts?"),
        ),
    ),
    F(
        "who_won",
        (
            "Who won the match between {team} and {team2}?",
            "Which team won the {team} versus {team2} match?",
            "Who was the winner of the {team} and {team2} match?",
        ),
        (("antonym", "Who lost the match between {team} and {team2}?"),),
    ),
    F(
        "increase_limit",
        (
            "Increase my credit limit to {amount} dollars.",
            "Raise my credit limit to {amount} dollars.",
            "Please increase my credit limit to {amount} dollars.",
        ),
        (
            ("antonym", "Decrease my credit limit to {amount} dollars."),
            ("antonym", "Lower my credit limit to {amount} dollars."),
            ("comparison", "Increase my credit limit by more than {amount} dollars."),
        ),
    ),
    F(
        "import_contacts",
        (
            "Import my contacts from {company}.",
            "How do I import my contacts from {company}?",
            "Bring my contacts over from {company}.",
        ),
        (("antonym", "Export my contacts to {company}."),),
    ),
    F(
        "age_compare",
        (
            "Is {person} older than {person2}?",
            "Was {person} born before {person2}?",
            "Is {person} the older of {person} and {person2}?",
        ),
        (
            ("comparison", "Is {person} younger than {person2}?"),
            ("negation", "Is {person} not older than {person2}?"),
        ),
    ),
    F(
        "rain",
        (
            "Will it rain in {city} on {weekday}?",
            "Is it going to rain in {city} on {weekday}?",
            "Is rain expected in {city} on {weekday}?",
        ),
        (
            ("antonym", "Will it be dry in {city} on {weekday}?"),
            ("negation", "Will it not rain in {city} on {weekday}?"),
        ),
    ),
    F(
        "salary",
        (
            "Does {person} earn more than {amount} dollars a year?",
            "Is {person}'s salary more than {amount} dollars a year?",
            "Does {person} make more than {amount} dollars a year?",
        ),
        (
            ("comparison", "Does {person} earn less than {amount} dollars a year?"),
            ("negation", "Does {person} not earn more than {amount} dollars a year?"),
        ),
    ),
    F(
        "contact_email",
        (
            "What is {person}'s e-mail address?",
            "What's the e-mail address of {person}?",
            "How do I reach {person} by e-mail?",
        ),
        (("antonym", "How do I block {person}'s e-mail address?"),),
    ),
    F(
        "recipe_time",
        (
            "How long should I bake the {dish}?",
            "How long does the {dish} need in the oven?",
            "For how long do I bake the {dish}?",
        ),
        (
            ("antonym", "How long should I freeze the {dish}?"),
            ("comparison", "How long at most should I bake the {dish}?"),
        ),
    ),
    F(
        "upgrade_plan",
        (
            "Upgrade my {company} plan to premium.",
            "Move my {company} plan up to premium.",
            "I want to upgrade my {company} plan to premium.",
        ),
        (
            ("antonym", "Downgrade my {company} plan from premium."),
            ("negation", "Do not upgrade my {company} plan to premium."),
        ),
    ),
    F(
        "train_departure",
        (
            "When does the next train from {city} to {city2} leave?",
            "What time does the next train from {city} to {city2} depart?",
            "When is the next train from {city} to {city2}?",
        ),
        (
            ("antonym", "When does the last train from {city} to {city2} leave?"),
            ("antonym", "When does the next train from {city} to {city2} arrive?"),
        ),
    ),
)

PRODUCTS = words(
    "laptop tablet phone monitor keyboard headset camera printer router speaker watch"
    " blender kettle vacuum heater fan"
)
DISHES = words("lasagna brownie cheesecake pie bread salmon curry casserole muffin pizza")
TEAMS = words("Lions Tigers Bears Eagles Sharks Wolves Hawks Falcons Rangers Giants")
WORDS = words("house water friend bread tree book dog window river light")
LANGUAGES = words("English French German Spanish Italian Portuguese Dutch Polish Swedish")
CURRENCIES = words("USD EUR GBP JPY CHF CAD AUD SEK")


_YEAR_START: Final = date(2025, 1, 1)
_YEAR_END: Final = date(2025, 12, 31)


def half(family: str) -> str:
    """``tune`` or ``held_out``: a fixed split of the families by their name's hash."""
    return "tune" if hashlib.sha256(family.encode()).digest()[0] % 2 == 0 else "held_out"


@dataclass
class _Fill:
    fake: Faker
    rng: random.Random
    seen: dict[str, list[str]] = field(default_factory=dict)

    def value(self, slot: str) -> str:
        kind = slot.rstrip("0123456789")
        make: dict[str, Callable[[], str]] = {
            "country": self.fake.country,
            "city": self.fake.city,
            "person": self.fake.first_name,
            "company": lambda: self.fake.company().split(",")[0].split(" ")[0],
            "email": self.fake.email,
            "url": lambda: self.fake.domain_name(),
            "order": lambda: (
                f"{self.rng.choice('ABCDEFGHJKMNPRSTX')}{self.rng.randint(1000, 99999)}"
            ),
            "amount": lambda: str(
                self.rng.choice([5, 10, 20, 25, 40, 50, 75, 100, 250, 500, 1200])
            ),
            "number": lambda: str(self.rng.randint(2, 40)),
            "hour": lambda: str(self.rng.randint(1, 11)),
            "weekday": lambda: self.fake.day_of_week(),
            "month": lambda: self.fake.month_name(),
            # A fixed year: Faker's date_this_year() moves with the clock, and so did the sets.
            "date": lambda: self.fake.date_between_dates(_YEAR_START, _YEAR_END).strftime("%B %-d"),
            "product": lambda: self.rng.choice(PRODUCTS),
            "dish": lambda: self.rng.choice(DISHES),
            "team": lambda: self.rng.choice(TEAMS),
            "word": lambda: self.rng.choice(WORDS),
            "language": lambda: self.rng.choice(LANGUAGES),
            "currency": lambda: self.rng.choice(CURRENCIES),
        }
        return make[kind]()

    def fills(self, slots: list[str]) -> dict[str, str]:
        """Values for every slot, the slots of one kind all different."""
        out: dict[str, str] = {}
        for slot in slots:
            kind = slot.rstrip("0123456789")
            for _ in range(50):
                value = self.value(slot)
                taken = {v for s, v in out.items() if s.rstrip("0123456789") == kind}
                if value not in taken:
                    break
            out[slot] = value
        return out


def _slots(family: Family) -> list[str]:
    names: list[str] = []
    for template in family.variants + tuple(t for _, t in family.misses):
        for slot in SLOT.findall(template):
            if slot not in names:
                names.append(slot)
    return names


def _swap_kind(slot: str) -> str:
    kind = slot.rstrip("0123456789")
    if kind in ("amount", "number", "hour", "weekday", "month", "date"):
        return "number" if kind in ("amount", "number", "hour") else "date"
    return "entity"


#: Common content words, for the near miss that swaps one word of a question.
SWAP_WORDS = words(
    "account address alarm answer battery bill booking budget calendar card charge"
    " chart class code course date deadline discount document driver engine event fee"
    " file form garden guest heater holiday hotel key letter licence loan lock menu"
    " message meter office parcel parking passport payment photo plan policy printer"
    " receipt report room route schedule screen seat service signal ticket timer train"
    " vehicle visa voucher warranty window"
)
_SURFACE = (
    lambda t: t.lower().rstrip("?.!"),
    lambda t: "Please, " + t[0].lower() + t[1:],
    lambda t: "Hi! " + t,
    lambda t: t.rstrip("?.!") + ", thanks.",
    lambda t: "  ".join(t.split()).upper(),
)


def _swap_word(text: str, values: dict[str, str], rng: random.Random) -> str | None:
    """The text with one of its own content words replaced by another word."""
    from adk_lattice.cache._lexicon import STOPWORDS

    taken = " ".join(values.values()).lower()
    words = text.split()
    spots = [
        i
        for i, w in enumerate(words)
        if w.isalpha() and w.islower() and len(w) > 3 and w not in STOPWORDS and w not in taken
    ]
    if not spots:
        return None
    i = rng.choice(spots)
    words[i] = rng.choice([w for w in SWAP_WORDS if w != words[i]])
    return " ".join(words)


def pairs(fills_per_family: int = 30, seed: int = 7) -> Iterator[Pair]:
    """Every paraphrase pair and every near-miss pair of every family."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    fill = _Fill(fake, rng)
    for family in FAMILIES:
        slots = _slots(family)
        for _ in range(fills_per_family):
            values = fill.fills(slots)
            texts = [v.format(**values) for v in family.variants]
            for i, a in enumerate(texts):
                for b in texts[i + 1 :]:
                    yield Pair(a, b, True, "paraphrase", family.name)
            surface = rng.choice(_SURFACE)
            for text in texts[:2]:
                yield Pair(text, surface(text), True, "surface", family.name)
            stored = rng.choice(texts)
            swapped_word = _swap_word(stored, values, rng)
            if swapped_word is not None:
                yield Pair(stored, swapped_word, False, "swapped_word", family.name)
            for kind, template in family.misses:
                yield Pair(stored, template.format(**values), False, kind, family.name)
            used = [s for s in slots if any("{" + s + "}" in v for v in family.variants)]
            for slot in used:  # another entity, number or date in the same slot
                other = dict(values)
                for _ in range(50):
                    other[slot] = fill.value(slot)
                    if other[slot] != values[slot] and other[slot] not in values.values():
                        break
                variant = rng.choice(family.variants)
                yield Pair(stored, variant.format(**other), False, _swap_kind(slot), family.name)
            kinds: dict[str, list[str]] = {}
            for slot in used:
                kinds.setdefault(slot.rstrip("0123456789"), []).append(slot)
            for same in kinds.values():  # the same words in another order
                if len(same) >= 2:
                    swapped = dict(values)
                    swapped[same[0]], swapped[same[1]] = values[same[1]], values[same[0]]
                    variant = rng.choice(family.variants)
                    yield Pair(stored, variant.format(**swapped), False, "order", family.name)


#: Near-miss classes the sets above lack, written to attack the guards after tuning.
ATTACKS: tuple[tuple[str, str, str], ...] = (
    ("units", "How long is a 5 km run?", "How long is a 5 mile run?"),
    (
        "units",
        "Convert 30 degrees Celsius to Fahrenheit.",
        "Convert 30 degrees Fahrenheit to Celsius.",
    ),
    ("tense", "When did the {c} store open?", "When will the {c} store open?"),
    ("modality", "Can I cancel my order?", "Must I cancel my order?"),
    ("modality", "Should I update the app?", "Could I update the app?"),
    ("quantifier", "Do all stores open on Sunday?", "Do some stores open on Sunday?"),
    (
        "quantifier",
        "Are only admins allowed to delete files?",
        "Are admins also allowed to delete files?",
    ),
    ("person", "What is my account balance?", "What is his account balance?"),
    ("person", "Where do you live?", "Where do they live?"),
    ("question", "When did the war end?", "Why did the war end?"),
    ("question", "Where is the meeting?", "When is the meeting?"),
    ("sentiment", "Is the new update good?", "Is the new update bad?"),
    ("sentiment", "Write a positive review of the hotel.", "Write a harsh review of the hotel."),
    (
        "lowercase_entity",
        "what time does the train from boston to the central station leave tomorrow morning",
        "what time does the train from denver to the central station leave tomorrow morning",
    ),
    (
        "lowercase_entity",
        "how do i get from the airport to the hilton hotel downtown by bus",
        "how do i get from the airport to the marriott hotel downtown by bus",
    ),
    ("lowercase_role", "does alice owe bob money", "does bob owe alice money"),
    ("role_no_preposition", "Did the cat chase the dog?", "Did the dog chase the cat?"),
    ("with_without", "Can I fly with a pet?", "Can I fly without a pet?"),
    ("spelled_number", "Book a table for two people.", "Book a table for three people."),
    (
        "relative_time",
        "What was the weather like last week?",
        "What will the weather be like next week?",
    ),
    ("relation", "How old is my husband?", "How old is my wife?"),
    ("relation", "What should men wear to a wedding?", "What should women wear to a wedding?"),
    ("verb", "Can I buy a car with cash?", "Can I rent a car with cash?"),
    ("verb", "How do I install the printer driver?", "How do I update the printer driver?"),
    ("prefix_negation", "Is the contract enforceable?", "Is the contract unenforceable?"),
    ("prefix_negation", "Is the password secure?", "Is the password insecure?"),
    ("dosage", "Can I take 200 mg of ibuprofen?", "Can I take 2000 mg of ibuprofen?"),
    ("decimal", "Is 0.5 percent a good rate?", "Is 5 percent a good rate?"),
    ("range", "Show orders between 10 and 20 dollars.", "Show orders over 20 dollars."),
    ("synonym_antonym", "Is the hotel near the beach?", "Is the hotel far from the beach?"),
    ("synonym_antonym", "Is the exam easy?", "Is the exam difficult?"),
    ("typo_entity", "What is the capital of Austria?", "What is the capital of Australia?"),
    ("case_entity", "Who founded apple?", "Who founded amazon?"),
    ("extra_condition", "How do I reset my password?", "How do I reset my password on mobile?"),
    ("scope_word", "Delete the file.", "Delete every file."),
    ("scope_word", "Show the first invoice.", "Show the last invoice."),
    (
        "double_negation",
        "Is it not true that the shop is closed?",
        "Is it true that the shop is closed?",
    ),
    (
        "long_lowercase_swap",
        "i need to ship a fragile ceramic vase from my shop in lisbon to a customer in porto,"
        " what packaging and courier do you recommend",
        "i need to ship a fragile ceramic vase from my shop in lisbon to a customer in braga,"
        " what packaging and courier do you recommend",
    ),
    (
        "long_word_swap",
        "Our team of twelve engineers uses shared laptops, a build server and a staging"
        " database; how should we rotate the database credentials safely?",
        "Our team of twelve engineers uses shared laptops, a build server and a staging"
        " database; how should we rotate the server credentials safely?",
    ),
    (
        "long_antonym_unlisted",
        "For the quarterly report, summarise the main risks, the open customer complaints"
        " and the strong regions in our northern sales territory",
        "For the quarterly report, summarise the main risks, the open customer complaints"
        " and the weak regions in our northern sales territory",
    ),
)
