"""Seed 003: turn a question into keywords, entities, filters, variants and per-source queries.

Pure: ``today`` is passed in, nothing is read from the clock, the network or the disk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from functools import lru_cache
from typing import Literal

from sourcewise.errors import InvalidOption
from sourcewise.models import Constraints, Plan, SourceQuery
from sourcewise.planning.classify import classify_fields
from sourcewise.planning.content import SKIP, STOP, WORD, content_words, without_signal_phrases
from sourcewise.planning.dates import parse_date, relative_dates
from sourcewise.planning.negation import negations as negated
from sourcewise.planning.syntax import QueryParts, Syntax
from sourcewise.planning.validate import validate_question, validate_today
from sourcewise.planning.variants import variants_for
from sourcewise.text.words import is_hangul, strip_particle, words
from sourcewise.web.tiers import SourceTable

__all__ = ["DEFAULT_SOURCES", "parts", "plan", "render", "replan"]

DEFAULT_SOURCES: tuple[str, ...] = ("chat", "knowledge_base", "project_tracker")
_FILTER = re.compile(r"(?<!\S)(from|in|after|before|type):(\"[^\"]+\"|\S+)", re.IGNORECASE)
# Every pattern here reads outside text, so each runs in linear time: no quantifier can be
# re-entered from many start positions (a lookbehind anchors runs at their start, and runs are
# possessive where a failed match could otherwise retry every shorter length).
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^“”]+)”|「([^「」]+)」")
_MINE = re.compile(r"\b(my|mine|assigned to me)\b|내\s?(작업|업무|태스크|일)|나한테", re.IGNORECASE)
_MENTION = re.compile(r"(?<!\w)([@#])([\w.-]+)")
GENERIC_ACRONYMS = frozenset(
    "api ai db ui ux pr qa id url http https sql ceo cto faq eta kpi okr q1 q2 q3 q4".split()
)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)  # one run of non-blanks: linear
# Compiled once (not looked up in re's cache for every word of every question).
# camelCase or ACRONYMWord; the last two capitals are enough ({2,} rescans a run of capitals).
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")
_DIGIT = re.compile(r"\d")
_LATIN = re.compile(r"[A-Za-z]")
_PROJECT = re.compile(r"\b(?:project|프로젝트)\s+([\w-]+)", re.IGNORECASE)
_CONCEPTUAL = re.compile(r"\b(how|why|think|opinion|approach)\b|어떻게|왜|생각|의견|방향", re.IGNORECASE)


def _entities(question: str, words: list[str], toks: list[str], table: SourceTable) -> list[str]:
    """Names and terms among ``words`` (``toks``: the question split by ``text.words``); the
    projects ``table`` lists are names too."""
    found: list[str] = []
    first = WORD.search(question)
    first_word = first.group(0) if first else ""
    for word in words:
        shape = _shape(word)
        if shape == _NAMED or (shape == _CAPITAL and word != first_word):
            found.append(word)
    if "project" in question.lower() or "프로젝트" in question:  # the pattern needs one ("project" has no i)
        for match in _PROJECT.finditer(question):
            name = strip_particle(match.group(1)) if is_hangul(match.group(1)) else match.group(1)
            if name not in found and name.lower() not in SKIP and name.lower() not in STOP:
                found.append(name)
    for said in table.projects_in_words(toks).values():
        surface = next((w for w in words if w.lower() == said), None)
        if surface and surface not in found:
            found.append(surface)
    return found


_PLAIN, _NAMED, _CAPITAL = 0, 1, 2


@lru_cache(maxsize=8192)
def _shape(word: str) -> int:
    """``_NAMED`` for a word that names something wherever it stands (camelCase, ALLCAPS, letters
    with digits, a hyphen), ``_CAPITAL`` for one that does unless it starts the question, else
    ``_PLAIN`` (also generic acronyms and Korean words): per word, kept."""
    if word.lower() in GENERIC_ACRONYMS or is_hangul(word):
        return _PLAIN
    camel = _CAMEL.search(word)
    named = bool(_DIGIT.search(word) and _LATIN.search(word)) or "-" in word
    if camel or named or (word.isupper() and len(word) > 1):
        return _NAMED
    return _CAPITAL if word[:1].isupper() else _PLAIN


def _next_day(day: date, days: int) -> date:
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return day


def _constraints(question: str, today: date) -> tuple[Constraints, str]:
    authors: list[str] = []
    channels: list[str] = []
    types: list[str] = []
    after: date | None = None
    before: date | None = None
    for match in _FILTER.finditer(question) if ":" in question else ():
        key, value = match.group(1).lower(), match.group(2).strip('"')
        if key == "from":
            authors.append(value)
        elif key == "in":
            channels.append(value.lstrip("#"))
        elif key == "type":
            types.append(value.lower())
        elif key == "after":  # typed in chat syntax, so read as chat reads it: the day is excluded
            after = _next_day(parse_date(value, "after:"), 1)
        else:
            before = _next_day(parse_date(value, "before:"), -1)
    rest = _FILTER.sub(" ", question) if ":" in question else question  # a filter has a colon
    if "@" in rest or "#" in rest:  # a mention has one or the other
        for sign, name in _MENTION.findall(rest):
            # "@kim이": a Korean particle glued to the name is not part of it
            (authors if sign == "@" else channels).append(strip_particle(name) if is_hangul(name) else name)
        rest = _MENTION.sub(" ", rest)
    said: list[str] = []
    if after is None and before is None:
        after, before, said = relative_dates(rest, today)
        for phrase in said:
            rest = _phrase(phrase).sub(" ", rest)
    if after and before and after > before:
        raise InvalidOption(f"after: {after} is later than before: {before}")
    mine = _may_be_mine(rest) and _MINE.search(rest) is not None
    constraints = Constraints(
        authors=authors,
        channels=channels,
        after=after,
        before=before,
        types=types,
        dates_from=said,
        mine=mine,
    )
    return constraints, rest


@lru_cache(maxsize=256)
def _phrase(phrase: str) -> re.Pattern[str]:
    """The date phrase, to remove wherever it stands, in any case (compiled once per phrase)."""
    return re.compile(re.escape(phrase), re.IGNORECASE)


def _may_be_mine(text: str) -> bool:
    """False when ``_MINE`` cannot match ``text``: plain ASCII text without "my", "mine" or
    "assigned to me" in any case (other text is always searched: matching ignores case, and
    some letters other than ASCII then match an ASCII one)."""
    if not text.isascii():
        return True
    low = text.lower()
    return "my" in low or "mine" in low or "assigned to me" in low


def _mode(
    kind: str, phrases: list[str], entities: list[str], c: Constraints, question: str
) -> tuple[Literal["semantic", "keyword"], str]:
    """Seed 003: keyword search for known terms, names, quotes and filters; semantic otherwise."""
    filters = len(c.authors) + len(c.channels) + len(c.types) + (c.after is not None) + (c.before is not None)
    if phrases:
        return "keyword", "the question quotes an exact phrase"
    if filters >= 2:
        return "keyword", "the question has several filters"
    if kind == "exploration" or _CONCEPTUAL.search(question):
        return "semantic", "a conceptual or exploratory question"
    if entities:
        return "keyword", f"known names or terms: {', '.join(entities)}"
    return "semantic", "no exact terms to match"


def plan(
    question: str,
    syntaxes: Mapping[str, Syntax],
    *,
    today: date,
    table: SourceTable,
    variants: Sequence[Sequence[str]] = (),
) -> Plan:
    """Decompose ``question`` (seed 003), with a query for each source kind in ``syntaxes``
    (kind -> the syntax its sources render plans in; ``routing.plan`` takes them from the
    sources themselves); ``table``: the tier table, whose projects are names in a question
    (``web.domains`` loads it). A broader or alternative plan (``planning.widen``, ``replan``) carries no
    queries: each source renders it (``Source.render``).
    """
    question = validate_question(question)
    if not isinstance(syntaxes, Mapping) or not syntaxes:
        raise InvalidOption("a plan needs at least one source kind")
    checked = validate_today(today)
    if checked is None:  # the caller reads the clock, once, at the edge
        raise InvalidOption("a plan needs today's date")
    today = checked
    toks = words(question)
    query_type = classify_fields(toks)  # validated with the plan
    kind = query_type["kind"]
    constraints, rest = _constraints(question, today)
    phrases: list[str] = []
    if '"' in rest or "“" in rest or "「" in rest:  # a quoted phrase starts with one of these
        phrases = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(rest)]
        rest = _QUOTED.sub(" ", rest)
    if "://" in rest:
        rest = _URL.sub(" ", rest)  # a URL is read, not searched for (seed 001)
    negations, rest = negated(rest)
    words_ = content_words(without_signal_phrases(rest), SKIP)
    entities = _entities(question, words_, toks, table)
    named = {e.lower() for e in entities}
    keywords = [w for w in words_ if w.lower() not in named]
    mode, why = _mode(kind, phrases, entities, constraints, question)
    terms = _terms(entities, keywords, question)
    found = QueryParts(terms, phrases, negations, constraints, _natural(question, terms, 0), kind, mode)
    return Plan(
        question=question,
        query_type=query_type,  # type: ignore[arg-type]
        keywords=keywords,
        entities=entities,
        phrases=phrases,
        intent=list(dict.fromkeys(query_type["signals"])),
        constraints=constraints,
        negations=negations,
        variants=variants_for([*terms, *phrases], variants, question),
        mode=mode,
        mode_reason=why,
        # the queries' fields, validated with the plan (one validation, not one per query)
        sources=_specs(syntaxes, found),  # type: ignore[arg-type]
        today=today,
    )


def _terms(entities: Sequence[str], keywords: Sequence[str], question: str) -> list[str]:
    """Entities and keywords in the order the question says them."""
    terms = list(dict.fromkeys([*entities, *keywords]))
    if len(terms) < 2:
        return terms
    # a word the question does not hold (a category, a codebase's word) goes first, in given order
    places = [-1 if (at := question.find(term)) < 0 else at for term in terms]
    return [terms[i] for i in sorted(range(len(terms)), key=places.__getitem__)]  # stable, as before


def _natural(question: str, terms: Sequence[str], level: int) -> str:
    if level:
        return " ".join(terms)
    return " ".join((_FILTER.sub(" ", question) if ":" in question else question).split())


def parts(current: Plan) -> QueryParts:
    """What a syntax renders from ``current``: its terms, phrases, negations, filters, words."""
    terms = _terms(current.entities, current.keywords, current.question)
    return QueryParts(
        terms,
        current.phrases,
        current.negations,
        current.constraints,
        _natural(current.question, terms, current.level),
        current.query_type.kind,
        current.mode,
    )


def _specs(syntaxes: Mapping[str, Syntax], found: QueryParts) -> list[dict[str, object]]:
    return [{"source": kind, **spec} for kind, syntax in syntaxes.items() for spec in syntax(found)]


def render(current: Plan, kind: str, syntax: Syntax) -> list[SourceQuery]:
    """``current`` in ``syntax`` for a source of ``kind``, the keyword query first."""
    queries = [SourceQuery(source=kind, **spec) for spec in syntax(parts(current))]  # type: ignore[arg-type]
    return sorted(queries, key=lambda q: q.mode != "keyword")


def _assemble(
    draft: Plan,
    syntaxes: Mapping[str, Syntax],
    extra_variants: Sequence[Sequence[str]] = (),
    variants: dict[str, list[str]] | None = None,
) -> Plan:
    """Fill in the per-source queries (for ``syntaxes``) and variants (``variants`` when given) of
    a plan whose components are set."""
    found = parts(draft)
    return draft.model_copy(
        update={
            "sources": [SourceQuery(**spec) for spec in _specs(syntaxes, found)],  # type: ignore[arg-type]
            "variants": variants_for([*found.terms, *draft.phrases], extra_variants, draft.question)
            if variants is None
            else variants,
        }
    )


def replan(current: Plan, keywords: Sequence[str]) -> Plan:
    """``current`` searching for ``keywords`` instead of its own terms, filters kept: the next query of
    a refinement cycle (seed 004). Keyword mode, since the words are the codebase's own."""
    draft = current.model_copy(
        update={"keywords": list(dict.fromkeys(keywords)), "entities": [], "phrases": [], "mode": "keyword"}
    )
    # the caller chose the words (variants folded in already): no variant queries of its own
    return _assemble(draft, {}).model_copy(update={"variants": {}})
