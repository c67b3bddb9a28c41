"""Units for extractive answers: wrapped Markdown prose joined, code kept as fenced blocks, markup
cleaned; the answer assembled with its markers."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from sourcewise.answer.extractive import MAX_SENTENCE, assemble, procedural, sentences, units
from sourcewise.models import Hit, RankedHit
from sourcewise.text.markup import clean, directive

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
    found = units(DOC, wrapped=True)
    kinds = {u.text: u.kind for u in found}
    assert kinds["How do I index my notes?"] == "heading"
    assert kinds["```bash\nsourcewise index ~/notes   # a folder\n```"] == "code"
    assert (
        "Indexing a second folder does not remove the first one: removal only looks under the paths you give."
        in kinds
    )
    assert kinds["Crash-safe."] == "item"  # the bold marks cleaned, the item's first sentence
    assert kinds["The index is written in batches."] == "prose"
    assert kinds["a file that disappeared is removed."] == "item"
    assert kinds["a | b"] == "row"
    assert not any(u.text.startswith("give") for u in found)


def test_code_blocks_stay_blocks_with_their_language() -> None:
    text = "Enable it with:\n\n```python\nimport logging\n\nlogging.basicConfig(level=logging.DEBUG)\n```\n"
    found = units(text, wrapped=True)
    assert found[-1].kind == "code"
    assert found[-1].text == "```python\nimport logging\n\nlogging.basicConfig(level=logging.DEBUG)\n```"
    long = "```\n" + "\n".join(f"line {i}" for i in range(40)) + "\n```"
    cut = units(long)[0].text.split("\n")
    assert cut[-2] == "..."
    assert len(cut) < 20


def test_admonitions_and_directives_are_not_text() -> None:
    text = '!!! note "Read this"\n    The pool holds 10 connections.\n\n.. warning::\n\n   Mind the gap.\n'
    found = units(text, wrapped=True)
    assert [(u.text, u.kind) for u in found] == [
        ("Read this", "heading"),
        ("The pool holds 10 connections.", "prose"),
        ("Mind the gap.", "prose"),
    ]
    assert directive(":::{tip}") == ""
    assert directive("plain text") is None


def test_markup_is_cleaned_from_what_a_reader_sees() -> None:
    assert (
        clean(r"Set default\_transaction\_isolation to `on`.") == "Set default_transaction_isolation to `on`."
    )
    assert clean("Use :class:`httpx.Client` or :func:`get <httpx.get>`.") == "Use httpx.Client or get."
    assert clean("## Timeouts { #timeouts }") == "## Timeouts"
    assert clean('An <abbr title="Hypertext Transfer Protocol">HTTP</abbr> call.') == "An HTTP call."
    assert clean("A \ufb01le and an o\ufb04ine copy.") == "A file and an offline copy."
    assert clean("See [the guide](guide.md) and **this**.") == "See the guide and this."
    assert clean("`Vec<T>` is a type; a <!-- hidden --> comment.") == "`Vec<T>` is a type; a comment."
    assert sentences("A distri-\nbuted file.", wrapped=True) == ["A distributed file."]


def test_unwrapped_text_splits_at_every_line() -> None:
    chat = "alice (2025-01-15 10:00): shipping friday\nbob (2025-01-15 10:05): agreed"
    assert sentences(chat) == ["alice (2025-01-15 10:00): shipping friday", "bob (2025-01-15 10:05): agreed"]
    assert len(sentences("removal only looks under the paths you\ngive it.")) == 2


def test_model_markers_survive_sentence_splitting() -> None:
    assert sentences("It ends in March [1]. The old API stays [1][2].") == [
        "It ends in March [1].",
        "The old API stays [1][2].",
    ]


def test_procedural_questions() -> None:
    assert procedural("How do I index my notes?")
    assert procedural("how to roll back")
    assert procedural("배포는 어떻게 하나요?")
    assert not procedural("What is the knowledge base?")


def _ranked(*texts: str) -> list[RankedHit]:
    return [
        RankedHit(
            hit=Hit(title=f"d{i}", location=f"memory://{i}", text=t, source="m", kind="knowledge_base",
                    authority="wiki", score=1.0),
            relevance=0.9,
            factors=(),
        )
        for i, t in enumerate(texts)
    ]  # fmt: skip


def test_assemble_keeps_code_blocks_on_their_own_lines() -> None:
    hits = _ranked("a", "b")
    text, citations, cited = assemble(
        [("Enable it:", [0]), ("```sh\nrun it\n```", [0]), ("Done.", [1])], hits
    )
    assert text == "Enable it:[1]\n```sh\nrun it\n```\n[1]\nDone.[2]"
    # Markdown closes a fence only on a line of its own: a marker after it left the block open
    assert all(line.strip("`") == "" or not line.startswith("```") for line in text.splitlines()[2:4])
    assert [c.marker for c in citations] == [1, 1, 2]
    assert all(text[c.start : c.end].startswith(c.sentence) for c in citations)
    assert [h.hit.location for h in cited] == ["memory://0", "memory://1"]


def _norm(text: str) -> str:
    return " ".join(text.split())


@given(st.text(alphabet=st.sampled_from(list("ab .!?*`#-|\n\t1)한")), max_size=200), st.booleans())
@example("a-\na", True)  # found by Hypothesis: a wrapped line's hyphen joins the word
def test_every_unit_comes_from_the_text(text: str, wrapped: bool) -> None:
    flat = _norm(text.replace("`", "").replace("*", "").replace("#", "").replace("|", ""))
    if wrapped:  # a word hyphenated at a line's end is one word again ("exam-\nple" -> "example")
        flat += " " + _norm(re.sub(r"-\n\s*", "", text).replace("`", "").replace("*", "").replace("#", "").replace("|", ""))
    for unit in units(text, wrapped=wrapped):
        body = unit.text.removesuffix("…")
        if unit.kind == "code":
            body = body.split("\n", 1)[1].rsplit("\n", 1)[0] if "\n" in body else ""
        for word in _norm(body.replace("`", "").replace("*", "").replace("#", "").replace("|", "")).split():
            if word != "...":
                assert word in flat, (unit, text)


def test_markup_out_of_prose_and_inline_code_kept_as_written() -> None:
    # The Rust Book writes `{:#?}`; an attribute-list pattern must not eat it.
    assert (
        clean("we can use `{:#?}` instead of `{:?}` in the string.")
        == "we can use `{:#?}` instead of `{:?}` in the string."
    )
    assert clean(r"`a\_b` and a\_b") == r"`a\_b` and a_b"
    assert clean("a &vert; b &amp; c") == "a | b & c"
    assert clean("<style> .md h1 { display: none; } </style> Hi") == "Hi"
    assert clean('data <dfn title="also: parsing">conversion</dfn> { #data-conversion }') == "data conversion"
    assert clean('<blockquote markdown="1"> quoted </blockquote>') == "quoted"
    alt = "A linked list of `i32`. " * 60
    assert clean(f'Figure: <img alt="{alt}" src="x.svg" class="center" /> shown.') == "Figure: shown."
    assert (
        clean("_Mutex_ is short for _mutual exclusion_, as in")
        == "Mutex is short for mutual exclusion, as in"
    )
    assert clean("`Vec<T>` and Vec<T> and <dyn Error>") == "`Vec<T>` and Vec<T> and <dyn Error>"


@given(
    st.lists(
        st.one_of(
            # no "]": a link's target is a URL, not code, and goes with the link
            st.text(alphabet=st.sampled_from(list("ab _*{}#<>&;:[()\\/!.")), max_size=30),
            st.text(alphabet=st.sampled_from(list("ab _*{}#<>&;:?")), min_size=1, max_size=12).map(
                lambda c: f"`{c}`"
            ),
        ),
        max_size=8,
    )
)
def test_clean_keeps_every_inline_code_span_as_written(pieces: list[str]) -> None:
    text = " ".join(pieces)
    out = clean(text)
    for piece in pieces:
        if piece.startswith("`") and text.count("`") == 2 * sum(p.startswith("`") for p in pieces):
            assert piece.strip() in out or not piece.strip("` ")


def test_a_numbered_item_is_one_unit_with_its_number() -> None:
    """The Rust Book's "Here is the plan:" list: "1." ends no sentence, so no answer quotes a bare
    "1." and the item's text stays an item."""
    text = (
        "Here is the plan:\n\n1. The `ThreadPool` will create a channel and hold on to the sender.\n"
        "2. Each `Worker` will hold on to the receiver. It waits.\n\nVersion 2. Then more."
    )
    got = [(u.text, u.kind) for u in units(text, wrapped=True)]
    assert ("1. The `ThreadPool` will create a channel and hold on to the sender.", "item") in got
    assert ("2. Each `Worker` will hold on to the receiver.", "item") in got
    assert ("Version 2.", "prose") in got, "a number ending a sentence still ends it"
    assert all(len(t) > 3 for t, _ in got), got


def test_a_sentence_closing_a_long_run_without_ends_is_kept() -> None:
    # fontconfig's manual as a PDF gives: its property table (no sentence ends) runs on into the
    # section's first sentence; cut at MAX_SENTENCE, the sentence was lost.
    table = " ".join(f"prop{i} String The value of property number {i}" for i in range(40))
    text = f"{table} Font Matching Fontconfig performs matching by measuring the distance from a pattern."
    found = units(text, wrapped=True)
    assert any("measuring the distance from a pattern." in u.text for u in found), found
    assert all(len(u.text) <= MAX_SENTENCE for u in found)
    assert "prop0" in found[0].text
    assert "prop39" in " ".join(u.text for u in found), "nothing is lost"
