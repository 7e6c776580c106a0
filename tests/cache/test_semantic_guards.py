"""NearMissGuards called directly: each guard refuses what it names and lets paraphrases by."""

from __future__ import annotations

import pytest

from adk_lattice.cache import GUARDS, NearMissGuards

G = NearMissGuards()


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("What is the capital of France?", "What is France's capital?"),
        ("How do I reset my password?", "How can I reset my password?"),
        ("I can't log in", "I cannot log in"),
        ("What's the weather in Paris on the 2nd?", "What is the weather in Paris on the second?"),
        ("Book 2 tickets for Friday.", "Please book two tickets for Friday, thanks."),
        ("How do I cancel my subscription?", "What's the way to cancel my subscription?"),
        ("WHERE IS THE NEAREST PHARMACY?", "where is the nearest pharmacy"),
        ("Send 1,000 dollars to Ann.", "Send $1000 to Ann."),
    ],
)
def test_a_paraphrase_passes_every_guard(stored: str, asked: str) -> None:
    """The same question written otherwise is refused by no guard."""
    assert G.refusals(stored, asked) == ()


@pytest.mark.parametrize(
    ("stored", "asked", "guard"),
    [
        ("Is the store open today?", "Is the store not open today?", "negation"),
        ("Is the store open today?", "Isn't the store open today?", "negation"),
        ("Is the store open today?", "Is the store closed today?", "negation"),
        ("How do I turn on dark mode?", "How do I turn off dark mode?", "negation"),
        ("Book a table at Luigi's.", "Cancel the table at Luigi's.", "negation"),
        ("Can I fly with a pet?", "Can I fly without a pet?", "negation"),
        ("Send 50 dollars to Ann.", "Send 500 dollars to Ann.", "number"),
        ("Send fifty dollars to Ann.", "Send sixty dollars to Ann.", "number"),
        ("Is the shop open on Monday?", "Is the shop open on Tuesday?", "number"),
        ("Run 5 km today.", "Run 5 miles today.", "number"),
        ("Send 20 USD to Ann.", "Send 20 EUR to Ann.", "number"),
        ("Mail ann@example.com the file.", "Mail bob@example.com the file.", "entity"),
        ("Is example.com safe?", "Is example.org safe?", "entity"),
        ("Refund order A1234.", "Refund order A1235.", "entity"),
        ("Who founded the company Alphabet?", "Who founded the company Amazon?", "entity"),
        ("Translate 'house' into French.", "Translate 'home' into French.", "entity"),
        (
            "Which is bigger, the sun or the moon?",
            "Which is smaller, the sun or the moon?",
            "comparison",
        ),
        ("Trains before noon?", "Trains after noon?", "comparison"),
        ("Is gold redder than copper?", "Is gold bluer than copper?", "comparison"),
        ("When did the war end?", "Why did the war end?", "frame"),
        ("When did the shop open?", "When will the shop open?", "frame"),
        ("What is my balance?", "What is his balance?", "frame"),
        ("Do all stores open on Sunday?", "Do some stores open on Sunday?", "frame"),
        ("Can I cancel my order?", "Must I cancel my order?", "frame"),
        ("Is the parcel sent by Ann?", "Is the parcel sent to Ann from Bob?", "frame"),
        ("Does Alice owe Bob money?", "Does Bob owe Alice money?", "order"),
        ("does alice owe bob money", "does bob owe alice money", "order"),
        ("Did the cat chase the dog?", "Did the dog chase the cat?", "order"),
        ("Flights from Oslo to Rome?", "Flights from Rome to Oslo?", "order"),
        ("Move the meeting from 3 to 5.", "Move the meeting from 5 to 3.", "order"),
        ("Is the hotel near the beach?", "Is the hotel near the station?", "content"),
    ],
)
def test_a_near_miss_is_refused_by_its_guard(stored: str, asked: str, guard: str) -> None:
    """Each kind of near miss is named by the guard that compares what it changes."""
    assert guard in G.refusals(stored, asked)


@pytest.mark.parametrize("guard", [g for g in GUARDS if g != "content"])
def test_a_guard_turned_off_no_longer_refuses(guard: str) -> None:
    """With one guard off, a near miss only it would catch goes through it."""
    caught = {
        "negation": ("Is the store open?", "Is the store not open?"),
        "number": ("Send 5 to Ann.", "Send 6 to Ann."),
        "entity": ("Mail a@example.com now.", "Mail b@example.com now."),
        "comparison": ("Trains before noon?", "Trains after noon?"),
        "frame": ("When did it open?", "Why did it open?"),
        "order": ("Does Alice owe Bob?", "Does Bob owe Alice?"),
    }[guard]
    off = NearMissGuards(max_content_change=1.0, **{guard: False})
    assert guard in NearMissGuards(max_content_change=1.0).refusals(*caught)
    assert guard not in off.refusals(*caught)


def test_the_content_share_is_tuned_by_max_content_change() -> None:
    """One content word added to three is refused at share 0 and allowed at 0.5."""
    pair = ("Is the hotel near the beach?", "Is the hotel near the sandy beach?")
    assert NearMissGuards(max_content_change=0.0).refusals(*pair) == ("content",)
    assert NearMissGuards(max_content_change=0.5).refusals(*pair) == ()


def test_a_replaced_content_word_is_refused_at_any_share() -> None:
    """A content word replaced by another is refused even when the share allows it all."""
    pair = ("Is the hotel near the beach?", "Is the hotel near the station?")
    assert NearMissGuards(max_content_change=1.0).refusals(*pair) == ("content",)


def test_a_text_too_long_to_read_is_refused() -> None:
    """Texts past the guards' size cap are never served a near hit."""
    long = "word " * 500
    assert G.refusals(long, long + "more") == ("content",)


def test_refusals_come_in_guard_order() -> None:
    """Several differences name several guards, in GUARDS order."""
    assert G.refusals("Send 5 dollars to Ann.", "Do not send 6 dollars to Bob.") == (
        "negation",
        "number",
        "entity",
        "content",
    )
