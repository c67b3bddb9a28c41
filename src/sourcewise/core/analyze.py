"""The one text analyzer every private source indexes and queries with.

``analyze(text)`` turns text into index terms: NFKC-folded, lower-cased words; identifiers split
into their parts as well as kept whole (``tokenExpiry``, ``token_expiry`` and ``TokenExpiry`` all
give ``token`` and ``expiry``); with ``stem=True`` (the knowledge base) Latin words are stemmed
(Snowball English, so "measurements" meets "measurement"). Hangul words are reduced to their
stems, particles and verb endings off, so "배포를 진행하는 절차는" and "배포 절차" meet, and longer
stems add their character bigrams so that a compound ("배포절차") meets its parts. Sources store
``" ".join(analyze(text))`` in an FTS5 column with a whitespace-level tokenizer and run
``analyze(query)`` against it (with the same ``stem``), so the index and the query always agree.
``ANALYZER_ID`` names this analyzer; an index records it and re-analyzes when it changes.

The Korean rules (particle and ending stripping plus bigrams) were measured against the kiwipiepy
morphological analyzer on the Korean test set in ``benchmarks/data/korean.json``; the figures are
in ``benchmarks/RESULTS.md`` (kb suite).

One pass per word and no backtracking pattern, so the time is linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

from .text import PARTICLES, is_hangul

__all__ = [
    "ANALYZER_ID",
    "STOPWORDS",
    "analyze",
    "fts_query",
    "hangul_stem",
    "identifier_parts",
    "query_terms",
]

ANALYZER_ID = "sw2:snowball-en+ko-rules-bigram"
MAX_TERM = 64  # longer "words" (hashes, base64) are cut: they never match a query anyway

# Verb and adjective endings after a noun stem ("진행하는", "배포됩니다", "안정적인"). Longest first.
# Only stripped when at least two syllables remain, so short nouns ("창고", "바다") stay whole.
KO_ENDINGS: tuple[str, ...] = tuple(
    sorted(
        {
            "하는", "하고", "하여", "해서", "했다", "한다", "합니다", "했습니다", "하면", "하기", "하지",
            "할", "한", "함", "해야", "하려면", "하세요", "하십시오", "하며", "하던", "했던", "하게",
            "해", "했고", "하였다", "하였습니다", "하므로", "하니", "하려고", "되는", "되고", "되어",
            "돼서", "된다", "됩니다", "되었다", "됐다", "된", "될", "되면", "됨", "되며", "되지",
            "되었습니다", "시키는", "시킨", "시키고", "적인", "적으로", "적", "스러운", "스럽게",
            "이다", "입니다", "이고", "이며", "였다", "이었다", "에서", "으로", "에게", "부터", "까지",
            "습니다", "ㅂ니다", "니다", "세요", "는데", "지만", "면서",
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip

# English function words dropped from queries (never from the index, so phrases still match).
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have in into is it its of on or that the their "
    "then there these they this to was were will with what which who how why when where do does "
    "did not no can".split()
)

# (suffix, syllables that must remain): particles may leave one ("책을"), endings two.
_SUFFIXES: tuple[tuple[str, int], ...] = tuple(
    sorted({**{p: 1 for p in PARTICLES}, **{e: 2 for e in KO_ENDINGS}}.items(), key=lambda s: -len(s[0]))
)
_STEMMER = Stemmer.Stemmer("english")


def identifier_parts(word: str) -> list[str]:
    """``"parseHTTPResponse2"`` -> ``["parse", "http", "response", "2"]``; ``snake_case`` too."""
    parts: list[str] = []
    for piece in word.split("_"):
        start = 0
        for i in range(1, len(piece)):
            prev, ch = piece[i - 1], piece[i]
            nxt = piece[i + 1] if i + 1 < len(piece) else ""
            boundary = (
                (prev.islower() and ch.isupper())
                or (prev.isalpha() != ch.isalpha() and (prev.isdigit() or ch.isdigit()))
                or (prev.isupper() and ch.isupper() and nxt.islower())
            )
            if boundary:
                parts.append(piece[start:i])
                start = i
        if piece[start:]:
            parts.append(piece[start:])
    return [p.lower() for p in parts if p]


@lru_cache(maxsize=65536)
def hangul_stem(word: str) -> str:
    """``"시장을"`` -> ``"시장"``, ``"진행하는"`` -> ``"진행"``: the longest particle or ending, off."""
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[: -len(suffix)]
    return word


def _hangul_terms(word: str) -> list[str]:
    stem = hangul_stem(word)
    if len(stem) < 3:
        return [stem]
    # Bigrams let a compound ("배포절차") meet its parts ("배포", "절차") without a dictionary.
    return [stem, *(stem[i : i + 2] for i in range(len(stem) - 1))]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word)) if word.isascii() and word.isalpha() else word


@lru_cache(maxsize=65536)
def _word_terms(word: str, stem: bool) -> tuple[str, ...]:
    # ``word`` is cut to MAX_TERM by the caller, so the cache holds at most 65,536 short keys.
    lower = word.lower()
    if is_hangul(word):
        return tuple(_hangul_terms(lower))
    out = [_stem(lower) if stem else lower]
    parts = identifier_parts(word)
    if len(parts) > 1:
        out.extend(_stem(p) for p in parts) if stem else out.extend(parts)
    return tuple(out)


# A word: str.isalnum() characters and "_" (exactly what \w matches); one class, so linear in the text.
_WORD_RUN = re.compile(r"\w+")


def analyze(text: str, *, stem: bool = False) -> list[str]:
    """Index terms for ``text``, in order (a word may give several terms); ``stem``: Latin words too."""
    out: list[str] = []
    for word in _WORD_RUN.findall(unicodedata.normalize("NFKC", text)):
        out.extend(_word_terms(word[:MAX_TERM], stem))  # word by word through a cache: words repeat
    return out


_STOP_TERMS = frozenset({_stem(w) for w in STOPWORDS} | STOPWORDS)


def query_terms(text: str, *, stem: bool = False) -> list[str]:
    """The distinct terms of a query, English stopwords left out unless nothing else is left."""
    terms = list(dict.fromkeys(analyze(text, stem=stem)))
    kept = [t for t in terms if t not in _STOP_TERMS]
    return kept or terms


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression (any term, quoted so nothing in it is FTS syntax), or ``""``."""
    return " OR ".join(_quote(t) for t in query_terms(text))
