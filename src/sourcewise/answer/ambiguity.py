"""Seed 003's ambiguity check: do the hits split into clearly different readings of the question?

A reading is named by the word that qualifies a question term where the hits use it: "database
migration", "cloud migration", "email migration" give the readings *database*, *cloud* and
*email* of "migration". Only terms the question leaves unqualified count: a question that already
says "database migration" has one reading.

- two or more readings, none with 60% of the qualified hits or more, each with two hits or more:
  **ambiguous**, the answer is one clarifying question;
- one reading with 60% or more: **dominant**, no question;
- otherwise: minor ambiguity, answered with the best hits of each reading.

Pure and linear in the text of the hits it reads (the top ``window`` only).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from sourcewise.models import RankedHit, Reading
from sourcewise.text.analyze import analyze, noun

__all__ = ["DOMINANT_SHARE", "readings"]

DOMINANT_SHARE = 0.6
_WORD = re.compile(r"\w+")  # one character class: linear in the text
_HANGUL_WORD = re.compile("[\uac00-\ud7a3]+")
MIN_HITS = 2
STOP = frozenset(
    "the a an of for to and or in on our we this that new old our its is are was be by with "
    "이 그 저 및 또는 우리 새 이번 지난 what which how when where who why steps step".split()
)

Verdict = Literal["none", "dominant", "minor", "ambiguous"]


def _qualifiers(words: list[str], term: str, question: set[str]) -> set[str]:
    found = set()
    for i, word in enumerate(words):
        if word == term and i > 0:
            prev = words[i - 1]
            if prev not in STOP and prev not in question and not prev.isdigit() and len(prev) > 1:
                found.add(prev)
    return found


def _words(text: str) -> list[str]:
    """The text's words as index terms, one per word (a Korean word as the analyzer's noun, never
    its character pairs): a reading's label is made of whole words ("클라우드 마이그레이션", not
    "우드 마이그레이션"), and "마이그레이션이" is the word "마이그레이션"."""
    out: list[str] = []
    for word in _WORD.findall(text):
        terms = analyze(word)
        if terms:
            out.append(noun(word) if _HANGUL_WORD.fullmatch(word) else terms[0])
    return out


def readings(
    hits: Sequence[RankedHit], question_terms: Sequence[str], *, question: str = "", window: int = 20
) -> tuple[Verdict, list[Reading]]:
    """The verdict and the readings found, most common first. A term the question itself
    qualifies ("the *database* migration") has the reading the question names: no other counts."""
    asked = set(question_terms)
    said = _words(question)
    named = {said[i] for i in range(1, len(said)) if said[i - 1] not in STOP and len(said[i - 1]) > 1}
    best: tuple[Verdict, list[Reading]] = ("none", [])
    texts = [_words(f"{r.hit.title}. {r.hit.text or r.hit.snippet}") for r in hits[:window]]
    for term in dict.fromkeys(question_terms):
        if term in named:
            continue
        # A hit that uses two qualifiers ("sourcewise index", "default index") shows they are one
        # subject, not two readings: only a qualifier seen alone in a hit counts for that hit.
        labels: list[str] = []
        for words in texts:
            quals = _qualifiers(words, term, asked)
            if len(quals) == 1:
                labels.append(f"{quals.pop()} {term}")
            elif quals:
                labels.append("")
        counts = Counter(labels)
        shared = counts.pop("", 0)
        if len(counts) < 2 or shared >= sum(counts.values()):
            continue
        total = sum(counts.values()) + shared
        found = [Reading(label=k, hits=v, share=round(v / total, 3)) for k, v in counts.most_common()]
        strong = [r for r in found if r.hits >= MIN_HITS]
        if found[0].share >= DOMINANT_SHARE:
            verdict: Verdict = "dominant"
        elif len(strong) >= 2 and shared == 0:
            verdict = "ambiguous"
            found = strong
        else:
            verdict = "minor"
        rank = {"none": 0, "dominant": 1, "minor": 2, "ambiguous": 3}
        if rank[verdict] > rank[best[0]]:
            best = (verdict, found)
    return best
