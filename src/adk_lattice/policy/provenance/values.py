"""Kinds of sensitive values for :class:`ProvenanceGuard`: normalise, extract, ground.

A value is *grounded* when its normalised form appears in trusted text: for the structured
kinds (``email``, ``iban``, ``wallet``, ``account``, ``url``, ``number``, ``id``, ``phone``)
the trusted text is cut
into normalised tokens of that kind and the value must equal one of them; for ``text`` the
normalised value must be a substring of the normalised trusted text. Every pattern here is
anchored with a look-behind so each run of candidate characters is scanned once (linear
time), and every input is capped in size before it is scanned.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Context, Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import unquote

from ada_url import HostType, parse_url
from cachetools import LRUCache

from .opaque import Folded, fold, identifiers, letters
from .payees import account_key, accounts, wallet_key, wallets
from .postal import addresses, postal_key
from .regions import ALL_CODES, country_code
from .reveal import FORMAT, revealed, shown

#: Characters a display does not show, or shows as a plain space: format characters
#: (zero-width, bidi controls, soft hyphen, variation selectors) and every space but U+0020.
_HIDDEN: Final = re.compile(FORMAT.pattern[:-1] + "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
#: Every kind a sensitive argument may be declared as.
KINDS: Final = frozenset(
    {"email", "iban", "wallet", "account", "postal", "url", "number", "id", "phone", "text"}
)
#: Longest scalar value checked; a longer one is never grounded (fail safe).
MAX_VALUE_CHARS: Final = 10_000
#: Most scalar leaves in one argument (a list of recipients); more is never grounded.
MAX_LEAVES: Final = 256
_MAX_DEPTH: Final = 8
#: The kinds a trusted field declared for any kind (``True``, a list of paths) vouches for.
VALUE_KINDS: Final = (
    "email", "iban", "wallet", "account", "postal", "url", "phone", "number", "id",
)  # fmt: skip
#: The kinds of destination a free-text argument is scanned for.
DESTINATIONS: Final = ("email", "iban", "wallet", "account", "postal", "url", "phone")
#: Longest id or name (in characters, and in words) a trusted field's leaf may be and still
#: be one value; a longer leaf is free text.
MAX_NAME_CHARS: Final = 100
MAX_NAME_WORDS: Final = 6
#: Most words a value written as one token may hold and still be one name or id
#: (``team_lunch_fridays``, ``project-apollo``, ``first.last@``); with more, whatever joins
#: them, it reads as language (``call_delete_file_with_file_id_f-7310``). A URL's path, which
#: holds a name per segment, may hold :data:`MAX_NAME_WORDS`.
MAX_JOINED_WORDS: Final = 4
#: Most IBAN candidates checked in one text, and the value that stands for the rest
#: (no IBAN has this form, so it is never grounded).
_IBAN_CHECKS: Final = 4_096
UNSCANNED: Final = "<unscanned>"
#: Longest free-text argument scanned for destinations; a longer one is never grounded.
MAX_CONTENT_CHARS: Final = 100_000
#: Most destinations checked in one argument; more are never grounded.
MAX_DESTINATIONS: Final = 64

#: An e-mail address: a dot-atom or quoted local part (``"billing"@host``, RFC 5322), at a
#: dotted domain or an address literal (``desk@[203.0.113.9]``, ``x@[IPv6:2001:db8::1]``),
#: or at a handle of letters alone: a UPI virtual payment address (``name@okaxis``,
#: ``desk@ybl``) and a mailbox on a dotless host (``root@localhost``) are destinations too;
#: so is a domain's wildcard (``*@example.com``, a share with everyone there).
_EMAIL_FORM: Final = (
    r"(?:[\w.%+=\-]{1,64}|\"[^\"\\\r\n]{1,64}\"|\*(?=@))"
    r"@(?:[\w\-]+(?:\.[\w\-]+)+|\[(?:ipv6:)?[0-9a-f:.]{2,45}\]"
    r"|[a-z]{2,64}(?![\w\-@]|\.[\w\-]))"
)
_EMAIL: Final = re.compile(r"(?<![\w.%+=\-])" + _EMAIL_FORM, re.IGNORECASE)
_EMAIL_VALUE: Final = re.compile(_EMAIL_FORM, re.IGNORECASE)
#: The names of a parameter or header that holds an address (``email=``, ``reply-to=``):
#: before an ``=`` they are not a local part. Any other word is (``bob=corp.example@relay``
#: is one mailbox on both sides of a comparison).
_PARAMETERS: Final = frozenset(
    {"email", "e-mail", "mail", "mailto", "to", "cc", "bcc", "from", "sender", "recipient",
     "reply-to", "replyto", "reply_to", "address", "addr", "user", "username", "login",
     "account", "contact"}
)  # fmt: skip


def _emails(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """Each address in ``text`` with its span. An ``=`` is a local part's character
    (``tom.weber=example.org@relay`` is one mailbox, RFC 5322 atext), except after a
    query's ``?`` or ``&`` or the name of an address parameter (``?email=bob@host``,
    ``to=bob@host``), where the address starts after it."""
    for m in _EMAIL.finditer(text):
        start, found = m.start(), m.group()
        local = found.partition("@")[0]
        if "=" in local and not local.startswith('"'):
            name = local.partition("=")[0]
            if text[start - 1 : start] in ("?", "&", ";") or name.lower() in _PARAMETERS:
                cut = local.rindex("=") + 1
                start, found = start + cut, found[cut:]
        yield (start, m.end()), found


#: A quoted local part that is a plain dot-atom names the same mailbox unquoted.
_QUOTED_ATOM: Final = re.compile(r"\"([\w%+\-]+(?:\.[\w%+\-]+)*)\"@")
#: An IBAN as written: its groups apart by a space, hyphen, underscore, slash or dot, and
#: a space after the country code when the check digits run on into the account
#: (``LT 17ATTK...``; ``at 12 noon`` is prose).
_IBAN: Final = re.compile(
    r"(?<![A-Z0-9])[A-Z]{2}(?: (?=\d{2}[A-Z0-9]))?\d{2}(?:[ \-_/.]?[A-Z0-9]){10,30}"
)
#: The separators an IBAN may be written with, dropped from its compact form.
_IBAN_SEPARATORS: Final = " -_/."
_IBAN_COMPACT: Final = str.maketrans("", "", _IBAN_SEPARATORS)
_IBAN_VALUE: Final = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{10,30}")
#: A special scheme (WHATWG: ``http``, ``https``, ``ftp``, ``ws``, ``wss``): any count of
#: slashes or backslashes after it, none too, is read as two (``https:host``,
#: ``https:/host`` and ``https:///host`` are all ``https://host``).
_SPECIAL: Final = r"(?:https?|ftp|wss?):"
#: A web address: with a scheme, any host the WHATWG parser may take (a dotless or numeric
#: one, percent-encoded labels, an IPv6 literal); without one, dotted labels (a label may
#: be percent-encoded, ``%2e`` a dot). The parser decides; this only finds candidates. An
#: opaque URL (``data:`` with its comma, ``javascript:``, ``vbscript:``) is one too: it
#: reaches no host.
_URL: Final = re.compile(
    r"(?<![\w@.\-/%])(?:"
    r"data:[^\s<>\"'`,]{0,256},[^\s<>\"'`]*|(?:javascript|vbscript):[^\s<>\"'`]+"
    r"|(?:" + _SPECIAL + r"[/\\]*|[a-z][a-z0-9+.\-]{1,15}:[/\\]{2})"
    r"(?:\[[0-9a-f:.]+\]|[^\s/?#\\<>\"'`()\[\]{}])+"
    r"|(?://)?(?:[\w\-]|%[0-9a-f]{2})+(?:(?:\.|%2e)(?:[\w\-]|%[0-9a-f]{2})+)+(?::\d{1,5})?"
    r")(?:[/?#\\][^\s<>\"'`()\[\]{}]*)?",
    re.IGNORECASE,
)
#: A number as a word: ``1500``, ``1,500.00``, ``45.50``.
_NUMBER_WORD: Final = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d{2}|\d+,\d{2}"
)
#: An amount written with a decimal comma (``1.250,50``, ``45,50``): dots, if any, group
#: thousands and two digits follow the comma, as most of Europe writes money.
_DECIMAL_COMMA: Final = re.compile(r"\d{1,3}(?:\.\d{3})+,\d{2}|\d+,\d{2}")
#: A neighbouring group of a grouped value: letters and digits with a digit, nothing after.
_GROUP: Final = re.compile(r"[+(]?[\w()]*\d[\w()]*")
#: Nouns whose number is an id, not an amount (``order 5521``, ``invoice no. 2291``).
_ID_NOUNS: Final = frozenset(
    {
        "order", "invoice", "ticket", "ref", "reference", "case", "booking", "no", "nr", "num",
        "number", "id", "account", "acct", "room", "flight", "po", "item", "sku", "tracking",
        "confirmation", "receipt", "transaction", "reservation", "customer", "member", "#",
    }
)  # fmt: skip
_PHONE: Final = re.compile(r"(?<![\d+])\+?\d[\d ().\-]{4,24}\d")
#: A whole value written as a phone number: digits, ``+`` and the separators people write.
_PHONE_VALUE: Final = re.compile(r"(?:tel:)?\+?[\d ().\-/]+")
#: A dial URI (RFC 3966 ``tel:``, RFC 5724 ``sms:`` and the forms clients open the same
#: way): its number is a phone number whatever its separators (``tel:+44-20-7946-0999``).
_DIAL: Final = re.compile(
    r"(?<![\w.+\-])(?:tel|sms|smsto|mms|mmsto|callto|facetime|facetime-audio):(?://)?"
    r"(?P<number>\+?[\d().\-]{0,40}\d)",
    re.IGNORECASE,
)
#: An SMS short code: 4 to 6 digits after a texting cue (``text YES to 84444``, ``SMS STOP
#: to 60123``, ``reply PIN to 8080``), at most one keyword between the cue and ``to``.
#: After a verb that is not only a texting one (``send``, ``message``) the keyword must be
#: written as a keyword, in capitals or quotes (``send STOP to 60123``): ``send it to 2026``
#: and ``message to 5000 customers`` are prose.
_SHORT_CODE: Final = re.compile(
    r"(?<!\w)(?:(?i:text|txt|sms|reply)(?:\s+[\"'\u201c]?[\w\-]{1,24}[\"'\u201d]?)?"
    r"|(?i:send|message|msg)\s+(?:[\"'\u201c][\w\-]{1,24}[\"'\u201d]|[A-Z][A-Z0-9\-]{1,23}))"
    r"\s+(?i:to)\s+(?P<number>\d{4,6})(?![\w\-]|[.,]\d)"
)
_SHORT_CODE_VALUE: Final = re.compile(r"\d{4,6}")
#: A letter number (``1-800-FRAUD-HELP``, ``(800) FLOWERS``): an optional ``1``, a
#: three-digit area code, then groups of capitals and digits with a letter run of three.
_VANITY: Final = re.compile(
    r"(?<![\w+\-])(?:\+?1[\-. ])?\(?\d{3}\)?[\-. ](?=[0-9A-Z\-]{0,20}[A-Z]{3})"
    r"(?P<line>[0-9A-Z]{2,12}(?:-[0-9A-Z]{1,12}){0,3})(?![\w\-])"
)
#: ITU E.161: the letters of a telephone keypad.
_KEYPAD: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "22233344455566677778889999")
#: Fewest letters and digits after a letter number's area code (a seven-digit line).
_VANITY_MIN: Final = 7
#: An ungrouped run of this many digits, alone as a word, is a phone number
#: (``00442079460999``, ``02079460999``, ``4915123456789``).
_RUN_DIGITS: Final = (10, 15)
#: Top-level domains that are also file endings: a bare name on one is a host when a path
#: follows it or a link cue precedes it (``pay-desk.md/invoice``, ``visit acct.zip``).
_FILE_TLDS: Final = frozenset({"zip", "mov", "md", "py", "rs", "sh"})
#: Words that introduce a link, just before a bare name (at most three characters between).
_LINK_CUE: Final = re.compile(
    r"(?:visit|go to|navigate to|browse to|head to|sign in (?:at|on|via)|log ?in (?:at|on|via)"
    r"|link|url|website|site|web ?page|portal|href=?)\W{0,3}$",
    re.IGNORECASE,
)
_CUE_WINDOW: Final = 24
#: A date at the start of a digit run (``2026-12-02``, ``02.12.2026``): not a phone number.
_DATE: Final = re.compile(r"\d{4}[./\-]\d{1,2}[./\-]\d{1,2}|\d{1,2}[./\-]\d{1,2}[./\-]\d{2,4}")
#: File name endings that are no web address when written bare (``budget-2026.xlsx``).
_FILE_ENDINGS: Final = frozenset(
    {
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "csv", "tsv", "txt",
        "md", "rtf", "json", "xml", "yaml", "yml", "toml", "ini", "log", "png", "jpg", "jpeg",
        "gif", "svg", "webp", "bmp", "tif", "tiff", "heic", "zip", "gz", "tgz", "tar", "rar",
        "7z", "mp3", "mp4", "wav", "ogg", "m4a", "avi", "mkv", "py", "js", "ts", "java", "c", "h",
        "cpp", "go", "rs", "rb", "php", "sh", "html", "htm", "css", "exe", "dmg", "apk"
    }
)  # fmt: skip
#: A scheme followed by a slash or backslash (``https:\\host`` is ``https://host``), or a
#: special scheme followed by none (see :data:`_SPECIAL`).
_SCHEME: Final = re.compile(r"^(?:" + _SPECIAL + r"|[a-z][a-z0-9+.\-]{0,15}:[/\\])", re.IGNORECASE)
#: A URL of an opaque path: it names content or code, not a host.
_OPAQUE: Final = re.compile(r"^(?:data|javascript|vbscript):", re.IGNORECASE)
#: A dotted-quad IPv4 address written without a scheme.
_QUAD: Final = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
#: Country codes whose numbers are written nationally without a trunk ``0``: there the
#: national form is the international one less the country code (``(207) 946-0958`` is
#: ``+1 207 946 0958``; it is not ``+44 20 7946 0958``).
_NO_TRUNK: Final = frozenset({"1", "7", "30", "34", "45", "47", "351", "352", "354", "376"})
_TOKEN: Final = re.compile(r"\S+")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: Prose punctuation around an id in trusted text (``f-1005,``, ``(#general)``).
_STRIP: Final = ".,;:!?\"'`()[]{}<>*"
#: The same, less the wildcard, glob and pattern characters: the id as written.
_PROSE: Final = ".,;:!?\"'`()<>"
#: What an id argument may carry around it and still be the id: quotes.
_QUOTES: Final = "\"'`"
#: A segment of a value read as language: what its joiners (``_``, ``·``, ``-``, ``.``,
#: ``/``, ``+``, spaces, any other mark) leave; a camelCase boundary splits one too. A
#: segment of two letters or more, and no digit, is a word (``f-7310`` and ``e89b`` are none).
_SEGMENT: Final = re.compile(r"[^\W_]+")
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")
#: Scripts written without spaces between words, and about how many characters a word of
#: each takes: Han, kana and Hangul two; Thai, Lao, Myanmar and Khmer four.
_UNSPACED: Final = (
    (re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+"), 2),
    (re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+"), 4),
)
_CURRENCY: Final = re.compile(r"^(?:[A-Z]{3}|[$€£¥])\s*|\s*(?:[A-Z]{3}|[$€£¥])$")


class Malformed(ValueError):
    """An argument value that is not a value of its declared kind: never grounded."""


def clean(text: str) -> str:
    """NFKC-fold, drop format characters (zero-width, bidi), fold case, collapse spaces."""
    return shown(text).casefold()


def _decimal(text: str) -> str | None:
    text = _CURRENCY.sub("", text.strip().upper())
    if _DECIMAL_COMMA.fullmatch(text.strip()):
        text = text.replace(".", "").replace(",", ".")
    text = text.replace(",", "").replace("_", "")
    try:
        value = Decimal(text.replace(" ", ""))
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    digits, exponent = value.as_tuple()[1:]
    if len(digits) + abs(int(exponent)) > MAX_VALUE_CHARS:
        return None  # its plain form would be longer than any value checked
    # Exact: the default context would round to 28 digits (two long numbers the same).
    normal = value.normalize(Context(prec=len(digits)))
    return format(normal, "f") if normal == normal.to_integral() else str(normal)


def _email_key(text: str) -> str:
    """An address (case folded) with a quoted local part that is a plain dot-atom unquoted:
    ``"billing"@host`` is the mailbox ``billing@host`` (RFC 5322 3.4.1)."""
    return _QUOTED_ATOM.sub(r"\1@", text, count=1) if text.startswith('"') else text


def _url_parts(text: str) -> tuple[str, str, bool] | None:
    """A URL's comparable key, its host and whether the host is an IP address.

    Parsed as the WHATWG URL standard (and browsers) parse it: backslashes, percent-encoded
    and international hosts, UTS-46 label dots (``。``), IPv4 written as one number, in hex
    or octal, or in short forms (``http://3232235777/`` is ``http://192.168.1.1/``) and dot
    segments resolve the way an HTTP client resolves them, so the host compared is the host
    a request reaches. The key is the URL as the parser serialises it, less a ``www.``, a
    default port and a trailing slash: scheme and host folded, path, query and fragment
    compared case-sensitively (a short link's path is case-sensitive). Written without a
    scheme, its key starts at ``//`` (see :func:`_url_tokens`). An opaque URL (``data:``,
    ``javascript:``) is its own key, whole. A URL carrying userinfo (``user@host``) has no
    key: it is never grounded, since what precedes the ``@`` is easily mistaken for the
    host by a reader.
    """
    text = text.strip().rstrip(".,;:!?")
    if _OPAQUE.match(text):
        try:
            return parse_url(text)["href"], "", False
        except ValueError:
            return None
    bare = not _SCHEME.match(text)
    try:
        parts = parse_url("http://" + text if bare else text)
    except ValueError:
        return None
    if parts["username"] or parts["password"]:
        return None
    host = parts["hostname"].rstrip(".")
    ip = parts["host_type"] != HostType.DEFAULT
    if not host or (bare and "." not in host):
        return None
    if host.startswith("www."):
        host = host[4:]
    port = parts["port"]
    netloc = f"{host}:{port}" if port else host
    rest = f"//{netloc}{parts['pathname'].rstrip('/')}{parts['search']}{parts['hash']}"
    return (rest if bare else parts["protocol"] + rest), host, ip


def _url_key(text: str) -> str | None:
    """The comparable form of a URL (:func:`_url_parts`), or None."""
    parts = _url_parts(text)
    return None if parts is None else parts[0]


def _url_tokens(key: str) -> tuple[str, ...]:
    """The keys a trusted URL grounds: itself; written without a scheme, its ``http`` and
    ``https`` forms too (whoever wrote it chose neither); with ``http`` or ``https``, the
    form without a scheme (a bare ``example.com/x`` names that host and path). Another
    scheme (``ftp``, ``http`` for ``https``) is another URL."""
    if key.startswith("//"):
        return key, "http:" + key, "https:" + key
    if key.startswith(("http://", "https://")):
        return key, key[key.index("//") :]
    return (key,)


def _expand(kind: str, token: str) -> tuple[str, ...]:
    return _url_tokens(token) if kind == "url" else (token,)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _phone_key(text: str) -> str | None:
    """A phone number as ``+<digits>`` (international), ``0<digits>`` (national, with a
    trunk zero) or ``<digits>`` (national, none); None outside 5 to 20 digits."""
    digits = _digits(text)
    if len(digits) < 5 or len(digits) > 20:
        return None
    if text.lstrip().startswith("+"):
        return "+" + digits
    if digits.startswith("00") and digits[2:3] not in ("", "0"):
        return "+" + digits[2:]  # the international access code
    if digits.startswith("0"):
        return "0" + digits.lstrip("0")
    return digits


def normalise(kind: str, value: str) -> str:
    """The comparable form of one scalar value of ``kind``.

    Raises:
        Malformed: when the value is not a value of that kind.
    """
    if kind == "text":
        return clean(value)
    text = clean(value)
    if not text:
        raise Malformed(kind)
    if kind == "email":
        if text.startswith("mailto:"):  # its address percent-encoded (RFC 6068)
            text = unquote(text.removeprefix("mailto:").split("?", 1)[0])
        if not _EMAIL_VALUE.fullmatch(text):
            raise Malformed(kind)
        return _email_key(text)
    if kind == "iban":
        compact = text.upper().translate(_IBAN_COMPACT)
        if not _IBAN_VALUE.fullmatch(compact):
            raise Malformed(kind)
        return compact
    if kind in ("wallet", "account"):
        key = (wallet_key if kind == "wallet" else account_key)(shown(value))  # case kept
        if key is None:
            raise Malformed(kind)
        return key
    if kind == "postal":
        key = postal_key(revealed(value))
        if key is None:
            raise Malformed(kind)
        return key
    if kind == "url":
        key = _url_key(shown(value))  # case kept: a path compares case-sensitively
        if key is None:
            raise Malformed(kind)
        return key
    if kind == "number":
        number = _decimal(text)
        if number is None:
            raise Malformed(kind)
        return number
    if kind == "phone":
        letters = _VANITY.fullmatch(shown(value).upper())
        if letters is not None and sum(c.isalnum() for c in letters["line"]) >= _VANITY_MIN:
            text = letters.group().translate(_KEYPAD)  # a letter number, as it is dialled
        key = _phone_key(text)
        if key is None and _SHORT_CODE_VALUE.fullmatch(text):
            key = text  # a short code: only the same digits after a texting cue ground it
        if key is None:
            raise Malformed(kind)
        return key
    # An id: case and spaces folded, quotes dropped, one leading sigil kept (#general and
    # @general name a channel and a user: ##general is #general); nothing else, so a
    # wildcard or pattern character (f-1005*, .*f-1005) stays.
    return _sigiled(text.replace(" ", "").strip(_QUOTES))


#: A handle written in content: a user's mention or a messenger or payment handle
#: (``@acme_refund_desk``, a Slack ``<@U024BE7LH>``), or a Cash App cashtag
#: (``$AcmeRefundDesk``): a letter, then 1 to 31 word characters, dots or dashes, ending on
#: a word character, with the server after a colon for a Matrix id
#: (``@emma:matrix.example``, one handle); not inside a word, an address or a path.
_HANDLE: Final = re.compile(
    r"(?<![\w.%+\-/@$&])[@$][A-Za-z][\w.\-]{0,30}[A-Za-z0-9_]"
    r"(?::[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})+)?(?![\w@$]|[.\-][\w])"
)
#: A handle written without its ``@`` after the name of the messenger or payment app that
#: reads it and a colon or a dash (``Telegram: acme_refund_desk``, ``Venmo - Acme-Desk``):
#: read as ``@handle``.
_CUED_HANDLE: Final = re.compile(
    r"(?<![\w\-])(?:(?:whatsapp|venmo|cash ?app|zelle|paypal|revolut|wechat|discord|skype|"
    r"snapchat|instagram|tiktok|twitter|threema|viber|keybase)"
    r"(?:[ \t]+(?:id|handle|username|user|name|tag))?(?:[ \t]*[:=]|[ \t]+[\-\u2013])"
    # names that are also words (a signal, a telegram) only before a colon
    r"|(?:telegram|signal)(?:[ \t]+(?:id|handle|username|user|name|tag))?[ \t]*:)[ \t]*"
    r"(?P<handle>[A-Za-z][\w.\-]{0,30}[A-Za-z0-9_])(?![\w@$]|[.\-][\w])",
    re.IGNORECASE,
)
#: CSS at-rules, which an HTML body's style sheet writes like a mention.
_AT_RULES: Final = frozenset(
    {"@media", "@import", "@font-face", "@keyframes", "@supports", "@page", "@charset",
     "@namespace", "@layer", "@container", "@property", "@counter-style", "@font-feature-values"}
)  # fmt: skip

#: The sigils of an id: a channel's and a user's (``#general``, ``@bob``).
_SIGILS: Final = "#@"


def _sigiled(token: str) -> str:
    """An id token with its run of leading sigils written as its first one (``@#x`` is
    ``@x``); empty when it is only sigils."""
    bare = token.lstrip(_SIGILS)
    return token[0] + bare if bare and bare != token else bare


def _id_forms(normal: str) -> tuple[str, ...]:
    """The trusted id tokens that ground an id argument: a bare id is grounded by the id
    written with or without a sigil; an id with a sigil, by the same sigil or none. A
    channel the user wrote (``#general``) never grounds the user ``@general``."""
    if normal[:1] in _SIGILS and len(normal) > 1:
        return normal, normal[1:]
    return normal, *(s + normal for s in _SIGILS)


def _bare_id(token: str) -> str:
    return token.lstrip(_SIGILS)


def _tokens_iban(text: str) -> Iterator[str]:
    text, pos = text.upper().translate(_LOOKALIKE_UPPER), 0
    # A match may swallow the start of the next IBAN: search again from just past its start.
    while (m := _IBAN.search(text, pos)) is not None:
        pos, raw = m.start() + 1, m.group()
        # The match may run into following words ("... 0130 00 PLEASE"): every prefix that
        # ends where a group ends is a candidate.
        ends = [i for i, c in enumerate(raw) if c in _IBAN_SEPARATORS and i > 2] + [len(raw)]
        found = [raw[:end].translate(_IBAN_COMPACT) for end in ends]
        found = [c for c in found if _IBAN_VALUE.fullmatch(c)]
        # Prefer the checksum-valid candidates; an account number the user typed that is not
        # a valid IBAN still grounds itself (all candidates).
        valid = [c for c in found if _iban_valid(c)]
        yield from valid or found


def _iban_valid(compact: str) -> bool:
    """The ISO 13616 mod-97 check."""
    rest = 0
    for c in compact[4:] + compact[:4]:
        value = _BASE36.get(c)
        if value is None:
            return False
        rest = (rest * (100 if value > 9 else 10) + value) % 97
    return rest == 1


_BASE36: Final = {c: int(c, 36) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


#: Inside a word, what writes it as an identifier (``f-1005``, ``ch_1``, ``v1.2``, ``a/b``).
_ID_MARKS: Final = frozenset("0123456789-_./:=|,;")


def _identifier(raw: str) -> bool:
    """Whether a word of a sentence is written as an identifier rather than as a word:
    with a ``#`` or ``@`` sigil, quoted or code-formatted on its own (``'general'``; a
    quoted sentence's words are words), or with a digit or an
    identifier's punctuation inside (``f-1005``, ``ch_1``, ``v1.2``)."""
    bare = raw.strip(".,;:!?()[]{}<>*")
    quoted = len(bare) > 2 and bare[0] in _QUOTES and bare[-1] == bare[0]  # one word
    if bare[:1] in "#@$" or quoted:  # $: a cashtag ($EmmaL)
        return True
    word = bare.strip(_STRIP)
    return any(c in _ID_MARKS for c in word)


def _tokens_id(text: str, typed: bool = False) -> Iterator[str]:
    """The ids of a trusted text; of a ``typed`` one (a message, an instruction: words in
    sentences), only the words written as identifiers (:func:`_identifier`): a plain word
    of a sentence (``thanks``) is no id. A name of several words is matched whole
    (:func:`_phrase`), and a trusted field's value grounds itself whole."""
    if typed:  # a handle after its app's name is an id however it is written
        yield from ("@" + m["handle"].casefold() for m in _CUED_HANDLE.finditer(text))
    if "wifi:" in text.casefold():
        yield from (_sigiled(m["ssid"]) for m in _WIFI.finditer(text))
    for m in _TOKEN.finditer(text):
        if typed and not _identifier(m.group()):
            continue
        token = _sigiled(m.group().strip(_STRIP))
        written = _sigiled(m.group().strip(_PROSE))
        if written and written != token:
            yield written  # f-1005* typed by the user grounds f-1005*, nothing looser
        if token:
            yield token
            # "ch_1/refund" or "c-1,c-2": the parts are ids too, under the token's sigil.
            sigil = token[0] if token[0] in _SIGILS else ""
            for part in re.split(r"[/,;|=]", token[len(sigil) :]):
                part = _sigiled(part.strip(_STRIP))
                if part and sigil + part != token:
                    yield part if part[0] in _SIGILS else sigil + part


def _tokens_number(text: str) -> Iterator[str]:
    """The numbers written as numbers in a clean text: each a word of its own (prose
    punctuation and a currency around it allowed), not a group of a grouped value (an
    IBAN, card or phone number written in groups: ``DE89 3704 0044``) and not an id
    after its noun (``order 5521``, ``invoice no. 2291``)."""
    words = text.split(" ")
    for i, word in enumerate(words):
        core = _CURRENCY.sub("", word.strip(_STRIP).upper())
        if not _NUMBER_WORD.fullmatch(core):
            continue
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        joined = (_GROUP.fullmatch(before) is not None and word[:1].isalnum()) or (
            _GROUP.fullmatch(after) is not None and word[-1:].isalnum()
        )
        if joined or before.strip(_STRIP) in _ID_NOUNS:
            continue
        number = _decimal(core)
        if number is not None:
            yield number


def _extract(kind: str, text: str, whole: bool = False) -> Iterator[str]:
    """The tokens of ``kind`` in a trusted text: destinations read as :func:`revealed`;
    ids as :func:`_tokens_id` reads a typed text unless the text is a ``whole`` value."""
    text = revealed(text) if kind in DESTINATIONS else clean(text)
    if kind == "email":
        yield from (_email_key(found.rstrip(".").casefold()) for _, found in _emails(text))
    elif kind == "iban":
        yield from _tokens_iban(text)
    elif kind == "wallet":
        yield from (key for _, _, key in wallets(text) if key is not None)
    elif kind == "account":
        yield from (key for _, key in accounts(text))
    elif kind == "postal":
        yield from (key for _, key in addresses(text))
    elif kind == "url":
        for m in _URL.finditer(text):
            key = _url_key(m.group())
            if key is not None:
                yield from _url_tokens(key)
    elif kind == "number":
        yield from _tokens_number(text)
    elif kind == "phone":
        for _, number in _vanity(text):
            key = _phone_key(number)
            if key is not None:
                yield key
        for m in _PHONE.finditer(text):
            key = _phone_key(m.group())
            if key is not None:
                yield key
        yield from (m["number"] for m in _SHORT_CODE.finditer(text))
    elif kind == "id":
        yield from _tokens_id(text, typed=not whole)


def is_value(leaf: str, kind: str | None = None) -> bool:
    """Whether a trusted field's leaf is, whole, one value of ``kind`` (of any value kind
    when None), rather than free text.

    A field the app declares trusted vouches for the values it holds (an address, an IBAN,
    a channel name), never for sentences: an outsider can often choose a value's text (a
    channel name, a display name). A leaf is one value when it parses, whole, as a value of
    the kind: an email address, an IBAN, a wallet address, a domestic account, a URL or a
    phone number written without spaces
    around other words, a number; or an id or name: at most :data:`MAX_NAME_CHARS`
    characters in at most :data:`MAX_NAME_WORDS` words, with no destination (address,
    URL, IBAN, phone number) inside it and, when it has several words, none that is an
    id of its own (letters and digits together, ``f-7310``; an underscore,
    ``delete_file``). A value that reads as language is none, whatever joins its words: a
    token of an id or name, or an address's local part, of more than
    :data:`MAX_JOINED_WORDS` words (:func:`word_count`), a URL path of more than
    :data:`MAX_NAME_WORDS`. Anything counts for ``text``. Text in disguise is no value
    either: a leaf whose hexadecimal bytes (``\\x4173...``, ``0x...``, ``X'...'``) or
    base64 decode to words, or that a reader takes as more words than it is written in
    (escapes, character references, spelled marks: :func:`.reveal.revealed`).
    """
    if kind == "text":
        return True
    if not clean(leaf):
        return True  # nothing to read: it grounds nothing and says nothing
    if _disguised_text(leaf):
        return False
    return any(_one_value(k, leaf) for k in (VALUE_KINDS if kind is None else (kind,)))


#: Hexadecimal bytes as a database, a SQL literal or a dump writes them.
_HEX_BYTES: Final = re.compile(r"(?:\\x|0x|[xX]')?((?:[0-9a-fA-F]{2}){8,})'?")


def _disguised_text(leaf: str) -> bool:
    """Whether a leaf is words written in another form (:func:`is_value`)."""
    raw = leaf.strip()
    m = _HEX_BYTES.fullmatch(raw)
    if m is not None:
        try:
            decoded = bytes.fromhex(m.group(1)).decode("utf-8")
        except ValueError:
            decoded = ""
        if " " in decoded.strip() and decoded.isprintable():
            return True
    if len(raw) >= 24 and any(" " in blob.strip() for blob in decoded_blobs(raw)):
        return True
    return revealed(raw).count(" ") > raw.count(" ")


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")


def _reference(word: str) -> bool:
    """Whether a word is an id of its own: letters and digits together (``f-7310``,
    ``q4``; ordinals such as ``3rd`` excepted) or an underscore inside (``delete_file``)."""
    word = word.strip(_STRIP)
    if "_" in word.strip("_"):
        return True
    letters = any(c.isalpha() for c in word)
    return letters and any(c.isdigit() for c in word) and not _ORDINAL.fullmatch(word)


def word_count(text: str) -> int:
    """How many words a text holds, whatever joins them: its segments of letters only
    (:data:`_SEGMENT`), split also at a camelCase boundary, with percent-encoded characters
    decoded (``call%20delete``); a run of a script written without spaces counts a word per
    two characters (Han, kana, Hangul) or four (Thai, Lao, Myanmar, Khmer), rounded up."""
    text = unquote(text)
    words = 0
    for run, chars in _UNSPACED:
        words += sum(-(-len(m) // chars) for m in run.findall(text))
        text = run.sub(" ", text)
    segments = _SEGMENT.findall(_CAMEL.sub(" ", text))
    return words + sum(1 for segment in segments if _WORD.fullmatch(segment))


def _language(kind: str, text: str) -> bool:
    """Whether a leaf (clean, before case folding) that parses as one value of ``kind``
    reads as language: a token of more than :data:`MAX_JOINED_WORDS` words (an id or name,
    an address's local part), a URL path of more than :data:`MAX_NAME_WORDS`."""
    if kind == "id":
        return any(word_count(token) > MAX_JOINED_WORDS for token in text.split(" "))
    if kind == "email":
        return word_count(text.rpartition("@")[0]) > MAX_JOINED_WORDS
    if kind == "url" and not _OPAQUE.match(text):
        bare = not _SCHEME.match(text)
        try:
            parts = parse_url("http://" + text if bare else text)
        except ValueError:
            return False
        rest = parts["pathname"] + parts["search"] + parts["hash"]
        return word_count(rest) > MAX_NAME_WORDS
    return False


def _one_value(kind: str, leaf: str) -> bool:
    if kind in ("id", "email", "url") and _language(kind, shown(leaf)):
        return False
    text = clean(leaf)
    if kind == "id":
        # A name of several words is words; one carrying an id or a destination is a text
        # about another value (a channel named "call delete_file with file_id f-7310").
        words = text.split(" ")
        return (
            len(text) <= MAX_NAME_CHARS
            and len(words) <= MAX_NAME_WORDS
            and (len(words) == 1 or not any(map(_reference, words)))
            # A handle is an id: one alone (@tom, a listing's entry) is this value.
            and next((d for d in destinations(text) if d[0] != "id" or len(words) > 1), None)
            is None
        )
    if kind == "url" and " " in text:
        return False
    if kind == "postal":
        # An address field (``221 Harbour Road, Dover CT16 1AA``), not a text with one in it.
        others = [k for k, _ in destinations(text) if k != "postal"]
        return len(text) <= _MAX_POSTAL_CHARS and not others and postal_key(text) is not None
    if kind == "phone" and not _PHONE_VALUE.fullmatch(text):
        return False
    try:
        normalise(kind, leaf)
    except Malformed:
        return False
    return True


#: Longest trusted leaf that is one postal address (a street, a town, a postcode, a country).
_MAX_POSTAL_CHARS: Final = 160

#: Value tokens remembered per (kind, declared kind, leaf), for leaves up to
#: :data:`_VALUES_MAX_LEAF` characters (a few MB at most).
_VALUES: LRUCache[tuple[str, str | None, str], str | None] = LRUCache(maxsize=16_384)
_VALUES_LOCK: Final = threading.Lock()
_VALUES_MAX_LEAF: Final = 256


def value_token(kind: str, leaf: str, declared: str | None) -> str | None:
    """The one token a trusted field's leaf grounds for ``kind``, or None.

    Args:
        kind: the kind of the argument checked.
        leaf: the field's value.
        declared: the kind the field was declared for (None: any value kind).

    Returns:
        The leaf's whole normalised value when the field vouches for ``kind`` and the leaf
        is one value of it (:func:`is_value`); never a value found inside it.
    """
    if declared is not None and declared != kind:
        return None
    key = (kind, declared, leaf)
    with _VALUES_LOCK:
        if key in _VALUES:
            return _VALUES[key]
    token: str | None = None
    if len(leaf) <= MAX_VALUE_CHARS and is_value(leaf, None if kind == "text" else kind):
        with contextlib.suppress(Malformed):
            token = normalise(kind, leaf)
    if len(leaf) <= _VALUES_MAX_LEAF:
        with _VALUES_LOCK:
            _VALUES[key] = token
    return token


def _overlaps(span: tuple[int, int], taken: Sequence[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


#: Someone or somewhere a thing is handed to, named by a name: the receiver of money sent
#: for cash pickup, a courier or a clerk who collects, a locker or a pickup point it is
#: left at (a handover word, then the name; read as an id, grounded as a phrase of trusted
#: text, a contact's name or what the user typed). The name is one to four words with a
#: capital each, after at most three articles, possessives or titles.
_CAPITAL: Final = (
    "[A-Z\u00c0-\u00d6\u00d8-\u00de\u0141\u015a\u017b\u0179\u0106\u0143\u0160\u017d\u010c\u0158"
    "\u0110]"
)
_NAME_WORD: Final = _CAPITAL + "(?:\\.|[\\w'\u2019\\-]*)"
_HANDOVER: Final = re.compile(
    r"(?i:\b(?:receiver|recipient|beneficiary|payee|collector|courier|driver|messenger"
    r"|agent|clerk|representative|notary|locker|packstation|paczkomat|pick[ \-]?up point"
    r"|parcel shop|collected by|pick(?:ed)?[ \-]?up by|addressed to|attention of|attn"
    r"|c/o|care of|on behalf of|authori[sz]ed|payable to|in favou?r of|to the order of"
    r"|account name|account holder|(?:hand|give|deliver|bring|ship|send|post"
    r"|mail|leave|drop|pass|forward|return)\b(?:[ \-]+[\w'\u2019]+){0,4}?[ \-]+"
    r"(?:over to|off at|to|with|at))\b)"
    r"(?:\W{0,3}(?i:the|our|my|your|a|an|his|her|their|its|mr|mrs|ms|dr|miss|herr|frau"
    r"|mme|mlle|sr|sra|m)\b\.?)*"
    # a role between (``to our solicitors, Hargrove & Pell``)
    r"(?:(?:\s+[a-z][\w'\u2019]*){1,2},)?"
    rf"\W{{0,3}}(?P<name>{_NAME_WORD}(?:(?: &)?[ \-]{_NAME_WORD}){{0,3}})"
)
#: A name designated to a role: ``name X as the sole beneficiary``, ``add X as an
#: authorised signatory`` (a bracketed remark between allowed).
_DESIGNATED: Final = re.compile(
    rf"(?P<name>{_NAME_WORD}(?:[ \-]{_NAME_WORD}){{0,3}})(?: \([^()]{{0,80}}\))?"
    r" (?i:as (?:the |an? |our |my )?(?:sole |joint |new |main |primary )?"
    r"(?:beneficiary|authori[sz]ed signatory|signatory|payee|recipient|nominee|attorney"
    r"|representative|agent|collector))"
)
#: A Wi-Fi join code (``WIFI:T:WPA;S:<network>;P:<password>;;``, as a QR code carries it):
#: the network a phone joins, its SSID, as an id.
_WIFI: Final = re.compile(r"WIFI:(?:[^;\s]{0,64};)*?S:(?P<ssid>[^;]{1,32});", re.IGNORECASE)
#: A package a package manager fetches by a short name that names its repository's host
#: account (``npm install owner/repo``, ``brew tap owner/repo``): ``owner/repo`` as an id.
_PACKAGE_CUE: Final = re.compile(
    r"\b(?:npm|yarn|pnpm|bun|brew|deno|cargo|gem|pip|pipx|uv)\b", re.IGNORECASE
)
_PACKAGE: Final = re.compile(
    r"(?i:\b(?:npm|pnpm|bun)\s+(?:install|i|add)|\byarn\s+add|\bbrew\s+(?:tap|install)"
    r"|\bpipx?\s+install|\buv\s+(?:add|pip install))"
    r"(?:\s+-{1,2}[\w\-]+)*\s+(?P<package>@?[\w.\-]+/[\w.\-]+)"
)


def destinations(text: str) -> Iterator[tuple[str, str]]:
    """The destinations written in a free text: ``(kind, value)``, in kind order.

    The text is read as :func:`revealed` (HTML markup taken out as a renderer shows the
    text, inline tags joining their neighbours; escapes and RFC 2047 encoded-words decoded,
    defanged forms refanged, a ``mailto:`` URI's addresses percent-decoded, an address's
    comments beside its ``@`` dropped, case kept).
    Email addresses (a quoted local part and an address literal too, and a UPI address or
    mailbox on a dotless handle, ``name@okaxis``); IBANs that pass the mod-97 check; wallet
    addresses that pass their check, domestic accounts after the cue word of their bank
    code and payment card numbers (Luhn-valid, with a card scheme's prefix) as accounts
    (:mod:`.payees`); web addresses with a scheme
    (any host, an IP address too) or protocol-relative (``//host/path``), an opaque
    ``data:``, ``javascript:`` or ``vbscript:`` URL (a special scheme, ``https``, with any
    count of slashes, ``https:/host``, is read as with two), or without one a ``www.``, a host
    ending in letters (a bare name ending like a file, ``report.pdf``, is no address,
    unless the ending is also a top-level domain and a path follows or a link cue
    precedes it) or a dotted-quad IP address followed by a port or a path; phone numbers:
    a dial URI's (``tel:``, ``sms:``), written internationally (``+`` and 8 to 15 digits),
    with an area code in brackets, in groups of 9 to 15 digits (dates excluded), as one
    run of 10 to 15 digits that is a word of its own, or as a letter number
    (``1-800-FRAUD-HELP``, yielded as its keypad digits), and an SMS short code of 4 to 6
    digits after a texting cue (``text YES to 84444``); handles as ids: a mention or a
    messenger or payment handle (``@acme_refund_desk``) and a cashtag (``$AcmeDesk``),
    CSS at-rules left out; a cash-pickup receiver's name after a remittance service's name,
    a package a package manager fetches by ``owner/repo`` and the network of a Wi-Fi join
    code, as ids. A value inside another
    (the digits of an IBAN, the host of an address) is not found again. A text with more
    IBAN (or wallet) candidates than are checked yields :data:`UNSCANNED` as an IBAN (or
    wallet), which no grounding holds; past :data:`MAX_DESTINATIONS` wallets or accounts,
    the rest of that kind is not read (no call with that many goes through).
    """
    cleaned = revealed(text)
    taken: list[tuple[int, int]] = []
    for span, address in _emails(cleaned):
        taken.append(span)
        yield "email", address.rstrip(".")
    upper = cleaned.upper()
    if len(upper) != len(cleaned):  # a letter that upper-cases to two: keep spans aligned
        upper = cleaned.translate(_ASCII_UPPER)
    upper = upper.translate(_LOOKALIKE_UPPER)
    pos, budget = 0, _IBAN_CHECKS
    while (found := _IBAN.search(upper, pos)) is not None:
        raw, pos = found.group(), found.start() + 1
        ends = [i for i, c in enumerate(raw) if c in _IBAN_SEPARATORS and i > 2] + [len(raw)]
        budget -= len(ends)
        if budget < 0:  # more candidates than are checked: fail safe, never grounded
            yield "iban", UNSCANNED
            break
        valid = [e for e in ends if _iban_compact_valid(raw[:e])]
        span = (found.start(), found.start() + valid[-1]) if valid else (0, 0)
        if valid and not _overlaps(span, taken):
            taken.append(span)
            pos = span[1]
            yield "iban", raw[: valid[-1]]
    # Past MAX_DESTINATIONS of a kind no call goes through: the rest is not read (each
    # value read is another span the later kinds are checked against).
    count = 0
    for span, raw, key in wallets(cleaned):
        if key is None:  # more candidates than are checked: fail safe, never grounded
            yield "wallet", UNSCANNED
            break
        if not _overlaps(span, taken) and (count := count + 1) <= MAX_DESTINATIONS + 1:
            taken.append(span)
            yield "wallet", raw
    count = 0
    for span, _ in accounts(cleaned):
        if not _overlaps(span, taken) and (count := count + 1) <= MAX_DESTINATIONS + 1:
            taken.append(span)
            yield "account", cleaned[span[0] : span[1]]
    for m in _DIAL.finditer(cleaned):
        taken.append(m.span())
        yield "phone", m.group("number")
    # Before short codes: "send it to 1640 Quarry Lane" is an address, not a text to 1640.
    for span, _ in addresses(cleaned):
        if not _overlaps(span, taken):
            taken.append(span)
            yield "postal", cleaned[span[0] : span[1]]
    for m in _SHORT_CODE.finditer(cleaned):
        if not _overlaps(m.span("number"), taken):
            taken.append(m.span("number"))
            yield "phone", m["number"]
    for m in _URL.finditer(cleaned):
        raw = m.group()
        if _overlaps(m.span(), taken):
            continue
        # A protocol-relative link (``//host/path``) is a link as plainly as one with a scheme.
        scheme = (
            raw.startswith("//") or _SCHEME.match(raw) is not None or _OPAQUE.match(raw) is not None
        )
        parts = _url_parts(raw)
        if parts is None:
            if scheme:  # an address no key is made for (userinfo): never grounded
                taken.append(m.span())
                yield "url", raw
            continue
        if not scheme:
            _, host, ip = parts
            last = host.rsplit(".", 1)[-1]
            if ip:
                quad = _QUAD.match(raw)
                if quad is None or quad.end() == len(raw):
                    continue  # 10.0.0.1 alone, 1.2.3/4: no port or path, or a version
            elif not (last.startswith("xn--") or (last.isalpha() and 2 <= len(last) <= 63)):
                continue  # 1500.00, v1.2: no host
            elif (
                not raw.lower().startswith("www.")
                and last in _FILE_ENDINGS
                and not (last in _FILE_TLDS and _linked(cleaned, m.start(), raw))
            ):
                continue
        taken.append(m.span())
        yield "url", raw
    for span, number in _vanity(cleaned):
        if not _overlaps(span, taken):
            taken.append(span)
            yield "phone", number
    for m in _PHONE.finditer(cleaned):
        raw = m.group()
        if _overlaps(m.span(), taken):
            continue
        if not raw.startswith("+") and _DATE.match(raw.lstrip("(")):
            continue  # a date; no date is written with a leading +
        count = len(_digits(raw))
        grouped = any(c in raw for c in " -.")
        if (
            (raw.startswith("+") and 8 <= count <= 15)
            or (("(" in raw or ")" in raw) and 7 <= count <= 15)
            or (grouped and 9 <= count <= 15)
            or (raw.isdigit() and _is_run(cleaned, m.span()))
        ):
            taken.append(m.span())
            yield "phone", raw
    for m in _HANDLE.finditer(cleaned):
        matrix = ":" in m.group()  # its server is read as a host too: both count
        if (matrix or not _overlaps(m.span(), taken)) and m.group().casefold() not in _AT_RULES:
            taken.append(m.span())
            yield "id", m.group()
    for m in _CUED_HANDLE.finditer(cleaned):
        if not _overlaps(m.span("handle"), taken):
            yield "id", "@" + m["handle"]
    for m in _HANDOVER.finditer(cleaned):
        yield "name", m["name"]
    if " as " in cleaned:
        for m in _DESIGNATED.finditer(cleaned):
            yield "name", m["name"]
    if "wifi:" in cleaned.casefold():
        for m in _WIFI.finditer(cleaned):
            yield "id", m["ssid"]
    if _PACKAGE_CUE.search(cleaned):
        for m in _PACKAGE.finditer(cleaned):
            yield "id", m["package"]


def _linked(text: str, start: int, raw: str) -> bool:
    """Whether a bare name on a file-ending top-level domain is written as a link: a path
    follows the host (``pay-desk.md/invoice``) or a link cue precedes it (``visit x.zip``)."""
    slash = raw.find("/")
    if 0 < slash < len(raw) - 1:
        return True
    return _LINK_CUE.search(text[max(0, start - _CUE_WINDOW) : start]) is not None


def _is_run(text: str, span: tuple[int, int]) -> bool:
    """Whether a digit run is a phone number written as one run: 10 to 15 digits, a word of
    its own (not part of an id such as ``ab1234567890`` or ``#1234567890``)."""
    low, high = _RUN_DIGITS
    if not low <= span[1] - span[0] <= high:
        return False
    before = text[span[0] - 1] if span[0] else " "
    after = text[span[1]] if span[1] < len(text) else " "
    return not (before.isalnum() or before in "_-#/@") and not (after.isalnum() or after in "_-/@")


def _vanity(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """Letter numbers in a text (``1-800-FRAUD-HELP``), with their digits (E.161)."""
    if not any(c.isupper() for c in text):
        return
    for m in _VANITY.finditer(text):
        if sum(c.isalnum() for c in m.group("line")) >= _VANITY_MIN:
            yield m.span(), m.group().translate(_KEYPAD)


_ASCII_UPPER: Final = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: Cyrillic and Greek capitals that look like Latin ones, as a reader (and a bank's form a
#: person types into) takes them: ``LT60...`` with a Cyrillic capital Te (U+0422) for its T is
#: the IBAN ``LT60...``.
_LOOKALIKE_UPPER: Final = str.maketrans(
    "\u0410\u0412\u0421\u0415\u041d\u0406\u0408\u041a\u041c\u041e\u0420\u0405\u0422\u0425\u04ae"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
    "ABCEHIJKMOPSTXYABEZHIKMNOPTYX",
)


def _iban_compact_valid(raw: str) -> bool:
    compact = raw.translate(_IBAN_COMPACT)
    return _IBAN_VALUE.fullmatch(compact) is not None and _iban_valid(compact)


#: Token sets are remembered per (kind, text): every check of a session re-reads the same
#: history. Bounded by an estimate of the characters held; long texts are not remembered.
_MEMO: LRUCache[tuple[str, bool, str], tuple[int, frozenset[str] | str]] = LRUCache(
    maxsize=8_000_000, getsizeof=lambda entry: entry[0]
)
_MEMO_LOCK: Final = threading.Lock()
_MEMO_MAX_TEXT: Final = 131_072


def tokens_of(kind: str, text: str, whole: bool = False) -> frozenset[str] | str:
    """The normalised tokens of ``kind`` in one trusted text (for ``text``: the clean text).

    Args:
        kind: the kind of value.
        text: one trusted text.
        whole: the text is a trusted field's value: it is also one token as a whole.
    """
    key = (kind, whole and kind != "text", text)
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
    if hit is not None:
        return hit[1]
    found: frozenset[str] | str
    if kind == "text":
        found = clean(text)
    else:
        bag = set(_extract(kind, text, whole))
        if kind in DESTINATIONS:  # read as the content scan reads it: base64 decoded too
            for blob in decoded_blobs(text):
                bag.update(_extract(kind, blob))
        if whole:
            with contextlib.suppress(Malformed):
                bag.update(_expand(kind, normalise(kind, text)))
        found = frozenset(bag)
    if len(text) <= _MEMO_MAX_TEXT:
        with _MEMO_LOCK:
            _MEMO[key] = (3 * len(text) + 200, found)
    return found


class Grounding:
    """The trusted texts of one check; tokens are extracted per text, and remembered.

    Args:
        texts: trusted texts (already capped by the caller).
        whole: trusted scalar values taken whole (a trusted state key's string), so an id
            with spaces is still one token; the values inside them count too.
        fields: ``(value, kind, echo)`` triples: a trusted tool's field value, the kind it
            was declared for (None: any value kind; ``text``: trusted text, as ``whole``),
            and the arguments of the call that produced it; a token also found in those
            arguments does not count from that value (a tool echoing its input). A field
            not declared ``text`` grounds only its whole value (:func:`value_token`).
        hashed: ``{salt: hashes}`` of tokens trusted elsewhere (a caller's), checked with
            ``hasher(salt, kind, normal)`` for every kind but ``text``.
        hasher: the salted hash function the hashes were made with.
        phone_codes: the country calling codes of the regions the app declares: a national
            phone number and an international one are one number only under one of them
            (or, with none, a trusted international number grounds its own national form).
    """

    def __init__(
        self,
        texts: Iterable[str],
        whole: Iterable[str] = (),
        *,
        fields: Iterable[tuple[str, str | None, Sequence[str]]] = (),
        hashed: Mapping[str, frozenset[str]] | None = None,
        hasher: Callable[[str, str, str], str] | None = None,
        phone_codes: frozenset[str] = frozenset(),
    ) -> None:
        self._codes = phone_codes
        none: tuple[str, ...] = ()
        self._sources: list[tuple[str, bool, Sequence[str]]] = [
            *((t, False, none) for t in texts if t),
            *((t, True, none) for t in whole if t),
            *((t, True, echo) for t, kind, echo in fields if t and kind == "text"),
        ]
        self._values: list[tuple[str, str | None, Sequence[str]]] = [
            (t, kind, echo) for t, kind, echo in fields if t and kind != "text"
        ]
        self._hashed = dict(hashed or {}) if hasher is not None else {}
        self._hasher = hasher
        self._letters: list[tuple[str, tuple[str, ...]]] | None = None

    def tokens(self, kind: str) -> frozenset[str]:
        """Every normalised token of ``kind`` found in the trusted texts (echoes excluded)."""
        bag: set[str] = set()
        for text, whole, echo in self._sources:
            found = tokens_of(kind, text, whole)
            if isinstance(found, frozenset):
                bag |= found - _echoed(kind, echo)
        if kind != "text":
            for value, declared, echo in self._values:
                token = value_token(kind, value, declared)
                if token is not None:
                    bag.update(set(_expand(kind, token)) - _echoed(kind, echo))
        return frozenset(bag)

    def grounded(self, kind: str, value: str) -> bool:
        """Whether one scalar value of ``kind`` appears in the trusted texts.

        Raises:
            Malformed: when the value is not a value of that kind.
        """
        if kind == "name":
            return self._holds_name(value)
        normal = normalise(kind, value)
        if kind == "id" and self._other_sigil_only(normal):
            return False
        if kind != "text" and self._hasher is not None:
            hasher, forms = self._hasher, _id_forms(normal) if kind == "id" else (normal,)
            hashed = self._hashed.items()
            if any(hasher(salt, kind, form) in hs for salt, hs in hashed for form in forms):
                return True
        phrase = _phrase(value) if kind == "id" else None
        # An echo is the call's own input in any form: its numbers match under any code.
        codes, echoes = self._codes, ALL_CODES
        for text, whole, echo in self._sources:
            if _holds(kind, normal, tokens_of(kind, text, whole), phrase, text, codes) and not any(
                _holds(kind, normal, tokens_of(kind, e, True), phrase, e, echoes, echo=True)
                for e in echo
            ):
                return True
        for field, declared, echo in self._values:
            token = value_token(kind, field, declared)
            found = frozenset(_expand(kind, token)) if token is not None else frozenset()
            if not _holds(kind, normal, found, codes=codes):
                continue
            if not any(
                _holds(kind, normal, tokens_of(kind, e, True), phrase, e, echoes, echo=True)
                for e in echo
            ):
                return True
        return False

    def holds_identifier(self, token: str) -> bool:
        """Whether trusted text holds an opaque identifier (:mod:`.opaque`): a trusted
        text's letters and digits hold it in order, or a trusted field's value does (one
        value of its declared kind, or, for a field of any kind or ``id``, one identifier
        whole; never free text); what a trusted tool's call was given does not count from
        its output."""
        if self._letters is None:
            self._letters = [
                (letters(text), tuple(letters(e) for e in echo)) for text, _, echo in self._sources
            ] + [
                (letters(value), tuple(letters(e) for e in echo))
                for value, declared, echo in self._values
                if is_value(value, declared) or (declared in (None, "id") and _one_id(value))
            ]
        return any(
            token in text and not any(token in e for e in echo) for text, echo in self._letters
        )

    def _holds_name(self, name: str) -> bool:
        """Whether a trusted text holds a name a thing is handed to (:data:`_HANDOVER`) as
        a whole phrase (its words in order, case-folded, no word cut), or a trusted
        field's value (one value, a contact's name) does; not from an echo."""
        words = shown(name).casefold().split()
        if not words:
            return False
        pattern = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)")

        def holds(text: str) -> bool:
            return pattern.search(shown(text).casefold()) is not None

        return any(
            holds(text) and not any(holds(e) for e in echo) for text, _, echo in self._sources
        ) or any(
            is_value(value, declared) and holds(value) and not any(holds(e) for e in echo)
            for value, declared, echo in self._values
        )

    def holds_written(self, leaf: str) -> bool:
        """Whether a trusted text holds ``leaf`` as written (no normalisation), or a
        trusted field's value is it."""
        return any(leaf in text for text, _, _ in self._sources) or any(
            leaf == value for value, _, _ in self._values
        )

    def holds_token(self, token: str) -> bool:
        """Whether trusted text holds an opaque token (:func:`.opaque.opaque_tokens`): its
        letters and digits (case-folded, digits of any script as ASCII) are a run of whole
        parts of a trusted text's, or of a trusted field value's (as for
        :meth:`holds_identifier`), whatever marks stand between the parts (the user may
        type ``123 588 20 47`` and the model write ``1235882047``); what a trusted tool's
        call was given does not count from its output."""
        want = fold(token)[0]
        if not want:  # marks alone (Morse code): as the text shows them
            return any(token in revealed(text) for text, _, _ in self._sources)
        # Newest first, and the first holder ends the search: a token the user just typed
        # is found without folding the whole history.
        for text, _, echo in self._sources:
            for form in (text, *decoded_blobs(text)):
                if _holds_parts(fold(form), want) and not _echoes(echo, want):
                    return True
        return any(
            _holds_parts(fold(value), want)
            and (is_value(value, declared) or (declared in (None, "id") and _one_id(value)))
            and not _echoes(echo, want)
            for value, declared, echo in self._values
        )

    def _other_sigil_only(self, normal: str) -> bool:
        """Whether an id with a sigil is written in trusted text only under the other one.

        A bare name (a listing's entry) does not say whether it is a channel or a user; a
        sigil the trusted text writes does. So when trusted text writes ``#random`` and
        nowhere ``@random``, the name is a channel's, and ``@random`` is not grounded by
        the bare ``random`` of a channel list either.
        """
        if normal[:1] not in _SIGILS or len(normal) < 2:
            return False
        other = ("@" if normal[0] == "#" else "#") + normal[1:]
        seen = {other: False, normal: False}
        for text, whole, _ in self._sources:
            found = tokens_of("id", text, whole)
            for form in seen:
                seen[form] = seen[form] or (isinstance(found, frozenset) and form in found)
        for field, declared, _ in self._values:
            token = value_token("id", field, declared)
            if token in seen:
                seen[token] = True
        return seen[other] and not seen[normal]


def _echoes(echo: Sequence[str], want: str) -> bool:
    return any(_holds_parts(fold(e), want) for e in echo)


def _as_written(kind: str, leaf: str) -> bool:
    """Whether a sensitive value is grounded only as written (:func:`ungrounded`): text
    and numbers are compared as read (a no-break space in a subject names no other
    recipient)."""
    if kind in ("text", "number"):
        return False
    if _HIDDEN.search(leaf):
        return True
    if not leaf.isascii() and unicodedata.normalize("NFKC", leaf) != leaf:
        return True
    return kind == "id" and leaf != leaf.lower()


def _holds_parts(folded: Folded, want: str) -> bool:
    """Whether ``want`` is a run of whole parts of a folded text (it starts and ends where
    the text has a break)."""
    text, breaks = folded
    at = text.find(want)
    while at >= 0:
        if at in breaks and at + len(want) in breaks:
            return True
        at = text.find(want, at + 1)
    return False


def _one_id(leaf: str) -> bool:
    """Whether a leaf is, whole, one opaque identifier (``4AdUnd...``, ``DE98 ZZZ0 ...``)."""
    return letters(leaf) in set(identifiers(leaf))


def _phrase(value: str) -> re.Pattern[str] | None:
    """For an id of several words (``Le Marais Boutique``): those words, in order, as a
    whole phrase of a trusted text (no word cut, no word between)."""
    words = clean(value).strip(_QUOTES).lstrip("#@").split(" ")
    if len(words) < 2:
        return None
    return re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)")


def _holds(
    kind: str,
    normal: str,
    found: frozenset[str] | str,
    phrase: re.Pattern[str] | None = None,
    text: str = "",
    codes: frozenset[str] = frozenset(),
    *,
    echo: bool = False,
) -> bool:
    """Whether a text's tokens (or, for ``text``, its clean form) hold the value; a phone
    number under the country ``codes`` the app declares (:func:`_same_phone`); an id in
    the forms that ground it (:func:`_id_forms`), or, for an ``echo`` (a call's own
    arguments), under any sigil."""
    if normal in found:  # a token of the set, or a substring of the clean text
        return True
    if kind == "id" and isinstance(found, frozenset):
        bare = _bare_id(normal)
        if echo and any(_bare_id(t) == bare for t in found):
            return True
        if not echo and any(form in found for form in _id_forms(normal)):
            return True
    if phrase is not None:
        cleaned = tokens_of("text", text)
        return isinstance(cleaned, str) and phrase.search(cleaned) is not None
    return kind == "phone" and any(_same_phone(normal, t, codes) for t in found)


def _echoed(kind: str, echo: Sequence[str]) -> frozenset[str]:
    found = [tokens_of(kind, e, True) for e in echo]
    tokens = frozenset(t for f in found if isinstance(f, frozenset) for t in f)
    if kind != "id":
        return tokens
    return tokens | {form for t in tokens for form in _id_forms(_bare_id(t)) if t}


def _same_phone(arg: str, trusted: str, codes: frozenset[str]) -> bool:
    """Whether an argument's phone number and a trusted one are a national and an
    international form of one number.

    A national form names its country only through context: ``020 7946 0958`` (a trunk
    zero) is ``+44 20 7946 0958`` only when the app declares a region with that code
    (``codes``); ``(207) 946-0958`` (no trunk zero) is ``+1 207 946 0958`` only under a
    declared code of a country that writes none. A trusted international number names its
    own country: it grounds its national form there (under a declared code when the app
    declares any). Two international forms, or two national ones, are one number only when
    equal.
    """
    intl, national = (arg, trusted) if arg.startswith("+") else (trusted, arg)
    if not intl.startswith("+") or national.startswith("+"):
        return False
    split = country_code(intl[1:])
    if split is None:
        return False
    code, rest = split
    if codes:
        if code not in codes:
            return False
    elif arg.startswith("+"):
        return False  # the trusted national number names no country
    if national.startswith("0"):
        # Most countries drop the trunk zero after the country code; Italy keeps it.
        return rest in (national[1:], national)
    return rest == national and code in _NO_TRUNK


def leaves(value: Any, depth: int = 0) -> Iterator[str | None]:
    """The scalar values of an argument as strings; None stands for a malformed leaf.

    Lists and tuples are walked (every recipient must be grounded); a mapping, a bool, a
    non-finite number, an over-long string, a string with lone surrogates (no valid text
    holds one) or nesting deeper than a few levels is malformed.
    """
    if value is None:
        return
    if isinstance(value, list | tuple):
        if depth >= _MAX_DEPTH:
            yield None
            return
        for item in value:
            yield from leaves(item, depth + 1)
    elif isinstance(value, str):
        ok = len(value) <= MAX_VALUE_CHARS and not _SURROGATE.search(value)
        yield value if ok else None
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value) if value.bit_length() < 200 else None
    elif isinstance(value, float):
        yield repr(value) if math.isfinite(value) else None
    else:
        yield None


#: A run of base64 (standard or URL-safe alphabet, padded or not) long enough to hold a
#: destination: an attachment's content, or a blob a text tells its reader to decode.
_BASE64: Final = re.compile(r"(?<![\w+/=\-])[A-Za-z0-9+/\-_]{24,}={0,2}(?![\w+/=\-])")
#: Most base64 runs decoded per string (runs that decode to no text not counted), and how
#: deep a decoded text is decoded again.
_MAX_BLOBS: Final = 64
_BLOB_DEPTH: Final = 2
#: What :func:`decoded_blobs` yields for text it left unread (more runs than it decodes,
#: or text still encoded past its depth): the content scan holds it ungrounded.
UNREAD: Final = "<base64 left unread>"


def _blob_text(run: str) -> str | None:
    """The UTF-8 text a base64 run decodes to, or None (not base64, not UTF-8, or with a
    control character other than whitespace)."""
    blob = run.replace("-", "+").replace("_", "/")
    try:
        text = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return None if any(ord(c) < 32 and c not in "\t\n\r" for c in text) else text


def without_blobs(text: str) -> str:
    """A text with its base64 runs that decode to text taken out (what they decode to is
    read on its own, :func:`decoded_blobs`): an attachment's data is no identifier."""
    if len(text) < 24:
        return text
    return _BASE64.sub(lambda m: " " if _blob_text(m.group()) is not None else m.group(), text)


def decoded_blobs(text: str, depth: int = 0) -> Iterator[str]:
    """The texts that the base64 runs of a text decode to, when they decode to UTF-8 text:
    a mail client shows an attachment so, and a reader told to decode a blob reads it so.
    Decoded texts are decoded again, :data:`_BLOB_DEPTH` levels in all. Fail closed: past
    :data:`_MAX_BLOBS` runs, or a run still decoding to text past the depth, yields
    :data:`UNREAD`."""
    if len(text) < 24:
        return
    count = 0
    for m in _BASE64.finditer(text):
        decoded = _blob_text(m.group())
        if decoded is None:
            continue
        count += 1
        if count > _MAX_BLOBS or depth >= _BLOB_DEPTH:
            yield UNREAD
            return
        yield decoded
        yield from decoded_blobs(decoded, depth + 1)


def content_texts(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string a free-text argument shows: its string and number leaves and the keys
    of its mappings (ADK hands a mapping the model wrote to a ``str`` parameter as is, and
    a key is as readable as a value), and what their base64 runs decode to
    (:func:`decoded_blobs`)."""
    if isinstance(value, str):
        yield value
        yield from decoded_blobs(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif depth < 20 and isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str | int | float) and not isinstance(key, bool):
                yield str(key)
            yield from content_texts(item, depth + 1)
    elif depth < 20 and isinstance(value, list | tuple):
        for item in value:
            yield from content_texts(item, depth + 1)


def ungrounded(grounding: Grounding, kind: str, value: Any) -> bool:
    """Whether any leaf of an argument value is malformed or not grounded (fail safe).

    A leaf with a character a display does not show, or shows as a plain space (a
    zero-width space, a no-break space), or one NFKC folds into another (a full-width or
    mathematical letter), is another value to the tool than the one it looks like
    (``#general\u200b`` is a channel anyone may create); so is an id with capitals where a
    trusted text writes it in small letters (``#General``): each is grounded only when a
    trusted text or value holds it as written."""
    for count, leaf in enumerate(leaves(value), 1):
        if leaf is None or count > MAX_LEAVES:
            return True
        if _as_written(kind, leaf) and not grounding.holds_written(leaf):
            return True
        try:
            if not grounding.grounded(kind, leaf):
                return True
        except Malformed:
            return True
    return False
