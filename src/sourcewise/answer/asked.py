"""What a question asks, and how well a unit fits it (no model): ``answer.pick`` reads a question
with ``read`` and scores units with ``fit``.

**The question** (``read``): its content words, each as the set of stemmed terms the analyzer
gives it (a group); which of them are *specific* (not "default", "value", "operator", "use" ...,
which every page of a manual says); operators and options it names (``?``, ``::``, ``-t``); and
its type: a "default" question wants a value; a "how" question (or one asking which option or
command) a step, a command or an option's entry; a "what is" question a definition; a when / who /
how-many question a date or what the event follows, a name, a number; a question asking for the
members of a set ("What event hooks are there?") the sentence that announces or counts them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import re2  # type: ignore[import-untyped]

from sourcewise.answer.extractive import Unit, procedural
from sourcewise.sources.filters import filter_of
from sourcewise.text.analyze import STOPWORDS, analyze, question_word
from sourcewise.web.weburls import find_urls

__all__ = [
    "GENERIC", "Asked", "QuestionKind", "completes", "covered", "fit", "needed", "read", "says_default",
]  # fmt: skip

QuestionKind = Literal["default", "how", "what", "when", "who", "number", "list", "other"]
GENERIC_WORDS = """default defaults value values option options setting settings set use used using way
    work works thing things example examples file files need want get make happen mean means type
    kind new show tell explain describe difference differ between list support supports return
    returns function method parameter parameters argument arguments operator operators latest current
    thing something anything possible available instead also good best right correct 기본 기본값 방법 사용
    설정 값 예 예시 차이 것 경우 최신 현재 가능 무엇 뭔가 decide decided decision know tell say said find look
    question answer info information several multiple many way ways 결정 내용 정리
    summarize summarise summary overview
    all every each 모든 모두 각 각각""".split()
GENERIC = frozenset({t for w in GENERIC_WORDS for t in analyze(w, stem=True)})
_STOP_TERMS = frozenset({t for w in STOPWORDS for t in analyze(w, stem=True)} | STOPWORDS)
_SYMBOL = re.compile(r"(?:^|\s)[`'\"]?([^\w\s`'\"]{1,3}|--?[A-Za-z][\w-]{0,40})[`'\"]?(?=[\s,?.])")
_VALUE = re2.compile(r"\d|\b(?:True|False|None|true|false|null)\b|\"[^\"]{1,40}\"")
_DATE = re2.compile(r"\b(?:1[89]|20)\d\d\b|\b\d+\.\d+(?:\.\d+)?\b|\b(?:January|February|March|April|May|June|"
                   r"July|August|September|October|November|December)\b|\d+년|\d+월")  # fmt: skip
# A "when" question about an event is answered by what it follows or precedes ("after the response
# is sent", "응답을 반환한 후에"), not only by a date.
_TIME = re2.compile(r"\b(?:after|before|until|once|whenever|as soon as|at startup|at shutdown)\b"
                    r"|후에|전에|뒤에|동안|때")  # fmt: skip
_DEFINES = re2.compile(
    r"\b(?:is|are|means|refers to|stands for|lets you|let you|allows?|provides?)\b|이다|입니다|란|이란|합니다"
)
_DEFINITION = re2.compile(
    r"\b(?:is|are) (?:a|an|the|used)\b|\bmeans\b|\brefers to\b|\bstands for\b"
    r"|(?:이란|란) |(?:은|는) .{0,80}(?:이다|입니다)"
)
_NUMBER = re2.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|single|once|twice)\b|하나|한 개|두 개"
)
# "Which option enables ...", "실행하는 명령어는?": asks for what a reader types, as a "how" does.
_ASKS_COMMAND = re2.compile(r"\b(?:which|what) (?:\w+ )?(?:option|flag|switch|command)s?\b|명령어?|옵션")
# "What event hooks are there?", "What can unsafe Rust do?", "What kinds of ...", "어떤 종류가 있나요":
# asks for the members of a set, which a page lists after a sentence that announces or counts them.
_ASKS_LIST = re2.compile(
    r"^(?:what|which) (?:\w+ ){1,4}(?:are there|exist|are available)\b|^what can (?:\w+ ){1,4}do\b"
    r"|\b(?:kinds|types|sorts) of\b|종류|어떤 것들이"
)
# "You can declare ...", "선언할 수 있습니다", "사용하세요": a way to do it, stated as a step.
_CAN = re2.compile(r"\b(?:you|we) can\b|할 수 있|하세요|하면 됩니다")
_NAME = re2.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")  # "Graydon Hoare": who wrote it
_IMPERATIVE = frozenset(
    "use call pass set run install add create enable configure import write define open send "
    "install select specify start stop put give read make".split()
)


@dataclass(frozen=True)
class Asked:
    """What a question asks, as ``pick`` reads it."""

    groups: tuple[frozenset[str], ...]
    specific: tuple[int, ...]  # indexes of the groups that are specific (all, when none is)
    names: tuple[int, ...]  # groups the question writes as names ("QUIC", "Gopher", "HTTP3")
    symbols: tuple[str, ...]  # operators ("?", "::") and options ("-t", "--keep") it names
    kind: QuestionKind
    urls: tuple[str, ...] = ()  # pages it names: what it asks about when nothing specific is left


def _kind(question: str) -> QuestionKind:
    q = " ".join(question.lower().split())
    if "default" in q or "기본값" in q or "기본으로" in q:
        return "default"
    if q.startswith(("how many", "how much", "how long", "how big")) or "몇" in q or "얼마" in q:
        return "number"
    if procedural(q) or q.startswith("how ") or "방법" in q or _ASKS_COMMAND.search(q):
        return "how"
    if q.startswith(("when", "what year", "which version", "since when")) or "언제" in q:
        return "when"
    if q.startswith(("who ", "whose ")) or "누가" in q or "누구" in q:
        return "who"
    if _ASKS_LIST.search(q):
        return "list"
    if q.startswith(("what is", "what are", "what does", "what's", "what do", "define")) or any(
        w in q for w in ("무엇", "뭐", "뭔가", "이란", "란?")
    ):
        return "what"
    return "other"


def _meaningful(term: str) -> bool:
    """Not a lone Latin letter; a digit and a one-syllable Korean stem ("책을" -> "책") carry meaning."""
    return len(term) > 1 or term.isdigit() or not term.isascii()


def _said(question: str) -> tuple[str, tuple[str, ...]]:
    """The question's words without the pages and constraints in it, and the pages it names. A
    page's URL is something to read (the pages source fetches it) and a filter on a person, a
    channel, a date or a site (``from:Sarah``, ``after:2026-01-01``, ``site:docs.python.org``) a
    constraint the plan passes on: neither is words an answer must hold. A bare site ("socket.io")
    is a name, and ``on:push``, ``is:open``, ``type:module`` are what the question is about."""
    words: list[str] = []
    pages: list[str] = []
    for token in question.split():
        found = find_urls(token) if "." in token or ":" in token else []
        read = [url for url, site in found if not site]
        if read:
            pages += read
        elif not _constraint(token):
            words.append(token)
    return " ".join(words), tuple(dict.fromkeys(pages))


# Filter keys whose plain value is what a question is about ("on:push", "is:open", "type:module");
# every other filter (a person, a channel, a date, a site, a label) constrains where to look.
_SUBJECT_KEYS = frozenset({"on", "is", "has", "type", "kind", "state", "lang"})


def _constraint(token: str) -> bool:
    if token[:5].lower() == "site:":
        return True
    found = filter_of(token)
    if found is None:
        return False
    return found[0] not in _SUBJECT_KEYS or any(c.isdigit() for c in found[1])


def read(question: str) -> Asked:
    """The question's content groups, the specific ones, the operators it names, its type, and
    the pages it names. A question naming a page and nothing specific besides ("Summarize
    https://...") is about that page: no word is required of it, and only the page answers."""
    question, urls = _said(question)
    groups: list[frozenset[str]] = []
    names: list[int] = []
    for n, word in enumerate(re.findall(r"\w+", question)):
        if question_word(word):
            continue
        said = analyze(word, stem=True)
        # an identifier keeps its parts, stop words too: "NO_PROXY" is not met by "proxy" alone
        stop = _STOP_TERMS if len(said) == 1 or not word.isascii() else frozenset()
        terms = frozenset(t for t in said if t not in stop and _meaningful(t))
        if terms and terms not in groups:
            if word.isascii() and n and (word[:1].isupper() or any(c.isdigit() for c in word)):
                names.append(len(groups))
            groups.append(terms)
    symbols = tuple(dict.fromkeys(m.group(1) for m in _SYMBOL.finditer(f" {question} ")))
    specific = tuple(i for i, g in enumerate(groups) if not g <= GENERIC)
    if not specific and not symbols and not urls:  # only generic words: each of them is what it asks
        specific = tuple(range(len(groups)))
    named = tuple(i for i in names if i in specific)
    return Asked(tuple(groups), specific, named, symbols, _kind(question), urls)


def covered(terms: set[str], groups: Sequence[frozenset[str]]) -> set[int]:
    """Indexes of the groups ``terms`` cover: a Korean word's when half its terms are there (so
    "배포 절차" covers "배포절차" through its bigrams), an identifier's when all its parts but one are
    ("token expiry" covers ``tokenExpiry``; ``max_connections`` does not cover
    ``max_keepalive_connections``)."""
    return {i for i, g in enumerate(groups) if len(g & terms) >= needed(g)}


def needed(group: frozenset[str]) -> int:
    if len(group) > 2 and all(t.isascii() for t in group):
        return len(group) - 1
    return (len(group) + 1) // 2


def fit(asked: Asked, unit: Unit, tokens: list[str], subject: set[int]) -> float:
    kind, text = asked.kind, unit.text
    if kind == "default":
        return 0.6 * says_default(text) + 0.4 * bool(_VALUE.search(text))
    if kind == "how":
        if unit.kind == "code":
            return 1.0
        first = text.split(" ", 1)[0].lower()
        if text[:1] == "-" or "`" in text:
            return 0.8 if text[:1] == "-" else 0.6  # an option's definition line, or inline code
        if first in _IMPERATIVE or text.lower().startswith("to ") or _CAN.search(text):
            return 0.5  # a step: an imperative, "to do X, ...", "you can ...", "~할 수 있습니다"
        return 0.0
    if kind == "when":
        return 1.0 if _DATE.search(text) else 0.8 if _TIME.search(text) else 0.0
    if kind == "number":
        return 1.0 if _NUMBER.search(text) else 0.0
    if kind == "what":
        if unit.kind == "code":
            return 0.0
        named = covered(set(tokens[:5]), [asked.groups[i] for i in asked.specific])
        says = 0.5 if _DEFINITION.search(text) else 0.25 if _DEFINES.search(text) else 0.0
        return 0.5 * bool(named or subject & set(asked.specific)) + says
    if kind == "who":
        return 0.5 if _NAME.search(text) else 0.0
    if kind == "list" and unit.kind != "code":
        # the sentence announcing the list ("There are currently two event hooks:"), or counting it
        return 1.0 if text.endswith(":") else 0.5 if _NUMBER.search(text) else 0.0
    return 0.0


def says_default(text: str) -> bool:
    return "default" in text.lower() or "기본" in text


def completes(kind: QuestionKind, unit: Unit, after: Unit) -> bool:
    """The next unit holds what this one announces: a default's value, a how-to's command."""
    if kind == "default":
        return says_default(after.text) and bool(_VALUE.search(after.text)) and not says_default(unit.text)
    return kind == "how" and unit.kind != "code" and after.kind == "code"
