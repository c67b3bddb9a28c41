"""Seed 003 step 2's negations ("부정: 제외할 항목"), scoped to the phrase they govern.

- ``-word`` / ``-"two words"``: the word (or phrase) after the minus;
- English ``not``, ``without``, ``except``, ``excluding``, ``other than``, ``apart from``: the
  noun phrase that follows, articles and a leading preposition skipped (``not the mobile app``
  excludes ``mobile app``, never ``the``), up to three words, ending at punctuation, a
  conjunction or a preposition. ``not`` excludes only where it opens a clause (``, not X``) or
  an article or preposition follows; ``the build is not passing`` describes, and is no negation;
- Korean ``제외`` (``제외한``, ``제외하고``), ``빼고``, ``말고``: the word before it, its particle off
  (``모바일을 제외한`` excludes ``모바일``); a bare noun just before a word with an object or topic
  particle joins it (``모바일 앱을 제외한`` excludes ``모바일 앱``); bare nouns that open the question
  before the cue (recency words aside) are excluded together, the topic following
  (``테스트 서버 제외 배포 이력`` excludes ``테스트 서버``), while after the topic the cue takes one
  word (``결제 오류 모바일 빼고``).

The words that say "exclude" leave the text with the phrase they govern, so neither becomes a
keyword. One pass over the question's tokens: linear in its length.
"""

from __future__ import annotations

import re

from sourcewise.planning.keywords import RECENCY
from sourcewise.text.analyze import noun
from sourcewise.text.words import is_hangul, strip_particle

__all__ = ["negations"]

# A token: a run of anything but blanks and sentence punctuation, or one punctuation mark.
_TOKEN = re.compile(r"[^\s,.;:!?()\[\]{}]+|[,.;:!?()\[\]{}]")
_CUES = frozenset({"not", "without", "except", "excluding", "excl", "minus"})
_PAIRS = frozenset(
    {("other", "than"), ("apart", "from"), ("aside", "from"), ("except", "for"), ("not", "including")}
)
_LEAD = frozenset(
    "the a an any all in on for from of about with by our my their its this that these those".split()
)
_END = frozenset(
    "and or but nor for from in on at by to of with that which who where when while since until than "
    "as so because please is are was were be".split()
)
_KO_CUES = ("제외", "빼고", "빼면", "뺀", "말고")
_KO_JOIN = frozenset({"을", "를", "은", "는", "만", "도"})
_KO_STOP = frozenset("중 및 등 그리고 또는 것 거 관련 대한 우리 저희".split())
MAX_WORDS = 3


def _word(tok: str) -> bool:
    return any(ch.isalnum() for ch in tok)


def _ko_cue(tok: str) -> int:
    """Where a Korean exclusion word starts in ``tok`` (``-1``: none)."""
    for cue in _KO_CUES:
        at = tok.find(cue)
        if at >= 0 and (cue != "뺀" or at == len(tok) - 1 or at == 0):
            return at
    return -1


def _may_negate(text: str) -> bool:
    """False when no rule below can apply: no hyphen, no Korean cue, no English cue word."""
    if "-" in text:
        return True
    if not text.isascii() and any(cue in text for cue in _KO_CUES):
        return True
    low = text.lower()
    return any(cue in low for cue in ("not", "without", "except", "excl", "minus", "than", "from"))


def negations(text: str) -> tuple[list[str], str]:
    """The phrases ``text`` excludes, in order, and the text without them and their cue words."""
    if not _may_negate(text):
        return [], text
    toks = _TOKEN.findall(text)
    low = [t.lower() for t in toks]
    drop = [False] * len(toks)
    found: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        # "-draft" excludes; "-s", "-A" (one letter) and "--unique" name options: no one excludes a letter
        if tok.startswith("-") and not tok.startswith("--") and len(tok.strip("\"'")) > 2 and _word(tok[1:]):
            found.append(tok[1:].strip("\"'"))
            drop[i] = True
        elif low[i] in _CUES or (i + 1 < len(toks) and (low[i], low[i + 1]) in _PAIRS):
            width = 2 if i + 1 < len(toks) and (low[i], low[i + 1]) in _PAIRS else 1
            if width == 2 or low[i] != "not" or _excludes(toks, low, i):
                end, phrase = _english_phrase(toks, low, i + width)
                if phrase:
                    found.append(phrase)
                    for k in range(i, end):
                        drop[k] = True
                    i = end
                    continue
        elif not tok.isascii() and is_hangul(tok) and (at := _ko_cue(tok)) >= 0:
            phrase, spans = _korean_phrase(toks, drop, i, at)
            if phrase:
                found.append(phrase)
                for k in spans:
                    drop[k] = True
        i += 1
    rest = " ".join(t for t, gone in zip(toks, drop, strict=True) if not gone)
    return list(dict.fromkeys(found)), rest


def _excludes(toks: list[str], low: list[str], i: int) -> bool:
    """Whether the ``not`` at ``i`` excludes: it opens a clause (``, not X``) or an article or a
    preposition follows (``not the mobile app``); ``the build not passing`` describes."""
    opens = i == 0 or not _word(toks[i - 1])
    return opens or (i + 1 < len(toks) and low[i + 1] in _LEAD)


def _english_phrase(toks: list[str], low: list[str], start: int) -> tuple[int, str]:
    """The noun phrase from ``start`` (leading articles and one preposition skipped): where it
    ends and its words."""
    j = start
    while j < len(toks) and low[j] in _LEAD:
        j += 1
    words: list[str] = []
    while j < len(toks) and len(words) < MAX_WORDS and _word(toks[j]) and low[j] not in _END:
        if low[j] in _CUES:
            break
        words.append(toks[j].strip("\"'"))
        j += 1
    return j, " ".join(w for w in words if w)


def _opening_nouns(toks: list[str], drop: list[bool], k: int) -> list[int]:
    """The tokens up to ``k`` when bare nouns (no particle, no stop word) open the text with them
    (after recency words), at most ``MAX_WORDS``: an exclusion that opens the question governs all
    of them, its topic following."""
    start = 0
    while start < k and toks[start] in RECENCY:
        start += 1
    if k + 1 - start > MAX_WORDS:
        return []
    for j in range(start, k + 1):
        tok = toks[j]
        if drop[j] or not _word(tok) or tok in _KO_STOP or tok in RECENCY or strip_particle(tok) != tok:
            return []
    return list(range(start, k + 1))


def _korean_phrase(toks: list[str], drop: list[bool], i: int, at: int) -> tuple[str, list[int]]:
    """The word(s) a Korean exclusion word at ``toks[i]`` (cue at ``at``) governs, and the tokens
    to take out (the cue's included)."""
    if at > 0:  # glued: "모바일제외", "모바일을제외한"
        return noun(toks[i][:at]), [i]
    k = i - 1
    if k < 0 or drop[k] or not _word(toks[k]):
        return "", []
    head = toks[k]
    word = noun(head)
    spans = [k, i]
    particle = head[len(word) :]
    opening = _opening_nouns(toks, drop, k)
    if not particle and opening and i + 1 < len(toks):  # "테스트 서버 제외 배포 이력"
        return " ".join(toks[j] for j in opening), [*opening, i]
    if particle in _KO_JOIN and k > 0 and not drop[k - 1]:
        prev = toks[k - 1]
        if _word(prev) and strip_particle(prev) == prev and prev not in _KO_STOP:
            word, spans = f"{prev} {word}", [k - 1, *spans]
    return word, spans
