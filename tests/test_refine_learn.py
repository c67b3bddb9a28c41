"""What a learned word stands for (seed 004's "throttle may be the rate limit"): the few task terms its
file lacks, never a long list (issue 25: a word learned from a file lacking twenty of a bug report's
terms "defined" all twenty wherever it appeared, and lifted unrelated files to 0.7)."""

from __future__ import annotations

from sourcewise.models import Hit
from sourcewise.planning.refine import MAX_STANDS, evaluate, facts_for, learn, uncovered, vocabulary


def _learned(missing: int) -> dict[str, tuple[str, ...]]:
    """Words learned from a file holding the task's first six terms and none of ``missing`` others."""
    terms = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    vocab = vocabulary(terms[: 6 + missing], {})
    text = "alpha bravo charlie throttle\nthrottle delta echo\nfoxtrot throttle\n"
    hit = Hit(
        title="mod.py",
        location="mod.py",
        source="code",
        kind="code",
        authority="code",
        score=1.0,
        path="mod.py",
        text=text,
    )
    scored = evaluate(vocab, [facts_for(hit, text)])
    gaps = uncovered(vocab, scored, at_least=0.0)
    assert len(gaps) == missing, gaps
    return {item.term: item.stands_for for item in learn(vocab, scored, {"mod.py": text}, gaps)}


def test_a_word_learned_where_few_terms_are_missing_stands_for_them() -> None:
    learned = _learned(2)
    assert set(learned["throttle"]) == {"golf", "hotel"}


def test_a_word_learned_where_many_terms_are_missing_stands_for_none() -> None:
    learned = _learned(MAX_STANDS + 1)
    assert "throttle" in learned, "still learned: searched next as context"
    assert learned["throttle"] == ()
