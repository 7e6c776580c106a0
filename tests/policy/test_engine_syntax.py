"""PatternSet: RE2 reads a pattern as Python's re does, and its options mean what they say."""

from __future__ import annotations

import pytest

from adk_lattice.policy._text.engine import PatternSet

PATTERNS = [
    r"x[]a]y",
    r"x[^]a]y",
    r"[]]\d",
    r"[^]\s]z",
    r"a[\d]b",
    r"\u00e9t\u00e9",
    r"\u4e2d\u6587",
    r"\U0001F600!",
    r"end\Z",
]
TEXTS = [
    "x]y",
    "xay",
    "xby",
    "x]y ]7",
    "]7",
    "qz",
    " z",
    "]z",
    "a5b",
    "été",
    "中文",
    "\U0001f600!",
    "the end",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_re2_finds_what_re_finds(pattern: str) -> None:
    """A pattern with a literal ']' in a class or a \\u escape matches the same texts in RE2."""
    re2 = PatternSet([pattern], engine="re2", ignore_case=False)
    re_ = PatternSet([pattern], engine="re", ignore_case=False)
    assert [re2.found(t) for t in TEXTS] == [re_.found(t) for t in TEXTS]
    assert any(re_.found(t) for t in TEXTS)  # the pattern is exercised, not only refused


@pytest.mark.parametrize("engine", ["re", "re2"])
def test_case_is_ignored_by_default(engine: str) -> None:
    """Without ignore_case, a PatternSet matches regardless of letter case."""
    assert PatternSet(["abc"], engine=engine).matches("xx ABC") == [0]


@pytest.mark.parametrize("engine", ["re", "re2"])
def test_ignore_case_false_matches_case(engine: str) -> None:
    """With ignore_case=False, a PatternSet matches only the case written."""
    ps = PatternSet(["abc", "a+ab"], engine=engine, ignore_case=False)
    assert ps.matches("xx ABC") == []
    assert ps.matches("abc aaab") == [0, 1]


@pytest.mark.parametrize("engine", ["re", "re2"])
def test_an_empty_set_matches_nothing(engine: str) -> None:
    """A PatternSet of no patterns matches no text."""
    ps = PatternSet([], engine=engine)
    assert ps.matches("anything") == [] and not ps.found("anything")


def test_the_engine_chosen_is_kept() -> None:
    """A PatternSet reports the engine it runs on."""
    assert PatternSet(["a"], engine="re").engine == "re"
    assert PatternSet(["a"], engine="re2").engine == "re2"


def test_the_re_engine_takes_what_re2_cannot() -> None:
    """With engine='re', a backreference (which RE2 lacks) compiles and matches."""
    assert PatternSet([r"(a)\1"], engine="re").matches("xaa") == [0]


def test_a_pattern_re2_cannot_compile_is_named_in_the_error() -> None:
    """With engine='re2', a pattern RE2 cannot compile raises ValueError naming it."""
    with pytest.raises(ValueError, match=r"^pattern '\(a\)\\\\1' does not compile for RE2: "):
        PatternSet([r"(a)\1"], engine="re2")
