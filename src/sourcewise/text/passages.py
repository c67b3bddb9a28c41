"""Prompt focus: the paragraphs of a page that best answer a prompt, ranked with Okapi BM25.

BM25 as in Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond"
(2009), with the non-negative idf ``ln((N - n + 0.5) / (n + 0.5) + 1)``, k1 = 1.2, b = 0.75; a
term the prompt repeats counts as often as it is said (as Lucene and bm25s weigh it). Text and
prompt go through the one analyzer (``text.analyze``, stemmed).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from sourcewise.models import Passage
from sourcewise.text.analyze import analyze, query_terms

__all__ = ["bm25_scores", "paragraphs", "top_passages"]

MAX_PARAGRAPH = 1200
_BLANK = re.compile(r"\n\s*\n")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the text's paragraphs; long ones are split near sentence ends."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in [*_BLANK.finditer(text), None]:
        end = match.start() if match else len(text)
        block_start = pos
        while end - block_start > MAX_PARAGRAPH:
            cut = text.rfind(". ", block_start, block_start + MAX_PARAGRAPH)
            cut = cut + 1 if cut > block_start else block_start + MAX_PARAGRAPH
            spans.append((block_start, cut))
            block_start = cut
        if text[block_start:end].strip():
            spans.append((block_start, end))
        pos = match.end() if match else len(text)
    trimmed = [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in spans]
    # A heading belongs to the paragraph under it: alone it would win every short query.
    merged: list[tuple[int, int]] = []
    for span in trimmed:
        if merged and text[merged[-1][0]] == "#" and "\n" not in text[merged[-1][0] : merged[-1][1]].strip():
            merged[-1] = (merged[-1][0], span[1])
        else:
            merged.append(span)
    return merged


def bm25_scores(
    query: Sequence[str], docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    """Okapi BM25 score of each tokenised document for the tokenised query."""
    n_docs = len(docs)
    if not n_docs:
        return []
    avgdl = sum(len(d) for d in docs) / n_docs or 1.0
    weight = Counter(query)
    terms = set(weight)
    # Only the query's terms matter: their document frequency and idf, computed once.
    df = Counter(term for doc in docs for term in terms.intersection(doc))
    idf = {term: math.log((n_docs - df[term] + 0.5) / (df[term] + 0.5) + 1) for term in terms}
    scores = []
    for doc in docs:
        score = 0.0
        if not terms.isdisjoint(doc):
            for term in terms:  # the same order as before, so the same sums to the last bit
                freq = doc.count(term)
                if not freq:
                    continue
                score += (
                    weight[term] * idf[term] * freq * (k1 + 1) / (freq + k1 * (1 - b + b * len(doc) / avgdl))
                )
        scores.append(score)
    return scores


def top_passages(text: str, prompt: str, k: int = 5) -> list[Passage]:
    """The ``k`` paragraphs that best match ``prompt``, best first; none when nothing matches."""
    spans = paragraphs(text)
    docs = [analyze(text[s:e], stem=True) for s, e in spans]
    scores = bm25_scores(query_terms(prompt, stem=True, repeats=True), docs)
    ranked = sorted(range(len(spans)), key=lambda i: (-scores[i], i))
    return [
        Passage(
            index=i,
            start=spans[i][0],
            end=spans[i][1],
            text=text[spans[i][0] : spans[i][1]].strip(),
            score=round(scores[i], 4),
        )
        for i in ranked[:k]
        if scores[i] > 0
    ]
