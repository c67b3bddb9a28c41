"""Pure pipeline pieces: snippets, the merge of provider results, dedup merging, ranking, strategy selection."""

from __future__ import annotations

from datetime import datetime

from sourcewise.models import ProviderHit, RawResult, SearchResult
from sourcewise.web.domains import builtin_table
from sourcewise.web.rank import cut_snippet, dedup, merge_results, pick_per_tier, rank, widen_by_tier

BUILTIN = builtin_table()


def raw(
    url: str,
    title: str = "T",
    snippet: str = "",
    provider: str = "p",
    position: int = 1,
    published: datetime | None = None,
) -> RawResult:
    return RawResult(
        title=title, url=url, snippet=snippet, provider=provider, position=position, published=published
    )


def result(url: str, tier: int, score: int, published: datetime | None = None) -> SearchResult:
    return SearchResult(
        title=url,
        url=url,
        canonical_url=url,
        tier=tier,
        reliability_score=score,  # type: ignore[arg-type]
        reason="r",
        published=published,
    )


def test_snippet_cut_at_word_and_at_most_200() -> None:
    text = "word " * 100
    cut = cut_snippet(text)
    assert len(cut) <= 200
    assert cut.endswith("…")
    assert not cut[:-1].endswith(" ")
    assert cut[:-1].split()[-1] == "word"


def test_snippet_cleaned_of_tags_and_entities() -> None:
    assert cut_snippet("<b>Fast</b> &amp; safe\n\n text") == "Fast & safe text"
    assert cut_snippet("short") == "short"


def test_merge_drops_invalid_urls_and_says_so() -> None:
    out, dropped = merge_results(
        [
            raw("javascript:alert(1)"),
            raw("https://react.dev/"),
            raw("https://x.example/", title="", snippet="Body text"),
        ],
        "react",
        BUILTIN,
    )
    assert [r.url for r in out] == ["https://react.dev/", "https://x.example/"]
    assert len(dropped) == 1
    assert "invalid URL" in dropped[0]
    assert out[1].title == "https://x.example/"  # no title: titled by its URL


def test_merge_titles_a_result_without_a_title_by_its_url() -> None:
    # Issue 7: a result with a URL but no title was dropped; it is kept, titled by its URL.
    out, _ = merge_results([raw("https://x.example/page", title="  ", snippet="Body text")], "q", BUILTIN)
    assert [r.title for r in out] == ["https://x.example/page"]
    secret, _ = merge_results([raw("https://u:hunter2@x.example/", title="", snippet="")], "q", BUILTIN)
    assert "hunter2" not in secret[0].title


def test_dedup_keeps_first_and_merges() -> None:
    # Two pages (www. and a tracking parameter are one page to merge_results): dedup merges them
    # once they are results of two searches, keyed alike.
    built = [
        merge_results([r], "q", BUILTIN)[0][0]
        for r in [
            raw(
                "https://www.example.com/a/?utm_source=x",
                title="First",
                snippet="short",
                provider="brave",
                position=3,
            ),
            raw(
                "http://example.com/a",
                title="Second",
                snippet="a much longer snippet here",
                provider="tavily",
                position=1,
                published=datetime(2025, 1, 1),
            ),
        ]
    ]
    merged = dedup(built)
    assert len(merged) == 1
    kept = merged[0]
    assert kept.title == "First"
    assert kept.url == "https://www.example.com/a/?utm_source=x"
    assert kept.snippet == "a much longer snippet here"
    assert kept.providers == (
        ProviderHit(provider="brave", position=3),
        ProviderHit(provider="tavily", position=1),
    )
    assert kept.published == datetime(2025, 1, 1)


def test_dedup_keeps_pages_that_differ_by_meaningful_parameters() -> None:
    one, _ = merge_results([raw("https://e.example/item?id=1")], "q", BUILTIN)
    two, _ = merge_results([raw("https://e.example/item?id=2")], "q", BUILTIN)
    assert len(dedup([*one, *two])) == 2


def test_rank_tier_then_score_then_recency_then_stable() -> None:
    a = result("https://a.example/", 2, 80)
    b = result("https://b.example/", 1, 91)
    c = result("https://c.example/", 1, 95)
    d = result("https://d.example/", 1, 95, published=datetime(2024, 5, 1))
    e = result("https://e.example/", 1, 95, published=datetime(2025, 5, 1))
    f = result("https://f.example/", 3, 60)
    g = result("https://g.example/", 3, 60)
    assert [r.url[8] for r in rank([a, f, b, c, g, d, e])] == list("edcbafg")


def test_widen_by_tier() -> None:
    pool = [
        result(f"https://{i}.example/", t, 90 if t == 1 else 70) for i, t in enumerate([1, 1, 2, 2, 3, 4])
    ]
    steps = [(frozenset({1}), 3), (frozenset({2}), 5), (frozenset({3, 4}), 0)]
    assert {r.tier for r in widen_by_tier(pool, steps)} == {1, 2, 3, 4}  # 2, then 4, then all
    rich = [result(f"https://{i}.example/", 1, 95) for i in range(4)] + pool
    assert {r.tier for r in widen_by_tier(rich, steps)} == {1}


def test_pick_per_tier() -> None:
    pool = [result(f"https://{i}.example/", 1 + i % 4, 90 - 20 * (i % 4)) for i in range(20)]
    picked = pick_per_tier(rank(pool), per_tier=3, limit=10)
    assert len(picked) == 10
    assert [r.tier for r in picked] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]
