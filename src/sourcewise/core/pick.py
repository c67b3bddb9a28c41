"""Which units of the best hits answer a question, and whether any does (no model).

**The question** (``read``): its content words, each as the set of stemmed terms the analyzer
gives it (a group); which of them are *specific* (not "default", "value", "operator", "use" ...,
which every page of a manual says); operators it names (``?``, ``::``); and its type: a
"default" question wants a value, a "how" question a step or a command, a "what is" question a
definition, a when / who / how-many question a date, a name or a number.

**A unit's score**: the question's groups it covers (specific ones weigh more, a name the question
writes twice as much; an identifier's group needs its parts, so "proxy" alone is not "NO_PROXY";
those its heading or the sentence before it covers count half, but the first two units under a
heading of at most four words that is a name the question writes are about it: "### `SSL_CERT_FILE`"),
how well it fits the question's type, how close together the question's terms sit in it, and its
hit's rank and relevance. A fragment or a field's label ("Valid values: a filename") counts less. Not word
coverage alone.

**The gate** (honest refusal): an answer must contain at least one of the question's specific
terms (or its analyzer forms) and every operator the question names, and with its heading and
title cover all the specific terms of a short question (60% of a longer one). When no unit
passes, nothing answers and ``pick`` returns nothing: the caller says so and lists the closest
passages as ones that may not answer.

**The answer**: the best unit, with the sentence before it when that sentence holds what the
unit leaves out ("The default is 5 seconds." after the one naming the timeout), the next unit
when a "default" question's value or a "how" question's command follows or it goes on from this
one ("However, ..."), an example it announces ("For example:" and the block), and a second unit from
elsewhere only when it scores near the best and covers more. At most ``limit`` units.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import re2  # type: ignore[import-untyped]

from ..models import RankedHit
from .analyze import STOPWORDS, analyze, question_word
from .extractive import Unit, procedural, units

__all__ = ["Asked", "covered", "pick", "read"]

QuestionKind = Literal["default", "how", "what", "when", "who", "number", "other"]
HITS = 8  # the best hits whose units are read
GENERIC_WORDS = """default defaults value values option options setting settings set use used using way
    work works thing things example examples file files need want get make happen mean means type
    kind new show tell explain describe difference differ between list support supports return
    returns function method parameter parameters argument arguments operator operators latest current
    thing something anything possible available instead also good best right correct 기본 기본값 방법 사용
    설정 값 예 예시 차이 것 경우 최신 현재 가능 무엇 뭔가 decide decided decision know tell say said find look
    question answer info information several multiple many way ways 결정 내용 정리""".split()
GENERIC = frozenset({t for w in GENERIC_WORDS for t in analyze(w, stem=True)})
_STOP_TERMS = frozenset({t for w in STOPWORDS for t in analyze(w, stem=True)} | STOPWORDS)
_SYMBOL = re.compile(r"(?:^|\s)[`'\"]?([^\w\s`'\"]{1,3}|--?[A-Za-z][\w-]{0,40})[`'\"]?(?=[\s,?.])")
_VALUE = re2.compile(r"\d|\b(?:True|False|None|true|false|null)\b|\"[^\"]{1,40}\"")
_DATE = re2.compile(r"\b(?:1[89]|20)\d\d\b|\b\d+\.\d+(?:\.\d+)?\b|\b(?:January|February|March|April|May|June|"
                   r"July|August|September|October|November|December)\b|\d+년|\d+월")  # fmt: skip
_DEFINES = re2.compile(
    r"\b(?:is|are|means|refers to|stands for|lets you|allows)\b|이다|입니다|란|이란|합니다"
)
_DEFINITION = re2.compile(
    r"\b(?:is|are) (?:a|an|the|used)\b|\bmeans\b|\brefers to\b|\bstands for\b"
    r"|(?:이란|란) |(?:은|는) .{0,80}(?:이다|입니다)"
)
_NUMBER = re2.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|single|once|twice)\b|하나|한 개|두 개"
)
# A sentence starting with one of these leans on the one before it.
_BACK = ("These ", "This ", "They ", "Those ", "It ", "That ", "이는 ", "이것은 ", "그러므로 ", "따라서 ")
# One starting with these goes on where the one before stops ("It is not in the scope of HTTPX
# to ... However, it is suggested to use LifespanManager"): the answer is often there.
_ON = ("However", "Instead", "But ", "Rather", "하지만", "그러나", "대신")
SUBJECT_WORDS = 4  # a heading this short names its section's subject ("### `NO_PROXY`", "## Timeouts")
SUBJECT_UNITS = 2  # the units under such a heading that are about it, whether they name it or not
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


def _kind(question: str) -> QuestionKind:
    q = " ".join(question.lower().split())
    if "default" in q or "기본값" in q or "기본으로" in q:
        return "default"
    if q.startswith(("how many", "how much", "how long", "how big")) or "몇" in q or "얼마" in q:
        return "number"
    if procedural(q) or q.startswith("how ") or "방법" in q:
        return "how"
    if q.startswith(("when", "what year", "which version", "since when")) or "언제" in q:
        return "when"
    if q.startswith(("who ", "whose ")) or "누가" in q or "누구" in q:
        return "who"
    if q.startswith(("what is", "what are", "what does", "what's", "what do", "define")) or any(
        w in q for w in ("무엇", "뭐", "뭔가", "이란", "란?")
    ):
        return "what"
    return "other"


def _meaningful(term: str) -> bool:
    """Not a lone Latin letter; a digit and a one-syllable Korean stem ("책을" -> "책") carry meaning."""
    return len(term) > 1 or term.isdigit() or not term.isascii()


def read(question: str) -> Asked:
    """The question's content groups, the specific ones, the operators it names, and its type."""
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
    if not specific and not symbols:  # only generic words: each of them is what it asks
        specific = tuple(range(len(groups)))
    return Asked(tuple(groups), specific, tuple(i for i in names if i in specific), symbols, _kind(question))


def covered(terms: set[str], groups: Sequence[frozenset[str]]) -> set[int]:
    """Indexes of the groups ``terms`` cover: a Korean word's when half its terms are there (so
    "배포 절차" covers "배포절차" through its bigrams), an identifier's when all its parts but one are
    ("token expiry" covers ``tokenExpiry``; ``max_connections`` does not cover
    ``max_keepalive_connections``)."""
    return {i for i, g in enumerate(groups) if len(g & terms) >= _needed(g)}


def _needed(group: frozenset[str]) -> int:
    if len(group) > 2 and all(t.isascii() for t in group):
        return len(group) - 1
    return (len(group) + 1) // 2


@dataclass
class _Cand:
    hit: int
    pos: int
    unit: Unit
    own: set[int]
    context: set[int]  # covered by the headings above it and the hit's title
    score: float = 0.0
    fit: float = 0.0


def _fit(asked: Asked, unit: Unit, tokens: list[str], subject: set[int]) -> float:
    kind, text = asked.kind, unit.text
    if kind == "default":
        return 0.6 * _says_default(text) + 0.4 * bool(_VALUE.search(text))
    if kind == "how":
        if unit.kind == "code":
            return 1.0
        first = text.split(" ", 1)[0].lower()
        if text[:1] == "-" or "`" in text:
            return 0.8 if text[:1] == "-" else 0.6  # an option's definition line, or inline code
        return 0.5 if first in _IMPERATIVE or text.lower().startswith("to ") else 0.0
    if kind in ("number", "when"):
        return 1.0 if (_DATE if kind == "when" else _NUMBER).search(text) else 0.0
    if kind == "what":
        if unit.kind == "code":
            return 0.0
        named = covered(set(tokens[:5]), [asked.groups[i] for i in asked.specific])
        says = 0.5 if _DEFINITION.search(text) else 0.25 if _DEFINES.search(text) else 0.0
        return 0.5 * bool(named or subject & set(asked.specific)) + says
    if kind == "who":
        return 0.5 if _NAME.search(text) else 0.0
    return 0.0


def _says_default(text: str) -> bool:
    return "default" in text.lower() or "기본" in text


def _closeness(tokens: list[str], groups: Sequence[frozenset[str]], have: set[int]) -> float:
    if len(have) < 2:
        return 1.0 if have else 0.0
    firsts = [next((p for p, t in enumerate(tokens) if t in groups[g]), 0) for g in have]
    return len(have) / (max(firsts) - min(firsts) + 1)


def _candidates(asked: Asked, hits: Sequence[RankedHit]) -> list[_Cand]:
    read_hits = []
    for ranked in hits[:HITS]:
        hit = ranked.hit
        title = set(analyze(" ".join([hit.title, *hit.heading_path]), stem=True))
        found = [
            (u, analyze(u.text, stem=True))
            for u in units(hit.text or hit.snippet, wrapped=hit.kind != "chat")
        ]
        read_hits.append((ranked, title, found))
    weights = _weights(asked, [set(tokens) for _, _, found in read_hits for _, tokens in found])
    out: list[_Cand] = []
    for h, (ranked, title, found) in enumerate(read_hits):
        heading: set[str] = set()
        previous: set[int] = set()
        path = ranked.hit.heading_path
        subject, under = _subject(asked, path[-1] if path else ""), 0
        for pos, (unit, tokens) in enumerate(found):
            terms = set(tokens)
            if unit.kind == "heading":
                heading, under = terms, 0
                subject = _subject(asked, unit.text)
                continue
            under += 1
            about = subject if under <= SUBJECT_UNITS else set()
            own = covered(terms, asked.groups) | about
            context = covered(title | heading, asked.groups) - own
            fit = _fit(asked, unit, tokens, about)
            after = found[pos + 1][0] if pos + 1 < len(found) else None
            if after is not None and _completes(asked.kind, unit, after):
                fit = max(fit, 0.8)  # the value or the command is the next unit
            score = _score(asked, weights, own, (context | previous) - own, fit, tokens)
            score += 0.4 / (1 + h) + 0.3 * ranked.relevance - 0.02 * min(pos, 10)
            if asked.symbols and all(_names(unit.text, sym) for sym in asked.symbols):
                score += 1.0  # the operator the question names, which no word search sees
            if unit.kind != "code" and (len(unit.text.split()) < 4 or _label(unit.text)):
                score -= 0.3  # a fragment, or a field's label and value ("Valid values: a filename")
            out.append(_Cand(h, pos, unit, own, context, score, fit))
            previous = own
    return out


def _label(text: str) -> bool:
    """``Label: value`` with no sentence's end: a field of a reference entry, not what it says."""
    head, colon, rest = text.partition(":")
    return bool(colon and rest.strip()) and len(head.split()) <= 2 and text[-1:] not in ".!?"


def _subject(asked: Asked, heading: str) -> set[int]:
    """The names the question writes that a heading of at most ``SUBJECT_WORDS`` words covers: the
    entry of a reference ("### `SSL_CERT_FILE`"), whose text need not repeat its name. A heading
    of plain words ("## Timeouts") names a topic its whole section shares: no subject."""
    if not heading or not asked.names or len(heading.split()) > SUBJECT_WORDS:
        return set()
    return covered(set(analyze(heading, stem=True)), asked.groups) & set(asked.names)


def _weights(asked: Asked, unit_terms: list[set[str]]) -> list[float]:
    """A weight per group: specific ones by how rare they are among the units read (an inverse
    document frequency: "NO_PROXY" outweighs "environment"), twice that for a name the question
    writes ("NO_PROXY", "Rc"), generic ones 0.3."""
    n = len(unit_terms)
    out = []
    for i, group in enumerate(asked.groups):
        if i not in asked.specific:
            out.append(0.3)
            continue
        df = sum(1 for terms in unit_terms if len(group & terms) >= _needed(group))
        out.append((1.0 + math.log((n + 1) / (df + 1)) / 2) * (2 if i in asked.names else 1))
    return out


def _score(
    asked: Asked, weights: list[float], own: set[int], near: set[int], fit: float, tokens: list[str]
) -> float:
    """What the unit covers (rare specific groups weigh most, the ones around it half), its fit to
    the question's type as far as it is on topic, and how close its terms sit."""
    spec = set(asked.specific)
    cover = (sum(weights[i] for i in own) + 0.5 * sum(weights[i] for i in near)) / (sum(weights) or 1.0)
    share = len((own | near) & spec) / max(1, len(spec))
    return 2.0 * cover + 0.9 * fit * share + 0.3 * _closeness(tokens, asked.groups, own)


def _completes(kind: QuestionKind, unit: Unit, after: Unit) -> bool:
    """The next unit holds what this one announces: a default's value, a how-to's command."""
    if kind == "default":
        return _says_default(after.text) and bool(_VALUE.search(after.text)) and not _says_default(unit.text)
    return kind == "how" and unit.kind != "code" and after.kind == "code"


def _passes(asked: Asked, shown: set[int], context: set[int], text: str) -> bool:
    if not all(_names(text, s) for s in asked.symbols):
        return False
    spec = set(asked.specific)
    need = len(spec) if len(spec) <= 2 else math.ceil(0.6 * len(spec))
    if asked.symbols:  # the operator or option it names is the most specific thing it asks
        need = max(1, need - 1)
    return not spec or (bool(shown & spec) and len((shown | context) & spec) >= need)


def _names(text: str, symbol: str) -> bool:
    """The unit names the operator or option: as a word of its own, or in backticks."""
    padded = f" {text} ".replace(",", " ").replace("`", " ")
    return f" {symbol} " in padded or f" {symbol}=" in padded or f" {symbol}[" in padded


def pick(
    question: str, hits: Sequence[RankedHit], *, limit: int = 3, lead: Sequence[int] = ()
) -> list[tuple[str, int]]:
    """Up to ``limit`` (unit text, hit index) pairs that answer ``question``, best first; none when
    nothing passes the gate. ``lead``: hit indexes whose best passing unit comes first, in this
    order (the best hit of each reading of an ambiguous question)."""
    asked = read(question)
    if not asked.groups and not asked.symbols:
        return []
    cands = _candidates(asked, hits)
    if _absent(asked, cands):
        return []
    by_place = {(c.hit, c.pos): c for c in cands}
    passing: list[tuple[_Cand, list[_Cand], set[int]]] = []
    for cand in sorted(cands, key=lambda c: (-c.score, c.hit, c.pos)):
        window = _window(asked, cand, by_place)
        shown = set().union(*(c.own for c in window))
        if _passes(asked, shown, cand.context, " ".join(c.unit.text for c in window)):
            passing.append((cand, window, shown))
    if not passing:
        return []
    top = passing[0][0].score
    leads = [next((p for p in passing if p[0].hit == h), None) for h in lead]
    chosen: list[tuple[str, int]] = []
    done: set[int] = set()
    fitted = False  # the answer holds what the question's type wants (a value, a command ...)
    # The best unit opens; then each reading's best, when it is near the best (an ambiguous
    # question's other readings must not push the answer out).
    firsts = [p for p in leads if p is not None and p[0].score >= 0.7 * top]
    for cand, window, shown in [passing[0], *firsts, *passing[1:]]:
        if len(chosen) >= limit:
            break
        fits = asked.kind != "other" and max(c.fit for c in window) >= 0.6
        adds = (shown - done) & set(asked.specific) or (fits and not fitted)
        reading = any(cand is p[0] for p in firsts)
        if chosen and not reading and (cand.score < 0.85 * top or not adds):
            continue
        fitted = fitted or fits
        for c in window:
            pair = (c.unit.text, c.hit)
            if pair not in chosen and len(chosen) < limit:
                chosen.append(pair)
        done |= shown
    return chosen


def _absent(asked: Asked, cands: Sequence[_Cand]) -> bool:
    """A name the question writes (capitalized or with digits, not its first word) that nothing
    read contains: the documents do not talk about what it asks ("QUIC", "Gopher", "HTTP3")."""
    seen = set().union(*(c.own | c.context for c in cands)) if cands else set()
    return any(i not in seen for i in asked.names)


def _window(asked: Asked, cand: _Cand, by_place: dict[tuple[int, int], _Cand]) -> list[_Cand]:
    """The unit with the neighbours it needs: the sentence before when it holds specific terms the
    unit lacks; the next one for a default's value or a how-to's command."""
    spec = set(asked.specific)
    window = [cand]
    before = by_place.get((cand.hit, cand.pos - 1))
    if before is not None and (before.own - cand.own) & spec and not cand.own & spec:
        window.insert(0, before)
    elif before is not None and cand.unit.kind == "code" and before.unit.kind != "code" and before.own & spec:
        window.insert(0, before)  # a command with the sentence that says what it does
    elif before is not None and cand.unit.text.startswith(_BACK) and before.unit.kind != "code":
        window.insert(0, before)  # "These are ..." needs what "these" are
    after = by_place.get((cand.hit, cand.pos + 1))
    if after is None:
        return window
    more = by_place.get((cand.hit, cand.pos + 2))
    if (
        _completes(asked.kind, cand.unit, after.unit)
        or after.unit.text.startswith((*_BACK, *_ON))
        or cand.unit.text.endswith(":")
    ):
        window.append(after)
        listed = after.unit.kind == "item" and more is not None and more.unit.kind == "item"
        if cand.unit.text.endswith(":") and listed and more is not None:
            window.append(more)  # the list a sentence announces
    elif _announces(after.unit) and more is not None and more.unit.kind in ("code", "item"):
        window.extend([after, more])  # "For example:" and the example
    return window


def _announces(unit: Unit) -> bool:
    """A short unit that announces what follows ("For example:", "예:")."""
    return unit.kind != "code" and unit.text.endswith(":") and len(unit.text.split()) <= 4
