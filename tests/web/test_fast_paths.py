"""The memos give what the rules give: URL keys, ratings, merged results and their order.

``canonical_url`` remembers keys per URL, ``rate_key`` keeps ratings per host and per what the rule
reads of a path, and ``merge_results`` builds each page once. Each memo is checked against the rule
it stands in front of (called without the memo) over a few hundred generated URLs and the shared URL
suites (the fuzz corpus), and the merge against what the merge rule says of every page.
"""

from __future__ import annotations

import html
import json
import random
import re
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise.errors import InvalidURL, redact
from sourcewise.models import RawResult
from sourcewise.web import rating, tiers, urlparse, urls
from sourcewise.web.domains import builtin_table, default_table
from sourcewise.web.rank import clean_text, cut_snippet, merge_results
from sourcewise.web.rating import rate_key
from sourcewise.web.tierrules import rate_host
from sourcewise.web.tiers import wanted_projects

from conftest import SHARED

_DOMAINS = tomllib.loads((Path(urls.__file__).parent.parent / "data" / "domains.toml").read_text("utf-8"))
QUERIES = [
    "",
    "React Server Components tutorial",
    "requests session retries",
    "kubernetes blog ingress",
    "FastAPI dependency injection",
    "Next.js examples",
    "emacs bash manual",
    "transformers pipeline",
    "리액트 훅",
    "BrandNewLib docs",
]


def _table_specs() -> list[str]:
    specs: list[str] = []
    for section in ("official",):
        for values in _DOMAINS[section].values():
            specs.extend(values)
    for section in ("semi_official", "community", "blogs", "user_content"):
        specs.extend(_DOMAINS[section])
    return specs


def _generated_urls(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    specs = _table_specs()
    hosts = [s.partition("/")[0] for s in specs] + [
        "docs.brandnewlib.dev",
        "brandnewlib.dev",
        "blog.react.dev",
        "forum.example.com",
        "someone.github.io",
        "requests.readthedocs.io",
        "x.gov",
        "uni.ac.kr",
        "127.0.0.1",
        "0x7f.1",
        "a..b",
        "foo.09",
        "xn--mnchen-3ya.de",
        "xn--bad.de",
        "www.com",
        "www.www.example.org",
        "my_host.example.com",
        "example.com.",
    ]
    segments = [
        "docs",
        "doc",
        "docsify",
        "api",
        "reference",
        "blog",
        "forums",
        "forum",
        "answers",
        "questions",
        "community",
        "thread",
        "threads",
        "discussions",
        "en-us",
        "en",
        "ko_kr",
        "spaces",
        "tree",
        "canary",
        "examples",
        "react",
        "requests",
        "next.js",
        "Server-Components",
        "DOCS",
        "a-react-b",
        ".",
        "..",
        ".well-known",
        "",
        "x%2Fy",
        "%7euser",
        "é",
        "a b",
        "p;q",
        "@",
        "!$'()*+,;=:",
    ]
    params = ["id", "q", "utm_source", "UTM_Medium", "fbclid", "page", "a+b", "", "x=y", "s?t", "p/q"]
    out: list[str] = []
    for _ in range(n):
        spec = rng.choice(specs)
        host, _, spec_path = spec.partition("/")
        if rng.random() < 0.4:
            host = rng.choice(hosts)
        if rng.random() < 0.2:
            host = "www." + host
        if rng.random() < 0.1:
            host = host.upper()
        if rng.random() < 0.05:
            host += rng.choice([":80", ":443", ":8080", ":"])
        if rng.random() < 0.03:
            host = "user:pw@" + host
        path = "/" + spec_path if spec_path and rng.random() < 0.6 else ""
        for _ in range(rng.randrange(0, 5)):
            path += "/" + rng.choice(segments)
        if rng.random() < 0.2:
            path += "/"
        if rng.random() < 0.05:
            path = path.replace("/", "//", 1)
        query = ""
        if rng.random() < 0.4:
            query = "?" + "&".join(
                f"{rng.choice(params)}={rng.choice(['1', '', 'b', 'x+y', 'a=b', '%41'])}"
                for _ in range(rng.randrange(0, 4))
            )
        fragment = rng.choice(["", "", "", "#top", "#!/route", "#/a/b"])
        scheme = rng.choice(["https", "https", "http", "HTTPS", "", "ftp"])
        url = f"{scheme}://{host}{path}{query}{fragment}" if scheme else f"//{host}{path}{query}"
        if rng.random() < 0.02:
            url = " " + url + "\t"
        out.append(url)
    return out


def _corpus() -> list[str]:
    """Every URL in the shared URL suites (WHATWG, w3lib, url-normalize, courlan), when present."""
    root = SHARED / "urls"
    found: list[str] = []
    whatwg = root / "whatwg" / "urltestdata.json"
    if whatwg.exists():
        for case in json.loads(whatwg.read_text("utf-8")):
            if isinstance(case, dict):
                found.extend(v for k, v in case.items() if k in ("input", "href") and isinstance(v, str))
    for path in sorted(root.glob("*/*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            case = json.loads(line)
            found.extend(a for a in case.get("args", []) if isinstance(a, str))
            if isinstance(case.get("expected"), str):
                found.append(case["expected"])
    return found


def _outcome(fn: object, url: str) -> tuple[str, str]:
    try:
        return "key", fn(url)  # type: ignore[operator]
    except InvalidURL as exc:
        return "error", str(exc)


GENERATED = _generated_urls(600, seed=11)


def _assert_memo_is_the_rule(urls_: list[str]) -> int:
    """Each URL keyed twice (the second time from the memo) and by the rule alone: one answer."""
    keyed = 0
    for url in urls_:
        rule = _outcome(urls._key.__wrapped__, url)
        assert _outcome(urls.canonical_url, url) == rule, url
        assert _outcome(urls.canonical_url, url) == rule, url
        if rule[0] == "key":
            keyed += 1
            assert urls.canonical_url(rule[1]) == rule[1]  # a key is its own key
    return keyed


def test_url_keys_from_the_memo_are_the_rules_on_generated_urls() -> None:
    assert _assert_memo_is_the_rule(GENERATED) > len(GENERATED) // 2


def test_url_keys_from_the_memo_are_the_rules_on_the_fuzz_corpus() -> None:
    corpus = _corpus()
    if not corpus:
        pytest.skip(f"{SHARED / 'urls'} is absent")
    assert len(corpus) > 500
    assert _assert_memo_is_the_rule(corpus) > 100


@given(st.text(alphabet="htps:/wWeEx.a-mpl_oc%?&=#+;!~0123456789 [];@", max_size=40))
def test_url_keys_from_the_memo_are_the_rules_on_hostile_text(text: str) -> None:
    _assert_memo_is_the_rule([text, "https://" + text, "http://example.com/" + text])


def _keys(urls_: list[str]) -> list[str]:
    out = []
    for url in urls_:
        try:
            out.append(urls.canonical_url(url))
        except InvalidURL:
            continue
    return list(dict.fromkeys(out))


def _host_path(key: str) -> tuple[str, str]:
    rest = key[len("https://") :]
    host, slash, path = rest.partition("/")
    return host, (slash + path).split("?")[0].split("#")[0]


@pytest.mark.parametrize(
    "table",
    [
        builtin_table(),
        default_table(
            {"brandnewlib": ["brandnewlib.dev/docs", "github.com/brandnew/lib/tree/main/docs"]},
            {"medium.com/@someone": 2, "example.com": 1, "forum.example.com/a/b/c/d": 3},
        ),
    ],
    ids=["builtin", "config"],
)
def test_ratings_from_the_memo_are_the_rules(table: tiers.SourceTable) -> None:
    keys = _keys(GENERATED + _corpus())
    assert len(keys) > 300
    keys = random.Random(3).sample(keys, min(len(keys), 200))  # a few hundred: each is rated per query
    for query in QUERIES:
        wanted = wanted_projects(table, query)
        for key in keys:
            parts = urlsplit(key)
            rule = rate_host(parts.hostname or "", parts.path, wanted, table, None)
            assert rate_key(key, tuple(wanted.items()), table) == rule, (key, query)


def test_memos_are_bounded() -> None:
    for cached in (urls._key, urlparse._host, rating._profile):
        assert cached.cache_info().maxsize is not None
    table = builtin_table()
    for i in range(rating._RATING_CACHE_MAX + 100):
        rate_key(f"https://h{i}.example/", (), table)
    assert len(rating._RATINGS) <= rating._RATING_CACHE_MAX
    before = urls._key.cache_info().currsize
    long = "https://example.com/" + "a" * urls._KEPT_URL_MAX
    assert urls.canonical_url(long) == long
    assert urls._key.cache_info().currsize == before  # a long URL is keyed, not kept
    with pytest.raises(InvalidURL):
        urls.canonical_url("ftp://example.com/never-kept")
    assert urls._key.cache_info().currsize == before  # an error is not kept either


_SNIPPETS = [
    "",
    "plain text",
    "  spaced   out\ttext\n",
    "<b>bold</b> &amp; entities &lt;tag&gt; &notin; &#x41;",
    "text " * 80,
    "a<<<<b",
    "lone \ud800 surrogate",
    "ünïcödé\u00a0nbsp\u2003em space",
    "x" * 400,
]


def _raw_results(n: int, seed: int) -> list[RawResult]:
    rng = random.Random(seed)
    pool = GENERATED
    out = []
    for i in range(n):
        url = rng.choice(pool)
        out.append(
            RawResult.model_construct(
                title=rng.choice(["", "Title <i>x</i>", "  ", f"Result {i}", "&amp;"]),
                url=url,
                snippet=rng.choice(_SNIPPETS) + ("y " * rng.randrange(0, 40)),
                provider=rng.choice(["duckduckgo", "brave", "searxng", "tavily", "google"]),
                position=rng.randrange(1, 6),
                published=rng.choice(
                    [
                        None,
                        None,
                        datetime(2025, 1, 2, tzinfo=UTC),
                        datetime(2024, 5, 6),
                        datetime(2026, 1, 1, tzinfo=UTC),
                    ]
                ),
            )
        )
    return out


@pytest.mark.parametrize("query", QUERIES[:6])
def test_merge_results_keeps_one_result_per_page_with_what_every_copy_adds(query: str) -> None:
    raw = _raw_results(600, seed=len(query))
    table = builtin_table()
    merged, dropped = merge_results(raw, query, table)
    pages: dict[str, list[RawResult]] = {}
    bad = 0
    for item in raw:
        try:
            pages.setdefault(urls.canonical_url(item.url), []).append(item)
        except InvalidURL:
            bad += 1
    assert len(merged) > 50
    assert len(dropped) == bad
    assert [r.canonical_url for r in merged] == sorted(pages, key=[r.canonical_url for r in merged].index)
    assert {r.canonical_url for r in merged} == set(pages)
    wanted = tuple(wanted_projects(table, query).items())
    for result in merged:
        copies = pages[result.canonical_url]
        hits = list(dict.fromkeys((c.provider, c.position) for c in copies))
        assert [(h.provider, h.position) for h in result.providers] == hits
        assert result.snippet == max((cut_snippet(c.snippet) for c in copies), key=len)
        assert result.published == next((c.published for c in copies if c.published), None)
        assert result.title == (clean_text(copies[0].title) or redact(clean_text(copies[0].url)))  # no user info
        rating_ = rate_key(result.canonical_url, wanted, table)
        assert (result.tier, result.reliability_score, result.reason) == tuple(rating_.model_dump().values())
    order = [(r.tier, -r.reliability_score) for r in merged]
    assert order == sorted(order)  # tier first, then score (recency breaks ties)


def test_merge_results_says_what_it_drops() -> None:
    raw = [RawResult(title="t", url="not a url", provider="brave", position=1)]
    merged, dropped = merge_results(raw, "q", builtin_table())
    assert merged == []
    assert len(dropped) == 1
    assert "dropped a brave result" in dropped[0]


_SPACE = re.compile(r"\s+")
_TAG = re.compile(r"<[^<>]+>")
_SURROGATE = re.compile("[\ud800-\udfff]")


@given(
    st.text(
        alphabet=st.sampled_from(list("ab <>&;#x41amp\t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\ud800é")),
        max_size=40,
    )
)
def test_clean_text_is_the_general_formula(text: str) -> None:
    reference = _SURROGATE.sub("\ufffd", _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip())
    assert clean_text(text) == reference
    assert len(clean_text(text)) <= len(text)  # what merge_results relies on to skip a snippet


def _reference_bm25(query: list[str], docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
    import math
    from collections import Counter

    n_docs = len(docs)
    if not n_docs:
        return []
    avgdl = sum(len(d) for d in docs) / n_docs or 1.0
    df = Counter(term for doc in docs for term in set(doc))
    scores = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for term, said in Counter(query).items():
            if term not in tf:
                continue
            idf = math.log((n_docs - df[term] + 0.5) / (df[term] + 0.5) + 1)
            score += said * idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


_TEXT = st.text(alphabet=st.sampled_from(list("abcXYZİıKß.'-+#_09 \n한국어를은는에서")), max_size=60)


@given(_TEXT, st.lists(_TEXT, max_size=8))
def test_bm25_scores_are_the_reference_scores_to_the_last_bit(query: str, texts: list[str]) -> None:
    from sourcewise.text.analyze import analyze, query_terms
    from sourcewise.text.passages import bm25_scores

    docs = [analyze(t, stem=True) for t in texts]
    asked = query_terms(query, stem=True, repeats=True)
    assert bm25_scores(asked, docs) == pytest.approx(_reference_bm25(asked, docs))


def test_caches_hold_under_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several threads filling the bounded rating cache past its size: no error, right answers."""
    from collections import OrderedDict
    from concurrent.futures import ThreadPoolExecutor

    from sourcewise.config import load_settings

    monkeypatch.setattr(rating, "_RATING_CACHE_MAX", 64)
    monkeypatch.setattr(rating, "_RATINGS", OrderedDict())
    table = builtin_table()
    keys = [f"https://h{i % 100}.example/docs/{i}" for i in range(400)]

    def work(part: int) -> bool:
        ok = True
        for i, key in enumerate(keys[part::4]):
            host, path = _host_path(key)
            ok &= rate_key(key, (), table) == rate_host(host, path, {}, table, None)
            if i % 8 == 0:  # reading settings costs ~10 ms: a few reads interleave with the ratings
                ok &= load_settings().max_results == 10
        return ok

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))
    assert len(rating._RATINGS) <= 64 + 4


# Pieces of the markup the HTML patterns take out, with the letters RE2's (?i) folds ("ſ" is "s").
_MARKUP_PIECES = ["<style>", "<ſtyle>", "<SCRIPT a>", "</style>", "<!--", "-->", "{", "{:", "{ #a}", "{.c}", "x", " "]


@given(
    st.text(
        alphabet=st.sampled_from(list("ab-\u2010 \t\n\r\f![]()<>img`*_{}#.\\&;é?:/\xa0\x0b\"'|~+sSſ")),
        max_size=40,
    )
    | st.lists(st.sampled_from(_MARKUP_PIECES), max_size=8).map("".join)
)
def test_markup_clean_skips_a_pattern_only_where_it_cannot_match(text: str) -> None:
    """``markup.clean`` calls each pattern only where the characters it needs are: everywhere else
    the pattern changes nothing."""
    from sourcewise.text import markup

    checks = (
        (markup._HYPHEN, "\n" in text, r"\1\2"),
        (markup._IMAGE, "![" in text or "<" in text, ""),
        (markup._LINK, "](" in text, r"\1"),
        (markup._SPACES, "  " in text or "\t" in text, " "),
        (markup._EMPHASIS, "**" in text or "__" in text, r"\1\3\5"),
        (markup._ESCAPE, "\\" in text, r"\1"),
        (markup._COMMENT, "<!--" in text, ""),
        (markup._ELEMENTS, "<s" in text or "<S" in text or "<ſ" in text, ""),
        (markup._ATTRS, markup._ATTRS_START.search(text) is not None, ""),
    )
    for pattern, called, repl in checks:
        assert called or pattern.sub(repl, text) == text
    assert markup._may_open_italic(text) or markup._italic_sub(text) == text
    # ``directive`` looks for its pattern only after the starts it needs (after any spaces)
    assert markup.directive(text) is None or text.lstrip().startswith(markup.DIRECTIVE_STARTS)
    assert text.lstrip().startswith(markup.DIRECTIVE_STARTS) or markup._DIRECTIVE.match(text) is None


# The italic pattern ``markup._italic_sub`` does the work of, on RE2 (the oracle).
_ITALIC_RE2 = r"(^|[\s(\"'])[*_]([^*_\s][^*_\n]{0,300}?)[*_]($|[^\w*])"


@given(st.text(alphabet=st.sampled_from(list("ab1 \t\n\f\r\x0b(\"'*_é.-")), max_size=60))
def test_italic_marks_go_as_the_re2_pattern_takes_them(text: str) -> None:
    import re2  # type: ignore[import-untyped]

    from sourcewise.text import markup

    assert markup._italic_sub(text) == re2.compile(_ITALIC_RE2).sub(r"\1\2\3", text)
    # runs of spaces: Python's engine (linear for this pattern) as RE2 did
    assert markup._SPACES.sub(" ", text) == re2.compile(r"[ \t]{2,}").sub(" ", text)


@given(st.text(alphabet=st.sampled_from(list("ab1 \\\\`*_{}[]()#+.!<>|~-\né")), max_size=60))
def test_markdown_escapes_go_as_the_re2_pattern_takes_them(text: str) -> None:
    """Escapes are taken out on Python's engine (one character after a backslash: linear), as the
    RE2 pattern did."""
    import re2  # type: ignore[import-untyped]

    from sourcewise.text import markup

    assert markup._ESCAPE.sub(r"\1", text) == re2.compile(r"\\([\\`*_{}\[\]()#+.!<>|~-])").sub(r"\1", text)


def test_italic_marks_go_as_the_re2_pattern_takes_them_over_real_text() -> None:
    """Vim's help (``*tags*``), the Python docs' docstrings and reST (``*args``, ``_private``), and
    italic spans at the length limit and one past it."""
    import re2  # type: ignore[import-untyped]

    from sourcewise.text import markup

    pattern = re2.compile(_ITALIC_RE2)
    texts = [f"see *{'x' * k}* and _{'y' * k}_." for k in (299, 300, 301, 302)]
    for path in sorted(Path("/usr/share/vim").glob("vim*/doc/*.txt"))[:40]:
        texts.extend(path.read_text("utf-8", "replace").split("\n\n"))
    changed = 0
    for text in texts:
        got = markup._italic_sub(text)
        assert got == pattern.sub(r"\1\2\3", text), text[:200]
        changed += got != text
    assert len(texts) > 1000
    assert changed > 100
