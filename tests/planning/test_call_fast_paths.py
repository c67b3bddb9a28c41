"""The fast paths of ``plan()``, ``route()`` and ``rate_source()`` give what the general paths give.

``plan()`` searches only the signal vocabularies a word of the question can start, skips a pattern
when a word it needs is absent, computes only the date span that matched, and validates its parts
with the plan; ``rate()`` keys a URL and rates the key through the memos; ``load_settings()`` answers an unchanged
environment and config file without hashing. Each is compared with the general path (the code as
it was before, kept here as the reference) over generated inputs and hostile text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise.errors import SourcewiseError
from sourcewise.planning import dates
from sourcewise.planning import planner as plan
from sourcewise.planning.classify import ORDER, SIGNALS, _candidates, _forms_of, _signals
from sourcewise.planning.keywords import _index, find_forms
from sourcewise.planning.negation import _may_negate, negations
from sourcewise.planning.planner import DEFAULT_SOURCES, _assemble, _may_be_mine
from sourcewise.planning.syntax import Syntax
from sourcewise.registry import discover_sources
from sourcewise.text.words import is_hangul, strip_particle, words
from sourcewise.web import rating, tiers, urls
from sourcewise.web.domains import builtin_table, default_table
from sourcewise.web.rating import rate
from sourcewise.web.tierrules import rate_host

BUILTIN = builtin_table()

# kind -> the syntax of the built-in source of that kind (the sources own their syntaxes)
_KINDS = {kind: cls.syntax for kind, cls in discover_sources()[1].items()}
SOURCES = tuple(sorted(_KINDS))


def _syntaxes(kinds: Sequence[str]) -> dict[str, Syntax]:
    return {k: _KINDS[k] for k in sorted(kinds)}


_WORDS = """React Next.js FastAPI Flask kubernetes Postgres billing DB deploy policy who when what how
    why our my project 프로젝트 결정했나요 회의에서 지난주 어제 오늘 yesterday today "exact phrase"
    “따옴표” 「括弧」 -legacy not without docker except excluding 제외 빼고 말고 from:sarah in:#eng
    after:2024-01-01 before:2024-02-01 type:thread type:file @kim이 #general 내 작업 나한테 v2.3
    GPT-4o iOS AWS API https://docs.python.org/3/ 최신 릴리스 알려줘 배포 일정 C++ .NET 문서
    요약해줘 q3 Q4 2025 3분기 최근 lately recently 작년 올해 금년 이번주 저번 wİthout ıs ſ K
    PROJECT Project mine MY""".split()
_PIECES = [
    *sorted({w for vocab in SIGNALS.values() for w in vocab}),
    *_WORDS,
    "this week",
    "last month",
    "last year",
    "past 3 days",
    "지난 2주",
    "q4 2024",
    "assigned to me",
    "react native",
    "spring boot",
]


def _questions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        text = " ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))
        if len(text.strip()) >= 3:
            out.append(text)
    return out


GENERATED = _questions(2500, 8)
_HOSTILE = st.text(
    alphabet=st.sampled_from(list("abcdemnotwhyqs -_:#@\"'.İıſK가내지난주오늘분기제외말고123")),
    max_size=60,
)


# --- the general paths, as they were ---------------------------------------------------------


def _find_forms_general(
    toks: Sequence[str], forms: Sequence[tuple[str, ...]], every: frozenset[str], vocab: frozenset[str]
) -> list[str]:
    if _index(vocab)[1].isdisjoint(every):
        return []
    found: list[tuple[int, str]] = []
    taken: set[int] = set()
    for size, entries, firsts in _index(vocab)[0]:
        if size == 0 or size > len(toks):
            continue
        if (firsts if firsts is not None else entries).isdisjoint(every):
            continue
        for i in range(len(toks) - size + 1):
            if firsts is not None and toks[i] not in firsts:
                continue
            if taken and any(j in taken for j in range(i, i + size)):
                continue
            head = " ".join(toks[i : i + size - 1]) + " " if size > 1 else ""
            for last in forms[i + size - 1]:
                phrase = head + last
                if phrase in entries:
                    found.append((i, phrase))
                    taken.update(range(i, i + size))
                    break
    return [phrase for _, phrase in sorted(found)]


def _projects_in_general(table: tiers.SourceTable, query: str) -> dict[str, str]:
    tokens = [strip_particle(w) for w in words(query)]
    found: dict[str, str] = {}
    for size in range(table._max_words, 0, -1):
        firsts = table._firsts.get(size, frozenset()) if size > 1 else None
        if firsts is not None and not firsts:
            continue
        for i in range(len(tokens) - size + 1):
            if firsts is not None and tokens[i] not in firsts:
                continue
            phrase = " ".join(tokens[i : i + size])
            project = table.names.get(phrase)
            if project and project not in found:
                found[project] = phrase
    return found


def _relative_dates_general(text: str, today: date) -> tuple[date | None, date | None, list[str]]:
    try:
        low = " ".join(text.lower().split())
        if not dates._ANY_DATE_WORD.search(low):
            return None, None, []
        week, month = dates._week(today), dates._month(today)
        spans = [
            (today, today),
            (today - timedelta(days=1), today - timedelta(days=1)),
            (week, today),
            (week - timedelta(days=7), week - timedelta(days=1)),
            (month, today),
            (dates._prev_month(today), month - timedelta(days=1)),
            (date(today.year, 1, 1), today),
            (date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)),
            (today - timedelta(days=30), today),
        ]
        match = dates._LAST_N.search(low)  # first: "최근 30일" is thirty days, not "recently"
        if match:
            count = int(match[1] or match[3])
            unit = match[2] or match[4]
            days = {"day": 1, "일": 1, "week": 7, "주": 7, "month": 30, "개월": 30, "달": 30}[unit] * count
            return today - timedelta(days=days), today, [match.group(0)]
        for pattern, (after, before) in zip(dates._RULES, spans, strict=True):
            match = pattern.search(low)
            if match:
                return after, before, [match.group(0)]
        match = dates._QUARTER.search(low)
        if match:
            q = int(match[1] or match[4] or match[6])
            year = int(match[2] or match[3] or match[5] or today.year)
            after, before = dates._quarter(year, q)
            return after, before, [match.group(0).strip()]
        return None, None, []
    except (ValueError, OverflowError):
        return None, None, []


# --- classification and keyword search -------------------------------------------------------


def _skipped_kinds_have_no_signal(question: str) -> int:
    """Classification searches only the kinds a word of the question can start; every kind it
    skips would have found nothing. Returns how many kinds were skipped."""
    toks = words(question)
    hangul_words = [w for w in toks if is_hangul(w)]
    forms = _forms_of(toks)
    candidates = _candidates(forms[1], hangul_words)
    skipped = [kind for kind in ORDER if kind not in candidates]
    for kind in skipped:
        assert _signals(toks, hangul_words, kind, forms) == [], (question, kind)
    return len(skipped)


def test_classification_skips_only_kinds_without_a_signal() -> None:
    assert sum(_skipped_kinds_have_no_signal(q) for q in GENERATED[:800]) > 800  # kinds were skipped


@given(_HOSTILE)
def test_classification_skips_only_kinds_without_a_signal_on_hostile_text(text: str) -> None:
    _skipped_kinds_have_no_signal(text)


def test_find_forms_is_the_general_search() -> None:
    vocabularies = [*SIGNALS.values(), frozenset({"a b c", "a b", "b", "c d", "x"})]
    for question in [*GENERATED, "a b c d a b x b c d"]:
        toks = words(question)
        forms, every = _forms_of(toks)
        for vocab in vocabularies:
            assert find_forms(toks, forms, every, vocab) == _find_forms_general(toks, forms, every, vocab)


@given(st.lists(st.sampled_from(["a", "b", "c", "d", "x", "a b"]), max_size=12))
def test_find_forms_agrees_on_overlapping_phrases(toks: list[str]) -> None:
    forms, every = _forms_of(toks)
    vocab = frozenset({"a b c", "a b", "b", "c d", "x", "b c", "d a b c"})
    assert find_forms(toks, forms, every, vocab) == _find_forms_general(toks, forms, every, vocab)


# --- project names, dates and the patterns skipped --------------------------------------------


@pytest.mark.parametrize(
    "table",
    [builtin_table(), default_table({"big data thing": ["bdt.example"], "react": ["re.example"]}, {})],
    ids=["builtin", "config"],
)
def test_project_names_are_the_general_search(table: tiers.SourceTable) -> None:
    for question in [*GENERATED, "big data thing and react native with spring boot"]:
        assert table.projects_in(question) == _projects_in_general(table, question), question


_DAYS = [
    date(2026, 11, 23),
    date(2025, 1, 1),
    date(2024, 3, 1),
    date(1, 1, 1),
    date(1, 1, 9),
    date(9999, 12, 31),
]


def test_relative_dates_compute_only_the_matched_span_and_agree() -> None:
    for question in GENERATED:
        for today in _DAYS:
            assert dates.relative_dates(question, today) == _relative_dates_general(question, today), (
                question,
                today,
            )


@given(_HOSTILE, st.sampled_from(_DAYS))
def test_relative_dates_agree_on_hostile_text(text: str, today: date) -> None:
    assert dates.relative_dates(text, today) == _relative_dates_general(text, today)


@given(st.one_of(_HOSTILE, st.text(max_size=40)))
def test_date_words_are_found_as_the_pattern_finds_them(text: str) -> None:
    low = " ".join(text.lower().split())
    assert dates._names_a_date(low) == (dates._ANY_DATE_WORD.search(low) is not None)


def test_date_words_on_generated_questions() -> None:
    for question in GENERATED:
        low = " ".join(question.lower().split())
        assert dates._names_a_date(low) == (dates._ANY_DATE_WORD.search(low) is not None)


@given(st.one_of(_HOSTILE, st.text(max_size=60)))
def test_words_never_end_in_sentence_punctuation(text: str) -> None:
    """``words`` dropped its strip of trailing ".'-": a word never ends in one."""
    from sourcewise.text.words import _WORD

    general = [w.rstrip(".'-") or w for w in map(str.lower, _WORD.findall(text))]
    assert words(text) == general


@given(_HOSTILE)
def test_skipped_patterns_could_not_have_matched(text: str) -> None:
    if not _may_negate(text):
        assert negations(text)[0] == []
    if not _may_be_mine(text):
        assert plan._MINE.search(text) is None
    if "project" not in text.lower() and "프로젝트" not in text:
        assert plan._PROJECT.search(text) is None


# --- the plan itself --------------------------------------------------------------------------


@pytest.mark.parametrize("sources", [DEFAULT_SOURCES, SOURCES], ids=["default", "all"])
def test_plan_in_one_model_is_the_assembled_plan(sources: Sequence[str]) -> None:
    """The plan built in one validation equals a draft assembled by the general path (queries
    built as models one by one, then copied in), field for field and in what was set."""
    today = date(2026, 11, 23)
    for question in GENERATED[:600]:
        try:
            fast = plan.plan(question, _syntaxes(sources), today=today, table=BUILTIN)
        except SourcewiseError:
            continue
        draft = fast.model_copy(update={"sources": [], "variants": {}})
        general = _assemble(draft, _syntaxes(sources))
        assert fast == general, question
        assert fast.model_fields_set == general.model_fields_set
        assert [q.model_fields_set for q in fast.sources] == [q.model_fields_set for q in general.sources]
        assert fast.query_type.model_fields_set == {"kind", "signals", "source_priority"}
        assert type(fast).model_validate(fast.model_dump()) == fast


def test_plan_lists_are_its_own() -> None:
    """Validation copies: changing a plan's lists changes no table and no other plan."""
    first = plan.plan(
        "Who decided to move the billing DB?",
        _syntaxes(DEFAULT_SOURCES),
        today=date(2026, 11, 23),
        table=BUILTIN,
    )
    first.query_type.source_priority.clear()
    first.sources[0].params.clear()
    second = plan.plan(
        "Who decided to move the billing DB?",
        _syntaxes(DEFAULT_SOURCES),
        today=date(2026, 11, 23),
        table=BUILTIN,
    )
    assert second.query_type.source_priority


# --- ratings per URL ---------------------------------------------------------------------------


def _urls(count: int) -> list[str]:
    rng = random.Random(3)
    hosts = ["react.dev", "docs.python.org", "github.com", "medium.com", "kubernetes.io", "x.tistory.com"]
    paths = ["", "/", "/reference/react", "/3/library/os.html", "/facebook/react/issues/1", "/blog/2024/"]
    out = []
    for n in range(count):
        url = f"{rng.choice(['https', 'http', 'HTTPS'])}://{rng.choice(['', 'www.'])}{rng.choice(hosts)}"
        url += rng.choice(paths) + rng.choice(["", f"?utm_source=x&id={n % 7}", "#frag", ":8080"])
        out.append(url)
    return out


def _rule(url: str, query: str | None, table: tiers.SourceTable) -> object:
    """The rating by the rules alone, past every memo: the key, then ``rate_host``."""
    key = urls._key.__wrapped__(url)
    wanted = tiers.wanted_projects(table, query) if query else {}
    parts = urlsplit(key)
    return rate_host(parts.hostname or "", parts.path, wanted, table, None)


def test_ratings_are_the_rules_ratings() -> None:
    table = builtin_table()
    for query in (None, "", "React hooks", "python os", "FastAPI"):
        for url in _urls(600):
            try:
                expected = _rule(url, query, table)
            except SourcewiseError as exc:
                with pytest.raises(type(exc)):
                    rate(url, query, table)
                continue
            assert rate(url, query, table) == expected
            assert rate(url, query, table) == expected  # the second answer comes from the memos


def test_a_long_question_is_rated_and_nothing_of_it_is_kept() -> None:
    question = "react hooks " + "x" * 100_000  # a pasted log as the question
    before = urls._key.cache_info().currsize
    assert rate("https://react.dev/learn", question, BUILTIN) == _rule("https://react.dev/learn", question, BUILTIN)
    long = "https://react.dev/reference/react/" + "a" * 3_000
    assert rate(long, None, BUILTIN) == _rule(long, None, BUILTIN)
    assert urls._key.cache_info().currsize <= before + 1  # the short URL only
    assert not any(len(str(part)) > 1_000 for key in list(rating._RATINGS) for part in key)


@given(st.text(max_size=40))
def test_rate_agrees_with_the_rules_on_hostile_text(text: str) -> None:
    url = "https://example.com/" + text
    try:
        expected = _rule(url, None, BUILTIN)
    except SourcewiseError:
        with pytest.raises(SourcewiseError):
            rate(url, None, BUILTIN)
        return
    assert rate(url, None, BUILTIN) == expected


def test_route_and_plan_words_are_unchanged_by_the_shared_split() -> None:
    # plan() splits the question once for classification and project names
    for question in GENERATED[:300]:
        assert builtin_table().projects_in(question) == builtin_table().projects_in_words(words(question))
