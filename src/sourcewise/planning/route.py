"""Seed 001: decide from the question whether to search the web, fetch its URLs, or skip.

The decision follows this order; the first rule that applies decides:

1. **URLs** in the question: ``fetch`` them (a user who gives a page wants that page).
2. **The asker's own organisation** ("사내", "우리", "당사", "our company", "in-house", "internal
   wiki", "our policy", "우리 규정", a configured internal keyword): ``skip``. Questions about the
   team's own documents are answered from private sources, and sending them to a web search
   engine would leak internal terms for nothing.
3. **Recency** keywords ("최신", "요즘", "latest", a recent year, "what's new in X", "what changed in
   <something with a version>" ...): ``search``.
4. **External** keywords ("시장", "경쟁사", "AI", "market", "benchmark" ...): ``search``.
5. **Internal things** alone ("규정", "매뉴얼", "policy", "handbook", "onboarding" ...), with no
   recency or external word: ``skip``. Such a word does not make a public subject private:
   "latest EU AI Act policy news", "Kubernetes network policy latest version" and "internal
   combustion engine market trends" are searched ("internal" counts only before what an
   organisation keeps: "internal wiki", "internal tools").
6. Anything else is a general request: ``skip`` (answer from what is already known).

The web query drops recency filler ("최신", "요즘", "latest" ...) and request filler ("분석",
"알려줘", "please" ...), turns "핫한"/"hot" into a trend word, and adds the current year (from
``today``) unless the question already names a year.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from urllib.parse import urlsplit

from sourcewise.models import Route
from sourcewise.planning.keywords import (
    EXTERNAL,
    HOT,
    INTERNAL,
    INTERNAL_THINGS,
    OWN,
    RECENCY,
    RECENCY_FILLER,
    REQUEST_FILLER,
    TREND_WORDS,
    find,
    release_signals,
    tokens,
)
from sourcewise.text.words import is_hangul, strip_particle
from sourcewise.web.weburls import find_urls

__all__ = ["GENERIC_TOPICS", "build_web_query", "choose", "route"]

# External words that name a subject both public and in-house ("AI", "데이터"): beside an internal
# thing alone they leave open whose it is.
GENERIC_TOPICS = frozenset(
    {"ai", "인공지능", "기술", "신기술", "데이터", "통계", "수치", "혁신", "global", "글로벌"}
)

_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d{2})(?:년|年)?(?![\d.])")


def _recent_years(question: str, today: date) -> list[str]:
    return [y for y in _YEAR.findall(question) if int(y) >= today.year - 1]


def _extended(builtin: frozenset[str], extra: Iterable[str]) -> frozenset[str]:
    """The built-in set, the very same object when nothing is added (its index is cached)."""
    more = {k.lower() for k in extra}
    return builtin | more if more - builtin else builtin


def route(
    question: str,
    *,
    today: date,
    recency: Iterable[str] = (),
    external: Iterable[str] = (),
    internal: Iterable[str] = (),
) -> Route:
    """Decide what to do with ``question``; extra keywords extend the built-in sets."""
    found_urls = find_urls(question)
    urls = [url for url, site in found_urls if not site]
    sites = [url for url, site in found_urls if site]
    words_ = tokens(question)
    found = {
        "recency": find(words_, _extended(RECENCY, recency)),
        "external": find(words_, _extended(EXTERNAL, external)),
        "internal": find(words_, INTERNAL),
    }
    found["recency"] += _recent_years(question, today) + release_signals(question)
    own = _own(words_, found["internal"], _extended(OWN, internal)) + _private_filters(question)
    if own:
        found["internal"] = list(dict.fromkeys([*own, *found["internal"]]))
    if urls:
        return Route(
            action="fetch", reason=f"the question gives {len(urls)} URL(s) to read", urls=urls, signals=found
        )
    if sites:
        return _site_search(question, sites, found, today)
    if own:
        why = _why("internal", own, question)
        return Route(action="skip", reason=f"{why}: about your own organisation", signals=found)
    split = _two_readings(question, found)
    if split is not None:
        return split
    if found["recency"] and not found["external"] and _about_own_work(question):
        why = _why("recency", found["recency"], question)
        return Route(
            action="skip",
            reason=f"{why} in a question about the team's own work (a decision, status or owner): "
            "answer from private sources",
            signals=found,
        )
    if found["recency"] or found["external"]:
        why = " and ".join(
            _why(kind, found[kind], question) for kind in ("recency", "external") if found[kind]
        )
        need = "current information" if found["recency"] else "outside sources"
        query = build_web_query(question, today=today)
        return Route(action="search", reason=f"{why}: needs {need}", query=query, signals=found)
    if found["internal"]:
        why = _why("internal", found["internal"], question)
        return Route(action="skip", reason=f"{why}: answer from private sources", signals=found)
    return Route(action="skip", reason="a general request: no recency, external or URL signal", signals=found)


def _two_readings(question: str, found: dict[str, list[str]]) -> Route | None:
    """An internal thing beside a generic public topic and nothing else ("AI 정책", "the AI usage
    policy"): the organisation's own or the public one? The reading decides whether the web is
    searched (seed 003: ask when the ambiguity changes the sources), so it is asked first."""
    if not found["internal"] or found["recency"] or not found["external"]:
        return None
    if any(word not in GENERIC_TOPICS for word in found["external"]):
        return None  # "경쟁사", "market": the public reading is plain
    thing = _surface(found["internal"][0], question)
    topic = _surface(found["external"][0], question)
    if is_hangul(question):
        options = [f"사내 {topic} {thing} (내부 자료)", f"공개된 {topic} {thing} (웹)"]
    else:
        options = [f"our own {topic} {thing} (private sources)", f"public {topic} {thing} (the web)"]
    own, public = (_why(kind, found[kind], question) for kind in ("internal", "external"))
    why = f"{own} beside {public}"
    return Route(
        action="skip",
        reason=f"{why}: your organisation's or the public one? asked before searching",
        signals=found,
        readings=options,
    )


def choose(decision: Route, reading: str, question: str, *, today: date) -> Route:
    """The route for the reading chosen among ``decision.readings``: the second searches the web."""
    if reading not in decision.readings:
        return decision
    if reading == decision.readings[0]:
        return decision.model_copy(update={"readings": [], "reason": f"chosen: {reading}"})
    query = build_web_query(question, today=today)
    return decision.model_copy(
        update={"action": "search", "query": query, "readings": [], "reason": f"chosen: {reading}"}
    )


_POSSESSIVE = frozenset({"our", "우리", "저희", "우리의", "저희의"})
# Chat filters and mentions ("from:sarah", "in:#eng", "#marketing", "@kim"): a question about the
# team's own conversations. A "#" or "@" counts at the start of a word only ("C#" is no channel).
_PRIVATE_FILTER = re.compile(r"(?<!\S)(?:from:|in:|#[^\W\d]|@\w)", re.IGNORECASE)


def _about_own_work(question: str) -> bool:
    """Seed 003: decision, status and person questions look in chat, the tracker and meeting
    notes; "progress on the redesign this week" asks for recent work, not for the web."""
    from sourcewise.planning.classify import (
        classify_query,  # here: classify imports keywords, as this module does
    )

    return classify_query(question).kind in ("decision", "status", "person")


def _private_filters(question: str) -> list[str]:
    if ":" not in question and "#" not in question and "@" not in question:
        return []
    return [m.group(0).rstrip("#@") or m.group(0) for m in _PRIVATE_FILTER.finditer(question)][:3]


def _own(toks: list[str], things: list[str], own: frozenset[str]) -> list[str]:
    """The words that make the question about the asker's own organisation: an ``OWN`` word (or a
    configured internal keyword), "internal" before what an organisation keeps, or "our"/"우리"
    with an internal thing ("our policy", "우리 규정")."""
    found = find(toks, own)
    for i, tok in enumerate(toks[:-1]):
        if tok == "internal" and toks[i + 1] in INTERNAL_THINGS:
            found.append(f"internal {toks[i + 1]}")
    if things and any(t in _POSSESSIVE for t in toks):
        found.extend(t for t in things if t not in found)
    return list(dict.fromkeys(found))


def _site_search(question: str, sites: list[str], found: dict[str, list[str]], today: date) -> Route:
    """A bare domain names a place to look: search it (``site:``) for the rest of the question;
    with nothing else asked, read its home page."""
    hosts = [urlsplit(url).hostname or "" for url in sites]
    rest = question
    for host in hosts:  # the host, and a Korean particle glued to it ("docs.python.org에서")
        rest = re.sub(re.escape(host) + r"/?[\uac00-\ud7a3]*", " ", rest, flags=re.IGNORECASE)
    if not _has_content(rest):
        return Route(action="fetch", reason="the question names a site to read", urls=sites, signals=found)
    terms = build_web_query(rest, today=today, add_year=bool(found["recency"]))
    query = " ".join([*(f"site:{h}" for h in hosts), terms])
    where = ", ".join(hosts)
    return Route(
        action="search", reason=f"the question names {where} as the place to look", query=query, signals=found
    )


def _has_content(text: str) -> bool:
    for raw in text.split():
        word = strip_particle(raw.strip("?!.,;:\"'()[]{}").lower())
        if len(word) > 1 and word not in REQUEST_FILLER and word not in RECENCY_FILLER:
            return True
    return False


def _surface(keyword: str, question: str) -> str:
    """The keyword as the question wrote it ("AI", not "ai")."""
    match = re.search(re.escape(keyword), question, re.IGNORECASE)
    return match.group(0) if match else keyword


def _why(kind: str, keywords: list[str], question: str) -> str:
    said = ", ".join(f'"{_surface(k, question)}"' for k in dict.fromkeys(keywords))
    label = {"internal": "internal-document", "recency": "recency", "external": "external"}[kind]
    return f"{label} keyword{'s' if len(set(keywords)) > 1 else ''} {said}"


# Words that make a question a question: no search engine needs them ("what is", "how do").
_QUESTION_WORDS = frozenset("what which who whom how why when where is are was were does do did".split())
_WHATS = frozenset({"what's", "whats", "what’s"})


def build_web_query(question: str, *, today: date, add_year: bool = True) -> str:
    """The question as a web query: filler dropped, a trend word for "hot", the year added
    (unless ``add_year`` is false)."""
    kept: list[str] = []
    hot = False
    for raw in question.split():
        word = raw.strip("?!.,;:\"'()[]{}")
        low = word.lower()
        stem = strip_particle(low)
        if stem in HOT or low in HOT:
            hot = True
            continue
        if low in RECENCY_FILLER or stem in RECENCY_FILLER or low in REQUEST_FILLER or stem in REQUEST_FILLER:
            continue
        if low in _QUESTION_WORDS or (low == "new" and kept and kept[-1].lower() in _WHATS):
            if low == "new":
                kept.pop()  # "what's new in X": a release question, asked of X
            continue
        year = _YEAR.fullmatch(word)
        kept.append(year.group(1) if year else word)
    if not kept:
        kept = question.split()
    lower = {strip_particle(w.lower()) for w in kept}
    if hot and not lower & TREND_WORDS:
        kept.append("트렌드" if is_hangul(question) else "trends")
    if add_year and not _YEAR.search(" ".join(kept)):
        kept.append(str(today.year))
    return " ".join(kept)
