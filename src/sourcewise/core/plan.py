"""Seed 003: turn a question into keywords, entities, filters, variants and per-source queries.

Pure: ``today`` is passed in, nothing is read from the clock, the network or the disk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from functools import lru_cache
from typing import Literal

from ..errors import InvalidOption
from ..models import Constraints, Plan, SourceQuery
from .analyze import noun
from .classify import SIGNALS, classify_fields
from .dates import parse_date, relative_dates
from .keywords import INTERNAL_THINGS, RECENCY
from .negation import negations as negated
from .syntax import QueryParts, Syntax
from .text import is_hangul, strip_particle, words
from .tiers import builtin_table
from .validate import validate_question, validate_today
from .variants import variants_for

__all__ = ["DEFAULT_SOURCES", "parts", "plan", "render", "replan"]

DEFAULT_SOURCES: tuple[str, ...] = ("chat", "knowledge_base", "project_tracker")
_FILTER = re.compile(r"(?<!\S)(from|in|after|before|type):(\"[^\"]+\"|\S+)", re.IGNORECASE)
# Every pattern here reads outside text, so each runs in linear time: no quantifier can be
# re-entered from many start positions (a lookbehind anchors runs at their start, and runs are
# possessive where a failed match could otherwise retry every shorter length).
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^“”]+)”|「([^「」]+)」")
_MINE = re.compile(r"\b(my|mine|assigned to me)\b|내\s?(작업|업무|태스크|일)|나한테", re.IGNORECASE)
_MENTION = re.compile(r"(?<!\w)([@#])([\w.-]+)")
_WORD = re.compile(r"[A-Za-z0-9][\w.+#'-]*[\w+#]|[A-Za-z0-9]|[\uac00-\ud7a3]+")
STOP = frozenset(
    """a an the and or of to in on at for by with from about into over what which who whom whose when
    where why how did do does done is are was were be been being have has had we i you they he she it
    our my your their this that these those there here any some all can could should would will shall
    may might must please me know let us vs via as than then so just also still
    up out get got make made need needs want wants like latest recent current now ever yet only
    just newest recently currently nowadays today's give list explain summarize summarise describe
    looking anything something everything info information doesn't don't isn't aren't since until
    not no what's whats hot team team's teams internally handle think cover said says say mentioned
    discussed talked changed happen happened going""".split()
) | frozenset(
    "무엇 무엇을 뭐 뭘 무슨 어떤 어떻게 왜 어디 어디에 언제 누가 누구 대해 대한 관련 관련된 "
    "그리고 및 좀 것 거 수 등 우리 우리가 저희 제가 내가 해줘 알려줘 찾아줘 채널 "
    "있나요 있나 했나요 했나 인가요 입니까 어때 뭐야 뭔가요 뭐예요 뭐지 어떤가요 알려 알려주세요 "
    "회사 당사 사내 우리회사 찾아주세요 보여줘 정리해줘 설명해줘 요약해줘 "
    "최신 요즘 현재 지금 최근 핫한 좀 혹시 관한 "
    "다음 정리 요약 설명 확인 어디 어디서 있는지 됐나요 되었나요 무엇인가요 뭔지 "
    "말한 나온 하고 있어 있는 알고 있 된 막혔 있나 건 중 와 과 부분 내용 상황 참고 분석 조사 "
    "최신본 최신판".split()
)
GENERIC_ACRONYMS = frozenset(
    "api ai db ui ux pr qa id url http https sql ceo cto faq eta kpi okr q1 q2 q3 q4".split()
)
_VERB_ENDINGS = (
    "해줘",
    "해주세요",
    "나요",
    "했나",
    "는지",
    "니까",
    "어요",
    "아요",
    "습니다",
    "합니다",
    "인가",
    "할까",
    "했어",
    "하나",
    "하는",
)


# Signal words say what kind of question it is, not what it is about: not content words, except
# the nouns that name what is asked for and so must appear in what answers it ("expense policy",
# "Z spec", "휴가 규정").
_NAMED_THINGS = frozenset(
    "policy policies rule rules limit spec specs specification rfc prd handbook slides deck "
    "정책 규정 규칙 한도 기준 스펙 명세 명세서 기획서 설계서 사규 슬라이드".split()
) | {"design doc"}
# The signals of several words that are no content as a whole ("working on", "how many", "알고 있"):
# taken out of the text before its words are read.
_SIGNAL_PHRASES = tuple(
    sorted(
        {w for vocab in (*SIGNALS.values(), RECENCY) for w in vocab if " " in w} - _NAMED_THINGS,
        key=len,
        reverse=True,
    )
)
_YEAR = re.compile(r"((?:19|20)\d\d)년")
_URL = re.compile(r"https?://\S+", re.IGNORECASE)  # one run of non-blanks: linear
_SKIP = frozenset({w for vocab in SIGNALS.values() for w in vocab} - _NAMED_THINGS | {"project", "프로젝트"})


@lru_cache(maxsize=8)
def _hangul_prefixes(skip: frozenset[str]) -> tuple[str, ...]:
    return tuple(s for s in skip if is_hangul(s))


def _without_signal_phrases(text: str) -> str:
    """``text`` without the signals of several words it holds, as whole words."""
    low = f" {' '.join(text.lower().split())} "
    found = [p for p in _SIGNAL_PHRASES if f" {p} " in low]
    if not found:
        return text
    for phrase in found:
        low = low.replace(f" {phrase} ", " ")
    kept = set(low.split())
    return " ".join(w for w in text.split() if w.lower() in kept)


def _content_words(text: str, skip: frozenset[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    known = _CONTENT if skip is _SKIP else {}
    toks = _WORD.findall(text)
    for i, raw in enumerate(toks):
        content = known.get(raw, _UNKNOWN)
        if content is _UNKNOWN:
            content = _content_word(raw, skip)
            if len(known) >= _CONTENT_MAX:
                known.clear()  # bounded: start again
            known[raw] = content
        if content is not None and content[1] not in seen:
            before = toks[i - 1].lower() if i else ""
            after = toks[i + 1].lower() if i + 1 < len(toks) else ""
            if _not_content(content[1], before, after, first=not out):
                continue
            seen.add(content[1])
            out.append(content[0])
    return out


def _not_content(word: str, before: str, after: str, *, first: bool) -> bool:
    """Words that say who asks or what is asked for by where they stand: "find X", "search for X"
    (but "search ranking"), "our company", "my tasks", "what's new", "internal wiki"."""
    if first and word in _REQUEST and (word != "search" or after in _AFTER_REQUEST):
        return True
    if word == "internal" and after in INTERNAL_THINGS:
        return True
    return (
        (before in _OWN and word in _ORG)
        or (before == "my" and word in _MINE_ITEMS)
        or (before in _WHATS and word == "new")
    )


_AFTER_REQUEST = frozenset("for the a an me us all any about our my through in".split())


# Words that ask for something when they open the question ("search for ...", "show me ..."),
# and name a subject anywhere else ("search ranking"); the asker's own organisation.
_REQUEST = frozenset(
    "search find show tell give list explain summarize summarise describe look check read compare".split()
)
_OWN = frozenset("our 우리 저희".split())
_MINE_ITEMS = frozenset("tasks task tickets issues items work".split())
_WHATS = frozenset({"what's", "whats", "what’s"})
_ORG = frozenset("company team org organization organisation 회사 팀 조직".split())


# _content_word's answers for the plan's own skip set, per raw token (a dict: no key to build).
_UNKNOWN: tuple[str, str] = ("", "")
_CONTENT: dict[str, tuple[str, str] | None] = {}
_CONTENT_MAX = 8192


def _content_word(raw: str, skip: frozenset[str]) -> tuple[str, str] | None:
    """The word a raw token says and its lower case, or None for a stop word, a signal word or
    a Korean verb form: per token, kept (questions repeat their words)."""
    if is_hangul(raw):
        year = _YEAR.fullmatch(raw)
        word = year.group(1) if year else noun(raw)  # the one analyzer's noun: particle, ending off
    else:
        word = raw.rstrip(".'-")
    low = word.lower()
    if not word or low in STOP or low in skip or raw.lower() in STOP:
        return None
    if is_hangul(word) and (
        word.endswith(_VERB_ENDINGS) or raw.endswith(_VERB_ENDINGS) or word.startswith(_hangul_prefixes(skip))
    ):
        return None
    return word, low


# Compiled once (not looked up in re's cache for every word of every question).
# camelCase or ACRONYMWord; the last two capitals are enough ({2,} rescans a run of capitals).
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")
_DIGIT = re.compile(r"\d")
_LATIN = re.compile(r"[A-Za-z]")
_PROJECT = re.compile(r"\b(?:project|프로젝트)\s+([\w-]+)", re.IGNORECASE)
_CONCEPTUAL = re.compile(r"\b(how|why|think|opinion|approach)\b|어떻게|왜|생각|의견|방향", re.IGNORECASE)


def _entities(question: str, words: list[str], toks: list[str]) -> list[str]:
    """Names and terms among ``words`` (``toks``: the question split by ``text.words``)."""
    found: list[str] = []
    first = _WORD.search(question)
    first_word = first.group(0) if first else ""
    for word in words:
        shape = _shape(word)
        if shape == _NAMED or (shape == _CAPITAL and word != first_word):
            found.append(word)
    if "project" in question.lower() or "프로젝트" in question:  # the pattern needs one ("project" has no i)
        for match in _PROJECT.finditer(question):
            name = strip_particle(match.group(1)) if is_hangul(match.group(1)) else match.group(1)
            if name not in found and name.lower() not in _SKIP and name.lower() not in STOP:
                found.append(name)
    for said in builtin_table().projects_in_words(toks).values():
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
    today: date | None = None,
    variants: Sequence[Sequence[str]] = (),
) -> Plan:
    """Decompose ``question`` (seed 003), with a query for each source kind in ``syntaxes``
    (kind -> the syntax its sources render plans in; ``routing.plan`` takes them from the
    sources themselves). A broader or alternative plan (``core.widen``, ``replan``) carries no
    queries: each source renders it (``Source.render``).
    """
    question = validate_question(question)
    if not isinstance(syntaxes, Mapping) or not syntaxes:
        raise InvalidOption("a plan needs at least one source kind")
    today = validate_today(today) or date.today()
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
    words_ = _content_words(_without_signal_phrases(rest), _SKIP)
    entities = _entities(question, words_, toks)
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
