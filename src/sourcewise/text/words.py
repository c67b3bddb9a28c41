"""Word-level text helpers shared by the rater, the router and the planner (Korean-aware).

Korean particles are the analyzer's (``text.analyze``): one set of rules everywhere."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sourcewise.text.analyze import is_hangul, strip_particle
from sourcewise.text.sanitize import drop_escapes

__all__ = ["cut_words", "is_hangul", "json_safe", "printable", "strip_particle", "word_forms", "words"]

# A word keeps inner dots, plus and sharp signs so that "next.js", "c++", "c#" and ".net" survive.
_WORD = re.compile(r"[.]?[\w][\w.+#'-]*[\w+#]|[.]?\w", re.UNICODE)

# What a terminal must never receive from outside text: C0 and C1 controls (escape sequences,
# OSC titles, bells), bidi overrides and isolates (text that reads differently than it is), and
# lone surrogates (which cannot even be encoded).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ELLIPSIS = "…"
_NEWLINES = re.compile("[\r\n\t\x0b\x0c\x85\u2028\u2029]+")


def _replace_unsafe(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group(0) <= "\udfff" else ""


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe for a terminal: escape sequences (``drop_escapes``), controls and bidi
    overrides removed, lone surrogates replaced; tabs and newlines kept unless ``one_line``."""
    text = drop_escapes(text)
    if one_line:
        text = _NEWLINES.sub(" ", text)
    return _UNSAFE.sub(_replace_unsafe, text)


def _escape_json(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def json_safe(text: str) -> str:
    """JSON text with the characters ``printable`` removes written as ``\\uXXXX`` escapes
    instead: the same JSON values, safe on a terminal. (JSON escapes C0 controls itself.)"""
    return _UNSAFE.sub(_escape_json, text)


def cut_words(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last space that fits, with '…'
    (a single word longer than that is cut where it must)."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[: max(limit, 0)]
    room = text[: limit - len(ELLIPSIS)]
    cut = room.rsplit(" ", 1)[0] if " " in room else room
    return cut.rstrip(" ,;:-–—") + ELLIPSIS


def words(text: str) -> list[str]:
    """The words of ``text`` in order, lower-cased, trailing sentence punctuation removed."""
    # A match ends in a word character, "+" or "#" (see _WORD), and lower-casing makes no ".", "'"
    # or "-": no sentence punctuation is ever left at the end of a word.
    if text.isascii():  # lower-casing ASCII first changes no match
        return _WORD.findall(text.lower())
    return list(map(str.lower, _WORD.findall(text)))


def word_forms(word: str) -> Iterator[str]:
    """The word itself, then (for Hangul) the word without its particle, if different."""
    yield word
    stem = strip_particle(word)
    if stem != word:
        yield stem
