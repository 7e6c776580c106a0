"""Look-alike letters folded to the ASCII letter they imitate (generated; do not edit).

Made by ``tests/policy/data/make_confusables.py`` from Unicode's confusables data (UTS #39)
as shipped in confusable-homoglyphs 3.3.1: characters of other scripts (Cyrillic, Greek,
Cherokee, Armenian, ...) that look like one ASCII letter and that NFKC does not fold.
"""

from typing import Final

#: Pairs: a look-alike character followed by the ASCII letter it imitates.
_PAIRS: Final = (
    "\u00d7x\u0131i\u0184b\u018dg\u0196I\u01a6R\u01bds\u01c0l\u0251a\u0261g"
    "\u0263y\u0269i\u026ai\u026fw\u028bu\u028fy\u037fJ\u0391A\u0392B\u0395E"
    "\u0396Z\u0397H\u0399I\u039aK\u039cM\u039dN\u039fO\u03a1P\u03a4T\u03a5Y"
    "\u03a7X\u03b1a\u03b3y\u03b9i\u03bdv\u03bfo\u03c1p\u03c3o\u03c5u\u03dcF"
    "\u03f3j\u03faM\u0405S\u0406I\u0408J\u0410A\u0412B\u0415E\u041aK\u041cM"
    "\u041dH\u041eO\u0420P\u0421C\u0422T\u0423Y\u0425X\u042cb\u0430a\u0433r"
    "\u0435e\u043eo\u0440p\u0441c\u0443y\u0445x\u0455s\u0456i\u0458j\u0461w"
    "\u0474V\u0475v\u04aeY\u04afy\u04bbh\u04bde\u04c0I\u04cfi\u0501d\u050cG"
    "\u051bq\u051cW\u051dw\u054dU\u054fS\u0555O\u0561w\u0563q\u0566q\u0570h"
    "\u0578n\u057cn\u057du\u0581g\u0584f\u0585o\u06f1l\u06f5o\u06f7V\u0966o"
    "\u09e6O\u0a66o\u0ae6o\u0b20O\u0b66O\u0be6o\u0c02o\u0c66o\u0c82o\u0ce6o"
    "\u0d02o\u0d20o\u0d66o\u0d82o\u0e50o\u0ed0o\u101do\u1040o\u10e7y\u10ffo"
    "\u1200U\u12d0O\u13a0D\u13a1R\u13a2T\u13a5i\u13a9Y\u13aaA\u13abJ\u13acE"
    "\u13b3W\u13b7M\u13bbH\u13bdY\u13c0G\u13c2h\u13c3Z\u13cfb\u13d2R\u13d4W"
    "\u13d5S\u13d9V\u13daS\u13deL\u13dfC\u13e2P\u13e6K\u13e7d\u13f3G\u13f4B"
    "\u142fV\u144cU\u146dP\u146fd\u1472b\u148dJ\u14aaL\u1541x\u157cH\u157dx"
    "\u1587R\u15afb\u15b4F\u15c5A\u15deD\u15eaD\u15f0M\u15f7B\u166dX\u166ex"
    "\u16b7X\u16c1l\u16d5K\u16d6M\u1d04c\u1d0fo\u1d11o\u1d1cu\u1d20v\u1d21w"
    "\u1d22z\u1d26r\u1d83g\u1d8cy\u1e9df\u1effy\u212ee\u2223l\u2228v\u222aU"
    "\u22a4T\u22c1v\u22c3U\u22ffE\u2373i\u2374p\u237aa\u23fdl\u2573X\u27d9T"
    "\u292bx\u292cx\u2a2fx\u2c85r\u2c8eH\u2c92I\u2c94K\u2c98M\u2c9aN\u2c9eO"
    "\u2c9fo\u2ca2P\u2ca3p\u2ca4C\u2ca5c\u2ca6T\u2ca8Y\u2cacX\u2cd0L\u2d38V"
    "\u2d39E\u2d4fl\u2d54O\u2d55Q\u2d5dX\u3007O\ua4d0B\ua4d1P\ua4d2d\ua4d3D"
    "\ua4d4T\ua4d6G\ua4d7K\ua4d9J\ua4daC\ua4dcZ\ua4ddF\ua4dfM\ua4e0N\ua4e1L"
    "\ua4e2S\ua4e3R\ua4e6V\ua4e7H\ua4eaW\ua4ebX\ua4ecY\ua4eeA\ua4f0E\ua4f2l"
    "\ua4f3O\ua4f4U\ua647i\ua6dfV\ua731s\ua798F\ua799f\ua79fu\ua7b2J\ua7b3X"
    "\ua7b4B\uab32e\uab35f\uab3do\uab47r\uab48r\uab4eu\uab52u\uab5ay\uab75i"
    "\uab81r\uab83w\uab93z\uaba9v\uabaas\uabafc\U00010282B\U00010286E\U00010287F\U0001028al"
    "\U00010290X\U00010292O\U00010295P\U00010296S\U00010297T\U000102a0A\U000102a1B\U000102a2C\U000102a5F\U000102abO"
    "\U000102b0M\U000102b1T\U000102b2Y\U000102b4X\U000102cfH\U000102f5Z\U00010301B\U00010302C\U00010309l\U00010311M"
    "\U00010315T\U00010317X\U00010320l\U00010322X\U00010404O\U00010415C\U0001041bL\U00010420S\U0001042co\U0001043dc"
    "\U00010448s\U000104b4R\U000104c2O\U000104ceU\U000104eao\U000104f6u\U00010513N\U00010516O\U00010518K\U0001051cC"
    "\U0001051dV\U00010525F\U00010526L\U00010527X\U000114d0O\U00011706v\U0001170aw\U0001170ew\U0001170fw\U000118a0V"
    "\U000118a2F\U000118a3L\U000118a4Y\U000118a6E\U000118a9Z\U000118aeE\U000118b2L\U000118b5O\U000118b8U\U000118bcT"
    "\U000118c0v\U000118c1s\U000118c2F\U000118c3i\U000118c4z\U000118c8o\U000118d7o\U000118d8u\U000118dcy\U000118e0O"
    "\U000118e5Z\U000118e6W\U000118e9C\U000118ecX\U000118efW\U000118f2C\U00016f08V\U00016f0aT\U00016f16L\U00016f28l"
    "\U00016f35R\U00016f3aS\U00016f40A\U00016f42U\U00016f43Y\U0001d20dV\U0001d213F\U0001d216R\U0001d22aL\U0001f74cC"
    "\U0001f768T"
)

#: ``str.translate`` table from each look-alike to its ASCII letter.
FOLD: Final[dict[int, str]] = {ord(_PAIRS[i]): _PAIRS[i + 1] for i in range(0, len(_PAIRS), 2)}
