"""Numbers written in words or in other numeral systems, read as the digits they stand for.

A payee's number can be dictated rather than written: in the number words of a language
(``null eins sieben sechs``, ``zéro six, quarante et un, vingt-sept``, ``seis cero
nueve``), or in Chinese and Japanese numerals, the financial forms too (``陆贰贰捌``,
``〇八〇``). A model reads either as the number, so the destination scan and the
grounding of the trusted side both read them as digits (:func:`numerals`, part of
:func:`.reveal.revealed`):

- a run of at least :data:`MIN_WORDS` number words of one of the languages below, apart by
  spaces, commas or hyphens, is written in digits: each word its value, a ten followed by
  a unit or a teen their sum (``quarante et un`` is 41, ``forty one`` 41, ``treinta y
  dos`` 32), French ``quatre-vingt`` 80 (``quatre-vingt-treize`` 93); the words of one
  group are joined, and the commas between groups kept (``0176, 3489``); counting (``one
  two three four``, each word one more than the one before) is left as it is;
- a run of at least :data:`MIN_CJK` Chinese or Japanese digit numerals (``\u3007`` to
  ``九``, the financial ``零`` to ``玖``), apart by spaces or hyphens at most, is written in
  ASCII digits. Numerals with a magnitude (``十``, ``百``, ``千``, ``万``) are counting, not
  dictation, and are left as they are.

Languages: English, German, French, Spanish, Italian, Portuguese, Dutch, Swedish,
Norwegian, Danish, Polish, Russian, Turkish, Indonesian and Malay, Swahili, Tagalog, Hindi
(romanised), Vietnamese, Czech, Romanian, Hungarian, Finnish, Greek, Arabic. Words that are
also common words of another of them (``to``, ``en``, ``un``, ``ein``, ``een``, ``ni``,
``do``, ``hai``, ``ba``, ``hat``) are left out: a run needs the others.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Final

#: Units (0 to 9), per language, in order; ``-`` where the word is left out.
_UNITS: Final = (
    "zero one two three four five six seven eight nine",
    "null eins zwei drei vier fünf sechs sieben acht neun",
    "zéro - deux trois quatre cinq six sept huit neuf",
    "cero uno dos tres cuatro cinco seis siete ocho nueve",
    "zero uno due tre quattro cinque sei sette otto nove",
    "zero um dois três quatro cinco seis sete oito nove",
    "nul - twee drie vier vijf zes zeven acht negen",
    "noll ett två tre fyra fem sex sju åtta nio",
    "null - - tre fire fem seks sju åtte -",
    "nul - - tre fire fem seks syv otte -",
    "zero jeden dwa trzy cztery pięć sześć siedem osiem dziewięć",
    "ноль один два три четыре пять шесть семь восемь девять",
    "sıfır bir iki üç dört beş altı yedi sekiz dokuz",  # noqa: RUF001
    "nol satu dua tiga empat lima enam tujuh delapan sembilan",
    "kosong - - - - - - - lapan -",
    "sifuri moja mbili tatu nne tano sita saba nane tisa",
    "sero isa dalawa tatlo apat - anim pito walo siyam",
    "shunya ek - teen char paanch chhah saat aath nau",
    "không một - - bốn năm sáu bảy tám chín",
    "nula jedna dva tři čtyři pět šest sedm osm devět",
    "- unu doi trei patru cinci șase șapte opt nouă",
    "nulla egy kettő három négy öt - hét nyolc kilenc",
    "nolla yksi kaksi kolme neljä viisi kuusi seitsemän kahdeksan yhdeksän",
    "μηδέν ένα δύο τρία τέσσερα πέντε έξι επτά οκτώ εννέα",
    "صفر واحد اثنان ثلاثة أربعة خمسة ستة سبعة ثمانية تسعة",
)
#: Other words for a unit: ``oh`` and ``zwo``, feminine forms.
_MORE_UNITS: Final = {"oh": 0, "zwo": 2, "uma": 1, "una": 1, "duas": 2}
#: Teens (10 up), per language that has them as words.
_TEENS: Final = (
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen",
    "zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn",
    "dix onze douze treize quatorze quinze seize",
    "diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve",
    "dieci undici dodici tredici quattordici quindici sedici diciassette diciotto diciannove",
    "dez onze doze treze catorze quinze dezesseis dezessete dezoito dezenove",
    "tien elf twaalf dertien veertien vijftien zestien zeventien achttien negentien",
)
#: Tens (20 up), per language that has them as words.
_TENS: Final = (
    "twenty thirty forty fifty sixty seventy eighty ninety",
    "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
    "vingt trente quarante cinquante soixante",
    "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
    "venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
    "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa",
    "twintig dertig veertig vijftig zestig zeventig tachtig negentig",
)


def _table() -> dict[str, int]:
    values: dict[str, int] = dict(_MORE_UNITS)
    for line in _UNITS:
        for n, word in enumerate(line.split()):
            if word != "-":
                values.setdefault(word, n)
    for line in _TEENS:
        for n, word in enumerate(line.split()):
            values.setdefault(word, 10 + n)
    for line in _TENS:
        for n, word in enumerate(line.split()):
            values.setdefault(word, 20 + 10 * n)
    values["vingts"] = 20
    # ``et un`` (French), ``y uno`` (Spanish): the one after a ten, which alone is a word.
    values.update({"et un": 1, "et une": 1, "y uno": 1, "y una": 1})
    return values


_VALUES: Final = _table()
#: The fewest number words in a run read as a number (a phone number's groups, a dictated
#: account: ``null eins sieben sechs``); fewer are prose (``one or two``).
MIN_WORDS: Final = 4
_WORD: Final = "(?:" + "|".join(sorted(map(re.escape, _VALUES), key=len, reverse=True)) + ")"
#: Words that join a ten and a unit in a compound (``quarante et un``, ``treinta y dos``).
_JOINERS: Final = frozenset({"et", "y", "e", "und", "and", "en"})
_JOINER: Final = "(?:et|y|e|und|and|en)"
_RUN: Final = re.compile(
    rf"(?<!\w){_WORD}(?:(?:[ ,\-]+{_JOINER})?[ ,\-]+{_WORD})+(?!\w)", re.IGNORECASE
)
_PIECE: Final = re.compile(rf"{_WORD}|,|(?<![^\W\d_]){_JOINER}(?![^\W\d_])", re.IGNORECASE)
#: Chinese and Japanese digit numerals (the financial forms, simplified and traditional,
#: too) as ASCII digits.
_CJK: Final = str.maketrans(
    "〇零一壹二贰貳两三叁參四肆五伍六陆陸七柒八捌九玖",
    "001122223334455666778899",
)
#: The fewest CJK digit numerals in a run read as a number (``二〇二六`` is a year).
MIN_CJK: Final = 4
_CJK_DIGIT: Final = "[〇零一壹二贰貳两三叁參四肆五伍六陆陸七柒八捌九玖]"
_CJK_RUN: Final = re.compile(rf"{_CJK_DIGIT}(?:[ \-\u2010\u2011\u2012\uff0d]*{_CJK_DIGIT})+")


def _words(m: re.Match[str]) -> str:
    pieces = _PIECE.findall(m.group())
    values = [_VALUES[p.lower()] for p in pieces if p.lower() in _VALUES]
    if len(values) < MIN_WORDS or all(b == a + 1 for a, b in itertools.pairwise(values)):
        return m.group()  # too few, or counting (``steps one two three four``)
    groups: list[str] = []
    digits: list[int] = []
    for piece in pieces:
        low = piece.lower()
        if low == ",":
            groups.append("".join(map(str, digits)))
            digits = []
            continue
        if low in _JOINERS and low not in _VALUES:
            continue
        value = _VALUES[low]
        last = digits[-1] if digits else None
        if last == 4 and value == 20:
            digits[-1] = 80  # quatre-vingt
        elif last is not None and last >= 20 and last % 10 == 0 and 0 < value < 20:
            digits[-1] = last + value  # forty one, soixante-dix, quatre-vingt-treize
        elif last == 10 and 0 < value < 10:
            digits[-1] = 10 + value  # dix-sept
        else:
            digits.append(value)
    groups.append("".join(map(str, digits)))
    return ", ".join(g for g in groups if g)


def numerals(text: str) -> str:
    """Number words (in a run of :data:`MIN_WORDS` or more), CJK digit numerals (in a run
    of :data:`MIN_CJK` or more), Roman numerals (two or more in a run, one of two letters
    or more) and every character with a digit's value that NFKC keeps (a circled or a
    dingbat digit, ``\u2776``) written as ASCII digits."""
    if not text.isascii():
        text = "".join(_digit(c) for c in text)
    if any("\u3007" <= c <= "\u9fff" for c in text):
        text = _CJK_RUN.sub(
            lambda m: m.group().translate(_CJK) if _cjk_count(m.group()) >= MIN_CJK else m.group(),
            text,
        )
    if any(c in text for c in "IVXLCDM"):
        text = _ROMAN_RUN.sub(_romans, text)
    return _RUN.sub(_words, text)


#: A Roman numeral (1 to 3999), capitals; never empty.
_ROMAN: Final = "(?=[MDCLXVI])(?:M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3}))"
#: A run of at least two Roman numerals apart by spaces or hyphens, one of them two letters
#: or longer (``XLIV XX MMMCMXLVI``, a sort code ``LXXVII-XII-XXXIV``).
_ROMAN_RUN: Final = re.compile(rf"(?<![\w+])\+?{_ROMAN}(?:[ \-]+{_ROMAN})+(?![\w])")
_ROMAN_VALUES: Final = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}


def _roman_value(numeral: str) -> int:
    total = 0
    for letter, after in zip(numeral, [*numeral[1:], ""], strict=True):
        value = _ROMAN_VALUES[letter]
        total += -value if after and _ROMAN_VALUES[after] > value else value
    return total


def _romans(m: re.Match[str]) -> str:
    parts = re.split(r"([ \-]+)", m.group())
    if max(len(p.lstrip("+")) for p in parts[::2]) < 2:
        return m.group()
    out = [str(_roman_value(p.lstrip("+"))) if i % 2 == 0 else p for i, p in enumerate(parts)]
    return ("+" if m.group().startswith("+") else "") + "".join(out)


def _digit(c: str) -> str:
    if c.isdigit() and not c.isascii():
        return str(unicodedata.digit(c))
    return c


def _cjk_count(run: str) -> int:
    return sum(1 for c in run if re.match(_CJK_DIGIT, c))
