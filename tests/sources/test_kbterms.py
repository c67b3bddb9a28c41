"""How a snippet finds the lines holding a query's terms: ``kbterms.has_any`` on a new process's pieces
(what it learns one by one and what in one call), ``lines_holding``'s shortcuts, the snippet itself."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from realtext import real_paragraphs, spread
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.snippet import plain, snippet
from sourcewise.text.markup import clean, directive

# Digits and ASCII punctuation between letters, as in man pages' option tables and numbered lists.
_PIECE = st.text(alphabet=st.sampled_from(list("0123456789$|.()[]=-:aZé_")), min_size=1, max_size=12)


@settings(deadline=None)  # the profile decides how many (HYPOTHESIS_PROFILE=deep: 300)
@given(st.lists(_PIECE, min_size=1, max_size=8), st.integers(0, 3))
def test_pieces_of_digits_and_punctuation_learned_cold_are_the_analyzers(pieces: list[str], k: int) -> None:
    """Nothing cached, then again from the cache: each piece's terms and the line's answer are the
    analyzer's own."""
    line = " ".join(pieces)
    found = kbterms.terms(line)
    wanted = {*found[:k], "qzxq"}
    kbterms._WORD_TERMS.clear()
    for _ in range(2):
        assert kbterms.has_any(line, wanted) == (not wanted.isdisjoint(found))
        for piece in pieces:
            assert set(kbterms.word_terms(piece)) == set(kbterms.terms(piece)), piece


def test_digits_and_punctuation_alone_are_not_analyzed_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line's new pieces that are a number ("2.", "(1)", "404") or punctuation alone ("$", "|",
    "...]") cost no call of the analyzer each (about 12 us apiece): the numbers go with the plain
    words in one call, punctuation has no terms. A spy counts the calls; the real analyzer answers."""
    calls: list[str] = []
    real = kbterms.terms

    def counted(text: str) -> list[str]:
        calls.append(text)
        return real(text)

    kbterms._WORD_TERMS.clear()
    monkeypatch.setattr(kbterms, "terms", counted)
    line = "$ 2. (1) see 404 | ...] the token_expiry value"
    assert kbterms.has_any(line, {"qzxq"}) is False
    assert calls == ["token_expiry"]
    assert kbterms.word_terms("404") == ("404",)
    assert kbterms.word_terms("$") == ()
    assert kbterms.has_any(line, {"404"})
    assert kbterms.has_any(line, {"token_expiry"})


def _snippet_as_defined(text: str, terms: set[str], size: int = 200) -> str:
    """The snippet's definition read whole: every shown line (not blank, no directive), from the
    first holding a term, joined, four times the size cleaned, cut at a word."""
    lines = [s for ln in text.splitlines() if (s := ln.strip()) and directive(s) is None]
    start = next((i for i, ln in enumerate(lines) if not terms.isdisjoint(kbterms.terms(ln))), 0)
    joined = clean(" ".join(lines[start:])[: 4 * size])
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"


_LINE = st.text(alphabet=st.sampled_from(list("ab rollbck_*`!.:-\\")), max_size=90)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(_LINE, st.sampled_from(["", "   ", '!!! note "x"', ".. code-block:: python", "/// tip"])),
             max_size=12),
    st.integers(20, 200),
)  # fmt: skip
def test_a_snippet_reads_only_its_lines_and_is_what_its_definition_says(lines: list[str], size: int) -> None:
    """The snippet reads lines only up to its start and its window: the same as the definition."""
    text = "\n".join(lines)
    for query in ("rollback", "b", "qzxq", "Rollback_b"):
        wanted = kbterms.wanted(query)
        assert snippet(text, wanted, size) == _snippet_as_defined(text, set(wanted.terms), size)


def _plain_as_defined(text: str) -> bool:
    """Whether every window a snippet may start (at each shown line, four times 200 characters)
    only loses its outer spaces to ``clean``."""
    lines = [s for ln in text.splitlines() if (s := ln.strip()) and directive(s) is None]
    windows = [" ".join(lines[i:])[:800] for i in range(len(lines))]
    return all(clean(w) == w.strip() for w in windows)


_MARKED = st.text(alphabet=st.sampled_from(list("ab rl_*`!.:-\\<>[](){}#&;é ")), max_size=300)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_MARKED, st.sampled_from(["", "x" * 500, '!!! note "x"'])), max_size=10))
@example(["`a", "*b* `"])  # code whole, but a window from the second line pairs its backticks anew
@example(["y" * 795 + " _ab_c"])  # not italic whole ("_c"), italic in the window cut after "_ab_"
def test_a_text_is_plain_when_no_window_of_it_changes_when_cleaned(lines: list[str]) -> None:
    """``plain`` (decided at indexing) says what cleaning each window would: where it says so, the
    snippet made without cleaning is the one made with it."""
    text = "\n".join(lines)
    if plain(text):  # where it says no, a query cleans: that costs only time
        assert _plain_as_defined(text)
        for query in ("rl", "b", "qzxq"):
            wanted = kbterms.wanted(query)
            assert snippet(text, wanted, plain=True) == snippet(text, wanted)


def test_plain_over_real_text_is_what_cleaning_every_window_says() -> None:
    """Real paragraphs (markup of docstrings, Vim help, READMEs): ``plain`` is the definition's answer
    wherever the text cleaned whole is unchanged (elsewhere it does not look further: ``False``)."""
    paragraphs = spread(real_paragraphs(), 600)
    said = [plain(p) for p in paragraphs]
    for text, got in zip(paragraphs, said, strict=True):
        whole = " ".join(s for ln in text.splitlines() if (s := ln.strip()) and directive(s) is None)
        assert got == (_plain_as_defined(text) and clean(whole) == whole), text[:300]
    assert len(paragraphs) == 600
    assert 0 < sum(said) < len(said)


_WORDS = re.compile(r"\w{3,}")


def _queries(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Queries as the benchmark asks them: two words of a paragraph, in any case, and one word of it
    beside one of another paragraph."""
    out = []
    for text in paragraphs:
        words = _WORDS.findall(text) or ["x", "y"]
        a, b = rng.sample(words, 2) if len(words) >= 2 else (words[0], words[0])
        other = rng.choice(_WORDS.findall(rng.choice(paragraphs)) or ["x"])
        out += [f"{a.lower()} {b.lower()}", f"{a} {other}"]
    return out


def test_lines_holding_are_the_lines_has_any_finds_over_real_text() -> None:
    """Over real paragraphs of several lines and queries of their own words: the lines
    ``lines_holding`` gives are the ones ``has_any`` says hold a term, with nothing cached and
    again from the cache; both shortcuts are taken (a line holding a query's word, an ASCII line
    holding no term's beginning)."""
    rng = random.Random(7)
    paragraphs = spread([p for p in real_paragraphs() if p.count("\n") >= 1], 400)
    queries = _queries(paragraphs, rng)
    kbterms._WORD_TERMS.clear()
    sure = skipped = checked = 0
    for _ in range(2):
        for text, query in zip(paragraphs, queries[::2], strict=False):
            wanted = kbterms.wanted(query)
            lines = text.splitlines()
            expected = [i for i, ln in enumerate(lines) if kbterms.has_any(ln, wanted.terms)]
            assert list(kbterms.lines_holding(lines, wanted)) == expected, (query, text[:300])
            for line in lines:
                low = line.lower()
                sure += kbterms._sure(low, wanted.words, kbterms._AROUND)
                skipped += low.isascii() and not any(s in low for s in wanted.starts)
            checked += len(lines)
    assert checked > 4000  # two rounds
    assert sure > 100
    assert skipped > 100


def test_every_term_of_real_ascii_text_begins_as_start_says() -> None:
    """A line of ASCII text holds, lower-cased, the beginning ``_start`` gives of each of its terms
    (the engine's stems, an identifier's whole and parts): 800 real lines."""
    lines = spread(
        [ln for p in real_paragraphs() for ln in p.splitlines() if ln.strip() and ln.isascii()], 800
    )
    found = 0
    for line in lines:
        for term in set(kbterms.terms(line)):
            assert kbterms._start(term) in line.lower(), (term, line)
            found += 1
    assert found > 4000


_TEXT = st.text(
    alphabet=st.sampled_from(list("aAbBsSyY _-.,()'`\n\t0129\u212a\u0130\u03a3\u00dfé한국")), max_size=80
)


@settings(deadline=None)  # the profile decides how many
@given(_TEXT, _TEXT)
def test_lines_holding_are_the_lines_has_any_finds(text: str, query: str) -> None:
    """Hostile text (KELVIN SIGN, dotted I, sigma, sharp s, Hangul, "_", digits) and queries of its
    own words or others: ``lines_holding`` is ``has_any`` line by line."""
    lines = text.splitlines()
    for q in (query, text[: len(text) // 2]):
        wanted = kbterms.wanted(q)
        assert list(kbterms.lines_holding(lines, wanted)) == [
            i for i, ln in enumerate(lines) if kbterms.has_any(ln, wanted.terms)
        ]


def test_a_snippet_of_real_text_is_what_its_definition_says() -> None:
    """Real paragraphs of several lines, queries of their words: the snippet is its definition's."""
    rng = random.Random(11)
    paragraphs = spread([p for p in real_paragraphs() if p.count("\n") >= 2], 500)
    later = 0
    for text, query in zip(paragraphs, _queries(paragraphs, rng), strict=False):
        wanted = kbterms.wanted(query)
        got = snippet(text, wanted)
        assert got == _snippet_as_defined(text, set(wanted.terms)), (query, text[:300])
        later += not clean(text.strip()).startswith(got[:20])
    assert len(paragraphs) == 500
    assert later > 20  # snippets that start after the first line


@pytest.mark.parametrize("word", ["dying", "lying", "tying", "vying", "hying", "vyingMode", "vying2"])
def test_a_consonant_and_ying_is_found_by_its_stem_in_ie(word: str) -> None:
    """Snowball gives a consonant + "ying" that consonant + "ie" (vying -> vie, not only the three
    words of its exception list): the line holding the word is found for its own stem, as
    ``has_any`` finds it (found in review: "vie" missed "Teams are vying for control")."""
    lines = ["Nothing to see here.", f"Teams are {word} for control"]
    for query in (word, kbterms.query_terms(word)[0]):
        wanted = kbterms.wanted(query)
        expected = [i for i, ln in enumerate(lines) if kbterms.has_any(ln, wanted.terms)]
        assert expected == [1], (query, wanted.terms)
        assert list(kbterms.lines_holding(lines, wanted)) == expected, query
