"""Word-level text helpers shared by the rater, the router and the planner (Korean-aware)."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["is_hangul", "json_safe", "printable", "strip_particle", "word_forms", "words"]

# A word keeps inner dots, plus and sharp signs so that "next.js", "c++", "c#" and ".net" survive.
_WORD = re.compile(r"[.]?[\w][\w.+#'-]*[\w+#]|[.]?\w", re.UNICODE)

# Korean particles and copulas that attach to the end of a noun ("시장을", "트렌드가", "규정에서").
# Longest first, so that "에서" is tried before "서".
PARTICLES: tuple[str, ...] = tuple(
    sorted(
        {
            "은",
            "는",
            "이",
            "가",
            "을",
            "를",
            "의",
            "에",
            "에서",
            "에게",
            "께",
            "께서",
            "한테",
            "으로",
            "로",
            "와",
            "과",
            "도",
            "만",
            "까지",
            "부터",
            "보다",
            "처럼",
            "이나",
            "나",
            "랑",
            "이랑",
            "으로서",
            "로서",
            "으로써",
            "로써",
            "에서의",
            "에의",
            "이란",
            "란",
            "이라",
            "라",
            "이다",
            "입니다",
            "이에요",
            "예요",
            "들",
            "들이",
            "들을",
            "들의",
            "에는",
            "에서는",
            "으로는",
            "로는",
            "과의",
            "와의",
            "하고",
            "이며",
            "며",
            "요",
        },
        key=len,
        reverse=True,
    )
)


# What a terminal must never receive from outside text: C0 and C1 controls (escape sequences,
# OSC titles, bells), bidi overrides and isolates (text that reads differently than it is), and
# lone surrogates (which cannot even be encoded).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NEWLINES = re.compile("[\r\n\t\x0b\x0c\x85\u2028\u2029]+")


def _replace_unsafe(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group(0) <= "\udfff" else ""


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe for a terminal: controls and bidi overrides removed, lone surrogates
    replaced; tabs and newlines kept unless ``one_line``."""
    if one_line:
        text = _NEWLINES.sub(" ", text)
    return _UNSAFE.sub(_replace_unsafe, text)


def _escape_json(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def json_safe(text: str) -> str:
    """JSON text with the characters ``printable`` removes written as ``\\uXXXX`` escapes
    instead: the same JSON values, safe on a terminal. (JSON escapes C0 controls itself.)"""
    return _UNSAFE.sub(_escape_json, text)


_PARTICLE_SET = frozenset(PARTICLES)
_LONGEST_PARTICLE = max(map(len, PARTICLES))
_HANGUL = re.compile("[\uac00-\ud7a3]")


def is_hangul(text: str) -> bool:
    return not text.isascii() and _HANGUL.search(text) is not None


def words(text: str) -> list[str]:
    """The words of ``text`` in order, lower-cased, trailing sentence punctuation removed."""
    # A match ends in a word character, "+" or "#" (see _WORD), and lower-casing makes no ".", "'"
    # or "-": no sentence punctuation is ever left at the end of a word.
    if text.isascii():  # lower-casing ASCII first changes no match
        return _WORD.findall(text.lower())
    return list(map(str.lower, _WORD.findall(text)))


def strip_particle(word: str) -> str:
    """``"시장을"`` -> ``"시장"``; words that are not Hangul or have no particle come back as is."""
    if not is_hangul(word):
        return word
    for size in range(min(_LONGEST_PARTICLE, len(word) - 1), 0, -1):  # longest particle first
        if word[-size:] in _PARTICLE_SET:
            return word[:-size]
    return word


def word_forms(word: str) -> Iterator[str]:
    """The word itself, then (for Hangul) the word without its particle, if different."""
    yield word
    stem = strip_particle(word)
    if stem != word:
        yield stem
