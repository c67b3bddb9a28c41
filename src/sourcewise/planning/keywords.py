"""Keyword sets for routing (seed 001) and query typing (seed 003), Korean and English.

Matching is on words, never substrings, and Korean particles attached to a word are ignored
("시장을" matches "시장"). Multi-word entries ("case study", "our company") match word sequences.
Users extend the routing sets in config (``recency_keywords``, ``external_keywords``,
``internal_keywords``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from sourcewise.text.words import word_forms, words

__all__ = [
    "EXTERNAL",
    "INTERNAL",
    "INTERNAL_THINGS",
    "OWN",
    "RECENCY",
    "REQUEST_FILLER",
    "find",
    "release_signals",
    "tokens",
]

RECENCY: frozenset[str] = frozenset(
    {
        # seed 001
        "최근",
        "최신",
        "요즘",
        "현재",
        "지금",
        "올해",
        "이번",
        "트렌드",
        "동향",
        "현황",
        "전망",
        "recent",
        "latest",
        "current",
        "trend",
        "now",
        # what users also say
        "핫한",
        "hot",
        "요즘에",
        "새로운",
        "신규",
        "금년",
        "이번주",
        "이번달",
        "오늘",
        "recently",
        "currently",
        "trends",
        "trending",
        "today",
        "this year",
        "this week",
        "this month",
        "nowadays",
        "up-to-date",
        "up to date",
        "news",
        "newest",
        "state of the art",
    }
)
EXTERNAL: frozenset[str] = frozenset(
    {
        # seed 001
        "시장",
        "경쟁사",
        "경쟁",
        "업계",
        "산업",
        "사례",
        "벤치마크",
        "레퍼런스",
        "기술",
        "신기술",
        "혁신",
        "ai",
        "인공지능",
        "통계",
        "데이터",
        "수치",
        "규모",
        "market",
        "competitor",
        "industry",
        "case study",
        # what users also say
        "competitors",
        "competition",
        "markets",
        "industries",
        "case studies",
        "benchmark",
        "benchmarks",
        "statistics",
        "stats",
        "market size",
        "market share",
        "pricing",
        "price",
        "prices",
        "release notes",
        "changelog",
        "version",
        "vs",
        "versus",
        "comparison",
        "compare",
        "해외",
        "글로벌",
        "외부",
        "가격",
        "출시",
        "비교",
        "점유율",
        "global",
    }
)
# Seed 001's internal words, split by what they say. ``OWN`` words name the asker's own
# organisation ("사내", "우리", "our company", "in-house"): the question is about it. ``INTERNAL``
# words name things an organisation keeps (policies, manuals, processes, a team): they mark an
# internal question only with an ``OWN`` word or with nothing public asked; "latest EU AI Act
# policy news" and "Kubernetes network policy latest version" are public questions.
OWN: frozenset[str] = frozenset(
    {
        # seed 001
        "내부",
        "사내",
        "우리",
        "당사",
        # what users also say
        "저희",
        "우리회사",
        "사내망",
        "our company",
        "our team",
        "our org",
        "our organization",
        "our organisation",
        "our wiki",
        "our docs",
        "our codebase",
        "our repo",
        "internally",
        "in-house",
        "intranet",
    }
)
INTERNAL: frozenset[str] = frozenset(
    {
        # seed 001
        "규정",
        "매뉴얼",
        "절차",
        "프로세스",
        "회사",
        # what users also say
        "policy",
        "policies",
        "handbook",
        "employee handbook",
        "company policy",
        "onboarding",
        "process",
        "procedure",
        "manual",
        "guidelines",
        "사규",
        "인사규정",
        "복리후생",
        "팀",
        "부서",
        "위키",
        "정책",
    }
)
# "internal" is the asker's own only before what an organisation keeps ("internal wiki", "internal
# tools"), not in "internal combustion engine" or "internal medicine".
INTERNAL_THINGS: frozenset[str] = frozenset(
    "wiki docs documentation doc policy policies tools tool process processes handbook guidelines guide "
    "memo memos portal systems system team teams meeting meetings dashboard audit release survey "
    "training rules api apis service services project projects report reports".split()
)
# Words that ask for something rather than say what: dropped from a web query.
REQUEST_FILLER: frozenset[str] = frozenset(
    {
        "분석",
        "정리",
        "조사",
        "알려줘",
        "알려주세요",
        "찾아줘",
        "찾아주세요",
        "검색",
        "검색해줘",
        "해줘",
        "해주세요",
        "좀",
        "please",
        "search",
        "find",
        "tell",
        "me",
        "about",
        "show",
    }
)
# Recency words that carry no content of their own: dropped from a web query.
RECENCY_FILLER: frozenset[str] = frozenset(
    {
        "최근",
        "최신",
        "요즘",
        "현재",
        "지금",
        "핫한",
        "요즘에",
        "recent",
        "recently",
        "latest",
        "current",
        "currently",
        "now",
        "nowadays",
        "newest",
        "up-to-date",
    }
)
# Filler that means "popular now": replaced by a trend word when the query has none.
HOT = frozenset({"핫한", "hot", "trending", "인기", "인기있는"})
TREND_WORDS = frozenset({"트렌드", "동향", "trend", "trends", "전망"})


# "What's new in X" asks about a release: recent by nature. "What changed" does too when it names a
# version ("What changed in Python 3.14?"); without one ("what changed in our deploy process") it
# may well be internal, so it is no signal on its own.
_WHATS = frozenset({"what's", "whats", "what’s"})
_CHANGE_WORDS = frozenset({"changed", "changes", "변경사항", "변경점", "달라진", "바뀐"})


def _versioned(word: str) -> bool:
    """``3.14``, ``19``, ``v2.0``, ``5.x``: a version number (one pass, no pattern)."""
    body = word[1:] if word[:1] == "v" else word
    parts = body.split(".")
    return bool(parts[0]) and parts[0].isdigit() and all(p.isdigit() or p == "x" for p in parts[1:] if p)


def release_signals(question: str) -> list[str]:
    """Recency signals of a release question: "what's new" (in anything), and "what changed" /
    "변경사항" beside a version number."""
    toks = tokens(question)
    found: list[str] = []
    for i, tok in enumerate(toks):
        if (
            tok == "new"
            and i
            and (toks[i - 1] in _WHATS or (toks[i - 1] == "is" and toks[i - 2 : i - 1] == ["what"]))
        ):
            found.append("what's new")
        elif tok in _CHANGE_WORDS and any(_versioned(t) for t in toks):
            found.append(tok)
    return list(dict.fromkeys(found))


def tokens(text: str) -> list[str]:
    """The text's words, lower-cased, in order."""
    return words(text)


def find(text_or_tokens: str | Sequence[str], vocabulary: Iterable[str]) -> list[str]:
    """The vocabulary entries present in the text, as words or word sequences, in text order."""
    toks = tokens(text_or_tokens) if isinstance(text_or_tokens, str) else list(text_or_tokens)
    vocab = vocabulary if isinstance(vocabulary, frozenset) else frozenset(vocabulary)
    forms = [word_forms_of(t) for t in toks]
    return find_forms(toks, forms, frozenset(f for pair in forms for f in pair), vocab)


def find_forms(
    toks: Sequence[str], forms: Sequence[tuple[str, ...]], every: frozenset[str], vocab: frozenset[str]
) -> list[str]:
    """``find`` for words already split, with their ``word_forms`` and the set of all of those:
    for a caller that looks for several vocabularies in one text."""
    return find_indexed(toks, forms, every, _index(vocab))


def find_indexed(
    toks: Sequence[str], forms: Sequence[tuple[str, ...]], every: frozenset[str], indexed: _Index
) -> list[str]:
    """``find_forms`` with the vocabulary's ``index(vocabulary)`` (for a caller that keeps it)."""
    index, starts = indexed
    if starts.isdisjoint(every):
        return []  # no word of the text can start an entry
    found: list[tuple[int, str]] = []
    taken: set[int] = set()
    count = len(toks)
    for size, entries, firsts in index:  # longest entries first
        if size == 0 or size > count:
            continue  # an empty entry names nothing
        if firsts is None:  # one-word entries: any form of a word not yet taken
            if entries.isdisjoint(every):
                continue
            for i, word_forms in enumerate(forms):
                if i in taken:
                    continue
                for form in word_forms:
                    if form in entries:
                        found.append((i, form))
                        taken.add(i)
                        break
            continue
        if firsts.isdisjoint(every):
            continue  # no entry of this size can start at any word
        for i in range(count - size + 1):
            if toks[i] not in firsts:
                continue  # cheap test first: a phrase can only start with its first word
            span = range(i, i + size)
            if taken and not taken.isdisjoint(span):
                continue
            head = " ".join(toks[i : i + size - 1]) + " "
            for last in forms[i + size - 1]:
                phrase = head + last
                if phrase in entries:
                    found.append((i, phrase))
                    taken.update(span)
                    break
    found.sort()
    return [phrase for _, phrase in found]


def index(vocabulary: frozenset[str]) -> _Index:
    """The vocabulary's index for ``find_indexed`` (built once per vocabulary)."""
    return _index(vocabulary)


def entry_starts(vocabulary: frozenset[str]) -> frozenset[str]:
    """Every word that can start an entry of ``vocabulary`` (lower-cased): ``find_forms`` finds
    nothing in a text none of whose word forms is one of these."""
    return _index(vocabulary)[1]


_Index = tuple[tuple[tuple[int, frozenset[str], frozenset[str] | None], ...], frozenset[str]]


@lru_cache(maxsize=64)
def _index(vocabulary: frozenset[str]) -> _Index:
    """The vocabulary lower-cased and grouped by number of words, longest first, with the first
    words of the longer entries, and every word that can start an entry (a one-word entry or
    the first word of a longer one): built once per vocabulary, not per question."""
    by_size: dict[int, set[str]] = {}
    for entry in {v.lower() for v in vocabulary}:
        by_size.setdefault(len(entry.split()), set()).add(entry)
    groups = tuple(
        (
            size,
            frozenset(by_size[size]),
            frozenset(entry.split()[0] for entry in by_size[size]) if size > 1 else None,
        )
        for size in sorted(by_size, reverse=True)
    )
    starts = frozenset(
        word
        for size, entries, firsts in groups
        if size
        for word in (firsts if firsts is not None else entries)
    )
    return groups, starts


@lru_cache(maxsize=8192)
def word_forms_of(word: str) -> tuple[str, ...]:
    """``word_forms(word)`` as a tuple, kept: questions repeat their words."""
    return tuple(word_forms(word))
