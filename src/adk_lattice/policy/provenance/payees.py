"""Payment destinations that are neither an IBAN nor an address: wallets, domestic accounts,
cards and PIX keys.

Two value kinds of :class:`ProvenanceGuard` are read here, each to one comparable key:

- ``wallet``, a cryptocurrency address, only when its own check holds, so a word, a git
  sha or a hash is not taken: a Bech32 or Bech32m string (BIP 173 / BIP 350: Bitcoin's
  ``bc1...``, Litecoin's ``ltc1...``, any human-readable part; the checksum, case folded,
  key in lower case); a Base58Check string of 25 to 35 characters that decodes to a
  version, a 20-byte hash and its double-SHA-256 checksum (Bitcoin's ``1...`` and
  ``3...``, Litecoin, Dogecoin, Tron's ``T...``; key as written, the case is the value);
  an Ethereum-style ``0x`` and exactly 40 hex digits (key in lower case: every casing of
  one address is that address, so a mixed case that fails EIP-55 is read all the same and
  grounds only what the same address grounds). A key with no checksum (a Solana key, 32
  bytes of Base58) is not read: any long word of its alphabet would be one.
- ``account``, a domestic bank account, when a cue word names its bank code: a UK sort
  code (``sort code 40-47-84``), a US ABA routing number (``routing``, ``ABA`` or
  ``RTN`` and nine digits that pass the ABA check), an Australian BSB (``BSB 062-000``)
  or an Indian IFSC (``IFSC SBIN0001234``), with the account number written just after
  it (``, account 70872490``) or, with an account cue, just before it. The key is
  ``<scheme>:<code>:<account>`` (digits only; an IFSC in capitals), or
  ``<scheme>:<code>`` when no account number is written with the code. A payment card
  number is one too, with no cue word: 13 to 19 digits in groups of four (a hyphen or a
  space between them), in groups of 4, 6 and 4 or 5 (American Express, Diners), or one
  run of 16 to 19 digits (a shorter run is read as a phone number), that passes the Luhn
  check and starts with the prefix of a card scheme (Visa, Mastercard, American Express,
  Discover, JCB, Diners, UnionPay, Maestro, Mir). Its key is ``card:<digits>``: only the
  same number written in trusted text grounds it (a 16-digit order number that fails the
  check is no card). A PIX key (Brazil's instant payments) that is neither an address nor
  a phone number is one after the word ``pix`` (or ``chave``): a random key (a UUID) or a
  CPF or CNPJ whose mod-11 check digits hold, keyed ``pix:<key>`` (a UUID or a CPF with no
  cue is an id or a tax number, not a payee; a declared argument may be the key alone).

Every pattern is anchored with a look-behind so each run of characters is tried once, and
the checksum work per text is bounded (:data:`WALLET_CHECKS`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Final

#: Most wallet candidates checked in one text; past it the text is not read further.
WALLET_CHECKS: Final = 4_096

_BECH32_CHARSET: Final = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_VALUES: Final = {c: i for i, c in enumerate(_BECH32_CHARSET)}
_BECH32_GENERATOR: Final = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
#: The checksum constants of Bech32 (BIP 173) and Bech32m (BIP 350).
_BECH32_CONSTANTS: Final = (1, 0x2BC830A3)
#: A Bech32 string: a human-readable part, the separator ``1``, then data and checksum.
_BECH32: Final = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]{0,15}1[02-9AC-HJ-NP-Zac-hj-np-z]{20,1000}(?![A-Za-z0-9])"
)
_BASE58_ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_VALUES: Final = {c: i for i, c in enumerate(_BASE58_ALPHABET)}
#: The XRP Ledger's Base58 alphabet (its classic addresses start with ``r``).
_XRP_VALUES: Final = {
    c: i for i, c in enumerate("rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")
}
_XRP: Final = re.compile(r"(?<![A-Za-z0-9])r[1-9A-HJ-NP-Za-km-z]{24,34}(?![A-Za-z0-9])")
_BASE58: Final = re.compile(r"(?<![A-Za-z0-9])[1-9A-HJ-NP-Za-km-z]{25,35}(?![A-Za-z0-9])")
#: Decoded lengths of a Base58Check address: a one- or two-byte version, 20 bytes, 4 bytes.
_BASE58_BYTES: Final = (25, 26)
_HEX_ADDRESS: Final = re.compile(r"(?<![A-Za-z0-9])0[xX][0-9a-fA-F]{40}(?![A-Za-z0-9])")
#: A Solana address (32 bytes in Base58, no checksum: any run of its letters may be one),
#: read only as a ``solana:`` URI's or after the word Solana or SOL (and wallet, address...).
_SOLANA: Final = re.compile(
    r"(?:(?<![A-Za-z0-9])(?i:solana):"
    r"|(?<![A-Za-z0-9])(?i:solana|sol)(?![A-Za-z0-9])[^\w\n]{0,3}"
    r"(?:(?i:wallet|address|account|pubkey|public key|key)(?![A-Za-z0-9])[^\w\n]{0,3})?)"
    r"(?P<address>[1-9A-HJ-NP-Za-km-z]{32,44})(?![A-Za-z0-9])"
)
_SOLANA_ADDRESS: Final = re.compile(r"[1-9A-HJ-NP-Za-km-z]{32,44}")
#: A payment URI's scheme (``bitcoin:``, ``ethereum:``) and its parameters, around a wallet.
_WALLET_URI: Final = re.compile(r"^(?:[a-z][a-z0-9+.\-]{1,20}:)?(?P<address>[^?@/]+)")


def _bech32_valid(word: str) -> bool:
    hrp, _, data = word.lower().rpartition("1")
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    values += [_BECH32_VALUES[c] for c in data]
    check = 1
    for value in values:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ value
        for i, generator in enumerate(_BECH32_GENERATOR):
            if (top >> i) & 1:
                check ^= generator
    return check in _BECH32_CONSTANTS


def _base58(word: str, values: dict[str, int] = _BASE58_VALUES, zero: str = "1") -> bytes:
    number = 0
    for c in word:
        number = number * 58 + values[c]
    zeros = len(word) - len(word.lstrip(zero))
    return b"\0" * zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")


def _xrp_valid(word: str) -> bool:
    """Whether a word is a classic XRP Ledger address: version 0, a 20-byte account id and
    its double-SHA-256 checksum, in the ledger's own Base58 alphabet."""
    if any(c not in _XRP_VALUES for c in word):
        return False
    raw = _base58(word, _XRP_VALUES, "r")
    if len(raw) != 25 or raw[0] != 0:
        return False
    return hashlib.sha256(hashlib.sha256(raw[:-4]).digest()).digest()[:4] == raw[-4:]


def _solana_valid(word: str) -> bool:
    """Whether a Base58 word is 32 bytes: an ed25519 public key, as Solana writes one."""
    return len(_base58(word)) == 32


def _base58check_valid(word: str) -> bool:
    raw = _base58(word)
    if len(raw) not in _BASE58_BYTES:
        return False
    body, check = raw[:-4], raw[-4:]
    return hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == check


def wallets(text: str) -> Iterator[tuple[tuple[int, int], str, str | None]]:
    """The wallet addresses in a text: ``(span, as written, key)``.

    A text with more candidates than :data:`WALLET_CHECKS` yields one last entry whose key
    is None (not read further; the caller fails safe).
    """
    budget = WALLET_CHECKS
    for m in _HEX_ADDRESS.finditer(text):
        yield m.span(), m.group(), m.group().lower()
    for pattern, valid, fold in (
        (_BECH32, _bech32_valid, True),
        (_BASE58, _base58check_valid, False),
        (_XRP, _xrp_valid, False),
    ):
        for m in pattern.finditer(text):
            budget -= 1
            if budget < 0:
                yield m.span(), m.group(), None
                return
            if valid(m.group()):
                yield m.span(), m.group(), m.group().lower() if fold else m.group()
    for m in _SOLANA.finditer(text):
        budget -= 1
        if budget < 0:
            yield m.span("address"), m["address"], None
            return
        if _solana_valid(m["address"]):
            yield m.span("address"), m["address"], m["address"]


def wallet_key(value: str) -> str | None:
    """The key of one wallet address (a payment URI's scheme and parameters dropped), or
    None when the value is no wallet address."""
    m = _WALLET_URI.match(value.strip())
    address = m["address"] if m is not None else ""
    found = [key for span, _, key in wallets(address) if span == (0, len(address))]
    if not found and _SOLANA_ADDRESS.fullmatch(address) and _solana_valid(address):
        return address  # a bare Solana address, as a wallet argument holds one
    return found[0] if found else None


# -- domestic accounts --------------------------------------------------------------------

_NUMBER_WORD: Final = r"(?:[ \-]?(?:number|num|no|code|#))?\.?"
#: A bank code after the cue word that names its scheme.
_CODE: Final = re.compile(
    r"(?<![\w])(?:"
    rf"sort[ \-]?code{_NUMBER_WORD}\W{{0,4}}(?P<uk>\d{{2}}[ \-]?\d{{2}}[ \-]?\d{{2}})"
    rf"|(?:routing|aba|rtn){_NUMBER_WORD}\W{{0,4}}(?P<us>\d{{9}})"
    rf"|bsb{_NUMBER_WORD}\W{{0,4}}(?P<au>\d{{3}}[ \-]?\d{{3}})"
    rf"|ifsc{_NUMBER_WORD}\W{{0,4}}(?P<in>[a-z]{{4}}0[a-z0-9]{{6}})"
    r")(?!\w)",
    re.IGNORECASE,
)
_ACCOUNT_CUE: Final = rf"(?:account|acct|acc|a/c){_NUMBER_WORD}"
_ACCOUNT_DIGITS: Final = r"(?P<number>\d(?:[ \-]?\d){3,17})(?![\w\-])"
#: The account number just after the code, its cue word optional.
_AFTER: Final = re.compile(
    rf"\W{{0,4}}(?:and\s+)?(?:{_ACCOUNT_CUE}\W{{0,4}})?{_ACCOUNT_DIGITS}", re.IGNORECASE
)
#: The account number just before the code, after its cue word.
_BEFORE: Final = re.compile(
    rf"(?<!\w){_ACCOUNT_CUE}\W{{0,4}}{_ACCOUNT_DIGITS}\W{{0,6}}(?:and\s+)?(?:the\s+)?$",
    re.IGNORECASE,
)
_BEFORE_WINDOW: Final = 48
#: Digits an account number of each scheme has.
_ACCOUNT_LENGTHS: Final = {"uk": (6, 10), "us": (4, 17), "au": (5, 10), "in": (9, 18)}
#: A declared account argument written without cue words: a sort code or a routing
#: number, then the account number.
_BARE: Final = re.compile(
    r"(?:(?P<uk>\d{2}[ \-]?\d{2}[ \-]?\d{2})|(?P<us>\d{9}))[\s,;/:]+(?P<number>\d{4,17})"
)


def _aba_valid(digits: str) -> bool:
    """The ABA routing number check: weights 3, 7, 1 sum to a multiple of ten."""
    return sum(int(d) * (3, 7, 1)[i % 3] for i, d in enumerate(digits)) % 10 == 0


def _key(scheme: str, code: str, number: str | None) -> str | None:
    code = code.upper() if scheme == "in" else re.sub(r"\D", "", code)
    if scheme == "us" and not _aba_valid(code):
        return None
    low, high = _ACCOUNT_LENGTHS[scheme]
    digits = re.sub(r"\D", "", number or "")
    return f"{scheme}:{code}:{digits}" if low <= len(digits) <= high else f"{scheme}:{code}"


#: A payment card number as written: groups of four, groups of 4-6-5 (or 4-6-4), one run.
_CARD: Final = re.compile(
    r"(?<![\w+\-.,/])(?:"
    r"\d{4}(?P<sep>[ \-])\d{4}(?:(?P=sep)\d{4}){1,2}(?:(?P=sep)\d{1,3})?"
    r"|\d{4}(?P<sep6>[ \-])\d{6}(?P=sep6)\d{4,5}"
    r"|\d{16,19}"
    r")(?![\w]|[\-.,/]\d)"
)
#: The leading digits of each card scheme's numbers (ISO/IEC 7812 issuer prefixes).
_CARD_PREFIXES: Final = re.compile(
    r"4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|6011|64[4-9]|65"
    r"|35(?:2[89]|[3-8]\d)|36|30[0-5]|3[89]|62|5[0678]|6304|67|220[0-4]"
)


def _luhn_valid(digits: str) -> bool:
    """The Luhn check of a card number: every second digit from the right doubled."""
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def cards(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The payment card numbers in a text: ``(span, key)``, key ``card:<digits>``."""
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIXES.match(digits) and _luhn_valid(digits):
            yield m.span(), f"card:{digits}"


#: A PIX key (Brazil's instant payments) that is not an address or a phone number: a
#: random key (a UUID), a CPF (``529.982.247-25``) or a CNPJ (``11.222.333/0001-81``).
_PIX_KEY: Final = re.compile(
    r"(?<![\w\-./])(?:"
    r"(?P<evp>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"|(?P<cpf>\d{3}\.?\d{3}\.?\d{3}-?\d{2})"
    r"|(?P<cnpj>\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2})"
    r")(?![\w\-]|[./]\w)",
    re.IGNORECASE,
)
#: The cue that names a PIX key: the word ``pix`` (or ``chave``, Portuguese for key) at
#: most this many characters before it.
_PIX_CUE: Final = re.compile(r"(?<![\w])(?:pix|chave)(?![\w])", re.IGNORECASE)
_PIX_WINDOW: Final = 48


def _checked(digits: str, weights: tuple[int, ...]) -> bool:
    """The mod-11 check digits of a CPF or CNPJ (the last two digits)."""
    if len(set(digits)) == 1:
        return False
    body = digits[:-2]
    for _ in range(2):
        total = sum(int(d) * w for d, w in zip(body, weights[-len(body) :], strict=True))
        body += str(0 if total % 11 < 2 else 11 - total % 11)
    return body == digits


_CPF_WEIGHTS: Final = (11, 10, 9, 8, 7, 6, 5, 4, 3, 2)
_CNPJ_WEIGHTS: Final = (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)


def _pix_key(m: re.Match[str]) -> str | None:
    if m["evp"] is not None:
        return "pix:" + m["evp"].lower()
    digits = re.sub(r"\D", "", m.group())
    weights = _CPF_WEIGHTS if m["cpf"] is not None else _CNPJ_WEIGHTS
    return "pix:" + digits if _checked(digits, weights) else None


def pix_keys(text: str, *, cued: bool = True) -> Iterator[tuple[tuple[int, int], str]]:
    """The PIX keys in a text that follow the word ``pix`` (``cued``): ``(span, key)``, key
    ``pix:<uuid>`` (lower case) or ``pix:<digits>`` of a CPF or CNPJ whose check digits
    hold. A UUID or a CPF with no cue is not read: ids and tax numbers are not payees."""
    if cued and "pix" not in text.lower() and "chave" not in text.lower():
        return
    for m in _PIX_KEY.finditer(text):
        if cued and _PIX_CUE.search(text, max(0, m.start() - _PIX_WINDOW), m.start()) is None:
            continue
        key = _pix_key(m)
        if key is not None:
            yield m.span(), key


#: A SEPA creditor identifier: country, check digits, a business code (``ZZZ`` unless the
#: creditor chose one), the national identifier.
_CREDITOR: Final = re.compile(
    r"(?<![A-Za-z0-9])(?P<cc>[A-Z]{2})(?P<check>\d{2})[ \-]?(?P<business>[A-Z0-9]{3})[ \-]?"
    r"(?P<national>[A-Z0-9]{4,28})(?![A-Za-z0-9])"
)
#: Words that name a creditor identifier, in the SEPA languages most written.
_CREDITOR_CUE: Final = re.compile(
    r"creditor|gl[aä]ubiger|cr[ée]ancier|incassant|acreedor|credor|creditore|\bC\.?I\.?D?\b",
    re.IGNORECASE,
)
_CREDITOR_WINDOW: Final = 60


def _creditor_valid(m: re.Match[str]) -> bool:
    """The ISO 7064 mod 97-10 check of a creditor identifier: over the national id, the
    country and the check digits, the business code left out (as EPC262 sets it)."""
    digits = "".join(str(int(c, 36)) for c in m["national"] + m["cc"] + m["check"])
    return int(digits) % 97 == 1


def creditor_ids(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The SEPA creditor identifiers in a text: ``(span, key)``, keyed without the
    business code (which the creditor may change). Read when its business code is ``ZZZ``
    or a word naming it comes just before (a bare ten-letter code passes mod 97 one time
    in 97)."""
    for m in _CREDITOR.finditer(text):
        if not _creditor_valid(m):
            continue
        cued = _CREDITOR_CUE.search(text[max(0, m.start() - _CREDITOR_WINDOW) : m.start()])
        if m["business"] == "ZZZ" or cued:
            yield m.span(), f"sepa-ci:{m['cc']}{m['check']}{m['national']}"


#: A payee's number in a scheme that names the payee by a number after its own word: an
#: M-Pesa paybill (business number) or till (Buy Goods) number, a BPAY biller code, a
#: Mexican CLABE, a merchant or payee code. Keyed by the scheme and the digits.
_PAYEE_CODE: Final = re.compile(
    r"(?<![\w])(?P<cue>pay ?bill|business (?:number|no\.?)|till (?:number|no\.?)"
    r"|buy goods(?: till)?|biller code|clabe|merchant (?:code|id|number|no\.?)"
    r"|payee (?:code|number))(?: number| no\.?)?\W{0,3}(?P<number>\d(?:[ \-]?\d){3,19})(?![\w\-])",
    re.IGNORECASE,
)
_PAYEE_SCHEMES: Final = {
    "paybill": "paybill", "pay bill": "paybill", "business": "paybill", "till": "till",
    "buy goods": "till", "biller code": "biller", "clabe": "clabe", "merchant": "merchant",
    "payee": "merchant",
}  # fmt: skip


def payee_codes(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The payee numbers a scheme's own word names (``paybill 884422``, ``till number
    5519023``, ``biller code 771903``, ``CLABE 0021...``): ``(span, key)``."""
    for m in _PAYEE_CODE.finditer(text):
        cue = m["cue"].lower()
        scheme = next(v for k, v in _PAYEE_SCHEMES.items() if cue.startswith(k))
        digits = m["number"].replace(" ", "").replace("-", "")
        yield m.span(), f"payee:{scheme}:{digits}"


def accounts(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The domestic accounts, payment cards, PIX keys, SEPA creditor identifiers and payee
    codes (:func:`payee_codes`) in a text: ``(span, key)``, the span over the code and the
    account number written with it, the card number, the key or the identifier."""
    yield from cards(text)
    yield from pix_keys(text)
    yield from creditor_ids(text)
    yield from payee_codes(text)
    for m in _CODE.finditer(text):
        scheme = next(s for s in ("uk", "us", "au", "in") if m[s] is not None)
        start, end = m.span()
        after = _AFTER.match(text, end)
        before = _BEFORE.search(text[max(0, start - _BEFORE_WINDOW) : start])
        number = None
        if after is not None:
            number, end = after["number"], after.end()
        elif before is not None:
            number, start = before["number"], start - len(before.group())
        key = _key(scheme, m[scheme], number)
        if key is not None:
            yield (start, end), key


def account_key(value: str) -> str | None:
    """The key of one domestic account written with its cue words, or (a declared
    argument) as a sort code or routing number followed by the account number, a PIX key
    or a SEPA creditor identifier alone."""
    for _, key in accounts(value):
        return key
    for span, key in pix_keys(value.strip(), cued=False):  # a declared PIX key, bare
        if span == (0, len(value.strip())):
            return key
    creditor = _CREDITOR.fullmatch(value.strip())
    if creditor is not None and _creditor_valid(creditor):  # a creditor id found in text
        return f"sepa-ci:{creditor['cc']}{creditor['check']}{creditor['national']}"
    m = _BARE.fullmatch(value.strip())
    if m is None:
        return None
    scheme = "uk" if m["uk"] is not None else "us"
    bare = _key(scheme, m[scheme], m["number"])
    return bare if bare is not None and bare.count(":") == 2 else None
