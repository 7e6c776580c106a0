"""The English word classes the near-miss guards compare (function words, not content).

Each set is small and written out, so what a guard looks at can be read here. Words are
lower case; the guards fold case and apostrophes before looking them up.
"""

from __future__ import annotations

from typing import Final


def words(text: str) -> list[str]:
    """The words of a space-separated list."""
    return text.split()


#: Words that turn a statement or a question into its opposite.
NEGATIONS: Final = frozenset(
    words("not no never none nobody nothing nowhere neither nor without cannot n't nope")
)

#: Contractions whose ``n't`` is a negation (``won't`` -> ``will`` + ``not``).
NEGATED_AUX: Final = {
    "won't": "will",
    "can't": "can",
    "cannot": "can",
    "shan't": "shall",
    "ain't": "is",
}

#: Pairs of words of opposite polarity; one side in one text and the other side in the
#: other is a refusal even when every other word matches.
ANTONYMS: Final = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("open opened opening opens", "close closed closing closes shut"),
        ("enable enabled enabling enables", "disable disabled disabling disables"),
        ("allow allowed allows permit permitted", "deny denied forbid forbidden block blocked"),
        ("include included including includes", "exclude excluded excluding excludes"),
        ("increase increased increasing raise raised", "decrease decreased reduce reduced lower"),
        ("add added adding adds", "remove removed removing removes delete deleted"),
        ("on", "off"),
        ("true", "false"),
        ("yes", "no"),
        ("accept accepted accepting", "reject rejected rejecting decline declined"),
        ("win won winning", "lose lost losing"),
        ("buy bought buying", "sell sold selling"),
        ("import imported importing", "export exported exporting"),
        ("start started starting begin", "stop stopped stopping end ended finish finished"),
        ("arrive arrival arriving arrives", "depart departure departing departs leave"),
        ("up", "down"),
        ("in inside into", "out outside"),
        ("legal", "illegal"),
        ("safe", "unsafe dangerous"),
        ("hot warm", "cold cool"),
        ("cheap cheapest inexpensive", "expensive priciest costly"),
        ("pass passed", "fail failed"),
        ("valid", "invalid"),
        ("possible", "impossible"),
        ("correct right", "incorrect wrong"),
        ("lock locked", "unlock unlocked"),
        ("connect connected", "disconnect disconnected"),
        ("subscribe subscribed", "unsubscribe unsubscribed"),
        ("activate activated", "deactivate deactivated"),
        ("approve approved", "disapprove"),
        ("available", "unavailable"),
        ("online", "offline"),
        ("public", "private"),
        ("input", "output"),
        ("push", "pull"),
        ("send sent sending", "receive received receiving"),
        ("upload uploaded", "download downloaded"),
        ("encrypt encrypted", "decrypt decrypted"),
        ("mount mounted", "unmount unmounted"),
        ("install installed", "uninstall uninstalled"),
        ("like liked", "dislike disliked hate"),
        ("love", "hate"),
        ("positive", "negative"),
        ("pro", "con"),
        ("first", "last"),
        ("minimum min", "maximum max"),
        ("north", "south"),
        ("east", "west"),
        ("left", "right"),
        ("top", "bottom"),
        ("front", "back"),
        ("inbound", "outbound"),
        ("credit credited", "debit debited"),
        ("deposit deposited", "withdraw withdrew withdrawal withdrawn"),
        ("borrow borrowed", "lend lent"),
        ("hire hired", "fire fired"),
        ("gain gained", "loss"),
        ("profit", "loss"),
        ("asleep", "awake"),
        ("alive", "dead"),
        ("full", "empty"),
        ("present", "absent"),
        ("success successful", "failure unsuccessful"),
    )
)

#: Words that undo or refuse an action: one in one text and not the other is a refusal
#: ("book a table" and "cancel the table").
REVERSALS: Final = frozenset(
    words(
        """cancel cancelled canceled cancelling cancellation undo revoke revoked
    withdraw stop stopped disable disabled block blocked unblock unsubscribe refuse
    refused reject rejected decline declined deny denied delete deleted remove removed
    leave left quit exit exited return returned refund refunded reverse reversed
    unfollow unlink unshare expire expired terminate terminated suspend suspended
    pause paused end ended close closed lose lost sell sold drop dropped"""
    )
)

#: Antonym pairs whose words are also particles or prepositions ("on Sunday", "looks
#: like"): they refuse only when both texts use the pair.
PARTICLES: Final = frozenset(
    i for i, (a, _) in enumerate(ANTONYMS) if a & frozenset(words("on up in like love"))
)

#: Comparison words: more/less, before/after and their kin.
COMPARISONS: Final = frozenset(
    words("""more less fewer most least greater greatest smaller smallest bigger biggest larger
    largest higher highest lower lowest before after above below over under better best
    worse worst earlier earliest later latest faster fastest slower slowest cheaper
    cheapest dearer older oldest younger youngest newer newest longer longest shorter
    shortest taller tallest heavier heaviest lighter lightest closer closest nearer
    nearest farther farthest further furthest warmer colder hotter cooler richer poorer
    stronger weaker easier harder safer riskier than exceed exceeds exceeding prior
    since until till beyond within""")
)

#: Question words, grouped so that ``what`` and ``which`` count as one.
QUESTION_WORDS: Final = {
    "what": "what",
    "which": "what",
    "who": "who",
    "whom": "who",
    "whose": "whose",
    "when": "when",
    "where": "where",
    "why": "why",
    "how": "how",
}
#: ``how`` followed by one of these asks for a quantity, not a manner.
HOW_QUANTITY: Final = frozenset(words("many much long far old often big tall soon fast large"))

#: ``what`` followed by one of these (after ``is the``) asks ``how``.
HOW_NOUNS: Final = frozenset(words("way ways method steps procedure"))

#: ``what`` or ``which`` followed by one of these asks ``when``.
WHEN_NOUNS: Final = frozenset(words("time date day year month hour"))

#: Auxiliaries that set the tense of a question.
TENSE: Final = {
    "do": "present",
    "does": "present",
    "is": "present",
    "are": "present",
    "am": "present",
    "did": "past",
    "was": "past",
    "were": "past",
    "had": "past",
    "will": "future",
    "shall": "future",
    "'ll": "future",
}

#: Modal verbs by what they ask: may one, must one.
MODALITY: Final = {
    "can": "may",
    "could": "may",
    "may": "may",
    "might": "may",
    "must": "must",
    "should": "must",
    "ought": "must",
    "need": "must",
    "needs": "must",
    "have to": "must",
}

#: Personal pronouns and determiners by person.
PERSON: Final = {
    **dict.fromkeys(words("i me my mine myself"), "1s"),
    **dict.fromkeys(words("we us our ours ourselves"), "1p"),
    **dict.fromkeys(words("you your yours yourself yourselves"), "2"),
    **dict.fromkeys(words("he him his himself"), "3m"),
    **dict.fromkeys(words("she her hers herself"), "3f"),
    **dict.fromkeys(words("they them their theirs themselves"), "3p"),
}

#: Quantifiers and focus words by class.
QUANTIFIERS: Final = {
    **dict.fromkeys(words("all every each always everyone everybody everything both"), "all"),
    # "any" is left out: "is there any way" asks what "is there a way" asks.
    # "someone" and "something" are left out: "can someone with an allergy eat it" asks
    # what "is it safe for an allergy" asks.
    **dict.fromkeys(words("some several sometimes"), "some"),
    **dict.fromkeys(words("only just solely exclusively"), "only"),
    **dict.fromkeys(words("also too even"), "also"),
    **dict.fromkeys(words("either"), "either"),
}

#: Prepositions of direction and role (a swap changes who does what to whom).
DIRECTIONS: Final = {
    # "to" is left out: it also marks an infinitive ("the way to cancel"); a swap of "to"
    # and "from" still changes the count of "from".
    "from": "from",
    "via": "via",
    "through": "via",
    "by": "by",
    "with": "with",
    "against": "against",
    "versus": "against",
    "vs": "against",
    "per": "per",
}

#: Number words and their values.
NUMBER_WORDS: Final = {
    **{
        w: str(i)
        for i, w in enumerate(
            words("""zero one two three four five six seven eight nine ten eleven twelve thirteen
            fourteen fifteen sixteen seventeen eighteen nineteen twenty""")
        )
    },
    **{
        w: str(10 * i)
        for i, w in enumerate(words("thirty forty fifty sixty seventy eighty ninety"), 3)
    },
    "hundred": "e2",
    "thousand": "e3",
    "million": "e6",
    "billion": "e9",
    "trillion": "e12",
    "dozen": "12",
    "half": "1/2",
    "quarter": "1/4",
    "double": "x2",
    "twice": "x2",
    "triple": "x3",
    "once": "x1",
    "single": "1",
    "pair": "2",
    "couple": "2",
    **{
        w: f"#{i}"
        for i, w in enumerate(
            words("first second third fourth fifth sixth seventh eighth ninth tenth"), 1
        )
    },
}

#: Dates, times and periods: a different one is a different question.
DATE_WORDS: Final = frozenset(
    words("""january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday mon tue tues wed thu thur thurs fri sat sun today tomorrow
    yesterday tonight now currently morning afternoon evening night noon midnight weekend
    weekday weekdays next last previous past coming upcoming ago this recent recently
    daily weekly monthly yearly annual annually hourly quarterly am pm""")
)

#: Units and currencies: the same number of another unit is another amount.
UNIT_WORDS: Final = frozenset(
    words("""dollar dollars usd euro euros eur pound pounds gbp yen jpy cent cents franc francs
    rupee rupees yuan peso pesos percent percentage bitcoin btc km kilometer kilometers
    kilometre kilometres mile miles meter meters metre metres cm mm inch inches foot feet
    yard yards kg kilogram kilograms gram grams g lb lbs ounce ounces liter liters litre
    litres gallon gallons ml celsius fahrenheit kelvin degree degrees second seconds minute
    minutes hour hours day days week weeks month months year years decade decades century
    gb mb kb tb byte bytes mph kph kwh watt watts volt volts""")
)

#: Currency names and codes, read as one code ("$5", "5 dollars" and "5 USD" agree).
CURRENCIES: Final = {
    **dict.fromkeys(words("usd dollar dollars bucks"), "usd"),
    **dict.fromkeys(words("eur euro euros"), "eur"),
    **dict.fromkeys(words("gbp pound pounds quid"), "gbp"),
    **dict.fromkeys(words("jpy yen"), "jpy"),
    **dict.fromkeys(words("inr rupee rupees"), "inr"),
    **dict.fromkeys(words("chf franc francs"), "chf"),
    **dict.fromkeys(words("cad"), "cad"),
    **dict.fromkeys(words("aud"), "aud"),
    **dict.fromkeys(words("sek krona kronor"), "sek"),
    **dict.fromkeys(words("cny yuan rmb"), "cny"),
    **dict.fromkeys(words("btc bitcoin bitcoins"), "btc"),
}

#: Currency symbols and what they read as.
CURRENCY_SYMBOLS: Final = {
    "$": "usd",
    "€": "eur",
    "£": "gbp",
    "¥": "jpy",
    "₹": "inr",
    "%": "percent",
}

#: Words that carry little meaning of their own: left out of the content comparison.
STOPWORDS: Final = frozenset(
    words("""a an the and or but if then else so of at in on for to from by with as is are was were
    be been being am do does did done doing have has had having will would shall should can
    could may might must i me my mine we us our you your he him his she her it its they them
    their this that these those there here what which who whom whose when where why how
    please tell me know let want wanted need like would kindly help explain show give find
    about any some just also too very really actually quite much many lot lots way ways
    thing things get got getting go going able possible there's it's what's that's i'm
    i'd i'll you're don't doesn't isn't aren't hey hi hello thanks thank regarding whether
    into onto up out anyone someone anything something one's s 's""")
)
