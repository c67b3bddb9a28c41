"""Extractive answers with no model: the sentences that answer, each ending with its ``[n]``.

Sentences are taken whole from the best hits, so every sentence has a source by construction. A
sentence is chosen for the question terms it covers (each term counts once across the answer, so
the answer does not repeat itself), then by the relevance of its hit. Also here: checking that a
cited passage supports a sentence, used on a model's answer.

Pure and linear: sentence splitting is one pass over the text, no regular expression.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Citation, RankedHit
from .analyze import analyze
from .text import printable

__all__ = ["MAX_SENTENCE", "assemble", "pick_sentences", "sentences", "strip_controls", "support"]

MAX_SENTENCE = 400  # characters; a longer "sentence" is cut at a word
ENDS = ".!?。！？"
STOP = frozenset(
    "the a an of to and or in on is are was be for with by it this that what how 무엇 어떻게".split()
)


def strip_controls(text: str) -> str:
    """``text`` on one line and safe for a terminal (``core.text.printable``, the one definition)."""
    return printable(text, one_line=True)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? 。 followed by a space, and at line breaks."""
    out: list[str] = []
    buf: list[str] = []
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append("".join(buf))
            buf = []
            continue
        buf.append(ch)
        if ch in ENDS and (i + 1 == len(text) or text[i + 1].isspace()):
            out.append("".join(buf))
            buf = []
    out.append("".join(buf))
    return [_clip(s.strip(" \t#*>-|")) for s in out if len(s.strip()) > 1]


def _clip(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE:
        return sentence
    return sentence[:MAX_SENTENCE].rsplit(" ", 1)[0] + "…"


def _content(terms: Sequence[str]) -> set[str]:
    return {t for t in terms if t not in STOP and len(t) > 1}


MIN_SENTENCES = 2  # one matching line alone rarely answers; a second adds its context


def _prose(sentence: str) -> bool:
    """A written sentence rather than a command, a heading or a table row."""
    return sentence.rstrip("…").endswith(tuple(ENDS)) and len(sentence.split()) >= 5


def pick_sentences(
    terms: Sequence[str], hits: Sequence[RankedHit], *, limit: int = 4, per_hit: int = 2
) -> list[tuple[str, int]]:
    """Up to ``limit`` (sentence, hit index) pairs that cover the question terms best."""
    wanted = _content(terms)
    covered: set[str] = set()
    chosen: list[tuple[str, int]] = []
    candidates: list[tuple[float, int, int, str, set[str]]] = []
    for h, ranked in enumerate(hits[:8]):
        for s, sentence in enumerate(sentences(ranked.hit.text or ranked.hit.snippet)):
            have = set(analyze(sentence)) & wanted
            if have:
                candidates.append((ranked.relevance, h, s, sentence, have))
    used: dict[int, int] = {}
    while candidates and len(chosen) < limit:
        best = max(candidates, key=lambda c: (len(c[4] - covered), _prose(c[3]), c[0], -c[1], -c[2]))
        candidates.remove(best)
        _, h, _, sentence, have = best
        if not (have - covered) and len(chosen) >= MIN_SENTENCES:
            break
        if used.get(h, 0) >= per_hit or any(sentence == c for c, _ in chosen):
            continue
        used[h] = used.get(h, 0) + 1
        covered |= have
        chosen.append((sentence, h))
    return chosen


def support(sentence: str, passage: str) -> float:
    """The share of the sentence's content words found in the passage (0-1)."""
    words = _content(analyze(sentence))
    if not words:
        return 0.0
    return len(words & set(analyze(passage))) / len(words)


def assemble(
    parts: Sequence[tuple[str, Sequence[int]]], hits: Sequence[RankedHit]
) -> tuple[str, list[Citation], list[RankedHit]]:
    """The answer text from (sentence, hit indexes) parts: ``[n]`` numbered by first citation."""
    numbers: dict[int, int] = {}
    cited: list[RankedHit] = []
    text = ""
    citations: list[Citation] = []
    for sentence, indexes in parts:
        clean = strip_controls(sentence).strip()
        markers = []
        for index in indexes:
            if index not in numbers:
                numbers[index] = len(cited) + 1
                cited.append(hits[index])
            markers.append(numbers[index])
        start = len(text) + (1 if text else 0)
        text = f"{text} {clean}" if text else clean
        text += "".join(f"[{n}]" for n in markers)
        for n in markers:
            where = cited[n - 1].hit.location
            citations.append(Citation(marker=n, sentence=clean, start=start, end=len(text), location=where))
    return text, citations, cited
