"""``kbterms.has_any`` on a new process's pieces: what it learns one by one and what in one call."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise.sources.kb import terms as kbterms

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
