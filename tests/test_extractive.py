"""Sentence units for extractive answers: wrapped Markdown prose joined, code lines kept whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.core.analyze import analyze
from sourcewise.core.extractive import (
    MIN_COVERAGE,
    content_groups,
    covered,
    pick_sentences,
    procedural,
    sentences,
)
from sourcewise.models import Hit, RankedHit

DOC = """## How do I index my notes?

```bash
sourcewise index ~/notes   # a folder
```

Run the same command again whenever your files change. Indexing a second folder does not remove
the first one: removal only looks under the paths you
give.

- **Crash-safe.** The index is written in batches.
- a file that disappeared is removed.
1. First step. 2) not a list item here
| a | b |
"""


def test_wrapped_prose_joins_and_blocks_break() -> None:
    units = sentences(DOC, wrapped=True)
    assert "`sourcewise index ~/notes   # a folder`" in units
    assert (
        "Indexing a second folder does not remove the first one: removal only looks under the paths you give."
        in units
    )
    assert "Crash-safe." in units  # the bold closer ends the sentence, its marks trimmed
    assert "The index is written in batches." in units
    assert "a file that disappeared is removed." in units
    assert "a | b" in units
    assert not any(u.startswith("give") for u in units)


def test_unwrapped_text_splits_at_every_line() -> None:
    chat = "alice (2025-01-15 10:00): shipping friday\nbob (2025-01-15 10:05): agreed"
    assert sentences(chat) == ["alice (2025-01-15 10:00): shipping friday", "bob (2025-01-15 10:05): agreed"]
    assert len(sentences("removal only looks under the paths you\ngive it.")) == 2


def test_procedural_questions() -> None:
    assert procedural("How do I index my notes?")
    assert procedural("how to roll back")
    assert procedural("배포는 어떻게 하나요?")
    assert not procedural("What is the knowledge base?")


def _norm(text: str) -> str:
    return " ".join(text.split())


@given(st.text(alphabet=st.sampled_from(list("ab .!?*`#-|\n\t1)한")), max_size=200), st.booleans())
def test_every_unit_comes_from_the_text(text: str, wrapped: bool) -> None:
    flat = _norm(text)
    for unit in sentences(text, wrapped=wrapped):
        body = unit.removesuffix("…")
        if body.startswith("`") and body.endswith("`") and len(body) > 2:
            body = body[1:-1]
        assert _norm(body) in flat, (unit, text)


def _ranked(*texts: str) -> list[RankedHit]:
    return [
        RankedHit(
            hit=Hit(
                title=f"d{i}",
                location=f"memory://{i}",
                text=t,
                source="m",
                kind="knowledge_base",
                authority="wiki",
                score=1.0,
            ),
            relevance=1.0 - i / 10,
            factors=(),
        )
        for i, t in enumerate(texts)
    ]


def test_one_shared_word_is_not_an_answer() -> None:
    hits = _ranked("Web provider keys live in BRAVE_API_KEY.", "The API migration timeline ends in March.")
    picked = pick_sentences(["API", "migration", "timeline"], hits)
    assert picked == [("The API migration timeline ends in March.", 1)]
    assert pick_sentences(["API", "migration", "timeline"], hits[:1]) == []
    assert pick_sentences(["zzqx", "vvbn"], hits) == []
    assert pick_sentences(["the", "what", "a"], hits) == [], "stopwords alone ask nothing"


def test_coverage_is_stemmed_and_korean_aware() -> None:
    assert content_groups(["notes", "the", "배포절차를"]) == [
        frozenset({"note"}),
        frozenset({"배포절차", "배포", "포절", "절차"}),
    ]
    hits = _ranked(
        "Indexing a note takes a second.", "배포 절차 문서를 먼저 읽으세요.", "배포 일정은 금요일입니다."
    )
    picked = pick_sentences(["index", "notes"], hits)
    assert picked
    assert picked[0][1] == 0
    assert pick_sentences(["회사", "휴가"], _ranked("휴가 규정: 연차는 15일입니다.")), (
        "a one-syllable stem counts"
    )
    picked = pick_sentences(["배포절차"], hits)
    assert [h for _, h in picked] == [1], "the compound meets its parts; one bigram alone does not"


@given(
    st.lists(st.text(alphabet=st.sampled_from(list("ab cd.한국 ")), max_size=40), max_size=4),
    st.lists(st.text(alphabet=st.sampled_from(list("ab cd.한국 \n`")), max_size=120), max_size=4),
)
def test_every_picked_sentence_covers_half_the_question(words: list[str], texts: list[str]) -> None:
    groups = content_groups(words)
    for sentence, h in pick_sentences(words, _ranked(*texts)):
        assert sentence in sentences(texts[h], wrapped=True)
        assert len(covered(set(analyze(sentence, stem=True)), groups)) >= MIN_COVERAGE * len(groups) > 0
