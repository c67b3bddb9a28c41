"""Sentence units for extractive answers: wrapped Markdown prose joined, code lines kept whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.core.extractive import procedural, sentences

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
