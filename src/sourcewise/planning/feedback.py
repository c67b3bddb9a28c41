"""RM3 pseudo-relevance feedback for the retrieve loop, with no model.

``expand`` reads the top candidates' whole text: the task's query model mixed half and half with
the words that weigh most in them (each word's share of a candidate's text times that candidate's
relevance), code keywords, task verbs and words found in more than half of the pool left out; the
analyzer's Snowball stems (``text.analyze.stem``), as every source uses.

Pure: no I/O, no clock, stable order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sourcewise.planning.refine import CODE_STOP, LEARNED_WEIGHT, TASK_STOP, Vocabulary
from sourcewise.sources.code.facts import path_parts
from sourcewise.text.analyze import analyze, readable, stem

__all__ = ["FB_DOCS", "FB_QUERY", "bag", "expand", "key_stems"]

MAX_BAG = 200_000  # characters of a candidate read for feedback
FB_DOCS = 5  # RM3's usual settings (Lavrenko & Croft; Anserini's defaults are 10/10/0.5)
FB_TERMS = 10
FB_QUERY = 5  # feedback words added to the next query
ORIGINAL_WEIGHT = 0.5


def bag(text: str, path: str = "", surface: dict[str, str] | None = None) -> Counter[str]:
    """Word counts (Snowball stems) of a candidate's text and path: what feedback reads and scores.
    ``surface``: filled with a word as written for each stem (a query is sent as written)."""
    words = [w for p in path_parts(path) for w in analyze(p)] if path else []
    words += readable(analyze(text[:MAX_BAG]))  # words: what feedback sends on is searched as written
    out: Counter[str] = Counter()
    for w, n in Counter(w for w in words if len(w) > 1).items():  # each distinct word stemmed once
        st = stem(w)
        out[st] += n
        if surface is not None:
            surface.setdefault(st, w)
    return out


def key_stems(vocab: Vocabulary) -> dict[str, float]:
    """The task's query model: its key terms (1 each) and learned words (as much as they are trusted)."""
    out = {stem(t): 1.0 for t in vocab.key}
    for item in vocab.learned:
        st = stem(item.term)
        out[st] = max(out.get(st, 0.0), LEARNED_WEIGHT * item.confidence)
    return out


def _useful(word: str) -> bool:
    return len(word) > 2 and word.isalpha() and word not in CODE_STOP and word not in TASK_STOP


def expand(
    vocab: Vocabulary, top: Sequence[tuple[Counter[str], float]], bags: Sequence[Counter[str]]
) -> dict[str, float]:
    """RM3: the task's query model mixed half and half with the words of the top candidates
    (``top``: their bags and relevance), each word weighted by its share of each feedback
    candidate's text times that candidate's relevance. Words in more than half of ``bags`` (the
    pool) say nothing about this task and are left out, as are code keywords and task verbs."""
    original = key_stems(vocab)
    common = max(3, len(bags) // 2)
    df = Counter(w for b in bags for w in b)
    rel: dict[str, float] = {}
    for counts, score in top:
        total = sum(counts.values()) or 1
        for word, n in counts.items():
            if word in original or not _useful(word) or df[word] > common:
                continue
            rel[word] = rel.get(word, 0.0) + n / total * score
    chosen = sorted(rel, key=lambda w: (-rel[w], w))[:FB_TERMS]
    fb_total = sum(rel[w] for w in chosen) or 1.0
    orig_total = sum(original.values()) or 1.0
    mix = ORIGINAL_WEIGHT if chosen and original else 1.0 if original else 0.0
    out = {w: mix * v / orig_total for w, v in original.items()}
    for w in chosen:
        out[w] = (1 - mix) * rel[w] / fb_total
    return out
