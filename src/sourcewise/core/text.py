"""Word-level text helpers shared by the rater, the router and the planner (Korean-aware)."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["is_hangul", "strip_particle", "word_forms", "words"]

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


def is_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


def words(text: str) -> list[str]:
    """The words of ``text`` in order, lower-cased, trailing sentence punctuation removed."""
    return [m.group(0).lower().rstrip(".'-") or m.group(0).lower() for m in _WORD.finditer(text)]


def strip_particle(word: str) -> str:
    """``"시장을"`` -> ``"시장"``; words that are not Hangul or have no particle come back as is."""
    if not is_hangul(word):
        return word
    for particle in PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            return word[: -len(particle)]
    return word


def word_forms(word: str) -> Iterator[str]:
    """The word itself, then (for Hangul) the word without its particle, if different."""
    yield word
    stem = strip_particle(word)
    if stem != word:
        yield stem
