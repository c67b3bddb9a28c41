"""The one text analyzer every private source indexes and queries with.

``analyze(text)`` turns text into index terms: NFKC-folded, lower-cased words; identifiers split
into their parts as well as kept whole (``tokenExpiry``, ``token_expiry`` and ``TokenExpiry`` all
give ``token`` and ``expiry``); Hangul words reduced to their stems (particles and endings off), so
"배포를 진행하는 절차는" and "배포 절차" meet. Sources store ``" ".join(analyze(text))`` in an FTS5
column with a whitespace-level tokenizer and run ``analyze(query)`` against it, so the index and the
query always agree.

One pass per word and no backtracking pattern, so the time is linear in the text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from .text import is_hangul, strip_particle

__all__ = ["analyze", "fts_query", "identifier_parts"]

MAX_TERM = 64  # longer "words" (hashes, base64) are cut: they never match a query anyway


def _raw_words(text: str) -> Iterator[str]:
    buf: list[str] = []
    for ch in text:
        if ch.isalnum() or ch == "_":
            buf.append(ch)
        elif buf:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


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


def analyze(text: str) -> list[str]:
    """Index terms for ``text``, in order (a word may give several terms)."""
    out: list[str] = []
    for word in _raw_words(unicodedata.normalize("NFKC", text)):
        word = word[:MAX_TERM]
        lower = word.lower()
        if is_hangul(word):
            out.append(strip_particle(lower))
            continue
        out.append(lower)
        parts = identifier_parts(word)
        if len(parts) > 1:
            out.extend(parts)
    return out


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression (any term, quoted so nothing in it is FTS syntax), or ``""``."""
    terms = dict.fromkeys(analyze(text))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
