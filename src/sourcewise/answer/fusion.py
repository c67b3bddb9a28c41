"""Fusing a lexical and a semantic ranking into one. Pure.

``convex`` (the default) min-max normalises each leg's scores over its own candidates and mixes
them, ``alpha * lexical + (1 - alpha) * semantic``; a chunk missing from a leg gets 0 there. The
model reads a chunk's first 256 word pieces only (about 1,000 characters; ``kb.embed.read_share``):
of a longer chunk its semantic score speaks for that share and the lexical one for the rest, so a
PDF page whose answer sits after a table is not judged by the table alone.
``rrf`` is reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009): ``sum 1 / (k + rank)``.
Equal-weight RRF can be worse than its better leg when the legs differ much in quality; the
measured comparison that picked the default is in ``benchmarks/RESULTS.md`` (kb suite).

``semantic_reads`` says whether the semantic leg can read a query at all: all-MiniLM-L6-v2 was
trained on English, so for a query mostly in another script (Korean, Japanese, Chinese, Cyrillic
...) its vectors are noise and hybrid search stays lexical. Letters are counted as Unicode decomposes
them (NFD): a Hangul syllable is the two or three jamo it is written with, as "File" is four
letters, so "File 클래스" (4 Latin letters, 7 Hangul) is mostly Korean, as it reads; counted by
syllable blocks (4 of 7) MiniLM read it, and its leg pushed the passage that answers "File은 어떤
클래스를 상속하나요?" out of the hits.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["ALPHA", "LATIN_SHARE", "convex", "rrf", "semantic_reads"]

ALPHA = 0.5
LATIN_SHARE = 0.5  # the least share of a query's letters in Latin script for the semantic leg


def _latin(ch: str) -> bool:
    # Basic Latin, Latin-1, Latin Extended-A/B, IPA, Latin Extended Additional, fullwidth Latin.
    o = ord(ch)
    return o < 0x250 or 0x1E00 <= o < 0x1F00 or 0xFF21 <= o <= 0xFF5A


def semantic_reads(query: str) -> bool:
    """Whether an English sentence model can read ``query``: at least ``LATIN_SHARE`` of its letters
    (a Hangul syllable's jamo each, an accent not) are Latin. A query with no letters at all
    (numbers, symbols) is left to the model too."""
    letters = [ch for ch in unicodedata.normalize("NFD", query) if ch.isalpha()]
    if not letters:
        return True
    return sum(1 for ch in letters if _latin(ch)) >= LATIN_SHARE * len(letters)


K = TypeVar("K", bound=Hashable)  # a chunk's key: an id, or (segment, doc) in one view


def _normalised(scored: Sequence[tuple[K, float]]) -> dict[K, float]:
    if not scored:
        return {}
    values = [s for _, s in scored]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {key: (s - lo) / span if span > 0 else 1.0 for key, s in scored}


def _first_seen(keys: Sequence[K]) -> dict[K, int]:
    order: dict[K, int] = {}
    for key in keys:
        order.setdefault(key, len(order))
    return order


def convex(
    lexical: Sequence[tuple[K, float]],
    semantic: Sequence[tuple[K, float]],
    alpha: float = ALPHA,
    read: Mapping[K, float] | None = None,
) -> list[tuple[K, float]]:
    """(id, fused score) best first; ties keep the lexical order. ``read``: per chunk, the share
    of its text the model read (a long chunk's vector is of its beginning only); the semantic
    leg speaks for that share and the lexical leg for the rest (a chunk missing: all read)."""
    lex, sem = _normalised(lexical), _normalised(semantic)
    order = _first_seen([*lex, *sem])
    shares = read or {}

    def semantic_of(key: K) -> float:
        share = min(1.0, max(0.0, shares.get(key, 1.0)))  # a share outside 0..1 means nothing
        return share * sem.get(key, 0.0) + (1 - share) * lex.get(key, 0.0)

    fused = {key: alpha * lex.get(key, 0.0) + (1 - alpha) * semantic_of(key) for key in order}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def rrf(
    lexical: Sequence[tuple[K, float]], semantic: Sequence[tuple[K, float]], k: int = 60
) -> list[tuple[K, float]]:
    """(id, fused score) best first, by reciprocal rank fusion."""
    fused: dict[K, float] = {}
    for ranking in (lexical, semantic):
        for rank, (key, _) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    order = _first_seen([*(key for key, _ in lexical), *(key for key, _ in semantic)])
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))
