"""Seed 003 step 1: the query type, from signal words in Korean and English.

Each type has signal words; Korean stems also match inside a longer word ("결정했나요" has
"결정"). The type with the most signals wins; ties go to the earlier type in ``ORDER``, and a
question with no signal is ``exploration``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from typing import TypedDict

from sourcewise.errors import InvalidQuery
from sourcewise.models import QueryKind, QueryType
from sourcewise.planning.keywords import entry_starts, find_indexed, index, word_forms_of
from sourcewise.text.words import is_hangul, words

__all__ = ["ORDER", "SOURCE_PRIORITY", "classify_query"]

ORDER: tuple[QueryKind, ...] = ("decision", "person", "temporal", "status", "document", "fact", "exploration")

SIGNALS: dict[QueryKind, frozenset[str]] = {
    "decision": frozenset(
        {
            "decide",
            "decided",
            "decision",
            "decisions",
            "agree",
            "agreed",
            "agreement",
            "conclude",
            "concluded",
            "conclusion",
            "chose",
            "choose",
            "chosen",
            "approved",
            "sign-off",
            "settled",
            "결정",
            "합의",
            "결론",
            "확정",
            "승인",
            "정했",
        }
    ),
    "status": frozenset(
        {
            "status",
            "progress",
            "update",
            "updates",
            "blocked",
            "blocker",
            "eta",
            "on track",
            "where are we",
            "how far",
            "done yet",
            "상태",
            "진행",
            "진척",
            "현황",
            "진행상황",
            "어디까지",
        }
    ),
    "document": frozenset(
        {
            "spec",
            "specs",
            "specification",
            "document",
            "doc",
            "docs",
            "design doc",
            "rfc",
            "prd",
            "wiki page",
            "slides",
            "deck",
            "link to",
            "where is the",
            "문서",
            "스펙",
            "명세",
            "기획서",
            "자료",
            "설계서",
            "슬라이드",
            "링크",
        }
    ),
    "person": frozenset(
        {
            "who",
            "whom",
            "whose",
            "owner",
            "owns",
            "responsible",
            "assignee",
            "assigned",
            "working on",
            "누가",
            "누구",
            "담당",
            "담당자",
            "책임자",
            "오너",
        }
    ),
    "fact": frozenset(
        {
            "policy",
            "policies",
            "rule",
            "rules",
            "how many",
            "how much",
            "limit",
            "allowed",
            "official",
            "what is the",
            "정책",
            "규정",
            "규칙",
            "얼마",
            "몇",
            "한도",
            "기준",
        }
    ),
    "temporal": frozenset(
        {
            "when",
            "what date",
            "what time",
            "since when",
            "happened",
            "date",
            "언제",
            "날짜",
            "시점",
            "일자",
            "며칠",
        }
    ),
    "exploration": frozenset(
        {
            "what do we know",
            "tell me about",
            "overview",
            "everything",
            "anything about",
            "explore",
            "알고 있",
            "대해",
            "전반",
            "개요",
            "모든",
        }
    ),
}

SOURCE_PRIORITY: dict[QueryKind, list[str]] = {
    "decision": ["chat", "email", "knowledge_base", "project_tracker", "web"],
    "status": ["project_tracker", "chat", "knowledge_base", "email", "web"],
    "document": ["knowledge_base", "chat", "email", "project_tracker", "web"],
    "person": ["project_tracker", "chat", "email", "knowledge_base", "web"],
    "fact": ["knowledge_base", "web", "chat", "email", "project_tracker"],
    "temporal": ["chat", "email", "project_tracker", "knowledge_base", "web"],
    "exploration": ["knowledge_base", "chat", "email", "project_tracker", "web"],
}


# Each kind's vocabulary indexed for find_indexed, once.
_INDEXES = {kind: index(vocabulary) for kind, vocabulary in SIGNALS.items()}


@lru_cache(maxsize=64)
def _stems(vocabulary: frozenset[str]) -> tuple[str, ...]:
    return tuple(v for v in vocabulary if is_hangul(v) and " " not in v)


def _korean_stems(hangul_words: list[str], vocabulary: frozenset[str]) -> list[str]:
    stems = _stems(vocabulary)
    return [
        stem
        for word in hangul_words
        if word.startswith(stems)  # one test for all stems first: most words start with none
        for stem in stems
        if word.startswith(stem)
    ]


def signals_of(question: str, kind: QueryKind) -> list[str]:
    toks = words(question)
    return _signals(toks, [w for w in toks if is_hangul(w)], kind, _forms_of(toks))


def _signals(
    toks: list[str],
    hangul_words: list[str],
    kind: QueryKind,
    forms: tuple[list[tuple[str, ...]], frozenset[str]],
) -> list[str]:
    found = find_indexed(toks, forms[0], forms[1], _INDEXES[kind])
    if hangul_words:
        found += _korean_stems(hangul_words, SIGNALS[kind])
    return list(dict.fromkeys(found)) if len(found) > 1 else found


def _forms_of(toks: list[str]) -> tuple[list[tuple[str, ...]], frozenset[str]]:
    forms = [word_forms_of(t) for t in toks]
    return forms, frozenset(chain.from_iterable(forms))


def classify_query(question: str) -> QueryType:
    """The query type of ``question``, the signals that decided it, and where to look first."""
    if not isinstance(question, str):
        raise InvalidQuery(f"the question must be text, not {type(question).__name__}")
    return classify_words(words(question))


def classify_words(toks: list[str]) -> QueryType:
    """``classify_query`` for a question already split by ``text.words``."""
    return QueryType(**classify_fields(toks))


def classify_fields(toks: list[str]) -> _Fields:
    """``classify_words`` as the fields of the ``QueryType``, for a model that validates them as
    part of its own."""
    hangul_words = [w for w in toks if not w.isascii() and is_hangul(w)]
    forms = _forms_of(toks)
    candidates = _candidates(forms[1], hangul_words)
    return _decide({kind: _signals(toks, hangul_words, kind, forms) for kind in candidates})


class _Fields(TypedDict):
    kind: QueryKind
    signals: list[str]
    source_priority: list[str]


def _decide(found: dict[QueryKind, list[str]]) -> _Fields:
    """The kind with the most signals, the earlier in ``ORDER`` on a tie; none: exploration
    (``found``: the signals of some kinds; a kind left out has none)."""
    best: QueryKind = "exploration"
    most = 0
    for kind in ORDER:
        signals = found.get(kind)
        if signals and len(signals) > most:
            best, most = kind, len(signals)
    return {"kind": best, "signals": found.get(best, []), "source_priority": SOURCE_PRIORITY[best]}


@lru_cache(maxsize=1)
def _starts() -> tuple[
    dict[str, frozenset[QueryKind]], tuple[str, ...], tuple[tuple[QueryKind, tuple[str, ...]], ...]
]:
    """Every word that can start a signal of some kind -> those kinds; every Korean stem; and
    each kind's Korean stems."""
    kinds: dict[str, set[QueryKind]] = {}
    for kind in ORDER:
        for word in entry_starts(SIGNALS[kind]):
            kinds.setdefault(word, set()).add(kind)
    stems = tuple((kind, _stems(SIGNALS[kind])) for kind in ORDER if _stems(SIGNALS[kind]))
    every_stem = tuple(stem for _, group in stems for stem in group)
    return {word: frozenset(k) for word, k in kinds.items()}, every_stem, stems


def _candidates(every: frozenset[str], hangul_words: list[str]) -> set[QueryKind] | frozenset[QueryKind]:
    """The kinds that can have a signal here: a form of a word starts one of their entries
    (``find_forms`` finds nothing otherwise), or a Hangul word starts with one of their stems."""
    starts, every_stem, stems = _starts()
    out: set[QueryKind] | frozenset[QueryKind] = frozenset()
    for form in every & starts.keys():  # a set operation in C: few words start a signal
        out = out | starts[form]
    for word in hangul_words:
        if word.startswith(every_stem):
            out = set(out)
            out.update(kind for kind, prefixes in stems if word.startswith(prefixes))
    return out
