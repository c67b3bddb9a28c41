"""Extractive answers with no model: the sentences that answer, each ending with its ``[n]``.

Sentences are taken whole from the best hits, so every sentence has a source by construction. A
sentence is chosen for the question's content words it covers (each counts once across the answer,
so the answer does not repeat itself), then by the relevance of its hit. A sentence must cover at
least ``MIN_COVERAGE`` of the content words: one shared word does not make an answer, and when no
sentence qualifies the caller says that nothing answers the question rather than cite filler.
Also here: checking that a cited passage supports a sentence, used on a model's answer.

Pure and linear: sentence splitting is one pass over the text, no regular expression.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Citation, RankedHit
from .analyze import STOPWORDS, analyze
from .text import is_hangul, printable

__all__ = [
    "MAX_SENTENCE",
    "MIN_COVERAGE",
    "assemble",
    "content_groups",
    "covered",
    "pick_sentences",
    "procedural",
    "sentences",
    "strip_controls",
    "support",
]

MAX_SENTENCE = 400  # characters; a longer "sentence" is cut at a word
ENDS = ".!?。！？"
STOP = frozenset(
    "the a an of to and or in on is are was be for with by it this that what how 무엇 어떻게".split()
)


def strip_controls(text: str) -> str:
    """``text`` on one line and safe for a terminal (``core.text.printable``, the one definition)."""
    return printable(text, one_line=True)


def sentences(text: str, *, wrapped: bool = False) -> list[str]:
    """Sentences of ``text``: split after . ! ? 。 followed by a space, and at line breaks.

    ``wrapped``: the text is hard-wrapped prose (Markdown, mail): a line that continues the one
    before joins it, and only blank lines, headings, list items, table rows and quotes break a
    paragraph. A line inside a code fence is one unit, shown as inline code (a command answers
    "how do I" questions, but run into prose it reads as a broken sentence)."""
    out: list[str] = []
    para: list[str] = []
    fenced = False
    for line in text.split("\n"):
        bare = line.strip()
        if bare.startswith(("```", "~~~")):
            fenced = not fenced
            out.extend(_split_line(" ".join(para)))
            para = []
            continue
        if fenced:
            if bare and "`" not in bare:
                out.append(_clip(f"`{bare}`"))
            continue
        if not wrapped or not bare or _starts_block(bare):
            out.extend(_split_line(" ".join(para)))
            para = []
        if bare:
            para.append(bare)
    out.extend(_split_line(" ".join(para)))
    return out


def _starts_block(line: str) -> bool:
    """A Markdown line that starts a block of its own rather than continuing a paragraph."""
    if line[0] in "#|>" or line[:2] in ("- ", "* ", "+ "):
        return True
    digits = len(line) - len(line.lstrip("0123456789"))
    return 0 < digits <= 3 and line[digits : digits + 2] in (". ", ") ")


CLOSERS = "*_`)\"'”’」』"


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    n = len(line)
    for i, ch in enumerate(line):
        if ch not in ENDS or i < start:
            continue
        j = i + 1
        while j < n and line[j] in CLOSERS:  # "**Crash-safe.**" ends after its closing marks
            j += 1
        if j == n or line[j].isspace():
            out.append(line[start:j])
            start = j
    out.append(line[start:])
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


def procedural(question: str) -> bool:
    """A "how do I ..." question, which a command or a code line can answer."""
    q = " ".join(question.lower().split())
    return q.startswith(("how do i", "how can i", "how to", "how should i")) or "어떻게" in q


MIN_COVERAGE = 0.5
"""The share of the question's content words a sentence must cover to be part of an answer."""
# Stopwords as the stemmed analyzer gives them, plus the question words of STOP.
_NOT_CONTENT = frozenset(STOP | STOPWORDS | {t for w in STOPWORDS | STOP for t in analyze(w, stem=True)})


def _meaningful(term: str) -> bool:
    """Not a lone Latin letter; a digit and a one-syllable Korean stem ("휴가" -> "휴") carry meaning."""
    return len(term) > 1 or term.isdigit() or is_hangul(term)


def content_groups(words: Sequence[str]) -> list[frozenset[str]]:
    """The question's content words, each as the set of stemmed terms the shared analyzer gives it
    (a Korean stem with its bigrams, an identifier with its parts); stopwords and lone Latin
    letters are left out, and a word met twice counts once."""
    out: list[frozenset[str]] = []
    for word in words:
        terms = [t for t in analyze(word, stem=True) if t not in _NOT_CONTENT and _meaningful(t)]
        group = frozenset(terms)
        if group and group not in out:
            out.append(group)
    return out


def covered(sentence_terms: set[str], groups: Sequence[frozenset[str]]) -> set[int]:
    """Indexes of the groups the sentence covers: at least half of a group's terms (so "배포 절차"
    covers "배포절차" through its bigrams, and "token expiry" covers ``tokenExpiry``)."""
    return {i for i, g in enumerate(groups) if 2 * len(g & sentence_terms) >= len(g)}


def pick_sentences(
    words: Sequence[str],
    hits: Sequence[RankedHit],
    *,
    limit: int = 4,
    per_hit: int = 2,
    how: bool = False,
    lead: Sequence[int] = (),
) -> list[tuple[str, int]]:
    """Up to ``limit`` (sentence, hit index) pairs that cover the question's content ``words`` best.

    Only sentences covering at least ``MIN_COVERAGE`` of the content words count; none may be
    returned (nothing answers). ``how``: the question asks how to do something, so a code line
    counts as much as a written sentence. ``lead``: hit indexes whose best sentence comes first, in
    this order (the best hit of each reading of an ambiguous question)."""
    groups = content_groups(words)
    if not groups:
        return []
    need = MIN_COVERAGE * len(groups)
    done: set[int] = set()
    chosen: list[tuple[str, int]] = []
    candidates: list[tuple[float, int, int, str, set[int]]] = []
    for h, ranked in enumerate(hits[:8]):
        # Chat lines are separate messages; every other kind wraps its prose.
        wrapped = ranked.hit.kind != "chat"
        for s, sentence in enumerate(sentences(ranked.hit.text or ranked.hit.snippet, wrapped=wrapped)):
            have = covered(set(analyze(sentence, stem=True)), groups)
            if have and len(have) >= need:
                candidates.append((ranked.relevance, h, s, sentence, have))
    used: dict[int, int] = {}

    def written(sentence: str) -> bool:
        return _prose(sentence) or (how and sentence[:1] == "`")

    for h in lead:
        mine = [c for c in candidates if c[1] == h]
        if not mine or len(chosen) >= limit:
            continue
        best = max(mine, key=lambda c: (len(c[4]), written(c[3]), -c[2]))
        candidates.remove(best)
        if any(best[3] == c for c, _ in chosen):
            continue
        used[h] = used.get(h, 0) + 1
        done |= best[4]
        chosen.append((best[3], h))
    while candidates and len(chosen) < limit:
        best = max(candidates, key=lambda c: (len(c[4] - done), written(c[3]), c[0], -c[1], -c[2]))
        candidates.remove(best)
        _, h, _, sentence, have = best
        if not (have - done) and len(chosen) >= max(MIN_SENTENCES, len(lead)):
            break
        if used.get(h, 0) >= per_hit or any(sentence == c for c, _ in chosen):
            continue
        used[h] = used.get(h, 0) + 1
        done |= have
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
